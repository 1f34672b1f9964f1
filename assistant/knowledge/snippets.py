"""MkDocs' snippet includes read the way the site shows them: the included text in the page.

A Material for MkDocs site keeps text several pages share in snippet files (`install.inc.md`) and includes
it with `--8<-- "docs/install.inc.md:requirements"` (pymdown-extensions' Snippets: a whole file, a named
part between `--8<-- [start:requirements]` and `--8<-- [end:requirements]`, or lines `file.md:4:12`), often
inside a content tab. Without the include, the page's "Requirements" section was empty and the text was
cited as the snippet file, a file the site never shows as a page of its own.

Only a knowledge file the same sync reads can be included: the include is looked up among the files the
folder's walk listed (links out of the folder, dot folders and `.assistantignore`d files are not among
them), never opened by the path the page writes. So a page reads nothing a sync would not read anyway,
and a change to an included file is a change the index notices. A file that a page (a file no other file
includes) includes, directly or through another included file, is indexed in that page, not on its own
(`corpus.drop_included`). Includes nest up to MAX_DEPTH; a file that includes itself, at any depth, is
left out there; the page grows by MAX_INCLUDED_CHARS at most.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from textwrap import dedent

from assistant.knowledge.site_markup import SNIPPET, SNIPPET_PART

LINES = re.compile(r"^(?P<start>\d*):?(?P<end>\d*)$")  # "4:12", "4:", ":12", "4"
MAX_DEPTH = 4
MAX_INCLUDED_CHARS = 2_000_000


@dataclass
class Expanded:
    """A page with its includes in place: its text, the page's own line each line of it comes from (an
    included line, the include's), and the files the page itself includes (relative to the folder)."""

    text: str
    origins: list[int]
    included: list[str] = field(default_factory=list)


def with_includes(text: str, relative: str, files: Collection[str], read: Callable[[str], str | None]) -> Expanded:
    """`text` (the page at `relative` in its folder) with each include of a file in `files` (the folder's
    knowledge files by relative path) replaced by the part it names, read by `read`. An include of anything
    else, or past the bounds, becomes an empty line: the site's reader sees no directive there either."""
    budget = [MAX_INCLUDED_CHARS]
    included: list[str] = []
    parts: dict[tuple[str, str], str | None] = {}  # each part read once, however often the page includes it

    def part(path: str, selector: str) -> str | None:
        if (path, selector) not in parts:
            text = read(path)
            parts[path, selector] = None if text is None else selected(text, selector)
        return parts[path, selector]

    lines = expand(text.split("\n"), relative, files, part, (relative,), budget, included)
    return Expanded(
        "\n".join(line for line, _ in lines), [origin for _, origin in lines], list(dict.fromkeys(included))
    )


def expand(
    lines: list[str],
    relative: str,
    files: Collection[str],
    part: Callable[[str, str], str | None],
    stack: tuple[str, ...],
    budget: list[int],
    included: list[str],
) -> list[tuple[str, int]]:
    """The lines with their includes in place, each with the line of `lines` it comes from (1-based)."""
    out: list[tuple[str, int]] = []
    listing: str | None = None  # the indentation of an open `--8<--` list of paths
    for number, line in enumerate(lines, start=1):
        snippet = SNIPPET.match(line)  # `--8<-- "path"`, or a bare `--8<--` opening or closing a list of paths
        indent = line[: len(line) - len(line.lstrip())]
        if snippet and not snippet.group("file"):
            listing = None if listing is not None else indent
            out.append(("", number))
            continue
        if listing is not None and line.strip():
            target, indent = line.strip().strip("\"'"), listing
        elif listing is not None:
            listing = None  # the list is one paragraph: an unclosed mark takes no more
            out.append((line, number))
            continue
        elif snippet:
            target = snippet.group("file").strip("\"'")
        else:
            out.append((line, number))
            continue
        name, _, selector = target.partition(":")
        path = located(name, relative, files) if len(stack) <= MAX_DEPTH and budget[0] > 0 else None
        shown = part(path, selector) if path is not None and path not in stack else None
        if path is None or shown is None or len(shown) > budget[0]:
            out.append(("", number))  # the Markdown reader shows no text for an include it cannot read either
            continue
        budget[0] -= len(shown)
        if len(stack) == 1:
            included.append(path)  # the page's own includes (what those include, they include)
        inner = expand(shown.split("\n"), path, files, part, (*stack, path), budget, included)
        out.extend((f"{indent}{said}" if said.strip() else "", number) for said, _ in inner)
    return out


def selected(text: str, selector: str) -> str | None:
    """The part of a file's text an include's selector names, without any part's marks: the whole file (no
    selector), its lines (`4:12`, `4:`, `:12`, `4`) or a named part, taken out of the indentation it has in its
    file (a README's part nested in an HTML list, included into a content tab, was read as indented code);
    None when the file marks no such part."""
    if not selector:
        return without_marks(text)
    lines = LINES.match(selector)
    if lines:
        every = text.split("\n")
        start = int(lines.group("start") or 1)
        end = int(lines.group("end") or len(every)) if ":" in selector else len(every)
        return dedent(without_marks("\n".join(every[max(start, 1) - 1 : end])))
    named = named_part(text, selector)
    return None if named is None else dedent(without_marks(named))


def located(name: str, relative: str, files: Collection[str]) -> str | None:
    """The folder's file an include names: beside the page, else from the folder's top, else with its leading
    folders taken off one by one (sites include from the repository's root, `docs/install.inc.md`, where the
    folder indexed is `docs/` itself). Never a path that leaves the folder."""
    name = name.strip().lstrip("/")
    here = posixpath.dirname(relative)
    parts = name.split("/")
    candidates = [posixpath.join(here, name), *("/".join(parts[n:]) for n in range(len(parts)))]
    for candidate in candidates:
        normal = posixpath.normpath(candidate)
        if normal.startswith("../") or normal == ".." or normal.startswith("/"):
            continue
        if normal in files:
            return normal
    return None


def named_part(text: str, name: str) -> str | None:
    """The lines between a part's start and end marks, or None when the file marks no such part."""
    lines = text.split("\n")
    start = next((n for n, line in enumerate(lines) if marks(line, "start", name)), None)
    if start is None:
        return None
    end = next((n for n in range(start + 1, len(lines)) if marks(lines[n], "end", name)), len(lines))
    return "\n".join(lines[start + 1 : end])


def marks(line: str, mark: str, name: str) -> bool:
    found = SNIPPET_PART.match(line)
    return found is not None and found.group("mark").lower() == mark and found.group("name").lower() == name.lower()


def without_marks(text: str) -> str:
    """The included text without its own parts' marks (the site never shows those lines)."""
    return "\n".join(line for line in text.split("\n") if not SNIPPET_PART.match(line))
