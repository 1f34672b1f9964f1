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


def as_page_brackets(text: str) -> str:
    """`text`, a page's prose, with its own label-shaped brackets (a footnote's `[3]`, `[1, 2]`) written in
    full-width brackets (`［3］`) in what a model reads: a model that quotes the sentence copies them as they
    are, and `to_ids` does not turn them into the ids of entries 3 or 1 and 2. The answer is read as the
    user sees it (NFKC), where they are the page's `[3]` again, a marker of nothing."""
    return LABEL_MARKER.sub(lambda match: "\uff3b" + match.group()[1:-1] + "\uff3d", text)


def to_ids(text: str, labels: dict[str, str]) -> str:
    """`text` with every label marker written with the ids it stands for: `[1, 2]` -> `[MLD-0472, MLD-0012]`.
    A block quoted from an entry is left as written: `ports: [8080]` and `x[0]` are code, not labels."""
    return rewritten_outside(text, block_spans(text) if has_blocks(text) else [], labels)


def rewritten_outside(text: str, spans: list[tuple[int, int]], labels: dict[str, str], offset: int = 0) -> str:
    """`text` with the label markers outside `spans` rewritten to ids; `spans` are (start, end) offsets of
    blocks in a longer text of which `text` starts at `offset`."""
    if not labels:
        return text

    def rewrite(match: re.Match[str]) -> str:
        numbers = [part.strip().lstrip("#") for part in re.split(r"[,;]", match.group("labels"))]
        ids = [labels.get(number.lstrip("0") or "0", UNKNOWN.format(number)) for number in numbers]
        return "[" + ", ".join(dict.fromkeys(ids)) + "]"

    out, last = [], 0
    for start, end in spans:
        start, end = max(start - offset, 0), min(end - offset, len(text))
        if start >= end:  # a block wholly before `text` (the spans are in order and apart)
            continue
        out += [LABEL_MARKER.sub(rewrite, text[last:start]), text[start:end]]
        last = end
    return "".join([*out, LABEL_MARKER.sub(rewrite, text[last:])])


class StreamedBlocks:
    """The blocks of a reply as it arrives: each new complete line is read once (a reply streamed a word at a
    time is tens of deltas a line). A block whose closing fence has not arrived yet runs to the end of what
    has (`blocks.block_spans` leaves an unclosed fence out, as a whole reply must)."""

    def __init__(self) -> None:
        self.closed: list[tuple[int, int]] = []
        self.fence = ""  # the open block's fence, "" outside a block
        self.start = 0  # where the open block's opening fence starts
        self.read = 0  # where the first line not read yet starts

    def spans(self, text: str) -> list[tuple[int, int]]:
        """(start, end) offsets of the blocks in `text`, the reply received so far (each call's text goes on
        from the last's)."""
        while (end := text.find("\n", self.read)) != -1:
            stripped = text[self.read : end].strip()
            if not self.fence and (opening := OPENING.match(stripped)):
                self.fence, self.start = opening.group(1), self.read
            elif self.fence and stripped == self.fence:
                self.closed.append((self.start, end))
                self.fence = ""
            self.read = end + 1
        return [*self.closed, (self.start, len(text))] if self.fence else self.closed


def stream_ids(deltas: Iterable[str], labels: dict[str, str]) -> Iterator[str]:
    """The text deltas of a reply with label markers rewritten to ids as they arrive.

    A delta that ends inside a possible marker (`... speeds up decoding [1`) is held back until the
    marker closes, or until it is clearly no marker (more than `OPEN_LIMIT` characters), so the
    user never sees a label, only the id it stands for. A quoted block's lines are passed on as written,
    however the deltas cut it: the block is told by the reply received so far, whose opening fence came first.
    """
    pending, received = "", ""
    blocks = StreamedBlocks()
    for delta in deltas:
        pending += delta
        cut = pending.rfind("[")
        if cut == -1 or "]" in pending[cut:] or len(pending) - cut > OPEN_LIMIT:
            cut = len(pending)
        ready, pending = pending[:cut], pending[cut:]
        if ready:
            offset, received = len(received), received + ready
            yield rewritten_outside(ready, blocks.spans(received), labels, offset=offset)
    if pending:
        offset, received = len(received), received + pending
        yield rewritten_outside(pending, blocks.spans(received), labels, offset=offset)
