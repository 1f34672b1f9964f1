"""An Answer as the terminal shows it: markers as numbers, and the citations under the same numbers.

The model writes `[arxiv:2401.00001]`; the reader sees `[1]` in the text and `[1] title (id)` in the
list below, numbered as the chat UI numbers them (`ui.render.number_citations`): by the first marker
in the text, then the citations no marker names. A quoted block (code, a config, a table's rows) is shown
indented and as written, never run through the prose's TeX conversion. `--json` keeps the ids (scripts
read those).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from assistant.blocks import Block, as_block, segments, table_cells
from assistant.cli.terminal import terminal_text
from assistant.knowledge.math_text import plain_math
from assistant.types import Answer, Citation
from assistant.verify.citations import find_markers

MARKERS_ONLY = re.compile(r"(?:\[\d+\])+")  # a line of numbered markers: a quoted block's citation


def citation_numbers(text: str, citations: list[Citation]) -> dict[str, int]:
    """Citation number per entry id: order of first marker in `text`, then citations with no marker."""
    cited = {c.entry_id for c in citations}
    numbering: dict[str, int] = {}
    for _, _, ids in find_markers(text):
        for entry_id in ids:
            if entry_id in cited and entry_id not in numbering:
                numbering[entry_id] = len(numbering) + 1
    for citation in citations:
        numbering.setdefault(citation.entry_id, len(numbering) + 1)
    return numbering


def numbered_text(text: str, numbering: Mapping[str, int]) -> str:
    """`text` with each marker replaced by its citation numbers (`[1]`, `[1][3]`); markers of ids that are
    not citations are left out, as the chat UI leaves them out."""
    out: list[str] = []
    last = 0
    for start, end, ids in find_markers(text):
        out.append(text[last:start])
        out.append("".join(f"[{numbering[i]}]" for i in dict.fromkeys(ids) if i in numbering))
        last = end
    out.append(text[last:])
    return "".join(out)


BLOCK_INDENT = "    "


def shown_block(block: Block) -> list[str]:
    """A block as the terminal shows it, indented apart from the prose: code between its fences, as written;
    a table's rows with their columns lined up under a rule."""
    if not block.is_table:
        return [BLOCK_INDENT + line for line in block.text.split("\n")]
    rows = [table_cells(line) for line in block.lines]
    widths = [max(len(row[i]) for row in rows if i < len(row)) for i in range(max(map(len, rows)))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False)).rstrip() for row in rows]
    rule = "  ".join("-" * width for width in widths)
    return (
        [BLOCK_INDENT + line for line in [lines[0], rule, *lines[1:]]] if len(lines) > 1 else [BLOCK_INDENT + lines[0]]
    )


def shown_text(text: str, numbering: Mapping[str, int]) -> str:
    """The answer text for the terminal: prose with numbered markers and TeX as plain text; each quoted block
    indented, as written, its marker (the line after it) at the end of its last line."""
    out: list[str] = []
    pending: list[str] | None = None  # the lines of the block just shown, waiting for its marker
    for part, block in segments(text):
        if block is not None:
            pending = shown_block(block)
            out.append("\n".join(pending))
            continue
        prose = plain_math(numbered_text(part, numbering))
        if pending is not None:
            first, newline, rest = prose.lstrip("\n").partition("\n")
            if first.strip() and not MARKERS_ONLY.sub("", first).strip():
                out[-1] += f" {first.strip()}"
                prose = "\n" + rest if newline else ""
            pending = None
        out.append(prose)
    return "".join(out)


def format_partial(text: str) -> str:
    """What arrived of a reply that was cut off (the error line follows on stderr)."""
    return terminal_text(f"{text.strip()} [...]\n-- partial reply, cut off: not verified, no citations")


def format_answer(answer: Answer) -> str:
    """The answer with numbered markers, then `[n] title (id)` per citation with its link and quote."""
    numbering = citation_numbers(answer.text, answer.citations)
    lines = [shown_text(answer.text, numbering), ""]
    for citation in sorted(answer.citations, key=lambda c: numbering[c.entry_id]):
        mark = "" if citation.supported else " (unverified)"
        link = f" {citation.url}" if citation.url else ""
        lines.append(f"[{numbering[citation.entry_id]}] {plain_math(citation.title)} ({citation.entry_id}){link}{mark}")
        quoted = as_block(citation.quote)
        lines.extend(shown_block(quoted) if quoted is not None else [f'    "{plain_math(citation.quote)}"'])
    if answer.refused and answer.sources:
        nearest = "; ".join(f"{plain_math(s.title)} ({s.entry_id})" for s in answer.sources[:3])
        lines.append(f"Nearest entries: {nearest}")
    for note in answer.notes:
        lines.append(f"note: {note}")
    lines.append(f"-- {answer.model}, {answer.timings.get('total', 0):.0f} ms")
    return terminal_text("\n".join(lines).strip())
