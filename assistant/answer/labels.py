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

from assistant.blocks import block_spans, has_blocks

# [1], [1, 3], [1; 3], [#2]: square brackets only, so a "(1)" of an enumerated list stays prose
LABEL_MARKER = re.compile(r"\[\s*#?(?P<labels>\d{1,3}(?:\s*[,;]\s*#?\d{1,3})*)\s*\]")
UNKNOWN = "entry-{}"  # what a number no entry carries becomes: an id the verifier drops
OPEN_LIMIT = 24  # characters held back after an unclosed "[" while streaming, at most


def to_ids(text: str, labels: dict[str, str]) -> str:
    """`text` with every label marker written with the ids it stands for: `[1, 2]` -> `[MLD-0472, MLD-0012]`."""
    if not labels:
        return text

    def rewrite(match: re.Match[str]) -> str:
        numbers = [part.strip().lstrip("#") for part in re.split(r"[,;]", match.group("labels"))]
        ids = [labels.get(number.lstrip("0") or "0", UNKNOWN.format(number)) for number in numbers]
        return "[" + ", ".join(dict.fromkeys(ids)) + "]"

    if not has_blocks(text):
        return LABEL_MARKER.sub(rewrite, text)
    # a block quoted from an entry is left as written: `ports: [8080]` and `x[0]` are code, not labels
    out, last = [], 0
    for start, end in block_spans(text):
        out += [LABEL_MARKER.sub(rewrite, text[last:start]), text[start:end]]
        last = end
    return "".join([*out, LABEL_MARKER.sub(rewrite, text[last:])])


def stream_ids(deltas: Iterable[str], labels: dict[str, str]) -> Iterator[str]:
    """The text deltas of a reply with label markers rewritten to ids as they arrive.

    A delta that ends inside a possible marker (`... speeds up decoding [1`) is held back until the
    marker closes, or until it is clearly no marker (more than `OPEN_LIMIT` characters), so the
    user never sees a label, only the id it stands for.
    """
    pending = ""
    for delta in deltas:
        pending += delta
        cut = pending.rfind("[")
        if cut == -1 or "]" in pending[cut:] or len(pending) - cut > OPEN_LIMIT:
            cut = len(pending)
        ready, pending = pending[:cut], pending[cut:]
        if ready:
            yield to_ids(ready, labels)
    if pending:
        yield to_ids(pending, labels)
