"""Blocks: code, commands, configs and tables kept whole in a section's text, and how the rest reads them.

A document's prose is read sentence by sentence, but a YAML file, a shell command or a table read
that way is nonsense ("project: my_repo registry: data/registry.db provider: local" as one
"sentence", a 4,000-character table quoted as one). So the readers write each such block into the
section's text as a fenced block, the way Markdown writes code:

    ```yaml
    project: my_repo
    registry: data/registry.db
    ```

on lines of their own, the lines inside as the file has them. A table is a fence whose info string
is `table` (TABLE), its rows written as `| cell | cell |` lines, the header first. The fence is a
run of backticks longer than any run inside the block, so a block that itself shows a fence stays
one block. Everything that reads an entry's text sees the same unit: `units` gives the text's lines
with each block as one unit, so sentence splitting never splits one, chunking cuts one only when it
alone is over a chunk (at line boundaries, each piece fenced again and a table's pieces each with
its header), an answer quotes one verbatim and the verifier checks it against the entry's own block.
Text with no fence line is read as it always was.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import pairwise

TABLE = "table"  # the info string of a table block
OPENING = re.compile(r"^(`{3,})([^`\n]*)$")  # a block's opening line: its fence run and info string
MAX_QUOTED_LINES = 20  # lines of a code block an answer quotes (the first ones)
MAX_QUOTED_CHARS = 1_500  # characters of a code block an answer quotes
MAX_ROW_CHARS = 400  # characters of a quoted table row (and of its header): a longer cell is cut, ending with "…"


@dataclass(frozen=True)
class Block:
    """A block of a text: its info string (a language, `table`, or "") and its lines as written."""

    info: str
    lines: tuple[str, ...]

    @property
    def is_table(self) -> bool:
        return self.info == TABLE

    @property
    def text(self) -> str:
        """The block as it stands in a text: fenced, on lines of its own."""
        return fenced(self.info, list(self.lines))

    @property
    def rows(self) -> list[list[str]]:
        """A table's rows as cells (`table_cells`), header first."""
        return [table_cells(line) for line in self.lines]

    @classmethod
    def of(cls, unit: str) -> Block | None:
        """The block a fenced unit of text is (`as_block`), or None for text."""
        return as_block(unit)

    def holds(self, quote: Block) -> bool:
        """Whether this block holds the quoted one (`quoted_in`): what a citation card marks."""
        return quoted_in(quote, self.text)


def fence_for(lines: list[str]) -> str:
    """Backticks enough to fence `lines`: three, or one more than the longest run of them inside."""
    longest = max((len(run) for line in lines for run in re.findall(r"`+", line)), default=0)
    return "`" * max(3, longest + 1)


def fenced(info: str, lines: list[str]) -> str:
    """The block as a text holds it: the fence and info string, the lines, the closing fence."""
    fence = fence_for(lines)
    return "\n".join([f"{fence}{info}", *lines, fence])


def table_text(rows: list[list[str]]) -> str:
    """A table as a block: each row as `| cell | cell |`, the header first; a `|` inside a cell escaped."""
    lines = ["| " + " | ".join(" ".join(cell.split()).replace("|", "\\|") for cell in row) + " |" for row in rows]
    return fenced(TABLE, lines)


def has_blocks(text: str) -> bool:
    """Whether the text may hold a block (a cheap test: a run of three backticks)."""
    return "```" in text


def fenced_ranges(lines: list[str]) -> Iterator[tuple[int, int]]:
    """(opening, closing) line numbers of each block in a text's lines: an opening fence and the first
    line after it that is the same fence; an opening that never closes opens no block."""
    i = 0
    while i < len(lines):
        opening = OPENING.match(lines[i].strip())
        if opening:
            fence = opening.group(1)
            end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == fence), None)
            if end is not None:
                yield i, end
                i = end + 1
                continue
        i += 1


def units(text: str) -> list[str]:
    """The text's lines, each block (from its opening fence to its closing one) as one unit; blank
    lines left out and other lines stripped. An opening fence that never closes is an ordinary line."""
    if not has_blocks(text):
        return [line.strip() for line in text.splitlines() if line.strip()]
    lines = text.split("\n")

    def prose(chunk: list[str]) -> list[str]:
        return [part.strip() for line in chunk for part in line.splitlines() if part.strip()]

    out: list[str] = []
    last = 0
    for first, end in fenced_ranges(lines):
        out.extend(prose(lines[last:first]))
        body = (line.rstrip() for line in lines[first + 1 : end])
        out.append("\n".join([lines[first].strip(), *body, lines[end].strip()]))
        last = end + 1
    out.extend(prose(lines[last:]))
    return out


def joined(texts: list[str], joiner: str = " ") -> str:
    """Sentences as one text: joined by `joiner`, but a block on lines of its own."""
    if not any(is_block(text) for text in texts):
        return joiner.join(texts)
    out = texts[0]
    for before, text in pairwise(texts):
        out += ("\n" if is_block(text) or is_block(before) else joiner) + text
    return out


