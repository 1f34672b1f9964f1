"""`assistant bench` results: the targets check and the Markdown rendering of results.json."""

from __future__ import annotations

from typing import Any

from assistant.figures import markdown_table, summarise

OVERHEAD_TARGET = 0.85  # pipeline chunks/s over raw encoder chunks/s, on mlsys
RESYNC_TARGET_S = 3.0  # a no-change re-sync of mlsys
SEARCH_TARGET_MS = 50.0  # search() p50 at 100,000 chunks
SEARCH_TARGET_CHUNKS = 100_000
COLD_ASK_TARGET_S = 1.0  # `assistant ask "What is a GPU?"`, a fresh process on the seed index, median of 3


def main_corpus(results: dict[str, Any]) -> str | None:
    indexing = results.get("indexing", {})
    return "mlsys" if "mlsys" in indexing else next(iter(indexing), None)


def targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    """The targets, each with its value, whether it is met and the profile behind it."""
    corpus = main_corpus(results)
    figures = results.get("indexing", {}).get(corpus or "", {})
    basis = corpus if corpus == "mlsys" else f"{corpus} (quick run; the target is defined on mlsys)"
    out = []
    overhead = figures.get("pipeline_vs_raw")
    out.append(
        {
            "name": "indexing pipeline / raw encoder throughput",
            "target": f">= {OVERHEAD_TARGET}",
            "value": overhead,
            "met": None if overhead is None else overhead >= OVERHEAD_TARGET,
            "basis": basis,
            "profile": f"sync_overhead_{corpus}",
        }
    )
    resync = figures.get("resync_s")
    out.append(
        {
            "name": "no-change re-sync (s)",
            "target": f"< {RESYNC_TARGET_S}",
            "value": resync,
            "met": None if resync is None else resync < RESYNC_TARGET_S,
            "basis": basis,
            "profile": f"resync_{corpus}",
        }
    )
    point = next((p for p in results.get("scale", []) if p.get("chunks", 0) >= SEARCH_TARGET_CHUNKS), None)
    p50 = point.get("search_ms", {}).get("p50") if point else None
    out.append(
        {
            "name": f"search() p50 at {SEARCH_TARGET_CHUNKS:,} chunks (ms)",
            "target": f"< {SEARCH_TARGET_MS:.0f}",
            "value": p50,
            "met": None if p50 is None else p50 < SEARCH_TARGET_MS,
            "basis": f"{point['chunks']:,} chunks" if point else "not measured (--quick stops at 10,000 chunks)",
            "profile": f"search_{point['chunks']}" if point else None,
        }
    )
    cold = results.get("queries", {}).get("cold_start") or {}
    median = cold.get("median_s")
    out.append(
        {
            "name": "cold `assistant ask` on the seed index, median (s)",
            "target": f"<= {COLD_ASK_TARGET_S}",
            "value": median,
            "met": None if median is None else median <= COLD_ASK_TARGET_S,
            "basis": f"{len(cold.get('runs_s') or [])} fresh processes" if median is not None else "not measured",
            "profile": None,
        }
    )
    return out


def mb(value: int | float | None) -> float | None:
    return None if value is None else round(value / 2**20, 1)


