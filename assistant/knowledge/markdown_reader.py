"""Markdown files as documents: a section per heading (ATX `#` or setext), parsed by markdown-it-py.

The title is the front matter's `title:`, else a level-1 heading that opens the file, else the file
name. A section's heading carries its parents below the title ("Install › Linux"), so two "Linux"
sections under different parents read apart. Text is taken from the parsed tokens, so emphasis,
links and tables read as plain words; code blocks are kept as they are written.
"""

from __future__ import annotations

import re

from markdown_it import MarkdownIt
from markdown_it.token import Token

from assistant.knowledge.documents import SEPARATOR, Document, Section
from assistant.text import strip_tags

FRONT_MATTER = re.compile(r"\A---[ \t]*\n(?P<body>.*?)\n(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.S)
FRONT_TITLE = re.compile(r"^title:\s*(?P<title>.+?)\s*$", re.M)
BLOCK_ENDS = {"paragraph_close", "list_item_close", "tr_close", "blockquote_close", "heading_close"}

_parser = MarkdownIt("commonmark").enable("table")


def inline_text(token: Token) -> str:
    """The words of an inline token: text and code as written, images by their alt text, breaks as spaces."""
    parts = []
    for child in token.children or []:
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif child.type == "image":
            parts.append(child.content)
        elif child.type == "html_inline":
            parts.append(strip_tags(child.content))
    return "".join(parts)


def read_markdown(text: str) -> Document:
    title = ""
    offset = 0  # lines of front matter, which the parser does not see
    front = FRONT_MATTER.match(text)
    if front:
        found = FRONT_TITLE.search(front["body"])
        title = found["title"].strip("\"'") if found else ""
        offset = front.group().count("\n")
        text = text[front.end() :]
    tokens = _parser.parse(text)
    sections: list[Section] = []
    heading, start = "", 1
    body: list[str] = []
    parents: list[tuple[int, str]] = []  # (level, heading) of the open headings above this one

    def close() -> None:
        sections.append(Section(heading, "\n".join(p for p in body if p.strip()), start))

    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.type == "heading_open":
            level = int(token.tag[1:])
            words = inline_text(tokens[i + 1]).strip()
            line = (token.map[0] if token.map else 0) + 1 + offset
            if level == 1 and not title and not sections and not "".join(body).strip():
                title = words  # the document's own title: its text is the opening section
                start = line
                i += 3
                continue
            close()
            parents = [(lv, h) for lv, h in parents if lv < level]
            heading = SEPARATOR.join([*(h for _, h in parents), words])
            parents.append((level, words))
            start, body = line, []
            i += 3
            continue
        if token.type == "inline":
            body.append(inline_text(token))
        elif token.type in ("fence", "code_block"):
            body.append(token.content.rstrip("\n"))
        elif token.type == "html_block":
            body.append(strip_tags(token.content))
        elif token.type in BLOCK_ENDS and body and not body[-1].endswith("\n"):
            body[-1] += "\n"
        i += 1
    close()
    return Document(title, sections)
