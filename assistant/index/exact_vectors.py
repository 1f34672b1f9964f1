"""A small embedded index's vectors kept beside it and searched exactly, the way Chroma searches them.

Opening Chroma costs a fresh process about half a CPU-second (its import, its client, its collection);
the lexical index and the encoder together cost less. An index of fewer than `LIMIT` vectors is
therefore also kept as a plain array in `<home>/index/cache/vectors-<generation>-<token>/`, written at
the end of every sync (`cache_folder`: a temporary folder renamed into place), and a search reads that
array with numpy instead of opening Chroma. Chroma stays the index: syncs write it, servers and
replicas search it, and anything uncertain about the copy sends a search to it.

Why the two agree, to the bit:

- Exhaustive. Chroma searches its HNSW graph with `ef_search` = 500 (`chroma_client.EF_SEARCH`) and
  always passes hnswlib a filter, so while fewer than 500 vectors are allowed, hnswlib's candidate
  list never fills and it visits every vector the graph reaches from its entry point: an exact search.
  From 500 vectors on it may stop early (an approximate search), so larger indexes use Chroma.
- The same arithmetic. A vector is held as hnswlib's `normalize_vector` leaves it (its squares summed in
  order from 0 in float32, the square root plus 1e-30, each component times the reciprocal); the query
  is normalised by Chroma's Rust side (squares summed in order, the square root plus 1e-32, each
  component divided by it); the distance is 1 minus the inner product as hnswlib's SSE kernel sums it
  (four lanes, lane j adding every fourth product in order, then lanes 0 + 1 + 2 + 3). Read off the
  shipped `chromadb_rust_bindings` (x86-64, SSE: the wheel is built without AVX).
- The same order. Equal distances come back in the order of Chroma's labels (the order its vectors
  were added in); the copy holds its vectors in that order and sorts stably.

Nothing of this is taken on trust: the copy is written only after Chroma confirmed it (`confirm`): the
vectors it returns equal the copy's, a query with the zero vector (every distance exactly 1) lists all
of them in label order, and probe queries return the copy's neighbours and distances bit for bit. On a
Chroma that computes otherwise (another platform, another release) a probe differs and no copy is kept.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from assistant.index.cache_folder import GENERATION_FOLDER, replace_folder
from assistant.index.chroma_client import EF_SEARCH

LIMIT = EF_SEARCH  # vectors: below Chroma's ef_search (500), its HNSW search visits every vector (see above)
KIND = "vectors"  # the cache folders' kind (`cache_folder`)
FORMAT = 1
SQLITE_HEADER = b"SQLite format 3\x00"


# --- Chroma's arithmetic ------------------------------------------------------------------------


def stored_form(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """What Chroma's HNSW index holds for these vectors (rows) in a cosine collection, and their lengths."""
    rows = np.asarray(vectors, dtype=np.float32).reshape(len(vectors), -1)
    squares = np.add.accumulate(rows * rows, axis=1)[:, -1]  # summed in order, not pairwise
    lengths = np.sqrt(squares)
    return rows * (np.float32(1.0) / (lengths + np.float32(1e-30)))[:, None], lengths


def query_form(vector: Sequence[float] | np.ndarray) -> np.ndarray:
    """The query as Chroma hands it to hnswlib in a cosine collection."""
    query = np.asarray(vector, dtype=np.float32)
    length = np.add.accumulate(query * query)[-1] if len(query) else np.float32(0.0)
    return query / (np.sqrt(length) + np.float32(1e-32))


def cosine_distances(stored: np.ndarray, query: np.ndarray) -> np.ndarray:
    """1 - each stored vector's inner product with the query (float32), summed as hnswlib sums it."""
    products = (stored * query).reshape(len(stored), -1, 4)
    lanes = np.add.accumulate(products, axis=1)[:, -1, :]
    return np.float32(1.0) - (((lanes[:, 0] + lanes[:, 1]) + lanes[:, 2]) + lanes[:, 3])


# --- the copy -------------------------------------------------------------------------------------


