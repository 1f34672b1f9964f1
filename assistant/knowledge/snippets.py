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

from assistant.knowledge.site_markup import SNIPPET_PART

# a one-line include, `--8<-- "path"` (quoted or not); a bare `--8<--` opens and closes a list of paths, one
# a line. A leading `;` escapes it (the site shows the line without the `;`)
INCLUDE_LINE = re.compile(
    r"^(?P<indent>[ \t]*)(?<!;)-{1,}8<-{1,}[ \t]+(?P<quote>[\"']?)(?P<target>[^\"'\s]+)(?P=quote)[ \t]*$"
)
LIST_MARK = re.compile(r"^[ \t]*(?<!;)-{1,}8<-{1,}[ \t]*$")
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
    else is left for the Markdown reader, which shows no text for it."""
    budget = [MAX_INCLUDED_CHARS]
    included: list[str] = []
    lines = expand(text.split("\n"), relative, files, read, (relative,), budget, included)
    return Expanded("\n".join(line for line, _ in lines), [origin for _, origin in lines], included)


def expand(
    lines: list[str],
    relative: str,
    files: Collection[str],
    read: Callable[[str], str | None],
    stack: tuple[str, ...],
    budget: list[int],
    included: list[str],
) -> list[tuple[str, int]]:
    """The lines with their includes in place, each with the line of `lines` it comes from (1-based)."""
    out: list[tuple[str, int]] = []
    listing: str | None = None  # the indentation of an open `--8<--` list of paths
    for number, line in enumerate(lines, start=1):
        if LIST_MARK.match(line):
            listing = None if listing is not None else line[: len(line) - len(line.lstrip())]
            out.append(("", number))
            continue
        single = INCLUDE_LINE.match(line)
        if listing is not None and line.strip():
            target, indent = line.strip().strip("\"'"), listing
        elif listing is not None:
            listing = None  # the list is one paragraph: an unclosed mark takes no more
            out.append((line, number))
            continue
        elif single:
            target, indent = single.group("target"), single.group("indent")
        else:
            out.append((line, number))
            continue
        found = part_of(target, relative, files, read, stack) if len(stack) <= MAX_DEPTH else None
        if found is None or len(found[1]) > budget[0]:
            out.append(("", number))  # the Markdown reader shows no text for an include it cannot read either
            continue
        path, part = found
        budget[0] -= len(part)
        if len(stack) == 1:
            included.append(path)  # the page's own includes (what those include, they include)
        inner = expand(part.split("\n"), path, files, read, (*stack, path), budget, included)
        out.extend((f"{indent}{text}" if text.strip() else "", number) for text, _ in inner)
    return out


def part_of(
    target: str, relative: str, files: Collection[str], read: Callable[[str], str | None], stack: tuple[str, ...]
) -> tuple[str, str] | None:
    """(the included file's relative path, the text of the part `target` names), or None when the target is
    no knowledge file of the folder, is a page being included already, or names a part it does not have."""
    name, _, selector = target.partition(":")
    path = located(name, relative, files)
    if path is None or path in stack:
        return None
    text = read(path)
    if text is None:
        return None
    if not selector:
        return path, without_marks(text)
    lines = LINES.match(selector)
    if lines:
        every = text.split("\n")
        start = int(lines.group("start") or 1)
        end = int(lines.group("end") or len(every)) if ":" in selector else len(every)
        return path, without_marks("\n".join(every[max(start, 1) - 1 : end]))
    return (path, without_marks(part)) if (part := named_part(text, selector)) is not None else None


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
