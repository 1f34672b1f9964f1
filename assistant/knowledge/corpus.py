"""Readers for every knowledge format, turning files into `Entry` objects.

Formats: concept pages (parsed by `assistant.knowledge.concept_page`) and related-papers pages (text),
arXiv and glossary records (JSON Lines), and asked-as records that describe an entry for search
(`assistant.knowledge.asked_as`). A malformed file or line becomes a `Problem` naming
file, line and what was expected; it is skipped and the rest of the corpus still loads.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assistant.knowledge.asked_as import is_asked_as_record, read_record, with_descriptions
from assistant.knowledge.concept_page import is_concept_page, parse_concept_page
from assistant.knowledge.paper_links import linked_paper
from assistant.text import clean, slugify, strip_tags, without_parenthesis
from assistant.types import Entry, Problem

KNOWLEDGE_SUFFIXES = (".txt", ".jsonl")
IGNORED_SUFFIXES = (".md",)  # README, SOURCE and NOTICE files live beside the data
MAX_PAGE_BYTES = 1_000_000  # a text page larger than this is not a concept page
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


def walk_files(root: Path, corpus: Corpus) -> list[Path]:
    """Every file under a folder, sorted; a subfolder that cannot be listed is a problem.

    The problem is `damaged`, so entries indexed from that folder before are kept, not removed.
    """

    def unreadable(error: OSError) -> None:
        folder = Path(error.filename) if error.filename else root
        reason = error.strerror or type(error).__name__
        corpus.problems.append(
            Problem(display_path(folder), 0, f"cannot read the folder ({reason}) - its entries are kept as they were")
        )

    found = []
    for folder, _, names in os.walk(root, onerror=unreadable):
        found += [Path(folder) / name for name in names if not name.startswith(".")]
    return sorted(p for p in found if p.is_file())


def iter_knowledge_files(paths: Iterable[Path], corpus: Corpus) -> Iterator[Path]:
    """Files under the given paths, sorted; a missing path or unknown file type is a problem."""
    for root in paths:
        if root.is_dir():
            candidates = walk_files(root, corpus)
        elif root.is_file():
            candidates = [root]
        else:
            corpus.problems.append(
                Problem(display_path(root), 0, "no such file or folder - check the path", damaged=False)
            )
            continue
        for path in candidates:
            if path.suffix in KNOWLEDGE_SUFFIXES:
                yield path
            elif path.suffix not in IGNORED_SUFFIXES:
                corpus.problems.append(
                    Problem(
                        display_path(path),
                        0,
                        "not a knowledge file - expected .txt pages or .jsonl records",
                        damaged=False,
                    )
                )


def read_text(path: Path, corpus: Corpus, limit: int | None = None) -> str | None:
    """UTF-8 text of a file, or None with a problem for binary, oversized or non-UTF-8 files."""
    shown = display_path(path)
    size = path.stat().st_size
    if limit is not None and size > limit:
        corpus.problems.append(Problem(shown, 0, f"file is {size:,} bytes; a page may be at most {limit:,} bytes"))
        return None
    data = path.read_bytes()
    if b"\x00" in data[:8192]:
        corpus.problems.append(Problem(shown, 0, "binary file - expected UTF-8 text"))
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        corpus.problems.append(Problem(shown, line, f"not UTF-8 text (byte {error.start}) - save the file as UTF-8"))
        return None


def load_corpus(paths: Iterable[Path]) -> Corpus:
    """Read every knowledge file under `paths` into one Corpus."""
    corpus = Corpus()
    for path in iter_knowledge_files([Path(p) for p in paths], corpus):
        shown = display_path(path)
        corpus.files.append(shown)
        try:
            read_file(path, shown, corpus)
        except OSError as error:  # removed or made unreadable after the folder was listed
            reason = (
                "the file was removed while it was read"
                if isinstance(error, FileNotFoundError)
                else (f"cannot read the file ({error.strerror or type(error).__name__})")
            )
            corpus.problems.append(Problem(shown, 0, f"{reason} - its entries are kept as they were"))
    attach_descriptions(corpus)
    return corpus


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


def read_file(path: Path, shown: str, corpus: Corpus) -> None:
    """One knowledge file into the corpus (OSErrors are the caller's)."""
    if path.suffix == ".jsonl":
        read_jsonl(path, shown, corpus)
        return
    text = read_text(path, corpus, MAX_PAGE_BYTES)
    if text is None:
        return
    first = text.split("\n", 1)[0].strip()
    if is_concept_page(first):
        entry = parse_concept_page(text, shown)
        if isinstance(entry, Problem):
            corpus.problems.append(entry)
        else:
            corpus.add(entry)
    elif RELATED_HEADER.match(first):
        for entry in parse_related_page(text, shown):
            corpus.add(entry)
    else:
        corpus.problems.append(
            Problem(shown, 1, "expected 'Section · ID' (a concept page) or 'Related papers: ...' on line 1")
        )


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
        aliases = re.findall(r"\(([^)]+)\)", title)
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
