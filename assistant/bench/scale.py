"""Scale points for `assistant bench`: an index grown with generated entries, then searched.

Encoding 100,000 chunks would take an hour here, so generated chunks get synthetic vectors:
each is a real chunk's vector plus Gaussian noise (cosine ~0.85 to it), written straight
into the Chroma collection, so the vector index has the shape of real data. The lexical
index needs text: it is drawn from the corpus's own word frequencies. Entries and chunks go
through the real `Store.commit` (entries file, bm25s index, manifest).

Building and searching run in child processes (`python -m assistant.bench.scale CONFIG`)
so that each reports its own peak memory (VmHWM).
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from assistant.bench.measure import disk_bytes, peak_rss_mb
from assistant.bench.queries import latencies
from assistant.figures import summarise
from assistant.index.store import StoredEntry, vector_id
from assistant.knowledge.corpus import abstract_id
from assistant.text import slugify
from assistant.types import Chunk, Entry, Kind

WORD = re.compile(r"[A-Za-z][A-Za-z0-9\-]{1,24}")
CHUNKS_PER_ABSTRACT = ((1, 0.35), (2, 0.45), (3, 0.20))  # mlsys: 3,818 chunks from 2,107 entries
GLOSSARY_SHARE = 0.2  # mlsys: 412 of 2,107 entries are glossary terms (one chunk each)
NOISE = 0.6  # norm of the noise added to a unit vector: cosine ~ 1/sqrt(1 + 0.36) = 0.86
RESULT = "RESULT "


def vocabulary(texts: list[str], size: int = 8000) -> tuple[list[str], list[float]]:
    """The corpus's most frequent words and their shares (the generator's word list)."""
    counts = Counter(word for text in texts for word in WORD.findall(text))
    common = counts.most_common(size)
    total = sum(n for _, n in common) or 1
    return [w for w, _ in common], [n / total for _, n in common]


class TextGenerator:
    """Plausible corpus-like text: words drawn by corpus frequency, sentences of 8-24 words."""

    def __init__(self, words: list[str], shares: list[float], seed: int) -> None:
        import numpy as np

        if not words:
            raise ValueError("an empty word list - the base corpus has no text")
        self.words = words
        self.cumulative = np.cumsum(np.asarray(shares, dtype=np.float64))
        self.cumulative /= self.cumulative[-1]
        self.rng = np.random.default_rng(seed)

    def draw(self, n: int) -> list[str]:
        picks = self.cumulative.searchsorted(self.rng.random(n), side="right")
        return [self.words[min(int(i), len(self.words) - 1)] for i in picks]

    def integer(self, low: int, high: int) -> int:
        return int(self.rng.integers(low, high + 1))

    def title(self, low: int, high: int) -> str:
        return " ".join(w[:1].upper() + w[1:] for w in self.draw(self.integer(low, high)))

    def sentences(self, words: int) -> str:
        out, left = [], words
        while left > 0:
            n = min(left, self.integer(8, 24))
            sentence = self.draw(n)
            sentence[0] = sentence[0][:1].upper() + sentence[0][1:]
            out.append(" ".join(sentence) + ".")
            left -= n
        return " ".join(out)


def synthetic_entries(
    words: list[str], shares: list[float], chunks: int, seed: int, chunking: dict[str, int]
) -> list[StoredEntry]:
    """Generated abstracts (1-3 chunks) and glossary terms (1 chunk): exactly `chunks` chunks.

    Deterministic for a given word list, seed and size. Every entry has `synthetic: True` in
    its fields; ids follow the corpus conventions (`abs-<hash>`, `glossary:<slug>`).
    """
    from assistant.index.chroma_index import entry_hash

    gen = TextGenerator(words, shares, seed)
    sizes, weights = [n for n, _ in CHUNKS_PER_ABSTRACT], [w for _, w in CHUNKS_PER_ABSTRACT]
    out: list[StoredEntry] = []
    made = 0
    while made < chunks:
        number = len(out)
        kind: Kind
        if gen.rng.random() < GLOSSARY_SHARE:
            title = gen.title(1, 3)
            bodies = [gen.sentences(gen.integer(30, 90))]
            entry_id, kind, field = f"glossary:{slugify(title)}-s{seed}-{number}", "concept", "concept"
            fields: dict[str, Any] = {"aliases": [], "related": [], "synthetic": True}
        else:
            n = int(gen.rng.choice(sizes, p=weights))
            bodies = [gen.sentences(gen.integer(110, 150)) for _ in range(n)]
            title = gen.title(5, 11)
            entry_id, kind, field = "", "abstract", "abstract"
            fields = {"anchors": ["synthetic"], "truncated": False, "synthetic": True}
        bodies = bodies[: chunks - made]
        text = " ".join(bodies)
        entry_id = entry_id or abstract_id(f"{text} {seed}-{number}")
        entry = Entry(entry_id, kind, title, text, fields, f"synthetic:{seed}:{number}", None)
        parts = [
            Chunk(f"{entry_id}::{field}:{i}", entry_id, kind, title, field, f"{title}\n{body}")
            for i, body in enumerate(bodies)
        ]
        out.append(StoredEntry(entry, entry_hash(entry, chunking), parts))
        made += len(parts)
    return out


class NoEncoder:
    """Stands in for the embedder when nothing may be encoded (the manifest needs its name)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        raise RuntimeError("the scale builder writes synthetic vectors; nothing is encoded")

    def embed_query(self, text: str) -> list[float]:
        raise RuntimeError("the scale builder writes synthetic vectors; nothing is encoded")