@dataclass
class ExactVectors:
    """The committed vectors in Chroma's label order, as its index holds them."""

    ids: list[str]  # vector ids, label order
    stored: np.ndarray  # (n, dimensions) float32
    lengths: np.ndarray  # (n,) float32: the vectors' lengths before normalising (what Chroma's `get` multiplies by)
    collection: str  # the Chroma collection they were confirmed against
    embeddings: str  # the encoder's manifest name

    def nearest(
        self, query: Sequence[float] | np.ndarray, k: int, window: int, allowed: np.ndarray | None
    ) -> list[tuple[int, float]] | None:
        """The `k` nearest allowed vectors as (position, cosine distance), as Chroma returns them when asked
        for `window` >= k results; None when Chroma's answer is not determined: a run of equal distances
        that reaches into the first `k` and past the window, of which Chroma keeps an arbitrary part."""
        distances = cosine_distances(self.stored, query_form(query))
        candidates = np.arange(len(self.ids)) if allowed is None else np.flatnonzero(allowed)
        order = candidates[np.argsort(distances[candidates], kind="stable")]
        if len(order) > window and k:
            edge = distances[order[window - 1]]
            if distances[order[window]] == edge and distances[order[min(k, window) - 1]] == edge:
                return None
        return [(int(position), float(distances[position])) for position in order[:k]]

    def by_id(self) -> dict[str, tuple[np.ndarray, np.float32]]:
        """Vector id -> (stored vector, length): what a later sync carries over for unchanged chunks."""
        return {vid: (self.stored[n], self.lengths[n]) for n, vid in enumerate(self.ids)}

    def save(self, cache: Path, generation: int, chroma_file: Path) -> None:
        """Write the copy as `cache/vectors-<generation>-<digest>` (whole or absent), removing other copies.
        `chroma_file` is Chroma's database, whose size and header the copy records (`open_copy`)."""
        digest = hashlib.sha256("\n".join([self.collection, *self.ids]).encode("utf-8")).hexdigest()[:12]
        about = {
            "format": FORMAT,
            "generation": generation,
            "collection": self.collection,
            "embeddings": self.embeddings,
            "ids": self.ids,
            "chroma_bytes": chroma_file.stat().st_size,
        }

        def write(temporary: Path) -> None:
            np.save(temporary / "stored.npy", self.stored)
            np.save(temporary / "lengths.npy", self.lengths)
            (temporary / "copy.json").write_text(json.dumps(about, ensure_ascii=False), encoding="utf-8")

        replace_folder(cache / f"{KIND}-{generation}-{digest}", write)


def copies(cache: Path) -> list[Path]:
    """The vector copies (and their temporaries) in a home's cache folder."""
    if not cache.is_dir():
        return []
    return [
        path for path in cache.iterdir() if (found := GENERATION_FOLDER.fullmatch(path.name)) and found["kind"] == KIND
    ]


def discard(cache: Path) -> None:
    """Remove every vector copy: Chroma is about to change, or the copy cannot be confirmed."""
    for path in copies(cache):
        shutil.rmtree(path, ignore_errors=True)


def carried_over(cache: Path, embeddings: str) -> dict[str, tuple[np.ndarray, np.float32]]:
    """The vectors of whatever whole copy the cache holds from this encoder, by vector id: a sync reuses them
    for its unchanged chunks (`confirm` checks them against Chroma before they are kept again)."""
    for path in copies(cache):
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            about = json.loads((path / "copy.json").read_bytes())
            if about["format"] == FORMAT and about["embeddings"] == embeddings:
                found = ExactVectors(
                    about["ids"], np.load(path / "stored.npy"), np.load(path / "lengths.npy"), "", embeddings
                )
                if found.stored.shape[0] == found.lengths.shape[0] == len(found.ids):
                    return found.by_id()
    return {}


