"""Documents people keep (Markdown, text, HTML, PDF) as entries: one entry per section.

Each format's reader (`markdown_reader`, `text_reader`, `html_reader`, `pdf_reader`) turns a file
into a `Document`: a title and its sections, each with a heading, its text and where it starts.
This module makes the entries, the same way for every format:

- **id** `doc:<path>#<anchor>`: `<path>` is the file's path relative to the folder that was
  indexed (the file name when a file was named), other characters than ASCII letters, digits, `._/-`
  written as `-`; a part of a name (between `/` and `.`) with other letters (`заметки`, `日本`) is
  written in Punycode with `xn--` before it, as internationalised domain names are (`xn--80akegjk7b`),
  so every name gives its own id in the ASCII a citation marker is read in. `<anchor>` is the slug
  of the section's heading
  path, as GitHub writes anchors (`Scheduling › Priorities` -> `scheduling-priorities`), with `-2`,
  `-3` for a heading path that repeats in the file. A PDF page is `page-<n>`; text before the first
  heading is `top`; plain text without headings is anchored by its first words. An anchor longer
  than MAX_ANCHOR_CHARS is cut and ends with 8 hex digits of its whole slug's SHA-256. So an id changes
  only when its own heading (or a parent heading, or the file's path) changes: an edit elsewhere
  in the file leaves it, and its vectors, alone.
- **title** `Document title › Section heading` (the document title alone for the opening section).
- **fields** `document`, `section`, `path` and, for PDF, `page` (shown in the citation card).

What a document gives is bounded, and every cut is a note for the file: a title or heading is kept to
MAX_HEADING_CHARS characters, a section to MAX_SECTION_CHARS, a document to MAX_SECTIONS sections and
MAX_DOCUMENT_CHARS characters, and a run of punctuation to `assistant.text.MAX_SYMBOL_RUN`.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass, field

from assistant.blocks import is_block, units
from assistant.text import MAX_SYMBOL_RUN, clean, shorten_symbol_runs, slugify
from assistant.types import Entry

SAFE_PATH = re.compile(r"[^A-Za-z0-9._/-]+")
SEPARATOR = " › "
TOP = "top"  # the anchor of the text before a document's first heading
MAX_SECTION_CHARS = 60_000  # a section longer than this is cut (a log pasted into a wiki page)
MAX_SECTIONS = 5_000  # sections of one document; the rest are left out
MAX_DOCUMENT_CHARS = 10_000_000  # text of one document; the sections after it are left out
MAX_HEADING_CHARS = 200  # a longer title or heading is cut (shown in titles, cards and chunks)
MAX_ANCHOR_CHARS = 200  # a longer anchor is cut and ends with a hash of the whole (a 1 MB heading)
MAX_PARENT_CHARS = 2_000  # of a heading carried in the heading paths below it (not 1 MB in each of them)
READ_SECONDS = 120.0  # a reader that reads in steps (PDF pages, HTML slices) stops at the next step after this


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


# what a page of a documentation site holds instead of text of its own: another file included
# (reStructuredText's `.. include:: ./x.rst`, MyST's ```{include} x.md, MkDocs' `--8<-- "x.md"`), or an API
# reference the site generates from the code (`.. automodule:: pkg`, ```{autoclass} Name, `[[autodoc]] Name`)
INCLUDED = re.compile(
    r"^[ \t]*(?:\.\.[ \t]+(?:literal)?include::|`{3,}\{(?:literal)?include\}|-{2,}8<-{2,})"
    r"[ \t]+[\"']?(?P<path>[^\s\"':]+)",
    re.M,
)
GENERATED = re.compile(r"^[ \t]*(?:\.\.[ \t]+|`{3,}\{)(?P<directive>auto\w+|py:\w+)(?:::|\})|\[\[autodoc\]\]", re.M)


def why_no_text(text: str) -> str:
    """Why a page that gave no text has none, for the line that says it is skipped: a site's page that only
    includes another file (Sphinx keeps `install_include.rst` beside `install.rst` for its navigation), which is
    not read into it, or only builds an API reference from the code; "" when the page holds neither."""
    included = list(dict.fromkeys(match.group("path") for match in INCLUDED.finditer(text)))
    if included:
        shown = ", ".join(included[:3]) + (f" and {len(included) - 3} more" if len(included) > 3 else "")
        return f"it only includes {shown}, which is indexed on its own if the knowledge folder holds it"
    generated = GENERATED.search(text)
    if generated:
        name = generated.group("directive") or "autodoc"
        return f"its API reference is built from the code ({name}), which is not read"
    return ""


def anchors_of(sections: list[Section]) -> list[str]:
    """GitHub-style anchors: the heading's slug, `-2`, `-3`... for repeats; `top` for the opening text."""
    seen: Counter[str] = Counter()
    out = []
    for section in sections:
        base = bounded_anchor(section.anchor or (slugify(section.heading) if section.heading else TOP) or "section")
        seen[base] += 1
        out.append(base if seen[base] == 1 else f"{base}-{seen[base]}")
    return out


