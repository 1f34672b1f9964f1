"""A generation's entry records cached in a replica's home, read and parsed only when a question reaches them.

A replica of a Chroma server reads the committed records once and writes them to
`<home>/index/cache/records-<generation>-<commit>/`: the records as JSON lines (`records.jsonl`), where each
starts (`offsets.npy`), the entry ids in store order (`ids.json`) and the chunk rows (`chunk_rows`). The
folder is written under a temporary name and renamed, so it is whole or absent; a commit token names one
generation's content, so a folder is never stale, only unused (removed when a newer one is opened). A start
with the folder in place reads nothing else from the server but the manifest, and holds per entry only its
id: an entry is read from the file and parsed when asked for (the last thousand are kept).
Until it is saved there (when the replica first searches: a writer keeps nothing on its disk), the records
are in an unnamed temporary file.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from assistant.index.cache_folder import replace_folder
from assistant.index.chunk_rows import ARRAYS, ChunkRows, RowBuilder
from assistant.index.store import StoredEntry
from assistant.types import Chunk, Entry

PARSED = 1024  # entries kept parsed (a search reaches a hundred or so)

log = logging.getLogger("assistant")


class FileSlices:
    """Byte ranges of a file read by `pread` when asked for (nothing for no file). Not mapped: a
    mapping's pages, faulted in 64 KB at a time around each record read, soon counted the whole file in
    the process's resident memory; read ranges stay in the page cache, which any process may reclaim."""

    def __init__(self, handle: Any = None) -> None:
        self._handle = handle  # an open binary file, kept open (an unnamed temporary one lives as long)
        self.size = os.fstat(handle.fileno()).st_size if handle is not None else 0
        if handle is not None:  # closed with these slices (an unnamed temporary file is removed then)
            weakref.finalize(self, handle.close)

    def read(self, start: int, end: int) -> bytes:
        if self._handle is None or end <= start:
            return b""
        return os.pread(self._handle.fileno(), end - start, start)

    def blocks(self, size: int = 1 << 23, overlap: int = 0) -> Iterator[bytes]:
        """The file in blocks of `size` bytes, each also holding the next block's first `overlap` bytes."""
        for start in range(0, self.size, size):
            yield self.read(start, min(self.size, start + size + overlap))


class RecordsIncomplete(Exception):
    """The records being read ended short (a newer commit replaced them meanwhile)."""


def record_of(item: StoredEntry) -> dict[str, Any]:
    chunks = [{"id": c.id, "field": c.field, "text": c.text} for c in item.chunks]
    return {"entry": item.entry.to_dict(), "hash": item.hash, "chunks": chunks}


def parse_record(record: dict[str, Any]) -> StoredEntry:
    entry = Entry(**record["entry"])
    chunks = [Chunk(entry_id=entry.id, kind=entry.kind, title=entry.title, **c) for c in record["chunks"]]
    return StoredEntry(entry, record["hash"], chunks)


class RecordFile(Mapping[str, StoredEntry]):
    """Entry id -> stored entry over one generation's records (in a file read by range)."""

    def __init__(self, data: FileSlices, offsets: np.ndarray, ids: list[str], arrays: dict[str, np.ndarray]) -> None:
        self._data = data
        self._offsets = offsets
        self._ids = ids
        self._positions: dict[str, int] | None = None
        self._arrays = arrays
        self.at: Callable[[int], StoredEntry] = lru_cache(maxsize=PARSED)(self._parse)
        self.rows = ChunkRows(self.at, arrays)
        self.saved = False  # read from (or written to) a home's cache

    @classmethod
    def open(cls, folder: Path, count: int) -> RecordFile:
        """The cached records of a generation of `count` entries; OSError/ValueError when missing or not whole."""
        ids = json.loads((folder / "ids.json").read_bytes())
        offsets = np.load(folder / "offsets.npy")  # read whole: 8 bytes an entry, looked up per record
        if not isinstance(ids, list) or len(ids) != count or len(offsets) != count + 1:
            raise ValueError(f"{len(ids)} cached records, the manifest names {count}")
        data = FileSlices((folder / "records.jsonl").open("rb"))
        if data.size != int(offsets[-1]):
            raise ValueError("the cached records file is cut short")
        found = cls(data, offsets, ids, {name: np.load(folder / f"{name}.npy") for name in ARRAYS})
        found.saved = True
        return found

    def save(self, folder: Path) -> None:
        """Write these records to `folder` (under a temporary name, then renamed: whole or absent) and remove
        the folders of other generations; a home that cannot be written keeps them where they are."""
        if self.saved or not self._ids:
            return

        def write(temporary: Path) -> None:
            with (temporary / "records.jsonl").open("wb") as handle:
                for block in self._data.blocks():
                    handle.write(block)
            np.save(temporary / "offsets.npy", np.asarray(self._offsets))
            ChunkRows.save(temporary, self._arrays)
            (temporary / "ids.json").write_text(json.dumps(self._ids, ensure_ascii=False), encoding="utf-8")

        try:
            replace_folder(folder, write)
        except OSError as error:
            log.info("The entry records are not cached: %s cannot be written (%s)", folder.parent, error.strerror)
            return
        self.saved = True

    def _parse(self, position: int) -> StoredEntry:
        start, end = int(self._offsets[position]), int(self._offsets[position + 1])
        return parse_record(json.loads(self._data.read(start, end)))

    def position(self, entry_id: str) -> int | None:
        if self._positions is None:
            self._positions = {entry_id: n for n, entry_id in enumerate(self._ids)}
        return self._positions.get(entry_id)

    def __getitem__(self, entry_id: str) -> StoredEntry:
        position = self.position(entry_id)
        if position is None:
            raise KeyError(entry_id)
        return self.at(position)

    def __contains__(self, entry_id: object) -> bool:
        return isinstance(entry_id, str) and self.position(entry_id) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self._ids)

    def __len__(self) -> int:
        return len(self._ids)

    def in_order(self) -> Iterator[StoredEntry]:
        """Every entry in store order, parsed one by one (not kept: a walk of a million entries holds one)."""
        for position in range(len(self._ids)):
            yield self._parse(position)


def write_records(records: Iterable[tuple[StoredEntry, bytes]]) -> RecordFile:
    """Records (each entry with its record as JSON, one line) in an unnamed temporary file: nothing is
    written to the home until `save` (a writer keeps nothing on its disk). Raises what `records` raises."""
    rows = RowBuilder()
    ids: list[str] = []
    offsets = [0]
    sink = tempfile.TemporaryFile(prefix="assistant-records-")  # noqa: SIM115 (open while the records are read)
    try:
        for item, line in records:
            if b"\n" in line:  # JSON escapes a line break inside a string: a raw one means no record
                raise ValueError("a record holds a raw line break")
            rows.add(item)
            ids.append(item.entry.id)
            sink.write(line + b"\n")
            offsets.append(offsets[-1] + len(line) + 1)
        sink.flush()
    except BaseException:
        sink.close()
        raise
    return RecordFile(FileSlices(sink), np.asarray(offsets, dtype=np.int64), ids, rows.arrays())


def open_or_none(folder: Path, count: int) -> RecordFile | None:
    """The cached records when they are there and whole, else None (read again from the server)."""
    with contextlib.suppress(OSError, ValueError):
        return RecordFile.open(folder, count)
    return None
