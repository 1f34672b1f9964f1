"""Readers for every knowledge format, turning files into `Entry` objects.

Formats: concept pages (parsed by `assistant.knowledge.concept_page`) and related-papers pages (text),
arXiv and glossary records (JSON Lines), asked-as records that describe an entry for search
(`assistant.knowledge.asked_as`), and documents people keep - Markdown, HTML, PDF and any other
`.txt` - one entry per section (`assistant.knowledge.documents`). A malformed file or line becomes a `Problem` naming
file, line and what was expected; it is skipped and the rest of the corpus still loads.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assistant.knowledge.asked_as import is_asked_as_record, read_record, with_descriptions
from assistant.knowledge.concept_page import is_concept_page, parse_concept_page
from assistant.knowledge.documents import Document, document_entries, why_no_text
from assistant.knowledge.html_reader import read_html
from assistant.knowledge.ignore import ignore_rules
from assistant.knowledge.notebook_reader import NotebookProblem, read_notebook
from assistant.knowledge.paper_links import linked_paper
from assistant.knowledge.pdf_reader import PdfProblem, read_pdf
from assistant.knowledge.snippets import with_includes
from assistant.knowledge.text_reader import read_text_document
from assistant.text import clean, parenthesised, slugify, strip_tags, without_parenthesis
from assistant.types import Entry, Problem

# the readers' edition, raised when a reader reads an unchanged file differently (an admonition's indented body,
# a comment left out): an index read by an older edition is synced again when the assistant starts, not
# only on `assistant index` (`index.freshness.stale_reason`). An index that records none was read by edition 1;
# 3 leaves out a comment inside a paragraph too; 4 an MkDocs snippet include and an empty code block; 5 reads
# GitHub's alerts, Hugging Face's API links and MyST's directives and roles the way their sites show them, and
# leaves out attribute lists; 6 reads a snippet file's named parts as sections and leaves out a code block's
# opening empty lines; 7 reads MkDocs' snippet includes into the page, takes a first heading that repeats the
# front matter's title as the title and leaves out a Markdown page's own <style> and <script>.
READING = 7
MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdx")
RST_SUFFIXES = (".rst", ".rest")
DOCUMENT_SUFFIXES = (*MARKDOWN_SUFFIXES, *RST_SUFFIXES, ".ipynb", ".html", ".htm", ".pdf")
KNOWLEDGE_SUFFIXES = (".txt", ".jsonl", *DOCUMENT_SUFFIXES)
KNOWN_FORMATS = ".txt, .jsonl, .md, .rst, .ipynb, .html or .pdf"
MAX_PAGE_BYTES = 1_000_000  # a concept page larger than this is refused
MAX_DOCUMENT_BYTES = 50_000_000  # any file larger than this is refused (read with this bound)
VIRTUAL_ROOTS = ("/proc", "/sys", "/dev")
MAX_LINE_CHARS = 1_000_000
GLOSSARY_URL = "https://developers.google.com/machine-learning/glossary#"
ARXIV_URL = "https://arxiv.org/abs/"

RELATED_HEADER = re.compile(r"^Related papers:\s*(?P<anchor>.+)$")


@dataclass
class Corpus:
    """Everything read from the knowledge paths: entries by id, problems, files read."""

    entries: dict[str, Entry] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    asked_as: list[tuple[str, list[str], str]] = field(default_factory=list)  # entry id, descriptions, path:line
    notes: list[str] = field(default_factory=list)  # read, but not whole (pages without text, a bound's cut)
    ignored: int = 0  # files a .assistantignore names
    includes: dict[str, list[str]] = field(default_factory=dict)  # a Markdown page -> the files it includes

    def add(self, entry: Entry) -> None:
        """Add an entry; the same abstract twice merges sources, another clash is a problem."""
        old = self.entries.get(entry.id)
        if old is None:
            self.entries[entry.id] = entry
        elif old.kind == entry.kind and old.text == entry.text:
            sources = [*old.fields.get("sources", [old.source]), entry.source]
            anchors = [*old.fields.get("anchors", []), *entry.fields.get("anchors", [])]
            fields = {**old.fields, "sources": sources}
            if anchors:
                fields["anchors"] = list(dict.fromkeys(anchors))
            self.entries[entry.id] = Entry(old.id, old.kind, old.title, old.text, fields, old.source, old.url)
        else:
            path, _, line = entry.source.rpartition(":")
            self.problems.append(
                Problem(
                    path,
                    int(line or 0),
                    f"duplicate id {entry.id} (first read at {old.source}) - kept the first",
                    damaged=False,
                )
            )


def normalise(text: str) -> str:
    """NFKC, collapsed whitespace, casefolded: the form content ids are hashed from."""
    return " ".join(unicodedata.normalize("NFKC", text).split()).casefold()


def abstract_id(text: str) -> str:
    """A stable id for an abstract that has none: the same text gives the same id on every run."""
    return "abs-" + hashlib.sha256(normalise(text).encode("utf-8")).hexdigest()[:10]


def display_path(path: Path) -> str:
    """Repo-relative when possible, so sources never carry this machine's absolute paths."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return path.as_posix()


