"""HTML pages as documents: a section per `<h1>`-`<h6>`, read with the standard library's HTML parser.

The title is `<title>`, else a first `<h1>` that opens the page, else the file name. Scripts, styles
and templates are left out; block elements end a line, so list items and paragraphs stay apart; a
`<pre>` is kept as a code block, line for line, and a `<table>` as a table block (`assistant.blocks`).
Line numbers are those of the heading in the file, for the citation's source.

The parser is fed SLICE characters at a time, so reading is bounded: the standard library's parser
(before Python 3.11.13) rescans everything after a `<` that never closes, once for every `<` in it, so
5 KB of `<div ` took a second and 60 KB took 13 s. Whatever waits unclosed for more than MAX_PENDING
characters with more than MAX_PENDING_TAGS `<` in it (tag soup, not a long attribute such as an inline
image) is read as text, and the parser stops at the slice after READ_SECONDS; each is a note.
"""

from __future__ import annotations

import re
import time
from html.parser import HTMLParser

from assistant.blocks import fenced, table_text
from assistant.knowledge.documents import MAX_PARENT_CHARS, READ_SECONDS, SEPARATOR, Document, Section
from assistant.text import strip_tags

HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
SKIPPED = {"script", "style", "template", "noscript", "svg"}
BLOCKS = {"p", "div", "li", "tr", "br", "pre", "blockquote", "section", "article", "dd", "dt", "table", "ul", "ol"}
SLICE = 65_536  # characters fed to the parser at a time
MAX_PENDING = 65_536  # characters the parser may hold unclosed while reading; at the end, 4,096
MAX_PENDING_TAGS = 64  # `<` in what it holds: more is tag soup


class _SectionParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.title = ""
        self.title_parts: list[str] = []  # text of a <title> being read (joined once: `+=` per piece was quadratic)
        self.sections: list[Section] = []
        self.heading, self.start = "", 1
        self.body: list[list[str]] = [[]]  # lines of the section being read, each as the pieces of text it got
        self.parents: list[tuple[int, str]] = []
        self.skipping = 0
        self.in_title = False
        self.in_heading: tuple[int, int] | None = None  # (level, line) of the heading being read
        self.heading_words: list[str] = []
        self.blocks: set[int] = set()  # indexes in `body` of the lines that are blocks (`assistant.blocks`)
        self.pre: list[str] | None = None  # text of a <pre> being read, as written
        self.pre_depth = 0
        self.tables: list[list[list[list[str]]]] = []  # tables being read: rows of cells of text pieces

    def add_block(self, text: str) -> None:
        """A finished block as a line of its own."""
        self.blocks.add(len(self.body))
        self.body.append([text])
        self.body.append([])

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in SKIPPED:
            self.skipping += 1
        elif self.skipping:
            return
        elif tag == "pre":
            self.pre_depth += 1
            if self.pre is None and not self.tables:
                self.pre = []
        elif self.pre is not None:
            return  # markup inside a <pre> (<code>, <b>, <span>): its text is the block's
        elif tag == "table":
            self.tables.append([])
        elif self.tables and tag == "tr":
            self.tables[-1].append([])
        elif self.tables and tag in ("td", "th"):
            if not self.tables[-1]:
                self.tables[-1].append([])
            self.tables[-1][-1].append([])
        elif self.tables and tag in BLOCKS and self.tables[-1] and self.tables[-1][-1]:
            self.tables[-1][-1][-1].append(" ")  # a list inside a cell: its items apart
        elif tag == "title":
            self.in_title = True
        elif tag in HEADINGS and self.skipping == 0:
            self.in_heading = (int(tag[1]), self.getpos()[0])
            self.heading_words = []
        elif tag in BLOCKS:
            self.body.append([])

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "br" and self.pre is not None:
            self.pre.append("\n")
        elif tag == "br" and not self.tables:
            self.body.append([])

    def handle_endtag(self, tag: str) -> None:
        if tag in SKIPPED:
            self.skipping = max(0, self.skipping - 1)
        elif self.skipping:
            return
        elif tag == "pre":
            self.pre_depth = max(0, self.pre_depth - 1)
            if self.pre is not None and self.pre_depth == 0:
                lines = "".join(self.pre).strip("\n").split("\n")
                self.pre = None
                if any(line.strip() for line in lines):
                    self.add_block(fenced("", [line.rstrip() for line in lines]))
        elif self.pre is not None:
            return
        elif tag == "table" and self.tables:
            table = self.tables.pop()
            rows = [[" ".join("".join(cell).split()) for cell in row] for row in table]
            rows = [row for row in rows if any(rows_cell for rows_cell in row)]
            if self.tables and self.tables[-1] and self.tables[-1][-1]:  # a table inside a cell: its words
                self.tables[-1][-1][-1].append(" ".join(" ".join(row) for row in rows))
            elif rows:
                self.add_block(table_text(rows))
        elif self.tables:
            return
        elif tag == "title":
            self.in_title = False
            self.flush_title()
        elif tag in HEADINGS and self.in_heading is not None:
            level, line = self.in_heading
            self.in_heading = None
            words = " ".join("".join(self.heading_words).split())
            opening = not self.sections and not any("".join(line).strip() for line in self.body)
            if level == 1 and opening and (not self.title or self.title == words):
                self.title, self.start = words, line
                return
            self.end_section()
            self.parents = [(lv, h) for lv, h in self.parents if lv < level]
            self.heading = SEPARATOR.join([*(h for _, h in self.parents), words])
            self.parents.append((level, words[:MAX_PARENT_CHARS]))
            self.start, self.body = line, [[]]
        elif tag in BLOCKS:
            self.body.append([])

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title_parts.append(data)
        elif self.skipping:
            return
        elif self.in_heading is not None:
            self.heading_words.append(data)
        elif self.pre is not None:
            self.pre.append(data)
        elif self.tables:
            if self.tables[-1] and self.tables[-1][-1]:
                self.tables[-1][-1][-1].append(data)
            elif data.strip():  # a caption, or text between rows: a line before the table
                self.body.append([data])
        else:
            self.body[-1].append(data)

    def close_document(self) -> Document:
        self.end_section()
        self.flush_title()
        return Document(" ".join(self.title.split()), self.sections)

    def flush_title(self) -> None:
        self.title += "".join(self.title_parts)
        self.title_parts = []

    def end_section(self) -> None:
        self.close_blocks()
        lines = [
            "".join(parts) if number in self.blocks else " ".join("".join(parts).split())
            for number, parts in enumerate(self.body)
        ]
        self.sections.append(Section(self.heading, "\n".join(line for line in lines if line), self.start))
        self.blocks = set()

    def close_blocks(self) -> None:
        """A <pre> or a table still open where a section ends (a heading inside it, or the page's end): what
        was read of it is a block."""
        if self.pre is not None:
            self.pre_depth = 1
            self.handle_endtag("pre")
        while self.tables:
            self.handle_endtag("table")


