"""Example questions derived from the loaded knowledge, so every corpus gets questions it can answer.

A fixed list fits one corpus only ("What caveat does a GPU have?" is refused on the mlsys pack).
Instead: "What is <title>?" for a few concept pages (the richest first), and "Which papers address
<topic>?" for the phrases most paper titles share ("LLM serving", "pipeline parallelism"). The
choice depends only on the entries, so the same knowledge always shows the same examples.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable
from itertools import pairwise

from assistant.text import STOPWORDS
from assistant.types import Entry

COUNT = 4  # example buttons shown
CONCEPTS = 2  # of them "What is ...?" when there are enough concepts and papers
MAX_TITLE = 40  # longer concept titles make a poor button
# words that name the field rather than a topic: a phrase made only of these says nothing
_GENERIC = """large language model models llm llms deep neural network networks machine learning paper
    papers approach approaches method methods efficient new novel towards toward via using based study
    data system systems framework frameworks analysis performance recent modern emerging increasingly
    scale scaling growing deploying"""
GENERIC = frozenset(_GENERIC.split())
# words of an abstract's opening sentence (seed titles are one) that never name a topic
_FILLER = """presents present proposed propose proposes recent recently years widely adopted increasingly rapid
    rapidly significant significantly existing various however work works critical important key"""
FILLER = frozenset(_FILLER.split())
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*")
_PARENS = re.compile(r"\([^)]*\)")


def _stable(text: str) -> str:
    """A deterministic, well-spread sort key (Python's hash() changes per process)."""
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def concept_questions(entries: Iterable[Entry], limit: int) -> list[str]:
    """'What is <title>?' for the concepts with the most filled-in fields; ties in a stable spread order."""
    concepts = [
        e for e in entries if e.kind == "concept" and e.title and len(e.title) <= MAX_TITLE and "?" not in e.title
    ]
    richness = {e.id: sum(1 for v in e.fields.values() if v) for e in concepts}
    concepts.sort(key=lambda e: (-richness[e.id], _stable(e.id)))
    return [f"What is {' '.join(_PARENS.sub(' ', e.title).split())}?" for e in concepts[:limit]]


def _words(title: str) -> list[str]:
    """A title's words without parenthesised acronyms ("Large language models (LLMs) ...") or a cut end."""
    title = _PARENS.sub(" ", title)
    if title.endswith("…"):  # a title cut short: its last word may be a fragment
        title = title.rstrip("…").rsplit(" ", 1)[0]
    return _WORD.findall(title)


def _phrase(words: list[str]) -> str:
    """Lower-case the words, keeping acronyms (LLM, KV) as written."""
    return " ".join(w if sum(c.isupper() for c in w) > 1 else w.lower() for w in words)


def topic_phrases(entries: Iterable[Entry], limit: int) -> list[str]:
    """Two-word phrases that the most paper titles share, skipping stopwords and field-generic pairs."""
    counts: Counter[str] = Counter()
    for entry in entries:
        if entry.kind != "abstract":
            continue
        words = _words(entry.title)
        pairs = set()
        for first, second in pairwise(words):
            a, b = first.lower(), second.lower()
            if {a, b} & (STOPWORDS | FILLER) or (a in GENERIC and b in GENERIC):
                continue
            pairs.add(_phrase([first, second]))
        counts.update(pairs)
    ranked = sorted((phrase for phrase, n in counts.items() if n >= 2), key=lambda p: (-counts[p], p.lower()))
    chosen: list[str] = []
    for phrase in ranked:
        phrase_words = set(phrase.lower().split())
        if any(phrase_words & set(other.lower().split()) - GENERIC for other in chosen):
            continue  # "LLM serving" and "serving systems": one topic, not two
        chosen.append(phrase)
        if len(chosen) == limit:
            break
    return chosen


def example_questions(entries: Iterable[Entry], count: int = COUNT) -> list[str]:
    """About `count` questions the knowledge can answer: concept definitions, then paper topics."""
    entries = list(entries)
    topics = topic_phrases(entries, count)
    concepts = concept_questions(entries, count)
    take = min(len(concepts), max(CONCEPTS, count - len(topics)))
    papers = [f"Which papers address {topic}?" for topic in topics[: count - take]]
    return concepts[:take] + papers