# --- files -------------------------------------------------------------------------------


def under(path: str, folders: Iterable[str]) -> bool:
    """Whether a (display) path is one of `folders` or inside one of them."""
    return any(path == folder or path.startswith(folder.rstrip("/") + "/") for folder in folders)


def not_regular(path: Path) -> str | None:
    """What a path that is neither a regular file nor a folder is ("a FIFO", "a device"), else None.

    Such paths are never opened: a FIFO blocks the reader forever, a device never ends.
    """
    try:
        mode = path.stat().st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def virtual_tree(path: Path) -> bool:
    """Whether a path lies in a kernel's virtual file system (/proc, /sys, /dev), whose files never end."""
    try:
        resolved = path.resolve()
    except OSError:
        return False
    return any(resolved == Path(root) or Path(root) in resolved.parents for root in VIRTUAL_ROOTS)


FOLLOW_LINKS_SETTING = "ASSISTANT_FOLLOW_LINKS=on"


def leaves(path: Path, folder: Path) -> str | None:
    """Where a link leads when that is outside `folder` (resolved: through links to links and
    folder links on the way, `..` included), "" for a broken link, None for a link that stays inside
    (or a path that is no link)."""
    if not path.is_symlink():
        return None
    target = Path(os.path.realpath(path))
    if not target.exists():
        return ""
    home = Path(os.path.realpath(folder))
    return None if target == home or home in target.parents else target.as_posix()


def link_problem(path: Path, target: str, where: str, follow_links: bool) -> Problem | None:
    """The problem a link to a file is (`target` from `leaves`, `where` names the folder it leaves), or
    None when it is to be read: any that leads to a file when `follow_links` is set. A broken link is
    always a problem."""
    shown = display_path(path)
    if target == "":
        return Problem(shown, 0, "a broken link (it leads to nothing) - skipped", damaged=False)
    if follow_links:
        return None
    return Problem(
        shown,
        0,
        f"a link to {target}, outside {where} - not followed, so nothing outside the folder is "
        f"read unasked; copy the file in, or set {FOLLOW_LINKS_SETTING} to follow such links",
        damaged=False,
    )