def block_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) character offsets of each block in a text, from its opening fence line to the end of its
    closing fence; a fence that never closes opens no block."""
    if not has_blocks(text):
        return []
    starts = [0, *(m.end() for m in re.finditer("\n", text))]
    lines = text.split("\n")
    return [(starts[first], starts[end] + len(lines[end])) for first, end in fenced_ranges(lines)]


def segments(text: str) -> list[tuple[str, Block | None]]:
    """The text in order as (text, None) for prose and (text, block) for each block, so a renderer can
    escape or convert prose and show code as it is written."""
    out: list[tuple[str, Block | None]] = []
    last = 0
    for start, end in block_spans(text):
        block = as_block(text[start:end].strip())
        if block is None:
            continue
        if start > last:
            out.append((text[last:start], None))
        out.append((text[start:end], block))
        last = end
    if last < len(text):
        out.append((text[last:], None))
    return out


def as_block(unit: str) -> Block | None:
    """The block a unit of `units` is, or None for a line of text."""
    if not unit.startswith("```") or "\n" not in unit:
        return None
    first, *rest = unit.split("\n")
    opening = OPENING.match(first)
    if opening is None or not rest or rest[-1] != opening.group(1):
        return None
    return Block(opening.group(2).strip(), tuple(rest[:-1]))


def is_block(unit: str) -> bool:
    return as_block(unit) is not None


def table_cells(line: str) -> list[str]:
    """The cells of a `| a | b |` row, `\\|` read back as `|`."""
    body = line.strip()
    body = body[1:] if body.startswith("|") else body
    body = body[:-1] if body.endswith("|") and not body.endswith("\\|") else body
    return [cell.strip().replace("\\|", "|") for cell in re.split(r"(?<!\\)\|", body)]


def row_quotes(block: Block) -> list[Block]:
    """A table as an answer may quote it: one small table per row, the header and that row, each row kept to
    MAX_ROW_CHARS. A table of one row is that row."""
    if not block.lines:
        return []
    header, *rows = block.lines
    if not rows:
        return [Block(TABLE, (capped_row(header),))]
    return [Block(TABLE, (capped_row(header), capped_row(row))) for row in rows]


def capped_row(line: str) -> str:
    """A row kept to about MAX_ROW_CHARS: its longest cells are cut (each ending with "…") until it fits,
    the short ones (a name, a default) kept whole."""
    if len(line) <= MAX_ROW_CHARS:
        return line
    cells = table_cells(line)
    room = MAX_ROW_CHARS - 4 * len(cells)
    share = room // len(cells)
    short = [cell for cell in cells if len(cell) <= share]
    while short and len(short) < len(cells):  # the room the short cells leave goes to the long ones
        share = max(share, (room - sum(map(len, short))) // (len(cells) - len(short)))
        grown = [cell for cell in cells if len(cell) <= share]
        if len(grown) == len(short):
            break
        short = grown
    return "| " + " | ".join(cut_cell(cell, max(12, share)).replace("|", "\\|") for cell in cells) + " |"


def cut_cell(cell: str, limit: int) -> str:
    """A cell cut to `limit` characters at a space near the end, ending with "…"."""
    if len(cell) <= limit:
        return cell
    cut = cell[: limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip() + "…"


def code_quote(block: Block) -> Block:
    """A code block as an answer quotes it: its first lines, up to MAX_QUOTED_LINES and MAX_QUOTED_CHARS."""
    kept: list[str] = []
    size = 0
    for line in block.lines:
        if kept and (len(kept) >= MAX_QUOTED_LINES or size + len(line) > MAX_QUOTED_CHARS):
            break
        kept.append(line)
        size += len(line) + 1
    while kept and not kept[-1].strip():
        kept.pop()
    return Block(block.info, tuple(kept))


def block_words(unit: str) -> str:
    """What a unit says in words: a block's lines (a table's cells) without its fences, else the unit."""
    block = as_block(unit)
    if block is None:
        return unit
    if block.is_table:
        return "\n".join(" ".join(table_cells(line)) for line in block.lines)
    return "\n".join(block.lines)


def quoted_in(quote: Block, text: str) -> bool:
    """Whether an entry's text holds the quoted block: code as a run of consecutive lines of one of its
    blocks; a table's header and rows as rows of one of its tables (a cell cut with "…" as the cell's start).
    Lines are compared with their spaces collapsed."""
    wanted = [" ".join(line.split()) for line in quote.lines]
    if not wanted:
        return False
    for unit in units(text):
        block = as_block(unit)
        if block is None or block.is_table != quote.is_table:
            continue
        have = [" ".join(line.split()) for line in block.lines]
        if quote.is_table:
            if same_row(quote.lines[0], block.lines[0]) and all(
                any(same_row(row, line) for line in block.lines[1:] or block.lines) for row in quote.lines[1:]
            ):
                return True
        elif any(have[i : i + len(wanted)] == wanted for i in range(len(have) - len(wanted) + 1)):
            return True
    return False


def same_row(quoted: str, row: str) -> bool:
    """A quoted row is the row, each cell whole or cut with "…" from the cell's start (written "..." in an
    answer read as the user sees it: NFKC spells the ellipsis with three full stops, `verify.unicode.plain`)."""
    mine, theirs = table_cells(quoted), table_cells(row)
    if len(mine) != len(theirs):
        return False
    for cell, full in zip(mine, theirs, strict=True):
        cell, full = " ".join(cell.split()), " ".join(full.split())
        if cell != full and not any(cut_from(cell, mark, full) for mark in ("…", "...")):
            return False
    return True


def cut_from(cell: str, mark: str, full: str) -> bool:
    """Is `cell` the start of `full`, cut and ending with `mark`?"""
    return cell.endswith(mark) and full.startswith(cell.removesuffix(mark).rstrip())
