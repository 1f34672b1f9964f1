"""HTML pages as documents: a section per `<h1>`-`<h6>`, read with the standard library's HTML parser.

The title is `<title>`, else a first `<h1>` that opens the page, else the file name. Scripts, styles
and templates are left out; block elements end a line, so list items and table rows stay apart.
Line numbers are those of the heading in the file, for the citation's source.
"""

from __future__ import annotations

from html.parser import HTMLParser

from assistant.knowledge.documents import SEPARATOR, Document, Section

HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
SKIPPED = {"script", "style", "template", "noscript", "svg"}
BLOCKS = {"p", "div", "li", "tr", "br", "pre", "blockquote", "section", "article", "dd", "dt", "table", "ul", "ol"}


class _SectionParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.title = ""
        self.sections: list[Section] = []
        self.heading, self.start, self.body = "", 1, [""]
        self.parents: list[tuple[int, str]] = []
        self.skipping = 0
        self.in_title = False
        self.in_heading: tuple[int, int] | None = None  # (level, line) of the heading being read
        self.heading_words: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in SKIPPED:
            self.skipping += 1
        elif tag == "title":
            self.in_title = True
        elif tag in HEADINGS and self.skipping == 0:
            self.in_heading = (int(tag[1]), self.getpos()[0])
            self.heading_words = []
        elif tag in BLOCKS:
            self.body.append("")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "br":
            self.body.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag in SKIPPED:
            self.skipping = max(0, self.skipping - 1)
        elif tag == "title":
            self.in_title = False
        elif tag in HEADINGS and self.in_heading is not None:
            level, line = self.in_heading
            self.in_heading = None
            words = " ".join("".join(self.heading_words).split())
            opening = not self.sections and not "".join(self.body).strip()
            if level == 1 and opening and (not self.title or self.title == words):
                self.title, self.start = words, line
                return
            self.end_section()
            self.parents = [(lv, h) for lv, h in self.parents if lv < level]
            self.heading = SEPARATOR.join([*(h for _, h in self.parents), words])
            self.parents.append((level, words))
            self.start, self.body = line, [""]
        elif tag in BLOCKS:
            self.body.append("")

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title += data
        elif self.skipping:
            return
        elif self.in_heading is not None:
            self.heading_words.append(data)
        else:
            self.body[-1] += data

    def close_document(self) -> Document:
        self.end_section()
        return Document(" ".join(self.title.split()), self.sections)

    def end_section(self) -> None:
        lines = [" ".join(part.split()) for part in self.body]
        self.sections.append(Section(self.heading, "\n".join(line for line in lines if line), self.start))


def read_html(text: str) -> Document:
    parser = _SectionParser()
    parser.feed(text)
    parser.close()
    return parser.close_document()