def walk_files(root: Path, corpus: Corpus, follow_links: bool = False) -> list[Path]:
    """Every regular file under a folder, sorted; a subfolder that cannot be listed is a problem.

    The problem is `damaged`, so entries indexed from that folder before are kept, not removed.
    Files a `.assistantignore` names are left out (and counted); FIFOs, sockets and devices are
    problems, never opened; virtual file systems (/proc, /sys, /dev) inside the folder are not walked.
    A link to a file outside the folder is a problem, never opened, unless `follow_links`; a link to
    a file inside it is read; folder links are never walked (one that leads outside is listed).
    """

    def unreadable(error: OSError) -> None:
        folder = Path(error.filename) if error.filename else root
        reason = error.strerror or type(error).__name__
        corpus.problems.append(
            Problem(display_path(folder), 0, f"cannot read the folder ({reason}) - its entries are kept as they were")
        )

    found = []
    for folder, subfolders, names in os.walk(root, onerror=unreadable):
        here = Path(folder)
        subfolders[:] = [s for s in subfolders if not s.startswith(".") and not virtual_tree(here / s)]
        ignore = ignore_rules(here, root)
        for name in list(subfolders):  # os.walk lists a link to a folder as a folder, and does not walk it
            path = here / name
            target = leaves(path, root)
            if target and not ignore.matches(path):
                outside = f"outside {display_path(root)}"
                message = f"a link to the folder {target}, {outside} - not followed (folder links never are)"
                corpus.problems.append(Problem(display_path(path), 0, message, damaged=False))
        for name in names:
            path = here / name
            if name.startswith("."):
                continue
            if ignore.matches(path):
                corpus.ignored += 1
                continue
            target = leaves(path, root)
            problem = link_problem(path, target, display_path(root), follow_links) if target is not None else None
            if problem is not None:
                corpus.problems.append(problem)
                continue
            odd = not_regular(path)
            if odd:
                corpus.problems.append(Problem(display_path(path), 0, f"{odd} - skipped, never read", damaged=False))
            elif path.is_file():
                found.append(path)
    return sorted(found)


def iter_knowledge_files(
    paths: Iterable[Path], corpus: Corpus, follow_links: bool = False
) -> Iterator[tuple[Path, str]]:
    """(file, its path relative to the knowledge path it was found under) for every file to read, sorted.

    A missing path, a FIFO, device or virtual tree, and an unknown file type are problems; so is a link
    out of its folder (see `walk_files`), a named file included: a link named as knowledge is read
    when it leads to a file in the folder the link is in.
    """
    for root in paths:
        if virtual_tree(root):
            corpus.problems.append(
                Problem(
                    display_path(root), 0, "a virtual file system (/proc, /sys, /dev) - not knowledge", damaged=False
                )
            )
            continue
        odd = not_regular(root)
        if odd:
            corpus.problems.append(Problem(display_path(root), 0, f"{odd} - skipped, never read", damaged=False))
            continue
        if root.is_dir():
            candidates = [(path, path.relative_to(root).as_posix()) for path in walk_files(root, corpus, follow_links)]
        elif root.is_file():
            target = leaves(root, root.parent)
            where = "the folder it is in"
            problem = link_problem(root, target, where, follow_links) if target is not None else None
            if problem is not None:
                corpus.problems.append(problem)
                continue
            candidates = [(root, root.name)]
        else:
            corpus.problems.append(
                Problem(display_path(root), 0, "no such file or folder - check the path", damaged=False)
            )
            continue
        for path, relative in candidates:
            if path.suffix.lower() in KNOWLEDGE_SUFFIXES:
                yield path, relative
            else:
                corpus.problems.append(
                    Problem(
                        display_path(path),
                        0,
                        f"not a knowledge file - expected {KNOWN_FORMATS} (or list it in .assistantignore)",
                        damaged=False,
                    )
                )


def read_bytes(path: Path, corpus: Corpus, limit: int) -> bytes | None:
    """The bytes of a file, or None with a problem when it is larger than `limit`: by its size, else by
    a bounded read (a file that grows, or whose size says 0 and never ends, cannot hold the sync)."""
    size = path.stat().st_size
    if size > limit:
        corpus.problems.append(
            Problem(display_path(path), 0, f"file is {size:,} bytes; a file may be at most {limit:,} bytes")
        )
        return None
    with path.open("rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        corpus.problems.append(
            Problem(display_path(path), 0, f"file is over {limit:,} bytes - split it or leave it out")
        )
        return None
    return data


def read_text(path: Path, corpus: Corpus, limit: int | None = None) -> str | None:
    """UTF-8 text of a file, or None with a problem for binary, oversized or non-UTF-8 files."""
    shown = display_path(path)
    data = read_bytes(path, corpus, limit if limit is not None else MAX_DOCUMENT_BYTES)
    if data is None:
        return None
    if b"\x00" in data[:8192]:
        corpus.problems.append(Problem(shown, 0, "binary file - expected UTF-8 text"))
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        corpus.problems.append(Problem(shown, line, f"not UTF-8 text (byte {error.start}) - save the file as UTF-8"))
        return None