def grow(
    home: Path, knowledge: list[Path], embeddings: str, target: int, seed: int, chroma_url: str | None = None
) -> dict[str, Any]:
    """Add generated entries to the index under `home` (or on the Chroma server at `chroma_url`) until it
    holds `target` chunks."""
    import numpy as np

    from assistant.index.chroma_index import Index
    from assistant.index.embeddings import embedder_name
    from assistant.settings import Settings

    started = time.perf_counter()
    settings = Settings(home=home, knowledge=tuple(knowledge), embeddings=embeddings, chroma_url=chroma_url)
    index = Index(settings, embedder=NoEncoder(embedder_name(embeddings)))
    index.require_entries()
    have = len(index.chunks)
    if have >= target:
        return {"chunks": have, "entries": len(index.entries), "added_chunks": 0, "seconds": 0.0}
    real = [item for item in index.entries.values() if not item.entry.fields.get("synthetic")]
    words, shares = vocabulary([f"{item.entry.title} {item.entry.text}" for item in real])
    t0 = time.perf_counter()
    seed = seed * 1_000_003 + have  # growing in steps must not generate the same entries again
    extra = synthetic_entries(words, shares, target - have, seed, index.chunker.settings())
    generate_s = time.perf_counter() - t0

    t0 = time.perf_counter()
    collection = index.collection()
    pool_ids = [vid for item in real for vid in item.vector_ids()]
    pool = np.concatenate(
        [
            np.asarray(collection.get(ids=pool_ids[i : i + 5000], include=["embeddings"])["embeddings"])
            for i in range(0, len(pool_ids), 5000)
        ]
    ).astype(np.float32)
    rng = np.random.default_rng(seed)
    rows = [(vector_id(chunk, item.hash), chunk) for item in extra for chunk in item.chunks]
    step = min(5000, index.max_batch_size())
    for start in range(0, len(rows), step):
        batch = rows[start : start + step]
        base = pool[rng.integers(0, len(pool), len(batch))]
        noise = rng.standard_normal(base.shape).astype(np.float32) * (NOISE / np.sqrt(base.shape[1]))
        vectors = base + noise
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        index.write_vectors(batch, vectors)
    vectors_s = time.perf_counter() - t0

    t0 = time.perf_counter()
    fresh = {**index.entries, **{item.entry.id: item for item in extra}}
    manifest = {
        **(index.store.manifest() or {}),
        **index.expected_manifest(),
        "entries": len(fresh),
        "chunks": sum(len(item.chunks) for item in fresh.values()),
        "updated": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    index.store.commit(fresh, index.generation + 1, manifest)
    commit_s = time.perf_counter() - t0
    index.reload()
    return {
        "chunks": len(index.chunks),
        "entries": len(index.entries),
        "added_chunks": len(rows),
        "seconds": round(time.perf_counter() - started, 3),
        "generate_s": round(generate_s, 3),
        "vectors_s": round(vectors_s, 3),
        "commit_s": round(commit_s, 3),
    }


def search_latency(
    home: Path, knowledge: list[Path], embeddings: str, questions: list[str], warm: int, chroma_url: str | None = None
) -> dict:
    """search() p50/p95 on the index under `home` (or a replica's of the server at `chroma_url`), after
    loading the model and a warm-up."""
    from assistant.assistant import Assistant
    from assistant.settings import Settings

    settings = Settings(
        home=home, knowledge=tuple(knowledge), embeddings=embeddings, model="extractive", chroma_url=chroma_url
    )
    t0 = time.perf_counter()
    bot = Assistant(settings, auto_index=False)
    open_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    bot.retriever.index.embedder.embed_query("warm up")
    model_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    bot.search(questions[0])
    first_ms = (time.perf_counter() - t0) * 1000
    times = latencies(bot.search, questions, warm)
    return {
        "open_s": round(open_s, 3),
        "model_load_s": round(model_s, 3),
        "first_search_ms": round(first_ms, 1),
        "search_ms": summarise(times),
        "parts_ms": search_parts(bot, questions),
        "profile": profile_searches(bot, questions),
    }


def search_parts(bot: Any, questions: list[str]) -> dict[str, dict[str, float]]:
    """Where a warm search() spends its time: query embedding, Chroma, bm25s, the rest."""
    retriever = bot.retriever
    index = retriever.index
    parts: dict[str, list[float]] = {"embed_query": [], "chroma_query": [], "bm25s": [], "coverage_and_names": []}
    for question in questions:
        t0 = time.perf_counter()
        vector = index.embedder.embed_query(question)
        t1 = time.perf_counter()
        dense = index.nearest(vector, 40)
        t2 = time.perf_counter()
        lexical = index.lexical(question, 40)
        t3 = time.perf_counter()
        retriever.coverage(question, list(dict.fromkeys(c.entry_id for c, _ in [*dense, *lexical])))
        retriever.name_lookup(question)
        t4 = time.perf_counter()
        for key, (a, b) in zip(parts, [(t0, t1), (t1, t2), (t2, t3), (t3, t4)], strict=True):
            parts[key].append((b - a) * 1000)
    return {key: summarise(values) for key, values in parts.items()}


def profile_searches(bot: Any, questions: list[str], top: int = 25) -> str:
    from assistant.bench.measure import profile_text

    return profile_text(lambda: [bot.search(q) for q in questions], top)


def main(argv: list[str]) -> int:
    config = json.loads(argv[0])
    home, knowledge = Path(config["home"]), [Path(p) for p in config["knowledge"]]
    url = config.get("chroma_url")
    if config["action"] == "grow":
        result = grow(home, knowledge, config["embeddings"], int(config["target"]), int(config.get("seed", 0)), url)
        result["disk_bytes"] = disk_bytes(home / "index")
        result["chroma_bytes"] = disk_bytes(home / "index" / "chroma")
    else:
        result = search_latency(home, knowledge, config["embeddings"], config["questions"], int(config["warm"]), url)
    result["peak_rss_mb"] = peak_rss_mb()
    print(RESULT + json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
