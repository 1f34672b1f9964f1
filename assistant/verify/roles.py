"""Who does what: a claim that swaps the two sides of the quote's predicate is not what the quote says.

"Producer-consumer imbalance causes the heterogeneity of LLM workloads" has every word of "the
heterogeneity of LLM workloads causes producer-consumer imbalance", and so does "AWS Athena
outperforms Odyssey" of "Odyssey outperforms AWS Athena". No list of phrasings can cover this, so
the check reads the order of content words around a shared predicate:

- a pivot is a content word both sides have once (the predicate, "causes", "outperforms",
  "reduce"), with shared content words on both of its sides in the claim;
- each side's argument groups are the nearest `WINDOW` content words before and after it (the
  entry's subject counts as said before the quote when the quote leaves it out: "Accelerate
  neural-network training" on the GPU page is said of GPUs);
- a passive with an agent ("X is caused by Y", "X is reviewed every quarter by Y") is read in the
  active order ("Y causes X"); "reduced by 40%" has no agent;
- the claim swaps roles when, for some pivot, words before it in the claim are after it in the
  quote and words after it are before it, and these crossings outnumber the words that kept their
  side. A clause moved as a whole ("To reduce X, Y does Z") crosses on one side only, and is fine.

Symmetric predicates ("overlaps X with Y", "differs from", "between") and list items (a pivot
next to "and", "or" or a comma) are never pivots: their order carries no role.

A claim may also put another participant in a role (`substituted_argument`): "The platform team owns
the Loki cluster" against "The observability team owns the Loki cluster", when the page gives the
platform team something else to own in another sentence.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

from assistant.verify.lexicon import TIME_WORDS, UNIT_WORDS


def words(text: str) -> frozenset[str]:
    return frozenset(text.split())


WINDOW = 4  # content words either side of the pivot that make up its arguments
PARTICIPANT = 3  # content words of a side that `substituted_argument` reads as one participant
SHORT = 8  # content words of a sentence that `substituted_argument` reads as one fact
BE = frozenset({"is", "are", "was", "were", "be", "been", "being"})
# participles that do not end in -ed or -en, and the -en ones whose stem is not the verb's
IRREGULAR = {
    "driven": "drive",
    "done": "do",
    "made": "make",
    "built": "build",
    "held": "hold",
    "led": "lead",
    "fed": "feed",
    "run": "run",
    "seen": "see",
    "grown": "grow",
    "drawn": "draw",
    "taken": "take",
    "given": "give",
    "written": "write",
    "chosen": "choose",
    "shown": "show",
    "known": "know",
    "sent": "send",
    "spent": "spend",
    "kept": "keep",
    "brought": "bring",
    "caught": "catch",
    "taught": "teach",
    "bought": "buy",
    "thought": "think",
    "found": "find",
    "won": "win",
    "beaten": "beat",
    "overtaken": "overtake",
    "outrun": "outrun",
    "undertaken": "undertake",
}
SYMMETRIC = words(
    """compare compared compares comparing differ differs differed different similar same equal equals
    between overlap overlaps overlapped overlapping combine combines combined combining couple couples
    coupled pair pairs paired link links linked connect connects connected versus vs both each other
    together alongside match matches matched mix mixes mixed balance balances balanced trade tradeoff
    exchange exchanges exchanged swap swaps swapped"""
)
LIST_WORDS = frozenset({"and", "or", "nor", "as", "well"})
# words after which a verb stands ("to reduce", "can outperform"), and after which a noun does ("the use")
BEFORE_VERB = frozenset({"to", "can", "could", "may", "might", "will", "would", "should", "must", "does", "do", "did"})
ADVERBS = frozenset({"then", "also", "often", "further", "first", "still", "now", "always", "thus", "even"})
BEFORE_NOUN = words(
    """the a an its their his her our your this that these those of for in on at from with by into
    about over under than some any no each every such"""
)


class Word(Protocol):
    """What the check needs of a token (`assistant.verify.support.Token` has it)."""

    @property
    def low(self) -> str: ...
    @property
    def key(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def index(self) -> int: ...
    @property
    def content(self) -> bool: ...
    @property
    def name(self) -> bool: ...
    @property
    def number(self) -> tuple[float, str] | None: ...
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...


def verb_key(word: Word) -> str:
    """The key a predicate is matched by: its stem, an irregular participle as its verb."""
    return IRREGULAR.get(word.low, word.key)


def swapped_roles(
    claim: Sequence[Word],
    quote: Sequence[Word],
    text: str,
    quote_text: str,
    subject: Iterable[str] = (),
    clause_of: tuple[Mapping[int, int], Mapping[int, int]] | None = None,
) -> str | None:
    """Why the claim reverses who does what to whom in the quote, or None when it does not.

    A pivot the quote has more than once ("reduces ... minimize" of one synonym group) must be
    crossed at every place it reads as a verb there. `clause_of` (token index -> clause, for claim
    and quote) keeps a pivot's sides within its clause: "The artifact cache is served on port 5000,
    and the metrics exporter on port 9100" says the same as the quote in the other order.
    """
    claim_clauses, quote_clauses = clause_of or ({}, {})
    subject = frozenset(subject)
    implied = subject - {t.key for t in quote}  # said of the entry's subject, which the sentence leaves out
    quote_sides: dict[str, list[Sides]] = {}
    for key, sides in sides_by_pivot(quote, quote_text, unique=False, clause_of=quote_clauses):
        if sides[2]:
            quote_sides.setdefault(key, []).append(sides)
    for pivot, (before, after, verb) in sides_by_pivot(claim, text, unique=True, clause_of=claim_clauses):
        if not verb or pivot not in quote_sides:
            continue
        reasons = [
            crossing(before, after, q_before | implied, q_after, subject) for q_before, q_after, _ in quote_sides[pivot]
        ]
        if all(reasons):
            forward, back = reasons[0] or (frozenset(), frozenset())
            return f"has {words_of(claim, forward)} and {words_of(claim, back)} the other way round"
    return None


Sides = tuple[frozenset[str], frozenset[str], bool]


def crossing(
    before: frozenset[str],
    after: frozenset[str],
    q_before: frozenset[str],
    q_after: frozenset[str],
    subject: frozenset[str],
) -> tuple[frozenset[str], frozenset[str]] | None:
    """The claim's words after the pivot that the quote has before it, and the other way round, when
    both are there and outnumber the words that kept their side; else None."""
    back, forward = before & q_after, after & q_before
    kept = (before & q_before) | (after & q_after)
    if back and forward and len(back | forward) >= len(kept - subject):
        return forward, back
    return None


def words_of(tokens: Sequence[Word], keys: frozenset[str]) -> str:
    """The claim's own words for a set of keys, in its order."""
    return " ".join(dict.fromkeys(t.text for t in tokens if t.key in keys)) or " ".join(sorted(keys))