def load_corpus(paths: Iterable[Path], follow_links: bool = False) -> Corpus:
    """Read every knowledge file under `paths` into one Corpus.

    Nothing a file holds stops the rest: whatever a reader raises is a problem naming the file, and
    the entries indexed from it before are kept. `follow_links` reads links to files outside the
    folder they are in (ASSISTANT_FOLLOW_LINKS); by default they are listed and never opened.
    """
    corpus = Corpus()
    listed = list(iter_knowledge_files([Path(p) for p in paths], corpus, follow_links))
    folders: dict[Path, dict[str, Path]] = {}  # each knowledge path's files by relative path, for includes
    for path, relative in listed:
        folders.setdefault(folder_of(path, relative), {})[relative] = path
    for path, relative in listed:
        shown = display_path(path)
        corpus.files.append(shown)
        try:
            read_file(path, shown, corpus, relative, folders[folder_of(path, relative)])
        except OSError as error:  # removed or made unreadable after the folder was listed
            reason = (
                "the file was removed while it was read"
                if isinstance(error, FileNotFoundError)
                else (f"cannot read the file ({error.strerror or type(error).__name__})")
            )
            corpus.problems.append(Problem(shown, 0, f"{reason} - its entries are kept as they were"))
        except Exception as error:  # a reader's bug or a library's on a hostile file: this file only
            message = " ".join(str(error).split())[:160]
            corpus.problems.append(
                Problem(
                    shown,
                    0,
                    f"cannot read the file ({type(error).__name__}: {message}) - its entries are kept as they were",
                )
            )
    drop_included(corpus)
    attach_descriptions(corpus)
    return corpus


def folder_of(path: Path, relative: str) -> Path:
    """The knowledge path a listed file was found under (its folder, or the file's own folder)."""
    return Path(path.as_posix().removesuffix(relative)) if path.as_posix().endswith(relative) else path.parent


def drop_included(corpus: Corpus) -> None:
    """A file a page includes (`snippets.py`) is read in that page, as the site shows it, not on its own. A page
    is a file no other file includes; what it includes, directly or through an included file, is included.
    (Files that include only each other are all pages: none is dropped.)"""
    included_by = {other: page for page, others in corpus.includes.items() for other in others}
    pages = [page for page in corpus.includes if page not in included_by]
    dropped: dict[str, str] = {}
    for page in pages:
        waiting = list(corpus.includes[page])
        while waiting:
            other = waiting.pop()
            if other != page and other not in dropped:
                dropped[other] = page
                waiting.extend(corpus.includes.get(other, []))
    corpus.entries = {i: e for i, e in corpus.entries.items() if e.fields.get("path") not in dropped}
    corpus.notes.extend(f"{other}: read where {page} includes it, not on its own" for other, page in dropped.items())


def attach_descriptions(corpus: Corpus) -> None:
    """Asked-as descriptions onto the entries they name, wherever in the knowledge those were read."""
    for entry_id, descriptions, source in corpus.asked_as:
        entry = corpus.entries.get(entry_id)
        if entry is None:
            path, _, line = source.rpartition(":")
            message = f"asked-as descriptions of {entry_id}, which no entry has - check the id"
            corpus.problems.append(Problem(path, int(line), message, damaged=False))
            continue
        corpus.entries[entry_id] = with_descriptions(entry, descriptions, [source])


