"""Encoder figures for `assistant bench`: each encoder's cost and the retrieval it gives.

For the shipped encoders (`local`, ONNX int8 MiniLM; `static`, the distilled table) and, when
the `[export]` extra is installed, the torch encoder they replace:

- load: a fresh process that imports the encoder, builds it and embeds one query (what a
  cold `assistant ask` pays for its encoder);
- encoding the mlsys chunks (the chunker's real chunks, 256 per call as the index sends
  them): wall and CPU seconds, chunks/s;
- one query at a time over the mlsys questions: p50 / p95 milliseconds;
- recall@5 and MRR@10 of the retriever (hybrid, as the assistant runs it, and dense alone,
  which shows the encoder by itself) on knowledge/questions/mlsys.jsonl and seed.jsonl, from
  an index per encoder built in a temporary ASSISTANT_HOME. The index reuses the vectors of
  the encoding pass, so each corpus is encoded once per encoder.

    python -m assistant.bench.encoders [--only local,static,torch] [--out results.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from assistant.bench.queries import latencies
from assistant.figures import summarise
from assistant.settings import Settings

ENCODERS = ("local", "static", "torch")
BATCH = 256  # chunks per embed_documents call, as assistant.index.chroma_index sends them
WARM_UP = 5
K = 10

LOAD_CODE = {
    "local": "from assistant.index.embeddings import make_embedder; e = make_embedder('local')",
    "static": "from assistant.index.embeddings import make_embedder; e = make_embedder('static')",
    "torch": "from assistant.index.torch_encoder import TorchEncoder; e = TorchEncoder()",
}


def build(encoder: str) -> Any:
    from assistant.index.embeddings import make_embedder

    if encoder == "torch":
        from assistant.index.torch_encoder import TorchEncoder

        return TorchEncoder()
    return make_embedder(encoder)


def available(encoder: str) -> str | None:
    """None when the encoder can run here, else why not."""
    if encoder == "torch":
        from assistant.index.torch_encoder import available as torch_available

        return torch_available()
    return None


def load_seconds(encoder: str) -> float:
    """A fresh process: import, build, embed one query (interpreter start-up subtracted)."""
    code = (
        "import time; t = time.perf_counter()\n"
        f"{LOAD_CODE[encoder]}\n"
        "e.embed_query('What is a GPU?'); print(time.perf_counter() - t)\n"
    )
    env = {"TOKENIZERS_PARALLELISM": "false", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env={**os.environ, **env}
    )
    return float(done.stdout.strip().splitlines()[-1])


def mlsys_chunks(knowledge: Path) -> list[str]:
    """The texts the index embeds for knowledge/mlsys with the default settings."""
    from assistant.index.chunking import Chunker
    from assistant.index.embeddings import encoder_fits
    from assistant.knowledge.corpus import load_corpus

    settings = Settings()
    chunker = Chunker(settings.chunk_tokens, settings.chunk_overlap_sentences, encoder_fits("local"))
    corpus = load_corpus([knowledge / "mlsys"])
    return [chunk.text for entry in corpus.entries.values() for chunk in chunker.chunks(entry)]


def questions(path: Path) -> list[tuple[str, list[str]]]:
    """(search query, gold ids) of the answerable questions; a follow-up is condensed offline first."""
    from assistant.answer.followups import refers_back, rule_condense

    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        if not record.get("gold"):
            continue
        question = record["question"]
        history = [tuple(turn) for turn in record.get("history") or []]
        query = rule_condense(question, history) if refers_back(question, history) else question
        out.append((query, list(record["gold"])))
    return out


class Recorded:
    """The encoder behind a cache of the vectors already computed, so an index build re-encodes nothing."""

    def __init__(self, embedder: Any, cache: dict[str, list[float]]) -> None:
        self.name, self._embedder, self._cache = embedder.name, embedder, cache

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            self._cache.update(zip(missing, self._embedder.embed_documents(missing), strict=True))
        return [self._cache[t] for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._embedder.embed_query(text)


def encode(embedder: Any, texts: list[str]) -> tuple[dict[str, Any], dict[str, list[float]]]:
    wall, cpu = time.perf_counter(), time.process_time()
    vectors: list[list[float]] = []
    for start in range(0, len(texts), BATCH):
        vectors.extend(embedder.embed_documents(texts[start : start + BATCH]))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    figures = {
        "chunks": len(texts),
        "encode_s": round(wall, 2),
        "encode_cpu_s": round(cpu, 2),
        "chunks_per_s": round(len(texts) / wall, 1),
        "chunks_per_cpu_s": round(len(texts) / cpu, 1),
    }
    return figures, dict(zip(texts, vectors, strict=True))


def query_ms(embedder: Any, queries: list[str]) -> dict[str, float]:
    return summarise(latencies(embedder.embed_query, queries, WARM_UP), digits=2)


def retrieval(index: Any, asked: list[tuple[str, list[str]]]) -> dict[str, dict[str, float]]:
    from assistant.eval.metrics import mrr_at_k, recall_at_k
    from assistant.retrieval.search import Retriever

    out = {}
    for mode in ("hybrid", "dense"):
        retriever = Retriever(index, index.settings, mode)
        recall: list[float] = []
        mrr: list[float] = []
        for query, gold in asked:
            ranked = [source.entry_id for source in retriever.retrieve(query, k=K).sources]
            recall.append(recall_at_k(ranked, gold, 5) or 0.0)
            mrr.append(mrr_at_k(ranked, gold, K) or 0.0)
        out[mode] = {"recall@5": round(statistics.fmean(recall), 4), "mrr@10": round(statistics.fmean(mrr), 4)}
    return out


def measure_encoder(
    encoder: str, knowledge: Path, texts: list[str], sets: dict[str, list[tuple[str, list[str]]]], home: Path
) -> dict[str, Any]:
    from assistant.index.chroma_index import Index

    figures: dict[str, Any] = {"load_s": round(load_seconds(encoder), 3)}
    embedder = build(encoder)
    embedder.embed_query("warm up")
    figures["name"] = embedder.name
    encoded, cache = encode(embedder, texts)
    figures.update(encoded)
    figures["query_ms"] = query_ms(embedder, [q for q, _ in sets["mlsys"]])
    recorded = Recorded(embedder, cache)
    for corpus, asked in sets.items():
        settings = Settings(home=home / f"{encoder}-{corpus}", knowledge=(knowledge / corpus,), embeddings=encoder)
        index = Index(settings, recorded)
        index.sync(progress=False)
        figures[f"{corpus}_retrieval"] = retrieval(index, asked)
    return figures


def measure_encoders(
    knowledge: Path,
    out: dict[str, Any],
    encoders: tuple[str, ...] = ENCODERS,
    say: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Fill `out["encoders"]` with each available encoder's figures; ratios to torch when it ran."""
    texts = mlsys_chunks(knowledge)
    sets = {name: questions(knowledge / "questions" / f"{name}.jsonl") for name in ("mlsys", "seed")}
    results: dict[str, Any] = out.setdefault("encoders", {})
    with tempfile.TemporaryDirectory(prefix="bench-encoders-") as tmp:
        for encoder in encoders:
            reason = available(encoder)
            if reason:
                results[encoder] = {"skipped": reason}
                say(f"encoder {encoder}: skipped, {reason}")
                continue
            say(f"encoder {encoder}: encoding {len(texts)} mlsys chunks ...")
            results[encoder] = figures = measure_encoder(encoder, knowledge, texts, sets, Path(tmp))
            say(f"encoder {encoder}: {summary(figures)}")
    torch = results.get("torch", {})
    if "chunks_per_s" in torch:
        for encoder in encoders:
            figures = results.get(encoder, {})
            if encoder != "torch" and "chunks_per_s" in figures:
                figures["vs_torch"] = {
                    "chunks_per_s": round(figures["chunks_per_s"] / torch["chunks_per_s"], 2),
                    "chunks_per_cpu_s": round(figures["chunks_per_cpu_s"] / torch["chunks_per_cpu_s"], 2),
                    **{
                        f"{corpus}_{mode}_{metric}": round(
                            figures[f"{corpus}_retrieval"][mode][metric] - torch[f"{corpus}_retrieval"][mode][metric],
                            4,
                        )
                        for corpus in sets
                        for mode in ("hybrid", "dense")
                        for metric in ("recall@5", "mrr@10")
                    },
                }
    return out