def sides_by_pivot(
    tokens: Sequence[Word], text: str, unique: bool, clause_of: Mapping[int, int] | None = None
) -> list[tuple[str, Sides]]:
    """For each possible pivot (by its verb key): the keys of the content words before and after it
    (in its clause, when `clause_of` says where each token is), in active order, and whether it reads
    as a verb here (it must on both sides); with `unique`, only the words the text has once."""
    clause_of = clause_of or {}
    every = [t for t in tokens if t.content and t.number is None]
    seen: dict[str, int] = {}
    for t in every:
        seen[verb_key(t)] = seen.get(verb_key(t), 0) + 1
    out = []
    for pivot in every:
        content = [t for t in every if clause_of.get(t.index, 0) == clause_of.get(pivot.index, 0)]
        position = content.index(pivot)
        key = verb_key(pivot)
        if (unique and seen[key] > 1) or pivot.name or pivot.low in SYMMETRIC:
            continue
        if in_list(pivot, tokens, text):
            continue
        before = frozenset(t.key for t in content[max(0, position - WINDOW) : position] if argument(t, key))
        after = frozenset(t.key for t in content[position + 1 : position + 1 + WINDOW] if argument(t, key))
        before, after = before - after, after - before  # a word on both sides says nothing of its role
        if not before and not after:
            continue
        if agent_follows(pivot, tokens):
            before, after = after, before
        out.append((key, (before, after, verb_like(pivot, tokens, text))))
    return out


def argument(word: Word, pivot: str) -> bool:
    """A word that names a participant (not the pivot itself, not an adverb, not when it happens:
    "Every night at 02:00 UTC, full backups are run" has the roles of "Full backups run every night")."""
    return word.key != pivot and not word.low.endswith("ly") and word.low not in UNIT_WORDS | TIME_WORDS