def render_markdown(results: dict[str, Any]) -> str:
    """results.json as a page of Markdown tables (profiles only for missed targets)."""
    meta = results.get("meta", {})
    setup = results.get("setup", {})
    parts = [
        "# Benchmark results",
        "",
        f"{'Quick' if meta.get('quick') else 'Full'} run on {meta.get('started', '?')}: "
        f"{meta.get('cpus', '?')} CPUs, Python {meta.get('python', '?')}, embeddings {meta.get('embeddings', '?')}; "
        f"load average {meta.get('load_before', '?')} before, {meta.get('load_after', '?')} after; "
        f"took {meta.get('seconds', 0):.0f} s. Model load {setup.get('model_load_s', '?')} s, "
        f"chromadb import {setup.get('chromadb_import_s', '?')} s (not in the figures below).",
        "",
        "## Targets",
        "",
        markdown_table(
            ["target", "wanted", "measured", "met", "on"],
            [[t["name"], t["target"], t["value"], t["met"], t["basis"]] for t in results.get("targets", [])],
            digits=3,
        ),
    ]
    indexing = results.get("indexing", {})
    if indexing:
        parts += [
            "",
            "## Indexing (fresh index, model loaded)",
            "",
            markdown_table(
                [
                    "corpus",
                    "entries",
                    "chunks",
                    "sync s",
                    "of it encoding s",
                    "entries/s",
                    "chunks/s",
                    "embedding share",
                    "raw encoder chunks/s",
                    "pipeline ÷ raw",
                    "pipeline ÷ raw (CPU)",
                    "no-change re-sync s",
                    "open s",
                ],
                [
                    [
                        name,
                        f.get("entries"),
                        f.get("chunks"),
                        f.get("sync_s"),
                        f.get("embed_s"),
                        f.get("entries_per_s"),
                        f.get("chunks_per_s"),
                        f.get("embed_share"),
                        f.get("raw_chunks_per_s"),
                        f.get("pipeline_vs_raw"),
                        f.get("pipeline_vs_raw_cpu"),
                        f.get("resync_s"),
                        f.get("resync_open_s"),
                    ]
                    for name, f in indexing.items()
                ],
                digits=2,
            ),
        ]
    queries = results.get("queries", {})
    if queries:
        rows = [
            [label, queries[key].get("n"), queries[key].get("p50"), queries[key].get("p95"), queries[key].get("mean")]
            for key, label in [
                ("search_ms", "search()"),
                ("ask_extractive_ms", "ask(), extractive model"),
                ("ask_stub_ms", "ask(), stub model"),
                ("embed_query_ms", "query embedding (ours)"),
            ]
            if isinstance(queries.get(key), dict) and queries[key].get("n")
        ]
        cold = queries.get("cold_start") or {}
        if cold.get("runs_s"):
            runs = summarise([s * 1000 for s in cold["runs_s"]])
            rows.append(["cold start: `assistant ask` process", runs["n"], runs["p50"], runs["p95"], runs["mean"]])
        served = queries.get("served") or {}
        for key, label in (
            ("ready_runs_s", "`assistant serve` until Ready"),
            ("first_ask_runs_s", "`assistant ask` answered by a running serve, its first question"),
            ("ask_runs_s", "`assistant ask` answered by a running serve"),
        ):
            if served.get(key):
                runs = summarise([s * 1000 for s in served[key]])
                rows.append([label, runs["n"], runs["p50"], runs["p95"], runs["mean"]])
        parts += [
            "",
            f"## Queries ({queries.get('corpus', '?')}, {queries.get('questions', '?')} questions, warm)",
            "",
            markdown_table(["measure", "n", "p50 ms", "p95 ms", "mean ms"], rows),
        ]
        if (cold.get("answer_ms") or {}).get("p50") is not None:
            parts += [
                "",
                f"Cold start: process start to printed answer; the answer's own total (model load, "
                f"retrieval, generation) is {cold['answer_ms']['p50']:,.0f} ms of it, the rest is "
                "Python start-up and imports (chromadb, LangChain).",
            ]
    scale = results.get("scale", [])
    if scale:
        parts += [
            "",
            "## Scale (generated entries, synthetic vectors)",
            "",
            markdown_table(
                [
                    "chunks",
                    "entries",
                    "grow s",
                    "disk MB",
                    "Chroma MB",
                    "build peak RSS MB",
                    "search p50 ms",
                    "search p95 ms",
                    "first search ms",
                    "search peak RSS MB",
                ],
                [
                    [
                        p.get("chunks"),
                        p.get("entries"),
                        p.get("grow_s"),
                        mb(p.get("disk_bytes")),
                        mb(p.get("chroma_bytes")),
                        p.get("build_peak_rss_mb"),
                        p.get("search_ms", {}).get("p50"),
                        p.get("search_ms", {}).get("p95"),
                        p.get("first_search_ms"),
                        p.get("search_peak_rss_mb"),
                    ]
                    for p in scale
                ],
            ),
        ]
        part_rows = [
            [f"{p.get('chunks'):,} chunks: {name}", v.get("p50"), v.get("p95")]
            for p in scale
            for name, v in (p.get("parts_ms") or {}).items()
        ]
        if part_rows:
            parts += ["", markdown_table(["search() part", "p50 ms", "p95 ms"], part_rows)]
    recipe = results.get("langchain", {})
    if recipe:
        parts += [
            "",
            f"## The plain LangChain recipe ({recipe.get('corpus', '?')}; recipe ÷ ours)",
            "",
            markdown_table(
                ["measure", "ours", "recipe", "recipe ÷ ours"],
                [
                    ["chunks", recipe.get("ours_chunks"), recipe.get("chunks"), recipe.get("chunks_ratio")],
                    ["indexing s", recipe.get("ours_index_s"), recipe.get("index_s"), recipe.get("index_time_ratio")],
                    [
                        "query p50 ms",
                        recipe.get("ours_p50_ms"),
                        recipe.get("query_ms", {}).get("p50"),
                        recipe.get("p50_ratio"),
                    ],
                    [
                        "query p95 ms",
                        recipe.get("ours_p95_ms"),
                        recipe.get("query_ms", {}).get("p95"),
                        recipe.get("p95_ratio"),
                    ],
                ],
                digits=2,
            ),
            "",
            "Ours is hybrid retrieval (dense + bm25s + coverage, entry-level); the recipe is one "
            "Chroma similarity search (k=4).",
        ]
    profiles = results.get("profiles", {})
    missed = [t for t in results.get("targets", []) if t.get("met") is False and t.get("profile") in profiles]
    for target in missed:
        parts += ["", f"## Profile: {target['name']} (missed)", "", "```", profiles[target["profile"]], "```"]
    parts += replica_tables(results.get("replicas") or {})
    return "\n".join(parts) + "\n"


def replica_tables(replicas: dict[str, Any]) -> list[str]:
    """A replica's start against a synced Chroma server, and search through a replica at scale."""
    if not replicas:
        return []
    starts = [
        [
            s.get("chunks"),
            s.get("home"),
            s.get("ready_s"),
            s.get("open_s"),
            s.get("lexical_s"),
            s.get("lexical_rss_mb"),
            s.get("load_s"),
            s.get("peak_rss_mb"),
        ]
        for s in replicas.get("starts", [])
    ]
    out = [
        "",
        f"## Replicas on a Chroma server ({replicas.get('corpus')}, synced in {replicas.get('sync_s')} s)",
        "",
        markdown_table(
            [
                "chunks",
                "home",
                "ready s",
                "records s",
                "lexical s",
                "lexical MB",
                "encoder + first search s",
                "peak MB",
            ],
            starts,
            digits=2,
        ),
    ]
    scale = [
        [
            p.get("chunks"),
            p.get("grow_s"),
            (p.get("search_ms") or {}).get("p50"),
            (p.get("search_ms") or {}).get("p95"),
            p.get("peak_rss_mb"),
        ]
        for p in replicas.get("scale", [])
    ]
    if scale:
        out += ["", markdown_table(["chunks", "grown s", "search p50 ms", "search p95 ms", "peak MB"], scale, digits=1)]
    return out
