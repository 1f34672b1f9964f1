"""Which way round: "from A to B" and "A before B" say an order that a claim may not reverse.

"Escalations go from the engineering manager to the SRE on-call" has every word of "Escalations go
from the SRE on-call to the engineering manager"; "The application is deployed before the database
is migrated" has every word of "The database is migrated before the application is deployed". The
words around the order words give the two ends:

- `from X to Y`: X is where it starts, Y where it ends (also for values: "rose from 71% to 92%");
- `A before B` / `B after A`: A is the earlier event, B the later one. So "The application is
  deployed after the database is migrated" says the quote's order in other words, and is not an
  antonym of it (`order_agrees`).

Only a sentence with one such pair, on each side, is read this way.
"""

from __future__ import annotations

from collections.abc import Sequence

from assistant.verify.roles import Word

ORDER_WORDS = frozenset({"before", "after"})
EVENT = 3  # content words either side of "before"/"after" that make up an event
END = 2  # content words after "from" or "to" that name an end


def keys(tokens: Sequence[Word]) -> frozenset[object]:
    return frozenset(t.number if t.number is not None else t.key for t in tokens)


def meaningful(tokens: Sequence[Word]) -> list[Word]:
    return [t for t in tokens if t.content or t.number is not None]


def ends(tokens: Sequence[Word]) -> tuple[frozenset[object], frozenset[object]] | None:
    """The (start, end) of the one "from ... to ..." of the sentence, or None."""
    froms = [t.index for t in tokens if t.low == "from"]
    if len(froms) != 1:
        return None
    start = froms[0]
    to = next((t.index for t in tokens[start + 1 : start + 9] if t.low in ("to", "into")), None)
    if to is None:
        return None
    source = meaningful(tokens[start + 1 : to])[-END:]
    target = meaningful(tokens[to + 1 :])[:END]
    if not source or not target:
        return None
    return keys(source), keys(target)


def events(tokens: Sequence[Word]) -> tuple[frozenset[object], frozenset[object]] | None:
    """The (earlier, later) events around the one "before" or "after" of the sentence, or None."""
    found = [t for t in tokens if t.low in ORDER_WORDS]
    if len(found) != 1:
        return None
    word = found[0]
    first = meaningful(tokens[: word.index])[-EVENT:]
    second = meaningful(tokens[word.index + 1 :])[:EVENT]
    if not first or not second:
        return None
    return (keys(first), keys(second)) if word.low == "before" else (keys(second), keys(first))


def reversed_order(claim: Sequence[Word], quote: Sequence[Word]) -> str | None:
    """Why the claim runs the quote's "from ... to ..." or "before/after" the other way, or None."""
    for read, what in ((ends, "from ... to"), (events, "before ... after")):
        ours, theirs = read(claim), read(quote)
        if ours is None or theirs is None:
            continue
        (first, second), (q_first, q_second) = ours, theirs
        crossed = len(first & q_second) + len(second & q_first)
        kept = len(first & q_first) + len(second & q_second)
        if first & q_second and second & q_first and crossed > kept:
            return f"has the {what} of the quote the other way round"
    return None


def order_agrees(claim: Sequence[Word], quote: Sequence[Word]) -> bool:
    """Do claim and quote put the same events in the same order, whatever order word each uses?"""
    ours, theirs = events(claim), events(quote)
    if ours is None or theirs is None:
        return False
    (first, second), (q_first, q_second) = ours, theirs
    return bool(first & q_first and second & q_second) and not (first & q_second or second & q_first)