def read_file(
    path: Path, shown: str, corpus: Corpus, relative: str | None = None, folder: Mapping[str, Path] | None = None
) -> None:
    """One knowledge file into the corpus (OSErrors are the caller's); `folder`, the files listed with it by
    relative path, are the ones a Markdown page may include."""
    suffix = path.suffix.lower()
    relative = relative or path.name
    if suffix == ".jsonl":
        read_jsonl(path, shown, corpus)
        return
    if suffix in DOCUMENT_SUFFIXES:
        read_document(path, shown, relative, corpus, folder or {})
        return
    text = read_text(path, corpus, MAX_DOCUMENT_BYTES)
    if text is None:
        return
    first = text.split("\n", 1)[0].strip()
    if is_concept_page(first) or RELATED_HEADER.match(first):
        size = len(text.encode("utf-8"))
        if size > MAX_PAGE_BYTES:
            corpus.problems.append(
                Problem(shown, 0, f"file is {size:,} bytes; a page may be at most {MAX_PAGE_BYTES:,} bytes")
            )
            return
    if is_concept_page(first):
        entry = parse_concept_page(text, shown)
        if isinstance(entry, Problem):
            corpus.problems.append(entry)
        else:
            corpus.add(entry)
    elif RELATED_HEADER.match(first):
        for entry in parse_related_page(text, shown):
            corpus.add(entry)
    elif " · " in first or first.endswith(" ·"):  # a concept page's header, broken
        corpus.problems.append(
            Problem(shown, 1, "expected 'Section · ID' (a concept page) or 'Related papers: ...' on line 1")
        )
    else:  # plain notes
        add_document(read_text_document(text), relative, shown, corpus)


def read_document(path: Path, shown: str, relative: str, corpus: Corpus, folder: Mapping[str, Path]) -> None:
    """A Markdown, reStructuredText, notebook, HTML or PDF file as one entry per section."""
    suffix = path.suffix.lower()
    notes: list[str] = []  # what a reader's bounds cut
    if suffix == ".pdf":
        data = read_bytes(path, corpus, MAX_DOCUMENT_BYTES)
        if data is None:
            return
        try:
            document, notes = read_pdf(data)
        except PdfProblem as problem:
            corpus.problems.append(Problem(shown, 0, str(problem)))
            return
        corpus.notes.extend(f"{shown}: {note}" for note in notes)
        add_document(document, relative, shown, corpus)
        return
    text = read_text(path, corpus, MAX_DOCUMENT_BYTES)
    if text is None:
        return
    if suffix in MARKDOWN_SUFFIXES:
        from assistant.knowledge.markdown_reader import read_markdown  # markdown-it: only to read Markdown

        shown_text, origins = text, None
        if "8<" in text:  # MkDocs' snippet includes: the included text in the page, as the site shows it
            expanded = with_includes(text, relative, folder, lambda other: included_text(folder[other]))
            shown_text, origins = expanded.text, expanded.origins
            corpus.includes[shown] = [display_path(folder[other]) for other in expanded.included]
        document = read_markdown(shown_text, notes, mdx=suffix == ".mdx", origins=origins)
    elif suffix == ".ipynb":
        try:
            document = read_notebook(text, notes)
        except NotebookProblem as problem:
            corpus.problems.append(Problem(shown, 0, str(problem)))
            return
    elif suffix in RST_SUFFIXES:
        from assistant.knowledge.rst_reader import read_rst  # docutils: only to read reStructuredText

        document = read_rst(text, notes)
    else:
        document = read_html(text, notes)
    corpus.notes.extend(f"{shown}: {note}" for note in notes)
    add_document(document, relative, shown, corpus, text)


def included_text(path: Path) -> str | None:
    """An included file's text; what is wrong with it is said where the file itself is read."""
    return read_text(path, Corpus(), MAX_DOCUMENT_BYTES)


def add_document(document: Document, relative: str, shown: str, corpus: Corpus, text: str = "") -> None:
    """The document's entries, or a line saying why it gives none (`text`, the file's, tells what it holds)."""
    entries = document_entries(document, relative, shown, corpus.notes)
    if not entries:
        why = why_no_text(text)
        said = f"no text of its own: {why}" if why else "no text in the document"
        corpus.problems.append(Problem(shown, 0, f"{said} - nothing to index", damaged=False))
    for entry in entries:
        corpus.add(entry)


# --- related-papers pages --------------------------------------------------------------


