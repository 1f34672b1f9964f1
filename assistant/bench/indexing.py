"""Indexing figures for `assistant bench`: a fresh sync, raw encoder throughput, a no-change re-sync.

The pipeline and the raw encoder use the same, already loaded model, so pipeline chunks/s
divided by raw chunks/s is what the pipeline (parsing, chunking, hashing, Chroma writes,
the commit) costs on top of encoding. Wall and process CPU time are both kept: other
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


def raw_embedding(embedder: Any, texts: list[str]) -> dict[str, Any]:
    """`embed_documents` on the chunk texts alone, in one call (the encoder batches them)."""
    wall, cpu = time.perf_counter(), time.process_time()
    embedder.embed_documents(texts)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {
        "raw_embed_s": round(wall, 3),
        "raw_embed_cpu_s": round(cpu, 3),
        "raw_chunks_per_s": round(len(texts) / wall, 2) if wall else None,
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
    """A fresh sync, then raw encoding of the same chunk texts, then no-change re-syncs."""
    index, figures = fresh_sync(settings, embedder)
    texts = [chunk.text for chunk in index.chunks]
    figures.update(raw_embedding(embedder, texts))
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
