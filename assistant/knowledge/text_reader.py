"""Plain-text notes (a `.txt` that is neither a concept page nor a related-papers page) as documents.

Text has no markup, so sections are found the way people write them: a line underlined with `===`
or `---`, a `#`-style heading, or a short line of its own that ends without a full stop and is
followed by a paragraph (a runbook's "Draining a node"). Without any such line, paragraphs are
grouped up to about `GROUP_CHARS` characters, each group anchored by its first words, so an edit
elsewhere moves no other section's id. The title is the first line when it stands alone and is
short, else the file name.
"""

from __future__ import annotations

import re

from assistant.knowledge.documents import Document, Section
from assistant.text import slugify

UNDERLINE = re.compile(r"^\s*(=+|-+)\s*$")
NUMBERED = re.compile(r"^(?:\d+[.)]|[A-Z][.)]|step\s+\d+[:.]?)\s+", re.I)
MAX_HEADING_CHARS = 80
GROUP_CHARS = 1500
ANCHOR_WORDS = 6


def paragraphs(text: str) -> list[tuple[int, list[str]]]:
    """Blank-line separated blocks with the line number each starts on."""
    out: list[tuple[int, list[str]]] = []
    block: list[str] = []
    start = 1
    for number, line in enumerate([*text.splitlines(), ""], start=1):
        if line.strip():
            if not block:
                start = number
            block.append(line.rstrip())
        elif block:
            out.append((start, block))
            block = []
    return out


def hash_heading(line: str) -> str | None:
    """The text of a `#`-style heading line (`## Setup ##` -> `Setup`), else None.

    What `^#{1,6}\\s+(?P<text>\\S.*?)\\s*#*\\s*$` matches, without the regular expression: its
    lazy text before `\\s*#*\\s*` is cubic on a heading with a long run of spaces inside.
    """
    hashes = len(line) - len(line.lstrip("#"))
    rest = line[hashes:]
    if not 1 <= hashes <= 6 or not rest[:1].isspace():
        return None
    rest = rest.lstrip()
    if not rest:
        return None
    text = rest.rstrip().rstrip("#").rstrip()
    return text or rest[:1]


def heading_of(block: list[str]) -> tuple[str, list[str]] | None:
    """(heading, rest of the block) when the block opens with a heading line, else None."""
    first = block[0].strip()
    if len(block) >= 2 and UNDERLINE.match(block[1]) and len(first) <= MAX_HEADING_CHARS:
        return first, block[2:]
    hashed = hash_heading(first)
    if hashed is not None:
        return hashed, block[1:]
    looks_like = (
        len(first) <= MAX_HEADING_CHARS
        and not first.endswith((".", ",", ";", "?", "!"))
        and not first.startswith(("-", "*", "•", "$", ">"))
        and (first.endswith(":") or len(block) == 1 or first[:1].isupper() or NUMBERED.match(first))
    )
    if looks_like and len(first.split()) <= 12:
        return first.rstrip(":"), block[1:]
    return None


def read_text_document(text: str) -> Document:
    blocks = paragraphs(text)
    title = ""
    opening = heading_of(blocks[0][1]) if blocks and len(blocks[0][1]) == 1 and len(blocks) > 1 else None
    if opening:
        title = opening[0]
        blocks = blocks[1:]
    elif blocks and len(blocks[0][1]) >= 2 and UNDERLINE.match(blocks[0][1][1]) and blocks[0][1][1].strip()[0] == "=":
        title = blocks[0][1][0].strip()
        blocks = [(blocks[0][0] + 2, blocks[0][1][2:]), *blocks[1:]] if blocks[0][1][2:] else blocks[1:]
    headed = [heading_of(lines) for _, lines in blocks]
    # a heading line must be followed by text: two "headings" in a row are a list of short lines
    has_headings = any(
        h is not None and (h[1] or (i + 1 < len(blocks) and headed[i + 1] is None)) for i, h in enumerate(headed)
    )
    if has_headings:
        return Document(title, by_headings(blocks, headed))
    return Document(title, by_groups(blocks))


def by_headings(blocks: list[tuple[int, list[str]]], headed: list[tuple[str, list[str]] | None]) -> list[Section]:
    sections: list[Section] = []
    heading, start = "", blocks[0][0] if blocks else 1
    body: list[str] = []
    for (line, lines), head in zip(blocks, headed, strict=True):
        if head is not None:
            sections.append(Section(heading, "\n\n".join(body), start))
            heading, start, body = head[0], line, (["\n".join(head[1])] if head[1] else [])
        else:
            body.append("\n".join(lines))
    sections.append(Section(heading, "\n\n".join(body), start))
    return sections


def by_groups(blocks: list[tuple[int, list[str]]]) -> list[Section]:
    """Paragraphs grouped up to GROUP_CHARS; each group is anchored by the slug of its first words."""
    sections: list[Section] = []
    group: list[str] = []
    start = 1
    for line, lines in blocks:
        paragraph = "\n".join(lines)
        if group and sum(len(p) for p in group) + len(paragraph) > GROUP_CHARS:
            sections.append(grouped(group, start))
            group = []
        if not group:
            start = line
        group.append(paragraph)
    if group:
        sections.append(grouped(group, start))
    return sections


def grouped(group: list[str], start: int) -> Section:
    """A group headed by its first words ("Restart the scheduler when…"), so cards and titles tell groups apart."""
    words = group[0].split()
    anchor = slugify(" ".join(words[:ANCHOR_WORDS])) or "text"
    heading = " ".join(words[:ANCHOR_WORDS]) + ("…" if len(words) > ANCHOR_WORDS else "")
    return Section(heading, "\n\n".join(group), start, anchor=anchor)