def verb_like(word: Word, tokens: Sequence[Word], text: str) -> bool:
    """Could the word be the predicate here? After "to" or a modal; not after a determiner or a
    preposition; otherwise a verb form ("causes", "driven"), a base form after a plural subject
    ("pipelines outperform") or opening a clause ("Accelerate neural-network training")."""
    i = word.index - 1
    while i >= 0 and (tokens[i].low.endswith("ly") or tokens[i].low in ADVERBS):
        i -= 1
    previous = tokens[i] if i >= 0 else None
    low = word.low
    if previous is not None and previous.low in BEFORE_VERB:
        return True
    if previous is not None and previous.low in BEFORE_NOUN:
        return False
    if (low.endswith(("ed", "s")) and not low.endswith(("ss", "us", "is"))) or low in IRREGULAR:
        return True
    if low.endswith(("ing", "tion", "ment", "ness", "ity", "ance", "ence")):
        return False
    if previous is None or re.search(r"[:;.(]\s*$", text[previous.end : word.start]):
        return True  # it opens a clause
    return previous.content and previous.low.endswith("s") and not previous.name


def in_list(word: Word, tokens: Sequence[Word], text: str) -> bool:
    """Is the word an item of a list ("parameters, gradients, and optimizer states")?"""
    i = word.index
    neighbours = [tokens[j].low for j in (i - 1, i + 1) if 0 <= j < len(tokens)]
    if any(n in LIST_WORDS for n in neighbours):
        return True
    after = text[word.end : word.end + 2]
    before = text[max(0, word.start - 2) : word.start]
    return "," in after or "," in before


def agent_follows(word: Word, tokens: Sequence[Word]) -> bool:
    """A passive participle with its agent: "is caused by the load", "are often tackled by X"."""
    low = word.low
    if not (low.endswith(("ed", "en")) or low in IRREGULAR):
        return False
    i = word.index
    earlier = [t.low for t in tokens[max(0, i - 3) : i]]
    if not any(w in BE for w in earlier):
        return False
    j = i + 1  # "reviewed every quarter by", "rotated every 90 days by": the agent after a time or an adverb
    while j < min(len(tokens), i + 4) and tokens[j].low != "by" and adverbial(tokens[j]):
        j += 1
    following = tokens[j : j + 2]
    if not following or following[0].low != "by":
        return False
    return len(following) < 2 or following[1].number is None  # "reduced by 40%" names no agent


def participants(tokens: Sequence[Word], keys: frozenset[str]) -> frozenset[str]:
    """The keys that may name who or what (not a light word such as "often" or "example")."""
    return frozenset(t.key for t in tokens if t.key in keys and getattr(t, "weight", 1.0) == 1.0)


def adverbial(word: Word) -> bool:
    """A word that may stand between a participle and its agent: a number, a time unit, an adverb, a
    function word ("every", "once", "a")."""
    return word.number is not None or word.low in UNIT_WORDS | TIME_WORDS or word.low.endswith("ly") or not word.content


def substituted_argument(
    claim: Sequence[Word],
    quote: Sequence[Word],
    text: str,
    quote_text: str,
    others: Iterable[frozenset[str]],
    subject: Iterable[str] = (),
) -> str | None:
    """Why the claim gives a role of the quote's predicate to someone another sentence of the entry
    names, or None: "The platform team owns the Loki cluster" against "The observability team owns
    the Loki cluster" when the platform team owns something else on the page. `others` are the keys of
    the entry's other sentences. Only short sentences (up to `SHORT` content words, claim and quote
    alike: "The observability team owns the Loki cluster", not an abstract's, where a plural noun
    reads like a verb) and short participants (up to `PARTICIPANT` content words put in or left out:
    "the security lead") are compared, and never the entry's subject, which any sentence may be
    about."""
    if max(sum(t.content for t in claim), sum(t.content for t in quote)) > SHORT:
        return None
    own = frozenset(t.key for t in quote)
    subject = frozenset(subject)
    quote_sides = {key: sides for key, sides in sides_by_pivot(quote, quote_text, unique=False) if sides[2]}
    for pivot, (before, after, verb) in sides_by_pivot(claim, text, unique=True):
        if not verb or pivot not in quote_sides:
            continue
        q_before, q_after, _ = quote_sides[pivot]
        for side, q_side in ((before, q_before), (after, q_after)):
            added = participants(claim, side - q_side - own - subject)
            left = participants(quote, q_side - side - subject)
            if len(added) > PARTICIPANT or len(left) > PARTICIPANT:
                continue
            if added and left and any(added <= keys for keys in others):
                return f"says {words_of(claim, added)} where the quote says {' '.join(sorted(left))}"
    return None
