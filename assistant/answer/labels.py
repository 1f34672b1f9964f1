"""Short entry labels in the model's context ([1], [2]) and the real ids they stand for.

A small model copies `[2]` far more reliably than `[arxiv:2512.19606]`, so the context the model
reads labels each entry with a number (`context.pack_context`), and its reply is rewritten to the
real ids before anything else reads it: the verifier, the answer text and the text streamed to
the user all deal in real ids only. A number no entry carries becomes `[entry-N]`, which the
verifier removes as an id that was not in the context (and drops the sentence that cited only it).
A real id a model writes anyway is left as it is: it verifies as before.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from assistant.blocks import OPENING, block_spans, has_blocks

# [1], [1, 3], [1; 3], [#2]: square brackets only, so a "(1)" of an enumerated list stays prose
LABEL_MARKER = re.compile(r"\[\s*#?(?P<labels>\d{1,3}(?:\s*[,;]\s*#?\d{1,3})*)\s*\]")
UNKNOWN = "entry-{}"  # what a number no entry carries becomes: an id the verifier drops
OPEN_LIMIT = 24  # characters held back after an unclosed "[" while streaming, at most


def to_ids(text: str, labels: dict[str, str]) -> str:
    """`text` with every label marker written with the ids it stands for: `[1, 2]` -> `[MLD-0472, MLD-0012]`.
    A block quoted from an entry is left as written: `ports: [8080]` and `x[0]` are code, not labels."""
    if not labels:
        return text
    return rewritten_outside(text, block_spans(text) if has_blocks(text) else [], labels)


def rewritten_outside(text: str, spans: list[tuple[int, int]], labels: dict[str, str], offset: int = 0) -> str:
    """`text` with the label markers outside `spans` rewritten to ids; `spans` are (start, end) offsets of
    blocks in a longer text of which `text` starts at `offset`."""

    def rewrite(match: re.Match[str]) -> str:
        numbers = [part.strip().lstrip("#") for part in re.split(r"[,;]", match.group("labels"))]
        ids = [labels.get(number.lstrip("0") or "0", UNKNOWN.format(number)) for number in numbers]
        return "[" + ", ".join(dict.fromkeys(ids)) + "]"

    out, last = [], 0
    for start, end in spans:
        start, end = max(start - offset, 0), min(end - offset, len(text))
        if start >= end or end <= last:
            continue
        out += [LABEL_MARKER.sub(rewrite, text[last:start]), text[start:end]]
        last = end
    return "".join([*out, LABEL_MARKER.sub(rewrite, text[last:])])


def streamed_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of the blocks in a reply received so far: a block whose closing fence has not
    arrived yet runs to the end of what has (`blocks.block_spans` leaves an unclosed fence out, as a whole
    reply must)."""
    spans: list[tuple[int, int]] = []
    fence, start, position = "", 0, 0
    for line in text.split("\n"):
        stripped = line.strip()
        if not fence and (opening := OPENING.match(stripped)):
            fence, start = opening.group(1), position
        elif fence and stripped == fence:
            spans.append((start, position + len(line)))
            fence = ""
        position += len(line) + 1
    if fence:
        spans.append((start, len(text)))
    return spans


def stream_ids(deltas: Iterable[str], labels: dict[str, str]) -> Iterator[str]:
    """The text deltas of a reply with label markers rewritten to ids as they arrive.

    A delta that ends inside a possible marker (`... speeds up decoding [1`) is held back until the
    marker closes, or until it is clearly no marker (more than `OPEN_LIMIT` characters), so the
    user never sees a label, only the id it stands for. A quoted block's lines are passed on as written,
    however the deltas cut it: the block is told by the reply received so far, whose opening fence came first.
    """
    pending, received = "", ""
    for delta in deltas:
        pending += delta
        cut = pending.rfind("[")
        if cut == -1 or "]" in pending[cut:] or len(pending) - cut > OPEN_LIMIT:
            cut = len(pending)
        ready, pending = pending[:cut], pending[cut:]
        if ready:
            yield rewritten_ready(received, ready, labels)
            received += ready
    if pending:
        yield rewritten_ready(received, pending, labels)


def rewritten_ready(received: str, ready: str, labels: dict[str, str]) -> str:
    """The `ready` part of a reply, after the `received` part, with its labels outside blocks rewritten."""
    if not labels:
        return ready
    whole = received + ready
    spans = streamed_spans(whole) if has_blocks(whole) else []
    return rewritten_outside(ready, spans, labels, offset=len(received))
