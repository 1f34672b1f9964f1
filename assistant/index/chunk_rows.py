"""The committed chunks as rows: row i of the lexical index is chunk i, and a vector id names one row.

What ranking needs of every chunk is kept in numeric arrays (the entry and the place in it of each row,
its kind, and a 64-bit key of each vector id, sorted), not as a `Chunk` object per chunk: at a million
chunks the objects alone took gigabytes. A chunk is made from its entry's record when a search reaches
it. The arrays are saved beside a replica's cached records (`record_file`), 17 bytes a chunk.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, overload

import numpy as np

from assistant.index.store import StoredEntry, vector_id
from assistant.types import KINDS, Chunk

ARRAYS = ("row_entry", "row_chunk", "row_kind", "vector_keys", "vector_rows")


def vector_key(vid: str) -> int:
    """A vector id as 64 bits (stable across processes, unlike `hash`); a match is confirmed by the id itself."""
    return int.from_bytes(hashlib.blake2b(vid.encode("utf-8"), digest_size=8).digest(), "little")


class RowBuilder:
    """Collects the rows of entries given in store order; `arrays` when done."""

    def __init__(self) -> None:
        self.entries = 0
        self.row_entry: list[int] = []
        self.row_chunk: list[int] = []
        self.row_kind: list[int] = []
        self.keys: list[int] = []

    def add(self, item: StoredEntry) -> None:
        kind = KINDS.index(item.entry.kind)
        for number, chunk in enumerate(item.chunks):
            self.row_entry.append(self.entries)
            self.row_chunk.append(number)
            self.row_kind.append(kind)
            self.keys.append(vector_key(vector_id(chunk, item.hash)))
        self.entries += 1

    def arrays(self) -> dict[str, np.ndarray]:
        keys = np.asarray(self.keys, dtype=np.uint64)
        order = np.argsort(keys, kind="stable")
        return {
            "row_entry": np.asarray(self.row_entry, dtype=np.int32),
            "row_chunk": np.asarray(self.row_chunk, dtype=np.int32),
            "row_kind": np.asarray(self.row_kind, dtype=np.uint8),
            "vector_keys": keys[order],
            "vector_rows": order.astype(np.int32),
        }


class ChunkRows(Sequence[Chunk]):
    """Row -> chunk and vector id -> chunk over entries reached by position (`entry_at`)."""

    def __init__(self, entry_at: Callable[[int], StoredEntry], arrays: dict[str, np.ndarray]) -> None:
        self._entry_at = entry_at
        self._entry = arrays["row_entry"]
        self._chunk = arrays["row_chunk"]
        self._kind = arrays["row_kind"]
        self._keys = arrays["vector_keys"]
        self._rows = arrays["vector_rows"]

    @classmethod
    def of(cls, items: Iterable[StoredEntry]) -> ChunkRows:
        """Rows over entries held in memory (an index on disk: a few thousand entries)."""
        ordered = list(items)
        builder = RowBuilder()
        for item in ordered:
            builder.add(item)
        return cls(ordered.__getitem__, builder.arrays())

    @classmethod
    def load(cls, folder: Path, entry_at: Callable[[int], StoredEntry]) -> ChunkRows:
        """Rows saved by `save` (17 bytes a chunk, read whole: a search looks up a hundred rows)."""
        return cls(entry_at, {name: np.load(folder / f"{name}.npy") for name in ARRAYS})

    @staticmethod
    def save(folder: Path, arrays: dict[str, np.ndarray]) -> None:
        for name in ARRAYS:
            np.save(folder / f"{name}.npy", arrays[name])

    def __len__(self) -> int:
        return len(self._entry)

    @overload
    def __getitem__(self, row: int) -> Chunk: ...

    @overload
    def __getitem__(self, row: slice) -> list[Chunk]: ...

    def __getitem__(self, row: Any) -> Any:
        if isinstance(row, slice):
            return [self[i] for i in range(*row.indices(len(self)))]
        if row < 0:
            row += len(self)
        if not 0 <= row < len(self):
            raise IndexError(row)
        return self._entry_at(int(self._entry[row])).chunks[int(self._chunk[row])]

    def __iter__(self) -> Iterator[Chunk]:
        position = -1
        item: StoredEntry | None = None
        for row in range(len(self)):
            wanted = int(self._entry[row])
            if wanted != position or item is None:
                position, item = wanted, self._entry_at(wanted)
            yield item.chunks[int(self._chunk[row])]

    def find(self, vid: str) -> Chunk | None:
        """The committed chunk of a vector id, or None (a vector of an uncommitted or replaced generation)."""
        key = np.uint64(vector_key(vid))
        at = int(np.searchsorted(self._keys, key))
        while at < len(self._keys) and self._keys[at] == key:
            row = int(self._rows[at])
            item = self._entry_at(int(self._entry[row]))
            chunk = item.chunks[int(self._chunk[row])]
            if vector_id(chunk, item.hash) == vid:
                return chunk
            at += 1
        return None

    def kind_mask(self, kind: str) -> np.ndarray:
        """1.0 for the rows of that kind, 0.0 for the others (a lexical search of one kind)."""
        return (np.asarray(self._kind) == KINDS.index(kind)).astype(np.float32)

    def vector_ids(self) -> list[str]:
        """Every committed vector id (a sync's check of Chroma; reads every record)."""
        position, item, out = -1, None, []
        for row in range(len(self)):
            wanted = int(self._entry[row])
            if wanted != position or item is None:
                position, item = wanted, self._entry_at(wanted)
            out.append(vector_id(item.chunks[int(self._chunk[row])], item.hash))
        return out


NO_ROWS = ChunkRows.of([])
