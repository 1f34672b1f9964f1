"""Each chunk's word-piece vectors, kept as signs, so late interaction encodes nothing at query time.

Late interaction (`retrieval/late_interaction.py`) scores a candidate by MaxSim over MiniLM's word-piece
vectors. Encoding the candidates' pieces when a question comes cost 150-750 ms a search on 2 cores (20
candidates, up to three chunks each). The pieces are a by-product of the vector every chunk gets when it is
indexed (`OnnxEncoder.vector` pools them), so the sync keeps them, and a search reads them back.

Only each component's sign is kept (384 bits, 48 bytes a piece; a chunk of 256 pieces 12 KB): a piece is
read back as its signs over the square root of 384, a unit vector. MaxSim over signs ordered the
candidates as well as over the float16 vectors it replaces (right-file recall@1 on three documentation sets,
slurm / feast / argo: 0.827 / 0.708 / 0.747 from float16, 0.827 / 0.722 / 0.747 from signs), at a 32nd of
the size: the 1,865 chunks of a 1.2 MB documentation set take about 16 MB.

The store is a SQLite file in the home's index cache, keyed by a hash of the encoder's name and the
chunk's text, so it is shared by generations, never stale (a changed text is another key) and readable
by any process while a sync adds to it. A text it lacks is encoded when asked for and then kept
(`LateInteraction`); the sync drops the texts its index no longer holds (`keep_only`).
"""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

FILE_NAME = "pieces.sqlite"
DIMENSIONS = 384  # MiniLM's


def piece_key(encoder: str, text: str) -> bytes:
    return hashlib.blake2b(f"{encoder}\0{text}".encode(), digest_size=16).digest()


def as_signs(rows: Any) -> tuple[int, bytes]:
    """A text's piece vectors (pieces x dimensions) as its row count and the packed bits of their signs."""
    matrix = np.asarray(rows, dtype=np.float32)
    return int(matrix.shape[0]), np.packbits(matrix >= 0, axis=1).tobytes()


# each byte of packed signs as its eight components (+-1 / sqrt(384), float32), most significant bit first as
# `np.packbits` writes them: reading a text's pieces back is one lookup (5 ms for 50 chunks, where unpacking the
# bits and scaling them in float16 took 110 ms). float32, the question's type: MaxSim multiplies them as they
# are (a float16 matrix was converted on every search, 9 ms of a 54 ms search on 2 cores)
_BYTE_COMPONENTS = (
    (np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).astype(np.float32) * 2 - 1) / np.sqrt(DIMENSIONS)
).astype(np.float32)


def from_signs(count: int, packed: bytes) -> np.ndarray:
    """The unit piece vectors the signs stand for (pieces x 384, float32): each component +-1 / sqrt(384)."""
    codes = np.frombuffer(packed, dtype=np.uint8).reshape(count, -1)
    return _BYTE_COMPONENTS[codes].reshape(count, -1)[:, :DIMENSIONS]


class PieceSigns:
    """Thread-safe; one per index home. Every call is a short transaction: readers never wait long."""

    def __init__(self, folder: Path, encoder: str) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / FILE_NAME
        self.encoder = encoder
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, timeout=30, check_same_thread=False, isolation_level=None)
        with self._lock:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("CREATE TABLE IF NOT EXISTS pieces (key BLOB PRIMARY KEY, count INTEGER, signs BLOB)")

    @classmethod
    def open(cls, folder: Path, encoder: str) -> PieceSigns | None:
        """The home's store, or None where it cannot be kept (a read-only home): late interaction then encodes
        what it needs, as without a store. A damaged file is a cache's: it is started again, empty (the next
        `assistant index` fills it)."""
        with contextlib.suppress(OSError, sqlite3.Error):
            try:
                return cls(folder, encoder)
            except sqlite3.DatabaseError:  # "file is not a database": a torn or foreign file
                for path in folder.glob(f"{FILE_NAME}*"):
                    path.unlink()
                return cls(folder, encoder)
        return None

    def get(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """The piece vectors kept for these texts (those it has)."""
        keys = {piece_key(self.encoder, text): text for text in texts}
        if not keys:
            return {}
        marks = ",".join("?" * len(keys))
        with self._lock, contextlib.suppress(sqlite3.Error):
            query = f"SELECT key, count, signs FROM pieces WHERE key IN ({marks})"
            rows = self._db.execute(query, list(keys)).fetchall()
            return {keys[key]: from_signs(count, signs) for key, count, signs in rows}
        return {}

    def put(self, items: Iterable[tuple[str, Any]]) -> None:
        """Keep (text, piece vectors) pairs; a text already kept is left as it is."""
        self.put_signs((text, *as_signs(vectors)) for text, vectors in items)

    def put_signs(self, items: Iterable[tuple[str, int, bytes]]) -> None:
        """Keep (text, piece count, packed signs) triples (`as_signs`), as a sync's encoder threads made them."""
        rows = [(piece_key(self.encoder, text), count, signs) for text, count, signs in items]
        if not rows:
            return
        with self._lock, contextlib.suppress(sqlite3.Error):
            self._db.executemany("INSERT OR IGNORE INTO pieces (key, count, signs) VALUES (?, ?, ?)", rows)

    def missing(self, texts: Iterable[str]) -> list[str]:
        """The texts this store does not hold yet, in order, each once."""
        wanted = list(dict.fromkeys(texts))
        with self._lock:
            kept = {row[0] for row in self._db.execute("SELECT key FROM pieces")}
        return [text for text in wanted if piece_key(self.encoder, text) not in kept]

    def keep_only(self, texts: Iterable[str]) -> int:
        """Drop every text but these (after a sync: what the index no longer holds); how many were dropped."""
        wanted = {piece_key(self.encoder, text) for text in texts}
        with self._lock:
            stale = [(row[0],) for row in self._db.execute("SELECT key FROM pieces") if row[0] not in wanted]
            if stale:
                self._db.executemany("DELETE FROM pieces WHERE key = ?", stale)
            with contextlib.suppress(sqlite3.Error):  # a reader holding the log open only defers this
                self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the sync's writes into the file itself
        return len(stale)

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM pieces").fetchone()[0])

    def close(self) -> None:
        with self._lock, contextlib.suppress(sqlite3.Error):
            self._db.close()