# a <style> or <script> written into another format (MkDocs pages style their tables so): no text of the page,
# as the parser below never reads one either
HIDDEN = re.compile(r"<(script|style)\b.*?(?:</\1\s*>|$)", re.S | re.I)


def html_fragment_text(fragment: str) -> str:
    """The text of a piece of HTML inside another format (an HTML block in Markdown): its lines, a
    `<pre>` or a `<table>` in it as a block, a style or a script left out."""
    if "<pre" not in fragment.lower() and "<table" not in fragment.lower():
        return strip_tags(HIDDEN.sub("", fragment))
    parser = _SectionParser()
    parser.feed(fragment)
    parser.close()
    parser.end_section()
    return "\n".join(section.text for section in parser.sections if section.text)


def unstick(parser: _SectionParser, limit: int) -> int:
    """Read as text what the parser holds unclosed, when it is over `limit` characters of tag soup
    (inside a script or style, where nothing is read, only the last characters are kept); 1 when it did."""
    pending = parser.rawdata
    if len(pending) <= limit:
        return 0
    if parser.cdata_elem is not None:  # waiting for </script> or </style>: their text is never read
        parser.updatepos(0, len(pending) - 16)
        parser.rawdata = pending[-16:]
        return 0
    if pending.count("<") <= MAX_PENDING_TAGS:  # one long tag (an inline image): it closes further on
        return 0
    parser.updatepos(0, len(pending))
    parser.rawdata = ""
    parser.handle_data(pending)
    return 1


def read_html(text: str, notes: list[str] | None = None) -> Document:
    """The document of an HTML page; `notes` gets a line for each bound that cut the reading."""
    parser = _SectionParser()
    started = time.monotonic()
    soup = 0
    for start in range(0, len(text), SLICE):
        if time.monotonic() - started > READ_SECONDS:
            if notes is not None:
                notes.append(f"read for over {READ_SECONDS:.0f} s: the last {len(text) - start:,} characters left out")
            break
        parser.feed(text[start : start + SLICE])
        soup += unstick(parser, MAX_PENDING)
    soup += unstick(parser, 4096)
    parser.close()
    if soup and notes is not None:
        notes.append(f"{soup:,} run(s) of tags that never close read as text")
    return parser.close_document()
