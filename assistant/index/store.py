"""The committed state of an index: manifest, entry store and lexical index, by generation.

A sync writes a new generation beside the current one (entries + chunks as JSON Lines, a
bm25s lexical index) and then replaces `manifest.json` atomically; that rename is the
commit point. A sync killed before it leaves the previous generation, which the manifest
still names, fully usable. Vectors live in Chroma keyed by content-addressed ids, so the
previous generation's vectors are untouched until after the commit.

A damaged manifest or entries file raises `IndexDamagedError` naming the file and the fix
(`assistant index --rebuild`); files of other generations (left by a sync killed between its
commit and its clean-up) are removed by `sweep`, which every sync calls.

The home may be a folder of the user's (ASSISTANT_HOME set to the knowledge folder): `sweep` removes
only files this store wrote. Before it writes a generation it adds the generation's file names to
`written.json` (the ledger), and it sweeps only the names the ledger holds and its own temporaries,
never a file that merely looks like one (`index/entries-journal.md`, `index/plan.tmp`).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assistant.errors import IndexMismatchError, IndexUnavailableError
from assistant.text import lexical_tokens
from assistant.types import Chunk, Entry

FORMAT_VERSION = 1
REBUILD = "rebuild it: assistant index --rebuild"
MANIFEST = "manifest.json"
LEDGER = "written.json"  # the generation files this store wrote and has not removed yet
TEMPORARIES = (f"{MANIFEST}.tmp", f"{LEDGER}.tmp")  # what `write_json_atomic` leaves when killed
GENERATION_FILE = re.compile(r"(entries-[0-9]+\.jsonl|lexical-[0-9]+)")


class IndexDamagedError(IndexUnavailableError):
    """A file of the committed index is missing or cannot be parsed; a rebuild recovers."""


@dataclass
class StoredEntry:
    entry: Entry
    hash: str
    chunks: list[Chunk]

    def vector_ids(self) -> list[str]:
        return [vector_id(chunk, self.hash) for chunk in self.chunks]


def vector_id(chunk: Chunk, entry_hash: str) -> str:
    """Content-addressed: an edited entry's chunks get new ids, the old ones stay until commit."""
    return f"{chunk.id}@{entry_hash[:12]}"


def check_manifest(manifest: dict[str, Any] | None, expected: dict[str, Any], where: str) -> None:
    """Raise when a committed index (`where` it is, for the message) was built with other embeddings or
    chunking than these settings use; nothing before the first sync."""
    if manifest is None:
        return
    for key in ("format", "embeddings", "chunking"):
        if manifest.get(key) != expected.get(key):
            raise IndexMismatchError(
                f"The index {where} was built with {key} {manifest.get(key)!r}, "
                f"these settings use {expected.get(key)!r} - rebuild it: assistant index --rebuild"
            )


def write_json_atomic(path: Path, data: Any) -> None:
    """Replace `path` with `data` as JSON: written beside it, then renamed over it (the manifest's commit)."""
    replace_text(path, json.dumps(data, indent=2, sort_keys=True))