def parse_related_page(text: str, source: str) -> Iterator[Entry]:
    """`Related papers: <anchor>`, then one abstract per blank-line-separated paragraph."""
    lines = text.splitlines()
    anchor = clean(RELATED_HEADER.match(lines[0].strip())["anchor"])  # type: ignore[index]
    paragraph: list[str] = []
    start = 0
    for number, line in enumerate([*lines[1:], ""], start=2):
        if line.strip():
            if not paragraph:
                start = number
            paragraph.append(line.strip())
        elif paragraph:
            yield abstract_entry(" ".join(paragraph), f"{source}:{start}", anchor)
            paragraph = []


def abstract_entry(text: str, source: str, anchor: str) -> Entry:
    """An abstract of a related-papers page; one that is an arXiv record of its own gets its title and link."""
    text = clean(text)
    entry_id = abstract_id(text)
    fields: dict[str, Any] = {"anchors": [anchor], "truncated": text.endswith("…")}
    paper = linked_paper(entry_id)
    if paper is None:
        return Entry(entry_id, "abstract", readable_title(text), text, fields, source, None)
    arxiv, title = paper
    return Entry(entry_id, "abstract", title, text, {**fields, "arxiv_id": arxiv}, source, ARXIV_URL + arxiv)


TITLE_CHARS = 100
# words a cut title must not end on: they promise more ("Scheduling of", "compared to")
_DANGLING_WORDS = """a an the of to in on at by for from with without into onto over under between among via as than
    and or but nor so yet while whereas although because since if when where which who whose that this
    these those its their our his her is are was were be been being has have had do does can could may
    might will would should must not no such both either each every many more most much very also often
    compared due including like using based across through toward towards against about per versus vs
    we they it there here one two three four several some all any other increasingly new"""
DANGLING = frozenset(_DANGLING_WORDS.split())
ABBREVIATION = re.compile(r"(?:\b(?:e\.g|i\.e|etc|vs|al|cf|approx|Fig|Eq|Sec)|\b[A-Z])\.$")


def first_sentence(text: str) -> str:
    """Text up to its first sentence end, not fooled by "e.g." or "et al."."""
    for match in re.finditer(r"[.!?](?=\s)", text):
        if not ABBREVIATION.search(text[: match.end()]):
            return text[: match.end()]
    return text


def readable_title(text: str, limit: int = TITLE_CHARS) -> str:
    """A title for an abstract that has none: its first sentence, cut at a word boundary when long.

    A long sentence is cut before a connecting word or after a comma (a phrase boundary: "... are
    the workhorses" rather than "... the workhorses of numerous machine"), never after "of", "the"
    or inside brackets, and marked with "…"; so is a first sentence the source itself cut short.
    """
    sentence = first_sentence(text).strip()
    cut_by_source = sentence.endswith("…")
    sentence = sentence.rstrip(".!?…").strip()
    if len(sentence) <= limit and not cut_by_source:
        return sentence
    words = sentence.split()
    if cut_by_source:
        words = words[:-1]  # the source cut this sentence: its last word may be a fragment of one

    def ends_well(n: int) -> bool:
        prefix = " ".join(words[:n])
        last = words[n - 1].rstrip(",;")  # a clause ends at a comma; the comma is dropped
        return bool(last) and not (
            last.strip(":()[]\"'").lower() in DANGLING
            or last[-1] in ":-–—/([{"
            or prefix.count("(") > prefix.count(")")
        )

    fits = [n for n in range(1, len(words) + 1) if len(" ".join(words[:n])) <= limit]
    at_phrase = [
        n
        for n in fits
        if n >= 3
        and ends_well(n)
        and len(" ".join(words[:n])) >= limit // 2
        and (n == len(words) or words[n].lower() in DANGLING or words[n - 1].endswith(","))
    ]
    anywhere = [n for n in fits if ends_well(n)]
    n = max(at_phrase or anywhere or [min(8, len(words))])
    title = " ".join(words[:n]).rstrip(",;:")
    if len(title) > limit:  # one endless "word" (a formula, a URL)
        return title[: limit - 1] + "…"
    return title if n == len(words) and not cut_by_source else title + "…"


# --- JSON Lines packs ------------------------------------------------------------------


