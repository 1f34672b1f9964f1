"""Indexing figures for `assistant bench`: a fresh sync, its phases alone, a no-change re-sync.

The pipeline and its encoding phase use the same, already loaded model, so pipeline chunks/s
divided by the encoding phase's chunks/s (the raw encoder) is what the pipeline (reading, chunking,
hashing, Chroma writes, the commit) costs on top of encoding. Wall and process CPU time are both kept: other
processes on a shared machine move wall time, CPU time shows it.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

from assistant.bench.measure import disk_bytes, profile_text
from assistant.figures import ratio
from assistant.settings import Settings


class FreeEmbedder:
    """Costs nothing: unit vectors from a fixed random pool, under the real model's name.

    Profiling a sync with it shows the pipeline's own overhead, with encoding taken out.
    """

    def __init__(self, name: str, dims: int = 384, pool: int = 4096) -> None:
        import numpy as np

        vectors = np.random.default_rng(0).standard_normal((pool, dims)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        self.name, self._pool, self._next = name, vectors.tolist(), 0

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        out = [self._pool[(self._next + i) % len(self._pool)] for i in range(len(texts))]
        self._next += len(texts)
        return out

    def embed_query(self, text: str) -> list[float]:
        return self._pool[0]


def fresh_sync(settings: Settings, embedder: Any) -> tuple[Any, dict[str, Any]]:
    """Index `settings.knowledge` into an empty home; the Index and the figures."""
    from assistant.index.chroma_index import Index

    index = Index(settings, embedder)
    wall, cpu = time.perf_counter(), time.process_time()
    report = index.sync(progress=False)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return index, {
        "entries": report.entries,
        "chunks": report.chunks,
        "files": report.files,
        "skipped": len(report.skipped),
        "sync_s": round(wall, 3),
        "sync_cpu_s": round(cpu, 3),
        "embed_s": round(report.embed_seconds, 3),
        "entries_per_s": round(report.entries / wall, 2) if wall else None,
        "chunks_per_s": round(report.chunks / wall, 2) if wall else None,
        "embed_share": ratio(report.embed_seconds, wall),
        "overhead_s": round(wall - report.embed_seconds, 3),
    }


def phase_times(settings: Settings, embedder: Any) -> dict[str, Any]:
    """A fresh index taken apart, each phase timed alone in a home of its own: reading the knowledge,
    chunking it (word-piece counts included), encoding every chunk (how a sync does it: streamed through
    the local encoder's threads), writing the vectors to Chroma in the sync's batches, and the commit (the
    entries file and the lexical index). Their sum against a sync's wall time is what overlapping saves."""
    from assistant.index.chroma_index import EMBED_BATCH, Index
    from assistant.index.store import StoredEntry, vector_id
    from assistant.index.sync_report import entry_hash
    from assistant.knowledge.corpus import load_corpus

    index = Index(settings, embedder)
    t0 = time.perf_counter()
    corpus = load_corpus(list(settings.knowledge), follow_links=settings.follow_links)
    t1 = time.perf_counter()
    chunking = index.chunker.settings()
    stored = {
        entry_id: StoredEntry(entry, entry_hash(entry, chunking), index.chunker.chunks(entry))
        for entry_id, entry in corpus.entries.items()
    }
    t2 = time.perf_counter()
    rows = [(vector_id(chunk, item.hash), chunk) for item in stored.values() for chunk in item.chunks]
    cpu = time.process_time()
    texts = [chunk.text for _, chunk in rows]
    batches = [texts[start : start + EMBED_BATCH] for start in range(0, len(texts), EMBED_BATCH)]
    vectors = [vector for part in index._vectors(batches) for vector in part]
    encode_cpu = time.process_time() - cpu
    t3 = time.perf_counter()
    for start in range(0, len(rows), EMBED_BATCH):
        index.write_vectors(rows[start : start + EMBED_BATCH], vectors[start : start + EMBED_BATCH])
    t4 = time.perf_counter()
    manifest = {**index.expected_manifest(), "entries": len(stored), "chunks": len(rows)}
    index.store.commit(stored, 1, manifest)
    t5 = time.perf_counter()
    seconds = {"read": t1 - t0, "chunk": t2 - t1, "encode": t3 - t2, "write": t4 - t3, "commit": t5 - t4}
    return {f"{name}_s": round(value, 3) for name, value in seconds.items()} | {
        "phases_s": round(t5 - t0, 3),
        "encode_cpu_s": round(encode_cpu, 3),
        "encode_chunks_per_s": round(len(rows) / seconds["encode"], 2) if seconds["encode"] else None,
    }


def resync(settings: Settings, embedder: Any, runs: int) -> dict[str, Any]:
    """A no-change re-sync, as `assistant index` runs it: open the index, then sync."""
    from assistant.index.chroma_index import Index

    opens, syncs = [], []
    report = None
    for _ in range(runs):
        t0 = time.perf_counter()
        index = Index(settings, embedder)
        t1 = time.perf_counter()
        report = index.sync(progress=False)
        t2 = time.perf_counter()
        opens.append(t1 - t0)
        syncs.append(t2 - t1)
    assert report is not None
    return {
        "resync_s": round(statistics.median(syncs), 3),
        "resync_runs_s": [round(s, 3) for s in syncs],
        "resync_open_s": round(statistics.median(opens), 3),
        "resync_embedded": report.embedded_chunks,
        "resync_unchanged": report.unchanged,
    }


def measure_corpus(settings: Settings, embedder: Any, runs: int = 3) -> tuple[Any, dict[str, Any]]:
    """A fresh sync, then its phases alone (the encoding of the same chunk texts is the raw encoder's
    throughput), then no-change re-syncs."""
    index, figures = fresh_sync(settings, embedder)
    home = Path(settings.home)
    phases = figures["phases"] = phase_times(settings.with_(home=home.with_name(f"{home.name}-phases")), embedder)
    figures["raw_embed_s"] = phases["encode_s"]
    figures["raw_embed_cpu_s"] = phases["encode_cpu_s"]
    figures["raw_chunks_per_s"] = phases["encode_chunks_per_s"]
    figures["pipeline_vs_raw"] = ratio(figures["chunks_per_s"], figures["raw_chunks_per_s"])
    figures["pipeline_vs_raw_cpu"] = ratio(figures["raw_embed_cpu_s"], figures["sync_cpu_s"])
    figures.update(resync(settings, embedder, runs))
    figures["disk_bytes"] = disk_bytes(Path(settings.home) / "index")
    return index, figures


def overhead_profile(settings: Settings, embedder_name: str, top: int = 30) -> tuple[float, str]:
    """A fresh sync with free encoding, under cProfile: the pipeline's own costs, by function."""
    from assistant.index.chroma_index import Index

    index = Index(settings, FreeEmbedder(embedder_name))
    seconds: list[float] = []

    def run() -> None:
        t0 = time.perf_counter()
        index.sync(progress=False)
        seconds.append(time.perf_counter() - t0)

    text = profile_text(run, top)
    return round(seconds[0], 3), text


def resync_profile(settings: Settings, embedder: Any, top: int = 20) -> str:
    from assistant.index.chroma_index import Index

    return profile_text(lambda: Index(settings, embedder).sync(progress=False), top)