def bounded_anchor(anchor: str) -> str:
    """The anchor, or when longer than MAX_ANCHOR_CHARS its start and 8 hex digits of its SHA-256: short,
    the same on every sync, and apart from any other anchor that starts the same way."""
    if len(anchor) <= MAX_ANCHOR_CHARS:
        return anchor
    digest = hashlib.sha256(anchor.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{anchor[: MAX_ANCHOR_CHARS - 9].rstrip('-')}-{digest}"


def ascii_part(part: str) -> str:
    """A part of a file name as it stands in an id: as it is when ASCII, else `xn--` and its Punycode."""
    if part.isascii():
        return part
    try:
        return "xn--" + part.encode("punycode").decode("ascii")
    except UnicodeError:  # a name that is not valid UTF-8 on disk (surrogate escapes): its bytes in hex
        return "x--" + part.encode("utf-8", "surrogatepass").hex()


def document_id(relative_path: str, anchor: str) -> str:
    """`doc:<path>#<anchor>`, the path kept to ASCII letters, digits, `.`, `_`, `/` and `-` (other runs become
    `-`), so a citation marker `[doc:...]` is one token that no space or bracket in a file name breaks.

    A part of the path (between `/` and `.`) with other characters is written in Punycode after `xn--`
    (`заметки.md` -> `xn--80akegjk7b.md`): unique for every name, and read by the citation parser, which
    reads ASCII ids (a reply is folded to what it looks like, so a Cyrillic `а` in an id would not survive)."""
    if not relative_path.isascii():
        relative_path = "/".join(
            ".".join(ascii_part(part) for part in segment.split(".")) for segment in relative_path.split("/")
        )
    return f"doc:{SAFE_PATH.sub('-', relative_path)}#{anchor}"


def shortened(text: str, limit: int = MAX_HEADING_CHARS) -> str:
    """Text cut to `limit` characters, at a space when one is near the end, and marked with "…"."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip() + "…"


def title_from_path(relative_path: str) -> str:
    """`runbooks/gpu-node_drain.md` -> `Gpu node drain`: a readable title for a file that states none."""
    stem = relative_path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    words = re.sub(r"[_\-]+", " ", stem).strip()
    return words[:1].upper() + words[1:] if words else relative_path


@dataclass
class Cuts:
    """What the bounds cut from one document, said as one note each."""

    runs: int = 0  # runs of punctuation shortened
    headings: int = 0  # titles and headings shortened
    sections: int = 0  # sections cut to MAX_SECTION_CHARS
    first_line: int = 0  # where the first of those starts
    left_out: str = ""  # sections left out past MAX_SECTIONS or MAX_DOCUMENT_CHARS

    def notes(self) -> list[str]:
        said = []
        if self.left_out:
            said.append(self.left_out)
        if self.sections:
            said.append(
                f"{self.sections:,} section(s) over {MAX_SECTION_CHARS:,} characters cut to that "
                f"(the first at line {self.first_line})"
            )
        if self.headings:
            said.append(f"{self.headings:,} title or heading(s) over {MAX_HEADING_CHARS} characters shortened")
        if self.runs:
            said.append(f"{self.runs:,} run(s) of over {MAX_SYMBOL_RUN} punctuation characters shortened")
        return said


def section_text(text: str) -> str:
    """A section's text as its entry holds it: each line (a paragraph, a list item) with its spaces
    collapsed, one line each, so a list item is never joined to the next; each block (code, a table:
    `assistant.blocks`) kept line for line as the reader wrote it."""
    return "\n".join(unit if is_block(unit) else clean(unit) for unit in units(text))


def document_entries(document: Document, relative_path: str, shown: str, notes: list[str] | None = None) -> list[Entry]:
    """The entries of a document; sections without text (a heading right above another) are left out.

    What a bound cut (see the module docstring) is added to `notes`, one line each, naming the file."""
    cuts = Cuts()

    def bounded(text: str, limit: int) -> str:
        text, runs = shorten_symbol_runs(clean(text))
        cuts.runs += runs
        if len(text) > limit:
            cuts.headings += 1
            text = shortened(text, limit)
        return text

    title = bounded(document.title, MAX_HEADING_CHARS) or title_from_path(relative_path)
    entries: list[Entry] = []
    characters = 0
    for number, (section, anchor) in enumerate(zip(document.sections, anchors_of(document.sections), strict=True)):
        text, runs = shorten_symbol_runs(section_text(section.text))
        if not text:
            continue
        if len(entries) >= MAX_SECTIONS or characters + min(len(text), MAX_SECTION_CHARS) > MAX_DOCUMENT_CHARS:
            rest = sum(1 for later in document.sections[number:] if later.text.strip())
            full = len(entries) >= MAX_SECTIONS
            bound = f"{MAX_SECTIONS:,} sections" if full else f"{MAX_DOCUMENT_CHARS:,} characters"
            cuts.left_out = f"over {bound}: the last {rest:,} section(s) left out - split the file"
            break
        cuts.runs += runs
        if len(text) > MAX_SECTION_CHARS:
            cuts.sections += 1
            cuts.first_line = cuts.first_line or section.line
            text = text[:MAX_SECTION_CHARS]
        characters += len(text)
        heading = bounded(section.heading, MAX_HEADING_CHARS)
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
    if notes is not None:
        notes.extend(f"{shown}: {note}" for note in cuts.notes())
    return entries