def open_copy(cache: Path, generation: int, manifest: dict[str, Any], chroma_file: Path) -> ExactVectors | None:
    """The copy of the committed `generation` when it is whole and was made beside this Chroma database
    (same collection, same encoder, the database's size and header as then); None otherwise."""
    found = [path for path in copies(cache) if path.name.startswith(f"{KIND}-{generation}-") and path.suffix != ".tmp"]
    if len(found) != 1:
        return None
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        about = json.loads((found[0] / "copy.json").read_bytes())
        fits = (
            about["format"] == FORMAT
            and about["generation"] == generation
            and about["collection"] == manifest.get("collection")
            and about["embeddings"] == manifest.get("embeddings")
            and about["chroma_bytes"] == os.stat(chroma_file).st_size
        )
        if not fits or not database_header_intact(chroma_file):
            return None
        stored = np.load(found[0] / "stored.npy")
        lengths = np.load(found[0] / "lengths.npy")
        ids = about["ids"]
        if (
            stored.dtype != np.float32
            or stored.ndim != 2
            or stored.shape[0] != len(ids)
            or lengths.shape != (len(ids),)
        ):
            return None
        return ExactVectors(ids, stored, lengths, about["collection"], about["embeddings"])
    return None


def database_header_intact(path: Path) -> bool:
    with contextlib.suppress(OSError), path.open("rb") as handle:
        return handle.read(len(SQLITE_HEADER)) == SQLITE_HEADER
    return False


# --- confirmed by Chroma --------------------------------------------------------------------------


class Unconfirmed(Exception):
    """Chroma does not hold or search these vectors as the copy would: no copy is kept."""


def confirm(
    collection: Any, ids: list[str], vectors: dict[str, tuple[np.ndarray, np.float32]], kinds: Mapping[str, str]
) -> list[str]:
    """Check against Chroma that the copy would search as it does; the ids in Chroma's label order.

    `ids`: every committed vector id; `vectors`: id -> (stored form, length); `kinds`: id -> its chunk's kind
    (Chroma's `kind` metadata). Raises `Unconfirmed` naming the first difference.
    """
    total = len(ids)
    if not 0 < total < LIMIT:
        raise Unconfirmed(f"{total} vectors: the copy is kept below {LIMIT}")
    ef = ((getattr(collection, "configuration_json", None) or {}).get("hnsw") or {}).get("ef_search", 0)
    if ef < LIMIT:
        raise Unconfirmed(f"the collection searches with ef_search {ef}")
    if collection.count() != total:
        raise Unconfirmed("Chroma holds other vectors than the committed ones")
    held = collection.get(ids=ids, include=["embeddings"])
    if sorted(held["ids"]) != sorted(ids):
        raise Unconfirmed("Chroma holds other vectors than the committed ones")
    for vid, embedding in zip(held["ids"], held["embeddings"], strict=True):
        stored, length = vectors[vid]
        if not np.array_equal(
            (stored * length).view(np.uint32), np.asarray(embedding, dtype=np.float32).view(np.uint32)
        ):
            raise Unconfirmed(f"Chroma's vector of {vid} differs")
    dimensions = len(next(iter(vectors.values()))[0])
    if dimensions % 4:
        raise Unconfirmed(f"{dimensions} dimensions: hnswlib sums them another way")
    zero = collection.query(
        query_embeddings=[np.zeros(dimensions, dtype=np.float32)], n_results=total, include=["distances"]
    )
    order = list(zero["ids"][0])
    if sorted(order) != sorted(ids) or any(distance != 1.0 for distance in zero["distances"][0]):
        raise Unconfirmed("Chroma's search does not reach every vector")
    copy = ExactVectors(order, np.stack([vectors[vid][0] for vid in order]), np.zeros(total, np.float32), "", "")
    probes: list[tuple[np.ndarray, str | None]] = [(copy.stored[n], None) for n in sorted({0, total // 2, total - 1})]
    probes.append((copy.stored[total // 3], kinds[order[0]]))
    for vector, kind in probes:
        allowed = None if kind is None else np.asarray([kinds[vid] == kind for vid in order])
        expected = copy.nearest(vector, total, total, allowed)
        found = collection.query(
            query_embeddings=[vector], n_results=total, where={"kind": kind} if kind else None, include=["distances"]
        )
        got = [
            (vid, np.float32(distance)) for vid, distance in zip(found["ids"][0], found["distances"][0], strict=True)
        ]
        if expected is None or got != [(order[n], np.float32(distance)) for n, distance in expected]:
            raise Unconfirmed("a probe query ranks or scores differently from Chroma")
    return order