def replace_text(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


class Store:
    """Reads and writes generations under `<home>/index`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.manifest_path = root / MANIFEST
        self.ledger_path = root / LEDGER

    def manifest(self) -> dict[str, Any] | None:
        """The committed manifest, None before the first sync; IndexDamagedError when unreadable."""
        try:
            data = json.loads(self.manifest_path.read_bytes().decode("utf-8"))
        except FileNotFoundError:
            return None
        except NotADirectoryError as error:  # ASSISTANT_HOME runs through a file
            raise IndexUnavailableError(
                f"Cannot keep the index in {self.root}: part of that path is a file - "
                "set ASSISTANT_HOME to a folder you can write"
            ) from error
        except (OSError, ValueError) as error:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
            raise self.damaged(self.manifest_path, error) from error
        if not isinstance(data, dict) or not isinstance(data.get("generation"), int):
            raise self.damaged(self.manifest_path, ValueError("no generation number"))
        return data

    def annotate(self, **fields: Any) -> None:
        """Add or replace manifest fields that do not change the committed generation (under the sync lock)."""
        manifest = self.manifest()
        if manifest is not None:
            write_json_atomic(self.manifest_path, {**manifest, **fields})

    def damaged(self, path: Path, error: Exception) -> IndexDamagedError:
        detail = error.strerror if isinstance(error, OSError) and error.strerror else str(error).splitlines()[0][:120]
        return IndexDamagedError(f"The index file {path} is damaged ({detail}) - {REBUILD}")

    def check(self, expected: dict[str, Any]) -> None:
        """Raise when the index on disk was built with other embeddings or chunking."""
        check_manifest(self.manifest(), expected, f"in {self.root.parent}")

    def load(self) -> tuple[dict[str, StoredEntry], int]:
        manifest = self.manifest()
        if manifest is None:
            return {}, 0
        generation = int(manifest["generation"])
        stored: dict[str, StoredEntry] = {}
        path = self.root / f"entries-{generation}.jsonl"
        number = 0
        try:
            with path.open(encoding="utf-8") as handle:
                for line in handle:
                    number += 1
                    record = json.loads(line)
                    entry = Entry(**record["entry"])
                    chunks = [
                        Chunk(entry_id=entry.id, kind=entry.kind, title=entry.title, **c) for c in record["chunks"]
                    ]
                    stored[entry.id] = StoredEntry(entry, record["hash"], chunks)
        except FileNotFoundError as error:
            raise IndexDamagedError(f"The index file {path} is missing - {REBUILD}") from error
        except (OSError, ValueError, TypeError, KeyError) as error:
            raise self.damaged(path, ValueError(f"line {number}: {type(error).__name__}")) from error
        if len(stored) != manifest.get("entries", len(stored)):
            raise self.damaged(path, ValueError(f"{len(stored)} entries, the manifest names {manifest['entries']}"))
        if stored and not self.lexical_dir(generation).is_dir():
            raise IndexDamagedError(f"The index folder {self.lexical_dir(generation)} is missing - {REBUILD}")
        return stored, generation

    def clear(self) -> None:
        """Remove the manifest and every generation (the Chroma folder is not ours to delete)."""
        self.manifest_path.unlink(missing_ok=True)
        self.sweep(None)

    def sweep(self, generation: int | None) -> int:
        """Remove the files this store wrote of every generation but `generation` (and its temporaries).

        A sync killed between its commit and its clean-up leaves the previous generation's files;
        one killed before its commit leaves a half-written next generation. Only names in the ledger
        are removed, so a file of the user's in the same folder is never touched. Returns how many.
        """
        stale = self.leftovers(generation)
        for name in stale:
            old = self.root / name
            if old.is_dir() and not old.is_symlink():
                shutil.rmtree(old, ignore_errors=True)
            else:
                old.unlink(missing_ok=True)
        written, keep = self.written(), self.files_of(generation)
        if written - keep:
            with contextlib.suppress(OSError):  # a full disk: names of files gone are harmless there
                self._write_ledger(written & keep)
        return len(stale)

    def files_of(self, generation: int | None) -> set[str]:
        """The names of a generation's files (none for None)."""
        return set() if generation is None else {f"entries-{generation}.jsonl", self.lexical_dir(generation).name}

    def leftovers(self, generation: int | None) -> list[str]:
        """The files `sweep(generation)` would remove, without removing them (what `doctor` reports)."""
        if not self.root.exists():
            return []
        names = (self.written() | set(TEMPORARIES)) - self.files_of(generation)
        return sorted(name for name in names if (self.root / name).exists() or (self.root / name).is_symlink())

    def written(self) -> set[str]:
        """The generation files this store wrote and has not removed (an unreadable ledger: none)."""
        try:
            names = json.loads(self.ledger_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return set()
        if not isinstance(names, list):
            return set()
        return {name for name in names if isinstance(name, str) and GENERATION_FILE.fullmatch(name)}

    def _write_ledger(self, names: set[str]) -> None:
        if names:
            replace_text(self.ledger_path, json.dumps(sorted(names)))
        else:
            self.ledger_path.unlink(missing_ok=True)

    def _claim(self, *generations: int) -> None:
        """Record, before writing them, that the files of these generations are this store's."""
        names = {name for generation in generations for name in self.files_of(generation)}
        written = self.written()
        if not names <= written:
            self._write_ledger(written | names)

    def lexical_dir(self, generation: int) -> Path:
        return self.root / f"lexical-{generation}"

    def commit(
        self,
        stored: dict[str, StoredEntry],
        generation: int,
        manifest: dict[str, Any],
        lexical_from: int | None = None,
    ) -> None:
        """Write generation files, then the manifest (the commit point), then drop older ones.

        `lexical_from`: a generation with exactly these chunks in this order, whose lexical
        index is copied instead of rebuilt.
        """
        self.root.mkdir(parents=True, exist_ok=True)
        committed = (self.manifest() or {}).get("generation")
        # the committed generation's files are ours too (a home indexed before the ledger existed)
        self._claim(generation, *([committed] if isinstance(committed, int) and committed != generation else []))
        path = self.root / f"entries-{generation}.jsonl"
        with path.open("w", encoding="utf-8") as handle:
            for item in stored.values():
                chunks = [{"id": c.id, "field": c.field, "text": c.text} for c in item.chunks]
                record = {"entry": item.entry.to_dict(), "hash": item.hash, "chunks": chunks}
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        previous = self.lexical_dir(lexical_from) if lexical_from is not None else None
        if previous is not None and previous.is_dir() and previous != self.lexical_dir(generation):
            shutil.rmtree(self.lexical_dir(generation), ignore_errors=True)
            shutil.copytree(previous, self.lexical_dir(generation))
        else:
            build_lexical(stored, self.lexical_dir(generation))
        write_json_atomic(self.manifest_path, {**manifest, "format": FORMAT_VERSION, "generation": generation})
        self.sweep(generation)


def build_lexical(stored: dict[str, StoredEntry], directory: Path) -> None:
    """A bm25s index over every chunk, in store order (row i = i-th chunk of the store)."""

    texts = [lexical_tokens(chunk.text) for item in stored.values() for chunk in item.chunks]
    if directory.exists():
        shutil.rmtree(directory)
    if not texts:
        directory.mkdir(parents=True)
        return
    lexical_index(texts).save(str(directory))


def lexical_index(texts: list[list[str]]) -> Any:
    """A bm25s index over token lists (row i = texts[i])."""
    import bm25s

    retriever = bm25s.BM25()
    retriever.index(texts, show_progress=False)
    return retriever
