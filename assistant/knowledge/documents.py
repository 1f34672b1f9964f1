"""Documents people keep (Markdown, text, HTML, PDF) as entries: one entry per section.

Each format's reader (`markdown_reader`, `text_reader`, `html_reader`, `pdf_reader`) turns a file
into a `Document`: a title and its sections, each with a heading, its text and where it starts.
This module makes the entries, the same way for every format:

- **id** `doc:<path>#<anchor>`: `<path>` is the file's path relative to the folder that was
  indexed (the file name when a file was named), other characters than letters, digits, `._/-`
  written as `-`; `<anchor>` is the slug of the section's heading
  path, as GitHub writes anchors (`Scheduling › Priorities` -> `scheduling-priorities`), with `-2`,
  `-3` for a heading path that repeats in the file. A PDF page is `page-<n>`; text before the first
  heading is `top`; plain text without headings is anchored by its first words. So an id changes
  only when its own heading (or a parent heading, or the file's path) changes: an edit elsewhere
  in the file leaves it, and its vectors, alone.
- **title** `Document title › Section heading` (the document title alone for the opening section).
- **fields** `document`, `section`, `path` and, for PDF, `page` (shown in the citation card).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from assistant.text import clean, slugify
from assistant.types import Entry

SAFE_PATH = re.compile(r"[^A-Za-z0-9._/-]+")
SEPARATOR = " › "
TOP = "top"  # the anchor of the text before a document's first heading
MAX_SECTION_CHARS = 60_000  # a section longer than this is cut (a log pasted into a wiki page)


@dataclass(frozen=True)
class Section:
    """A heading and the text under it (up to the next heading of any level)."""

    heading: str  # "" for the text before the first heading
    text: str
    line: int  # 1-based line (or page, for PDF) where the section starts
    page: int | None = None  # PDF only
    anchor: str | None = None  # an anchor the reader chose (PDF pages); else from the heading


@dataclass
class Document:
    """What a reader makes of one file: its title and its sections in reading order."""

    title: str
    sections: list[Section] = field(default_factory=list)


def anchors_of(sections: list[Section]) -> list[str]:
    """GitHub-style anchors: the heading's slug, `-2`, `-3`... for repeats; `top` for the opening text."""
    seen: Counter[str] = Counter()
    out = []
    for section in sections:
        base = section.anchor or (slugify(section.heading) if section.heading else TOP) or "section"
        seen[base] += 1
        out.append(base if seen[base] == 1 else f"{base}-{seen[base]}")
    return out


def document_id(relative_path: str, anchor: str) -> str:
    """`doc:<path>#<anchor>`, the path kept to letters, digits, `.`, `_`, `/` and `-` (other runs become
    `-`), so a citation marker `[doc:...]` is one token that no space or bracket in a file name breaks."""
    return f"doc:{SAFE_PATH.sub('-', relative_path)}#{anchor}"


def title_from_path(relative_path: str) -> str:
    """`runbooks/gpu-node_drain.md` -> `Gpu node drain`: a readable title for a file that states none."""
    stem = relative_path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    words = re.sub(r"[_\-]+", " ", stem).strip()
    return words[:1].upper() + words[1:] if words else relative_path


def document_entries(document: Document, relative_path: str, shown: str) -> list[Entry]:
    """The entries of a document; sections without text (a heading right above another) are left out."""
    title = clean(document.title) or title_from_path(relative_path)
    entries = []
    for section, anchor in zip(document.sections, anchors_of(document.sections), strict=True):
        text = clean(section.text)[:MAX_SECTION_CHARS]
        if not text:
            continue
        heading = clean(section.heading)
        fields: dict[str, object] = {"document": title, "section": heading, "path": shown}
        if section.page is not None:
            fields["page"] = section.page
        entries.append(
            Entry(
                document_id(relative_path, anchor),
                "document",
                f"{title}{SEPARATOR}{heading}" if heading and heading != title else title,
                text,
                fields,
                f"{shown}:{section.line}",
                None,
            )
        )
    return entries
