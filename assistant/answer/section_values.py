"""Does a section of the user's documents state the value a question asks for?

The section is one the search found, and it mentions the question's names (`refusal.section_answers`
checks that first). The value must be on a sentence about what is asked: a section that names some
person or company, some date or some number does not answer "who founded it?", "when was 1.0
released?" or "how many completed workflows does it keep?". Chunks keep one sentence, list item, table
row or paragraph per line, so a sentence of a line is the unit:

- a person, company or date (spaCy's entities, `stated_values`) on a sentence that shares a word of the
  asking sentence other than the names it uses, two when it has four or more ("The quota owner this
  quarter is Marcus Lindqvist" for "who owns the GPU quota this quarter?": quota, quarter; not "our
  Provider abstraction is built to be extensible" for "which company originally built Feast before it
  was open-sourced?");
- a number (a count, an amount, a percentage) on a sentence that names the configuration key the question
  names (`fsdp_min_num_params`, `--num_cpu_threads_per_process`) or follows one that does, or otherwise
  shares a word of the asking sentence with the sentence or its section's own heading; a percentage asked
  for is a number with a per cent sign or "percent" after it ("about 3,000 a day" is no share of anything);
- a default: the section says "default" (in a sentence or a table's header) and such a sentence holds a
  number or a literal (`true`, a code span); a line labelled "Default value: 30s" is the section's own
  default, whatever words it shares (a property's section: "preemption.delay").

A value the question names itself is no answer ("Which company built Feast?" is not answered by a section
naming Feast).

A quantity of something the documents never mention is stated by none of them: "how many watts does power
saving save?" of pages that never say "watt", "how many GitHub stars ...?" of pages without "star"
(`measured`: the noun "how many" or "how much" qualifies, read by spaCy's parser). "Which flag ...?" is
not read so: pages show a flag (`--gpus`) without calling it one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from itertools import pairwise

from assistant.knowledge.stated_values import parsed as parsed_asking
from assistant.knowledge.stated_values import states_new_value
from assistant.question.names import ASKED_KEY, SIZE_NUMBER
from assistant.question.value_kinds import figure_asked
from assistant.text import content_words, split_sentences, words

# a figure on a line: digits (with a unit letter or a per cent sign), or a number written as a word
FIGURE = re.compile(
    r"(?<![\w.])\d[\d,.]*(?:\s?%|[kmgtb]i?b?\b)?"
    r"|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|twelve|hundred|thousand|million|billion)\b",
    re.I,
)
LITERAL = re.compile(r"\b(?:true|false|none|null)\b|`[^`]+`", re.I)
# the words of an asking sentence that say which value is asked, not what it is about
ASKING_FRAME = content_words("how many much what which who when default value number percentage percent exactly")
ENTITY_KINDS = ("person", "company", "date")
LONG_TOPIC = 4  # words an asking sentence has besides its names from which a value's sentence must share two


def section_states(kind: str, title: str, text: str, asking: str, names: Iterable[str], question: str) -> bool:
    """Does the section (`title`, its heading path; `text`) state a value of `kind` about what the asking
    sentence (`asking`) asks? `names` are the names the question uses; `question` is lower-cased."""
    if kind in ENTITY_KINDS:
        return entity_on_topic(kind, title, text, asking, names, question)
    if kind in ("count", "default"):
        return figure_on_topic(kind, title, text, asking, question)
    if kind == "email":  # an address is read by its form: a section that states none does not answer
        return bool(EMAIL_ADDRESS.search(text))
    return states_new_value(kind, text, question)


EMAIL_ADDRESS = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")


def entity_on_topic(kind: str, title: str, text: str, asking: str, names: Iterable[str], question: str) -> bool:
    """A person, company or date on a sentence sharing words of the asking sentence besides its names, and
    naming the numbered things it asks about ("when is batch 3 arriving?" is not answered by batch 2's date),
    there or in the section's heading."""
    topic = content_words(asking) - ASKING_FRAME - content_words(" ".join(names))
    numbered = [re.compile(rf"\b{re.escape(thing)}[\s-]?{number}\b", re.I) for thing, number in numbered_things(asking)]
    if not topic:  # the sentence asks only about a name ("who is Ada Okonkwo?"): the section is about it
        return states_new_value(kind, text, question)
    shared = 2 if len(topic) >= LONG_TOPIC else 1  # "originally built ... before it was open-sourced": not "built"
    role = asked_role(asking) if kind == "person" else None
    return any(
        len(topic & content_words(line)) >= shared
        and all(item.search(line) or item.search(title) for item in numbered)
        and (role is None or role in content_words(f"{title}\n{line}"))
        and states_new_value(kind, line, question)
        for line in sentences(text)
    )


@lru_cache(maxsize=1024)
def asked_role(asking: str) -> str | None:
    """The role a "who is the ...?" asks the holder of, stemmed: "Who is the product manager for the ML
    platform?" -> manager; "who is that team's quota owner?" -> owner. A person named on a line about the ML
    platform is not its product manager unless the line, or its section's heading, says manager. Read by
    spaCy's parser: a common noun as subject or attribute of "be", "who" the other."""
    for sentence in parsed_asking(asking).sents:
        root = sentence.root
        if root.lemma_ != "be" or not any(child.lower_ == "who" for child in root.children):
            continue
        for child in root.children:
            if child.dep_ in ("nsubj", "attr") and child.pos_ == "NOUN":
                return next(iter(content_words(child.text)), None)
    return None


@lru_cache(maxsize=1024)
def numbered_things(asking: str) -> tuple[tuple[str, str], ...]:
    """The things the asking sentences name by a number, as (noun, number): "batch 3", "tier-1", "step 4",
    read by spaCy's tagger (a noun, then a number of at most three digits); read once for the sections
    weighed."""
    if not any(character.isdigit() for character in asking):
        return ()
    parsed = parsed_asking(asking)
    found = [
        (noun.lower_, number.text)
        for noun, number in pairwise(parsed)
        if noun.pos_ in ("NOUN", "PROPN") and noun.is_alpha and number.text.isdigit() and len(number.text) <= 3
    ]
    joined = (NUMBERED_TOKEN.fullmatch(token.lower_) for token in parsed if token.pos_ in ("NOUN", "PROPN"))
    return (*found, *((match.group(1), match.group(2)) for match in joined if match))


NUMBERED_TOKEN = re.compile(r"([a-z]+)-(\d{1,3})")  # "tier-1", one token


def figure_on_topic(kind: str, title: str, text: str, asking: str, question: str) -> bool:
    """A number (or, for a default, a literal) on a line about what is asked. A configuration key the
    question names must be on the line or the one before it ("The --sync-workers flag sets ... / The default
    is 8"), unless the section's heading names it."""
    if kind == "default" and "default" not in text.lower():
        return False
    coded = {key.lower().lstrip("-") for key in ASKED_KEY.findall(asking)}
    if any(name in title.lower() for name in coded):  # the section is the key's own
        coded = set()
    topic = word_parts(asking) - ASKING_FRAME
    heading = content_words(title.rsplit("›", 1)[-1])  # its own heading: a page's title is every section's
    share = kind == "count" and bool(SHARE_ASKED & set(words(asking)))
    for (_, before), (same_line, line) in pairwise([(False, ""), *line_sentences(text)]):
        near = f"{before}\n{line}".lower()
        if coded and not any(name in near for name in coded):
            continue
        labelled = kind == "default" and bool(DEFAULT_LABEL.match(line))  # the section's own: "Default value: 30s"
        # a sentence that names nothing but a value goes on about the one before it on its line: "-
        # **retryStrategy.backoffLimitCount** - indicates how many times ... is retried. Defaults to 3." (not "The
        # cleaner that removes the rest runs on 3 nodes.", which is about the cleaner)
        own = word_parts(line)
        goes_on = same_line and not {word for word in own - ASKING_FRAME if not word[:1].isdigit()}
        about = own | (word_parts(before) if goes_on else set()) | heading
        if not coded and not labelled and not topic & about:
            continue
        found = [m for m in FIGURE.finditer(line) if figure(m.group(), kind) and m.group().lower() not in question]
        if share:  # "what percentage of ...": a share, not any number
            found = [m for m in found if m.group().endswith("%") or says_percent(words(line[m.end() :])[:2])]
        if found:
            return True
        if kind == "default" and LITERAL.search(line):
            return True
    return False


def word_parts(text: str) -> set[str]:
    """`content_words`, and those of the words joined into identifiers and compounds: "the maximum number of
    `spec.rayClusterSpec.workerGroupSpecs`" is about worker groups, "a Kueue-managed RayJob" about Kueue."""
    return content_words(text) | content_words(JOINS.sub(" ", text))


JOINS = re.compile(r"(?<=[a-z])(?=[A-Z])|[._-]")  # where an identifier or a compound joins its words

SHARE_ASKED = frozenset({"percentage", "percent"})
# a line that is a section's default, labelled: "Default value: 30s", "Default: true" (a property's own section)
DEFAULT_LABEL = re.compile(r"\W*default(?: value)?\s*[:=]", re.I)


def says_percent(after: list[str]) -> bool:
    """Do the words after a number make it a share: "12 percent", "12 per cent" (not "12 per second")?"""
    return after[:1] in (["percent"], ["percentage"]) or after == ["per", "cent"]


def figure(text: str, kind: str) -> bool:
    """Is the match a figure of the kind asked? A count is not a release ("Kubernetes 1.29", "26.05.3")."""
    parts = text.split(".")
    return kind != "count" or len(parts) < 2 or not all(part.isdigit() for part in parts)


def line_sentences(text: str) -> list[tuple[bool, str]]:
    """`sentences(text)`, each with whether it follows another sentence of its own line."""
    return [(n > 0, sentence) for line in text.splitlines() for n, sentence in enumerate(split_sentences(line))]


def sentences(text: str) -> list[str]:
    """The section's sentences, list items and table rows: its lines (chunks keep one of those a line,
    or a paragraph), each split into sentences."""
    return [sentence for _, sentence in line_sentences(text)]


def measured(asking: str) -> list[str]:
    """The nouns the asking sentences ask a quantity of, as written: "how many GitHub stars and active
    contributors ...?" -> stars; "how much money did it cost ...?" -> money; "how much does it cost?" and
    "how many are there?" -> none (no noun follows)."""
    tokens = words(asking)
    if not any(a == "how" and b in ("many", "much") for a, b in pairwise(tokens)) or not figure_asked(asking):
        return []  # the parse is read only when a quantity is asked ("which field caps how much ...?" asks none)
    parsed = parsed_asking(asking)
    return [
        token.head.text
        for token in parsed[1:]
        if token.lower_ in ("many", "much")
        and parsed[token.i - 1].lower_ == "how"
        and token.head.pos_ in ("NOUN", "PROPN")
        and token.head.i > token.i
        # the noun phrase right after: "how much does a contract cost" parses "cost" as a noun too
        and all(between.pos_ in NOUN_PHRASE for between in parsed[token.i + 1 : token.head.i])
    ]


NOUN_PHRASE = frozenset({"ADJ", "NOUN", "PROPN", "NUM", "PUNCT"})  # "GitHub stars", "active pip downloads"


def sizes(asking: str) -> list[str]:
    """The sizes a figure is asked for, as written: "how much memory should I give it for about 50k pending
    workloads?" -> 50k; "how many workloads per second can it admit on a 5,000-node cluster?" -> 5,000. A size
    is a number of a hundred or more that counts the word after it (`SIZE_NUMBER`); a year is none ("how many
    releases in 2024 alone?", though "a 2000-node cluster" is a size). A figure for a size no page writes is
    stated by none of them: pages that never speak of 2,000 InferenceServices do not say what the
    controller needs for them."""
    if not figure_asked(asking):
        return []
    return [
        match.group().strip()
        for match in SIZE_NUMBER.finditer(asking)
        if COUNTED.match(asking, match.end()) and not (YEAR.fullmatch(match.group()) and asking[match.end()] != "-")
    ]


YEAR = re.compile(r"(?:19|20)\d\d")
COUNTED = re.compile(r"[\s-]+[A-Za-z]")  # the word a size counts follows it: "2,000 InferenceServices", "5,000-node"
