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
from itertools import takewhile

from assistant.blocks import fenced, is_block
from assistant.knowledge.documents import Document, Section
from assistant.knowledge.site_markup import FENCE
from assistant.text import STOPWORDS, slugify

LIST_ITEM = re.compile(r"^(?:[-*+•]|\d+[.)])\s+")
# an indented line that is a shell command: a `$ ` prompt, or a lower-case program or path and a flag after it
# ("  kubectl get nodes -l gpu=h100", "  mlp admin node-report --cluster kestrel")
COMMAND = re.compile(r"\s{2,}(?:\$ \S|[a-z./~][\w./~:-]*\s(?:.*\s)?--?[A-Za-z])")
NUMBERED = re.compile(r"^(?:\d+[.)]|[A-Z][.)]|step\s+\d+[:.]?)\s+", re.I)
MAX_HEADING_CHARS = 80
GROUP_CHARS = 1500
ANCHOR_WORDS = 6


def paragraphs(text: str) -> list[tuple[int, list[str]]]:
    """Blank-line separated blocks with the line number each starts on; a blank line inside a code fence
    (```` ``` ```` or `~~~`) does not end one."""
    out: list[tuple[int, list[str]]] = []
    block: list[str] = []
    start = 1
    fence = ""
    for number, line in enumerate([*text.splitlines(), ""], start=1):
        opening = FENCE.match(line)
        if opening and (not fence or (opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence))):
            fence = "" if fence else opening.group(1)
        if line.strip() or (fence and block):
            if not block:
                start = number
            block.append(line.rstrip())
        elif block:
            out.append((start, block))
            block = []
    if block:
        out.append((start, block))
    return out


def paragraph_text(lines: list[str]) -> str:
    """A paragraph as a section's text holds it: its wrapped lines joined into one, a list item
    (`- `, `* `, `1. `) starting a line of its own, a fenced code block kept as a block
    (`assistant.blocks`), and so are indented shell commands (`is_command`), one a line."""
    out: list[str] = []
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if opening:
            marks = opening.group(1)
            end = next(
                (
                    j
                    for j in range(i + 1, len(lines))
                    if lines[j].strip().startswith(marks[0] * len(marks)) and not lines[j].strip().strip(marks[0])
                ),
                None,
            )
            if end is not None:
                info = lines[i].strip()[len(marks) :].strip().split(" ", 1)[0]
                out.append(fenced(info, lines[i + 1 : end]))
                i = end + 1
                continue
        commands = list(takewhile(is_command, lines[i:]))
        if commands:  # wrapped prose is joined; a command joined to the next is two broken commands
            indent = min(len(command) - len(command.lstrip()) for command in commands)
            out.append(fenced("", [command[indent:] for command in commands]))
            i += len(commands)
            continue
        line = lines[i].strip()
        if out and not LIST_ITEM.match(line) and not is_block(out[-1]):
            out[-1] = f"{out[-1]} {line}"
        else:
            out.append(line)
        i += 1
    return "\n".join(out)


def is_command(line: str) -> bool:
    """An indented line of notes that reads as a shell command (`COMMAND`), not a sentence wrapped onto it:
    no list item, no full stop at its end, and few of prose's function words ("the job with -v to see the log
    and then" is a wrapped sentence that names a flag)."""
    stripped = line.strip()
    if not COMMAND.match(line) or LIST_ITEM.match(stripped) or stripped.endswith("."):
        return False
    tokens = stripped.lower().split()
    return sum(token in STOPWORDS for token in tokens) <= len(tokens) // 4


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


def is_underline(line: str) -> bool:
    """A setext underline: a run of `=` or of `-` alone on its line."""
    return set(line.strip()) in ({"="}, {"-"})


def heading_of(block: list[str]) -> tuple[str, list[str]] | None:
    """(heading, rest of the block) when the block opens with a heading line, else None."""
    first = block[0].strip()
    if len(block) >= 2 and is_underline(block[1]) and len(first) <= MAX_HEADING_CHARS:
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
    elif blocks and len(blocks[0][1]) >= 2 and is_underline(blocks[0][1][1]) and blocks[0][1][1].strip()[0] == "=":
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
            heading, start, body = head[0], line, ([paragraph_text(head[1])] if head[1] else [])
        else:
            body.append(paragraph_text(lines))
    sections.append(Section(heading, "\n\n".join(body), start))
    return sections


def by_groups(blocks: list[tuple[int, list[str]]]) -> list[Section]:
    """Paragraphs grouped up to GROUP_CHARS; each group is anchored by the slug of its first words."""
    sections: list[Section] = []
    group: list[str] = []
    start = 1
    for line, lines in blocks:
        paragraph = paragraph_text(lines)
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