def summary(f: dict[str, Any]) -> str:
    parts = [
        f"load {f['load_s']:.2f} s",
        f"{f['chunks_per_s']} chunks/s ({f['encode_s']} s, {f['encode_cpu_s']} CPU-s)",
        f"query p50 {f['query_ms']['p50']} ms",
    ]
    for corpus in ("mlsys", "seed"):
        hybrid, dense = f[f"{corpus}_retrieval"]["hybrid"], f[f"{corpus}_retrieval"]["dense"]
        parts.append(
            f"{corpus} R@5/MRR@10 {hybrid['recall@5']:.3f}/{hybrid['mrr@10']:.3f}"
            f" (dense {dense['recall@5']:.3f}/{dense['mrr@10']:.3f})"
        )
    return "; ".join(parts)


def main(argv: list[str] | None = None) -> int:
    from assistant.bench.measure import knowledge_root
    from assistant.offline import offline_environment

    parser = argparse.ArgumentParser(description="Encoder cost and retrieval figures on this machine.")
    parser.add_argument("--only", default=",".join(ENCODERS), help="comma-separated: local, static, torch")
    parser.add_argument("--out", type=Path, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    offline_environment()
    encoders = tuple(e.strip() for e in args.only.split(",") if e.strip())
    unknown = set(encoders) - set(ENCODERS)
    if unknown:
        parser.error(f"unknown encoders: {', '.join(sorted(unknown))}")
    out = measure_encoders(knowledge_root(), {}, encoders)
    text = json.dumps(out, indent=2)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
