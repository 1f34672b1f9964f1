"""Markdown files as documents: a section per heading (ATX `#` or setext), parsed by markdown-it-py.

The title is the front matter's `title:`, else a level-1 heading that opens the file, else the file
name. A section's heading carries its parents below the title ("Install › Linux"), so two "Linux"
sections under different parents read apart. Text is taken from the parsed tokens, so emphasis,
links read as plain words; a paragraph or a list item is a line of its own; fenced and indented code
and tables (and an HTML `<pre>` or `<table>` inside the Markdown) are kept as blocks (`assistant.blocks`),
code line for line; a site generator's tags and admonition markers are taken out first (`site_markup`).

A file over PIECE_CHARS characters is parsed in pieces that each start at a heading outside a code
fence (else at a blank line, else wherever a line ends), so that reading can stop at the piece after
READ_SECONDS with a note: markdown-it reads some punctuation at 20 µs a character, 50 MB in 15 minutes.
A smaller file is parsed whole, as it always was.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

from markdown_it import MarkdownIt
from markdown_it.token import Token

from assistant.blocks import fenced, table_text
from assistant.knowledge.documents import MAX_PARENT_CHARS, READ_SECONDS, SEPARATOR, Document, Section
from assistant.knowledge.html_reader import html_fragment_text
from assistant.knowledge.site_markup import ATX_HEADING, FENCE, without_site_markup
from assistant.text import strip_tags

FRONT_MATTER = re.compile(r"\A---[ \t]*\n(?P<body>.*?)\n(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.S)
# greedy to the line's end, then stripped: a lazy `.+?\s*$` is quadratic on a title with a long run of spaces
FRONT_TITLE = re.compile(r"^title:\s*(?P<title>.+)$", re.M)
BLOCK_ENDS = {"paragraph_close", "list_item_close", "tr_close", "blockquote_close", "heading_close"}
PIECE_CHARS = 1_000_000  # a longer file is parsed in pieces, each at least this long (but for the last)

_parser = MarkdownIt("commonmark").enable("table")
HTML_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.S)  # to its end, or to the block's end when unclosed


def inline_text(token: Token) -> str:
    """The words of an inline token: text and code as written, images by their alt text, breaks (and `<br>`) as
    spaces; a comment inside a paragraph is left out, as a comment block is (`html_block_text`)."""
    parts = []
    for child in token.children or []:
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif child.type == "image":
            parts.append(child.content)
        elif child.type == "html_inline" and not child.content.startswith("<!--"):  # a comment is not read
            # a <br> in a table cell parts its lines: "true<br>cpu" is "true cpu"
            parts.append(" " if child.content.lower().startswith("<br") else strip_tags(child.content))
    return "".join(parts)


def html_block_text(fragment: str) -> str:
    """The text of an HTML block in Markdown (`html_fragment_text`), its lines read as Markdown's inline text.
    CommonMark ends an HTML block at a blank line, so the Markdown written right after a component's opening
    tag is part of it (`<hfoption id="EVA">` then "[EVA](https://...) performs SVD ..."): its tags go, and a
    link or an image is its words, as in a paragraph, where the link was quoted as written. A comment is left
    out whole: the page's reader never sees what the author commented out (DeepSpeed's tutorial keeps an old
    launch recipe in one, with its commands); so is a style or a script (`html_fragment_text`)."""
    fragment = HTML_COMMENT.sub("", fragment)
    text = html_fragment_text(fragment)
    if "<pre" in fragment.lower() or "<table" in fragment.lower():  # blocks, read as HTML
        return text
    return "\n".join(inline_text(_parser.parseInline(line)[0]) if line.strip() else line for line in text.split("\n"))


def table_rows(tokens: list[Token], start: int) -> tuple[list[list[str]], int]:
    """The rows of the table opened at `start` (each row its cells' words), and the index after it."""
    rows: list[list[str]] = []
    i = start + 1
    while i < len(tokens) and tokens[i].type != "table_close":
        if tokens[i].type == "tr_open":
            rows.append([])
        elif tokens[i].type == "inline" and rows:
            rows[-1].append(inline_text(tokens[i]))
        i += 1
    return [row for row in rows if any(cell.strip() for cell in row)], i + 1


def pieces(text: str, size: int = PIECE_CHARS) -> Iterator[tuple[int, str]]:
    """(lines before it, text) of each piece of the text to parse on its own: the whole text when it is at
    most `size`; else pieces of at least `size` characters that start at a heading outside a code fence,
    else (past twice `size`) at a blank line, else (past three times) at any line; a line longer than
    `size` is cut into pieces of its own."""
    if len(text) <= size:
        yield 0, text
        return
    piece: list[str] = []
    length = start = 0
    fence = ""
    for lines, line in enumerate(re.findall(r"[^\n]*\n|[^\n]+\Z", text)):  # lines as the parser counts them
        opening = FENCE.match(line)
        if length >= size and not fence:
            starts_well = ATX_HEADING.match(line) or (length >= 2 * size and not line.strip()) or length >= 3 * size
            if starts_well:
                yield start, "".join(piece)
                piece, length, start = [], 0, lines
        if opening:
            marks = opening.group(1)
            if not fence:
                fence = marks
            elif marks[0] == fence[0] and len(marks) >= len(fence) and not line.strip().strip(marks[0]):
                fence = ""
        if len(line) > size:  # one endless line: in pieces of its own
            if piece:
                yield start, "".join(piece)
            for cut in range(0, len(line), size):
                yield lines, line[cut : cut + size]
            piece, length, start = [], 0, lines + 1
        else:
            piece.append(line)
            length += len(line)
    if piece:
        yield start, "".join(piece)


def read_markdown(
    text: str, notes: list[str] | None = None, mdx: bool = False, origins: list[int] | None = None
) -> Document:
    """The document of a Markdown (or, `mdx`, an MDX) file; `notes` gets a line when reading stopped at
    READ_SECONDS. `origins`: the file's own line of each line of `text`, when included text was put in it
    (`snippets.py`), so a section still starts on a line of the file."""
    title = ""
    offset = 0  # lines of front matter, which the parser does not see
    front = FRONT_MATTER.match(text)
    if front:
        found = FRONT_TITLE.search(front["body"])
        title = (found["title"].rstrip() or found["title"][:1]).strip("\"'") if found else ""
        offset = front.group().count("\n")
        text = text[front.end() :]
    text = without_site_markup(text, mdx)  # {% hint %}, {: .notice}, !!! note: the generator's, not the reader's
    sections: list[Section] = []
    heading, start = "", 1
    body: list[str] = []
    parents: list[tuple[int, str]] = []  # (level, heading) of the open headings above this one

    def close() -> None:
        sections.append(Section(heading, "\n".join(p for p in body if p.strip()), start))

    started = time.monotonic()
    done = 0
    for before, piece in pieces(text):
        if time.monotonic() - started > READ_SECONDS:
            if notes is not None:
                notes.append(f"read for over {READ_SECONDS:.0f} s: the last {len(text) - done:,} characters left out")
            break
        done += len(piece)
        tokens = _parser.parse(piece)
        i = 0
        while i < len(tokens):
            token = tokens[i]
            if token.type == "heading_open":
                level = int(token.tag[1:])
                words = inline_text(tokens[i + 1]).strip()
                line = (token.map[0] if token.map else 0) + 1 + offset + before
                if origins:
                    line = origins[min(line, len(origins)) - 1]
                opening = not sections and not "".join(body).strip()
                if level == 1 and opening and (not title or words.casefold() == title.casefold()):
                    title = words  # the document's own title (again, after front matter's): its text opens it
                    start = line
                    i += 3
                    continue
                close()
                parents = [(lv, h) for lv, h in parents if lv < level]
                heading = SEPARATOR.join([*(h for _, h in parents), words])
                parents.append((level, words[:MAX_PARENT_CHARS]))
                start, body = line, []
                i += 3
                continue
            if token.type == "table_open":
                rows, i = table_rows(tokens, i)
                if rows:
                    body.append(table_text(rows) + "\n")
                continue
            if token.type == "inline":
                body.append(inline_text(token))
            elif token.type in ("fence", "code_block") and token.content.strip():  # an empty block shows nothing
                language = token.info.strip().split(" ", 1)[0].strip("{}.") if token.type == "fence" else ""
                body.append(fenced(language, token.content.strip("\n").split("\n")) + "\n")
            elif token.type == "html_block":
                body.append(html_block_text(token.content))
            elif token.type in BLOCK_ENDS and body and not body[-1].endswith("\n"):
                body[-1] += "\n"
            i += 1
    close()
    return Document(title, sections)