def read_jsonl(path: Path, shown: str, corpus: Corpus) -> None:
    """arXiv, glossary or asked-as records, one per line; a broken line is a problem, the rest loads."""
    glossary: list[tuple[int, dict[str, Any]]] = []
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            if len(raw) > MAX_LINE_CHARS:
                corpus.problems.append(Problem(shown, number, f"line of {len(raw):,} bytes - expected one record"))
                continue
            try:
                record = json.loads(raw.decode("utf-8"))
            except UnicodeDecodeError:
                corpus.problems.append(Problem(shown, number, "not UTF-8 text - save the file as UTF-8"))
                continue
            except json.JSONDecodeError as error:
                corpus.problems.append(Problem(shown, number, f"expected a JSON object ({error.msg})"))
                continue
            if not isinstance(record, dict):
                corpus.problems.append(Problem(shown, number, "expected a JSON object"))
            elif "question" in record and number == 1:
                corpus.problems.append(Problem(shown, 1, "a question set, not knowledge - skipped", damaged=False))
                return
            elif is_asked_as_record(record):
                read = read_record(record, shown, number)
                if isinstance(read, Problem):
                    corpus.problems.append(read)
                else:
                    corpus.asked_as.append((*read, f"{shown}:{number}"))
            elif "term" in record or "definition" in record:
                glossary.append((number, record))
            else:
                entry = arxiv_entry(record, f"{shown}:{number}")
                if isinstance(entry, Problem):
                    corpus.problems.append(entry)
                else:
                    corpus.add(entry)
    for entry in glossary_entries(glossary, shown, corpus):
        corpus.add(entry)


def arxiv_entry(record: dict[str, Any], source: str) -> Entry | Problem:
    abstract, title = record.get("abstract"), record.get("title")
    if not isinstance(abstract, str) or not abstract.strip():
        path, _, line = source.rpartition(":")
        return Problem(path, int(line), "expected an arXiv record with 'abstract' (or a glossary 'term')")
    arxiv = str(record.get("arxiv_id") or "").strip()
    text = clean(abstract)
    fields: dict[str, Any] = {k: record[k] for k in ("arxiv_id", "authors", "categories", "submit_date") if k in record}
    if arxiv:
        title = clean(str(title or arxiv))
        return Entry(f"arxiv:{arxiv}", "abstract", title, text, fields, source, ARXIV_URL + arxiv)
    return Entry(
        abstract_id(text), "abstract", clean(str(title)) if title else readable_title(text), text, fields, source
    )


def glossary_entries(records: list[tuple[int, dict[str, Any]]], shown: str, corpus: Corpus) -> Iterator[Entry]:
    """Glossary terms; `related` anchors are resolved to entry ids where a term matches."""
    by_anchor: dict[str, str] = {}
    valid: list[tuple[int, dict[str, Any], str, list[str]]] = []
    for number, record in records:
        term, definition = record.get("term"), record.get("definition")
        if not isinstance(term, str) or not term.strip() or not isinstance(definition, str) or not definition.strip():
            corpus.problems.append(Problem(shown, number, "expected a glossary record with 'term' and 'definition'"))
            continue
        title = clean(strip_tags(term))
        aliases = parenthesised(title)
        entry_id = f"glossary:{slugify(title)}"
        base = without_parenthesis(title)
        for key in (title, base, *aliases):
            by_anchor.setdefault(slugify(key), entry_id)
        valid.append((number, record, title, aliases))
    for number, record, title, aliases in valid:
        related = [by_anchor.get(slugify(str(anchor).replace("_", " "))) for anchor in record.get("related") or []]
        definition = clean(record["definition"]).replace("[$$]", "$").replace("[/$$]", "$").replace(" ,", ",")
        definition = re.sub(r"\s+([.;:])", r"\1", definition)
        fields = {"aliases": aliases, "related": [r for r in dict.fromkeys(related) if r]}
        anchor = re.sub(r"\s+", "_", without_parenthesis(title).lower())
        yield Entry(
            f"glossary:{slugify(title)}",
            "concept",
            title,
            definition,
            fields,
            f"{shown}:{number}",
            GLOSSARY_URL + anchor,
        )
