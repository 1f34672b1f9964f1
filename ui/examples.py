"""Example questions derived from the loaded knowledge, so every corpus gets questions it can answer.

A fixed list fits one corpus only ("What caveat does a GPU have?" is refused on the mlsys pack).
Instead: "What is <concept>?" for a few concept titles, and "Which papers address <topic>?" for
the phrases most paper titles share. Both must read as a person would ask them, which needs no
part-of-speech tagger, only the knowledge's own wording:

- a concept qualifies when its title names a thing: two or more words, or an acronym ("GPU"); a
  lone common word ("Operation", "session") is too vague to ask about, and a glossary page that
  only points elsewhere ("Abbreviation for ...") does not define it. The concepts the papers
  mention most come first (they tie the glossary to the papers), then the fullest pages;
- the article follows how the knowledge writes the phrase ("a learning rate" against "using gradient
  descent"), else the entry's own definition: "A processor designed ..." makes "What is a GPU?",
  "A way to save memory ..." under a title ending in -ing, -ism, -tion (a practice, not a thing)
  makes "What is gradient checkpointing?"; a heading's capital is dropped unless the knowledge
  capitalises the word inside sentences ("Pipeline parallelism" -> "pipeline parallelism", "Markov" kept);
- a topic qualifies when it is a noun phrase in the knowledge's own text: somewhere it follows a
  determiner or preposition ("for LLM inference.") and ends a phrase. "allows GPU" never does.

A team's documents have neither concepts nor paper titles; their sections' headings say what they
answer. A heading that is a question ("What is Feast?") is asked as written; one that says how to do
something is asked as "How do I ...?": "How to drain a node", "Draining a node" and "Drain a node" all
give "How do I drain a node?". A first word counts as a verb when the knowledge writes it after "to"
("to drain"), the same own-wording test as above, and a function word follows it ("Run modes" may
name a thing). One question per document, so the examples span the knowledge; a small knowledge
whose headings ask nothing gets "What does the <document> say about <heading>?" for short headings.

The choice depends only on the entries, so the same knowledge always shows the same examples.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable
from itertools import pairwise

from assistant import Entry
from assistant.text import POINTER_PHRASES, STOPWORDS

COUNT = 4  # example buttons shown
CONCEPTS = 2  # of them "What is ...?" when there are enough concepts and papers
MAX_TITLE = 40  # longer concept titles make a poor button
# words that name the field rather than a topic: a phrase made only of these says nothing
_GENERIC = """large language model models llm llms deep neural network networks machine learning paper
    papers approach approaches method methods efficient new novel towards toward via using based study
    data system systems framework frameworks analysis performance recent modern emerging increasingly
    scale scaling growing deploying artificial intelligence"""
GENERIC = frozenset(_GENERIC.split())
# words of an abstract's opening sentence (seed titles are one) that never name a topic
_FILLER = """presents present proposed propose proposes recent recently years widely adopted increasingly rapid
    rapidly significant significantly existing various however work works critical important key"""
FILLER = frozenset(_FILLER.split())
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*")
_PARENS = re.compile(r"\([^)]*\)")
_POINTER = re.compile(rf"^\W*(?:an?\s+)?(?:{POINTER_PHRASES})\b", re.I)
# a title's last word with one of these endings names a practice or a quality: no article
_MASS_ENDINGS = ("ing", "ism", "tion", "sion", "ment", "ness", "ity", "ics", "ance", "ence", "acy")
# what comes before a noun phrase (the preposition "to" is left out: "to accelerate training" is a verb)
_OPENERS = "the a an of for in on with by from about under over across via through and or its their our"
OPENERS = frozenset(_OPENERS.split())


# the word just before a phrase (group 1), or a sentence start (no group), at the end of the searched span
_BEFORE = re.compile(r"(?:([a-z]+)[ \t]+|(?:^|[.!?:]\s+|\n))$")
_CLOSED = re.compile(rf"\s*(?:[.,;:!?()]|\n|$)|\s+(?:{'|'.join(sorted(STOPWORDS))})\b")
BARE_AFTER = frozenset(["of", "for", "in", "on", "with", "by", "from", "via", "using", "through", "and", "or"])


def _stable(text: str) -> str:
    """A deterministic, well-spread sort key (Python's hash() changes per process)."""
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def _flat(text: str) -> str:
    """Lower-cased words separated by single spaces, padded, for whole-word phrase counts."""
    return " " + " ".join(re.findall(r"[a-z0-9]+", text.lower())) + " "


class Wording:
    """How the knowledge itself writes: which phrases its papers mention, and which words it lower-cases."""

    def __init__(self, entries: list[Entry]) -> None:
        self.papers = [f"{e.title}\n{e.text}" for e in entries if e.kind == "abstract"]
        self.flat_titles = _flat("\n".join(e.title for e in entries if e.kind == "abstract"))
        self.cases = Counter(re.findall(r"[a-z][a-z0-9-]*", "\n".join(e.text for e in entries)))
        everything = [*self.papers, *(f"{e.title}\n{e.text}" for e in entries if e.kind != "abstract")]
        self.raw = "\n".join(everything)
        self.lower = self.raw.lower()

    def mentions(self, phrase: str) -> int:
        """Paper titles that name `phrase`, as whole words."""
        return self.flat_titles.count(_flat(phrase))

    def written_lower(self, word: str) -> bool:
        """Whether a capitalised `word` is an ordinary word the knowledge writes in lower case: it is written
        capitalised inside sentences (as a name, "a Markov decision process") no more often than lower-cased."""
        inside = 0
        for match in re.finditer(rf"{re.escape(word)}\b", self.raw):
            inside += bool(re.fullmatch(r"[\w,;)] ", self.raw[max(0, match.start() - 2) : match.start()]))
        return inside <= self.cases[word.lower()]

    def contexts(self, phrase: str) -> list[tuple[str, bool]]:
        """Per whole-word occurrence of `phrase`: the word before it ("." at a sentence start), and whether
        punctuation or a function word closes it there."""
        out = []
        words = r"\s+".join(re.escape(w) for w in phrase.lower().split())
        for match in re.finditer(words, self.lower):  # a literal start: fast; word edges checked below
            edges = self.lower[match.start() - 1 : match.start()], self.lower[match.end() : match.end() + 1]
            if any(c.isalnum() or c == "-" for c in "".join(edges)):
                continue
            before = _BEFORE.search(self.lower, max(0, match.start() - 30), match.start())
            if match.start() == 0 or (before is not None and before.group(1) is None):
                word = "."  # a sentence (or title) starts here
            else:
                word = before.group(1) if before is not None else ""
            out.append((word, _CLOSED.match(self.lower, match.end()) is not None))
        return out

    def is_noun_phrase(self, phrase: str) -> bool:
        """`phrase` opened by a sentence start, a determiner or a preposition, and closed by punctuation or a
        function word somewhere ("Dynamic parallelism on GPUs", "for LLM inference.")."""
        return any(closed and (word == "." or word in OPENERS) for word, closed in self.contexts(phrase))

    def usage(self, phrase: str) -> tuple[int, int, int]:
        """How often the knowledge writes the whole phrase after "a/an", after "the", and bare after a preposition."""
        closed = [word for word, ok in self.contexts(phrase) if ok]
        return (
            sum(w in ("a", "an") for w in closed),
            sum(w == "the" for w in closed),
            sum(w in BARE_AFTER for w in closed),
        )


def _is_acronym(word: str) -> bool:
    return sum(c.isupper() for c in word) >= 2


def _definition(entry: Entry) -> str:
    return str(entry.fields.get("definition") or entry.text or "")


def _names_a_thing(title: str, entry: Entry) -> bool:
    """Two or more words, not all of them field-generic, or one acronym; and the page defines it."""
    words = title.split()
    if len(words) == 1 and not _is_acronym(words[0]):
        return False
    if all(w.lower() in GENERIC | STOPWORDS for w in words):
        return False
    return not _POINTER.match(_definition(entry))


def _article(title: str, definition: str, usage: tuple[int, int, int]) -> str:
    """ "a "/"an " when the concept is a thing one counts, else "" ("What is gradient descent?").

    The knowledge's own usage decides first: "a learning rate" written at least as often as "using
    learning rate"; a phrase only ever written after "the" counts too ("the objective function").
    Without usage, the definition does: "A processor designed ..." is a thing, unless the title ends
    like a practice or quality (-ing, -ism, -tion: "A way to save memory" for gradient checkpointing).
    """
    with_a, with_the, bare = usage
    if with_a or bare or with_the:
        countable = with_a >= bare if with_a else not bare
    else:
        head = title.split(" of ")[0].split()[-1]
        countable = bool(re.match(r"^(?:A|An)\s", definition.strip())) and not head.lower().endswith(_MASS_ENDINGS)
    if not countable:
        return ""
    first = title.split()[0]
    if _is_acronym(first):
        vowel_sound = first[0].upper() in "AEFHILMNORSX"  # "an LLM", "an RNN", "a GPU"
    else:
        vowel_sound = first[0].lower() in "aeiou" and not re.match(r"(?i)u[bcdfgklnrst][aeiou]|eu|one\b", first)
    return "an " if vowel_sound else "a "


def _as_written(title: str, wording: Wording) -> str:
    """A heading's capitals dropped where the knowledge writes the word in lower case."""
    words = title.split()
    return " ".join(w.lower() if w[:1].isupper() and w[1:].islower() and wording.written_lower(w) else w for w in words)


def concept_question(entry: Entry, wording: Wording) -> str:
    title = " ".join(_PARENS.sub(" ", entry.title).split())
    article = _article(title, _definition(entry), wording.usage(title))
    return f"What is {article}{_as_written(title, wording)}?"


def concept_questions(entries: Iterable[Entry], limit: int, wording: Wording | None = None) -> list[str]:
    """'What is <title>?' for concepts that name a thing: the most mentioned by papers, then the fullest pages."""
    entries = list(entries)
    wording = wording or Wording(entries)
    concepts = []
    for e in entries:
        title = " ".join(_PARENS.sub(" ", e.title).split())
        fits = e.kind == "concept" and title and len(title) <= MAX_TITLE and "?" not in title
        if fits and _names_a_thing(title, e):
            concepts.append((e, title))
    mentions = {e.id: wording.mentions(title) for e, title in concepts}
    richness = {e.id: sum(1 for v in e.fields.values() if v) for e, _ in concepts}
    concepts.sort(key=lambda c: (-mentions[c[0].id], -richness[c[0].id], _stable(c[0].id)))
    return [concept_question(e, wording) for e, _ in concepts[:limit]]


def _words(title: str) -> list[str]:
    """A title's words without parenthesised acronyms ("Large language models (LLMs) ...") or a cut end."""
    title = _PARENS.sub(" ", title)
    if title.endswith("…"):  # a title cut short: its last word may be a fragment
        title = title.rstrip("…").rsplit(" ", 1)[0]
    return _WORD.findall(title)


def _phrase(words: list[str]) -> str:
    """Lower-case the words, keeping acronyms (LLM, KV) as written."""
    return " ".join(w if _is_acronym(w) else w.lower() for w in words)


def topic_phrases(entries: Iterable[Entry], limit: int, wording: Wording | None = None) -> list[str]:
    """Two-word noun phrases that the most paper titles share, skipping stopwords and field-generic pairs."""
    entries = list(entries)
    wording = wording or Wording(entries)
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
        if not wording.is_noun_phrase(phrase):
            continue  # "allows GPU": two words side by side, not a topic
        chosen.append(phrase)
        if len(chosen) == limit:
            break
    return chosen


MAX_HEADING = 60  # a longer heading makes a poor button
_HOW_TO = re.compile(r"^how\s+to\s+", re.I)
STATEMENT_VERBS = frozenset(["is", "are", "was", "were", "has", "have", "does", "do"])
_NEGATED = re.compile(r"\bnot\b|n't\b", re.I)  # "What Feast is not?" asks nothing the section answers


def _verb_base(word: str, written: str) -> str | None:
    """`word` (a heading's first word) as a verb, else None. A gerund ("Draining", "Using") is a task when
    the knowledge writes its base form ("drain", "use"); another word when the knowledge writes it after
    "to" more often than after "the" or "a" ("to install", not "the client")."""
    low = word.lower()
    if not low.isalpha() or low in STOPWORDS or _is_acronym(word):
        return None
    if low.endswith("ing") and len(low) >= 6:
        stem = low[:-3]
        forms = [stem + "e", stem[:-1] if stem[-1] == stem[-2] else stem, stem]
        return next((f for f in forms if len(f) > 2 and f" {f} " in written), None)
    as_verb = written.count(f" to {low} ")
    as_noun = written.count(f" the {low} ") + written.count(f" a {low} ") + written.count(f" an {low} ")
    return low if as_verb > as_noun else None


def heading_question(heading: str, written: str) -> str | None:
    """A question a section's own heading asks or implies, or None (see the module docstring)."""
    text = " ".join(_PARENS.sub(" ", re.sub(r"<[^>]*>|[`*_]", "", heading)).split()).strip(" :")
    if not text or len(text) > MAX_HEADING or not re.match(r"[A-Za-z]", text):
        return None
    if text.endswith("?"):
        return None if _NEGATED.search(text) or len(text.split()) < 3 else text[0].upper() + text[1:]
    rest = _HOW_TO.sub("", text)
    words = rest.split()
    if len(words) < 2 or any(c in rest for c in ".:#") or set(map(str.lower, words)) & STATEMENT_VERBS:
        return None  # a sentence ("Jobs are stuck in COMPLETING state"), not a task
    second = words[1].lower()
    if second in ("and", "or") or second not in STOPWORDS:
        return None  # "Versioning policy", "Run modes", "Network and ...": names as often as tasks
    # a task reads as a verb with its object or place: "Install the agent", "Draining a node", "Deploy as a service"
    verb = _verb_base(words[0], written)
    if verb is None:
        return None
    return f"How do I {verb} {' '.join(words[1:])}?"


def section_topic_question(entry: Entry) -> str | None:
    """'What does <document> say about <section>?' for a short heading that names a topic ("Storage")."""
    heading = " ".join(str(entry.fields.get("section") or "").split(" › ")[-1:]).strip()
    document = str(entry.fields.get("document") or "").strip()
    words = heading.split()
    if not document or not 1 <= len(words) <= 4 or not re.fullmatch(r"[A-Za-z][\w -]*", heading):
        return None
    if len(document) > MAX_HEADING or document.lower() == heading.lower():
        return None
    topic = heading if _is_acronym(words[0]) else heading[0].lower() + heading[1:]
    return f"What does the {document} say about {topic}?"


def document_questions(entries: Iterable[Entry], limit: int) -> list[str]:
    """Questions that sections' headings ask or imply, one per document, in a stable spread order; when
    fewer headings ask one, a short heading's topic ("What does the handbook say about storage?")."""
    documents = sorted((e for e in entries if e.kind == "document"), key=lambda e: _stable(e.id))
    written = _flat("\n".join(e.text for e in documents))
    chosen: dict[str, str] = {}  # the document's path -> its question
    for ask in (
        lambda entry: heading_question(str(entry.fields.get("section") or "").split(" › ")[-1], written),
        section_topic_question,
    ):
        for entry in documents:
            path = str(entry.fields.get("path") or entry.id.split("#", 1)[0])
            question = ask(entry) if path not in chosen else None
            if question and question not in chosen.values():
                chosen[path] = question
                if len(chosen) == limit:
                    return list(chosen.values())
    return list(chosen.values())


def example_questions(entries: Iterable[Entry], count: int = COUNT) -> list[str]:
    """About `count` questions the knowledge can answer: concept definitions, then paper topics; on a
    knowledge of documents alone, what the documents' headings ask."""
    entries = list(entries)
    if not any(e.kind in ("concept", "abstract") for e in entries):
        return document_questions(entries, count)
    wording = Wording(entries)
    concepts = concept_questions(entries, count, wording)
    asked = " ".join(concepts).lower()
    topics = [t for t in topic_phrases(entries, count + CONCEPTS, wording) if f" {t.lower()}?" not in asked]
    take = min(len(concepts), max(CONCEPTS, count - len(topics)))
    papers = [f"Which papers address {topic}?" for topic in topics[: count - take]]
    return concepts[:take] + papers
