"""`assistant bench`: indexing, query and scale figures, measured on this machine.

Writes `results.json` and `results.md` to the output folder and prints figures as they
come. Everything runs in temporary ASSISTANT_HOME folders; the repo's index is never used.

- indexing: a fresh index of knowledge/seed and knowledge/mlsys (entries/s, chunks/s, the
  share of sync time spent encoding), the raw encoder on the same chunk texts, and the
  time of a no-change re-sync; a cProfile of a sync with free encoding shows the rest;
- queries: warm search() and ask() (extractive and stub models) over the mlsys questions,
  query embedding alone, the cold start of `assistant ask "What is a GPU?"` (median of 3 fresh
  processes), `assistant serve` until it is ready, and `assistant ask` answered by that server;
- scale: the mlsys index grown with generated entries to 10,000 and 100,000 chunks
  (assistant/bench/scale.py), searched in a child process that reports its peak memory;
- replicas: a `chroma run` server synced with the same corpus, a replica's start from an empty home
  and from its cache, and search through a replica at 100,000 chunks (assistant/bench/replica.py);
- the plain LangChain recipe (assistant/eval/langchain_recipe.py) on the same data, as ratios.

`--quick` indexes the seed corpus only, queries it with 20 seed questions, and stops at
10,000 chunks.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from assistant.bench.measure import knowledge_root
from assistant.bench.report import render_markdown, targets
from assistant.figures import ratio
from assistant.offline import offline_env
from assistant.settings import Settings

SCALE_POINTS = (10_000, 100_000)
QUICK_QUESTIONS = 20
WARM_UP = 5
RESYNC_RUNS = 3


def say(text: str) -> None:
    print(text, flush=True)


def load_average() -> list[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


def child(config: dict[str, Any], timeout: float = 1800) -> dict[str, Any]:
    """Run assistant.bench.scale in a fresh process; its RESULT line as a dict."""
    from assistant.bench.scale import RESULT

    done = subprocess.run(
        [sys.executable, "-m", "assistant.bench.scale", json.dumps(config)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=offline_env(),
    )
    line = next((x for x in reversed(done.stdout.splitlines()) if x.startswith(RESULT)), None)
    if done.returncode != 0 or line is None:
        raise RuntimeError(f"bench child {config['action']} failed: {done.stderr.strip()[-2000:]}")
    return json.loads(line.removeprefix(RESULT))


def run(settings: Settings, out_dir: Path, quick: bool = False) -> int:
    from assistant.bench import indexing as bench_index
    from assistant.bench import queries as bench_query

    started = time.perf_counter()
    knowledge = knowledge_root()
    corpora = {"seed": knowledge / "seed"} if quick else {"seed": knowledge / "seed", "mlsys": knowledge / "mlsys"}
    main = "mlsys" if "mlsys" in corpora else "seed"
    settings = settings.with_(chroma_url=None)  # on this machine: embedded Chroma in temp folders
    results: dict[str, Any] = {
        "meta": {
            "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "quick": quick,
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "embeddings": settings.embeddings,
            "load_before": load_average(),
        },
        "setup": {},
        "indexing": {},
        "queries": {},
        "scale": [],
        "langchain": {},
        "profiles": {},
    }
    say(f"assistant bench ({'quick' if quick else 'full'}) - load average {results['meta']['load_before']}")
    with tempfile.TemporaryDirectory(prefix="assistant-bench-") as tmp:
        temp = Path(tmp)
        embedder = setup(settings, results["setup"])
        for name, path in corpora.items():
            say(f"\nindexing {name} ({path})")
            home = settings.with_(home=temp / name, knowledge=(path,))
            _, figures = bench_index.measure_corpus(home, embedder, RESYNC_RUNS)
            results["indexing"][name] = figures
            say(
                f"  {figures['entries']:,} entries, {figures['chunks']:,} chunks in {figures['sync_s']:.1f} s: "
                f"{figures['entries_per_s']:.1f} entries/s, {figures['chunks_per_s']:.1f} chunks/s, "
                f"{figures['embed_share']:.0%} of it encoding"
            )
            say(
                f"  raw encoder on the same chunks: {figures['raw_chunks_per_s']:.1f} chunks/s -> "
                f"pipeline / raw = {figures['pipeline_vs_raw']:.3f} (CPU time: {figures['pipeline_vs_raw_cpu']})"
            )
            phases = figures["phases"]
            say(
                "  its phases alone: "
                + ", ".join(
                    f"{name} {phases[f'{name}_s']:.1f} s" for name in ("read", "chunk", "encode", "write", "commit")
                )
                + f" (sum {phases['phases_s']:.1f} s against the sync's {figures['sync_s']:.1f} s)"
            )
            say(f"  no-change re-sync: {figures['resync_s']:.3f} s (runs {figures['resync_runs_s']})")
        profile_home = settings.with_(home=temp / "profile", knowledge=(corpora[main],))
        seconds, results["profiles"][f"sync_overhead_{main}"] = bench_index.overhead_profile(
            profile_home, embedder.name
        )
        results["indexing"][main]["free_encoding_sync_profiled_s"] = seconds
        say(f"  {main} sync with free encoding, under cProfile: {seconds:.1f} s (profile in results.json)")
        main_home = settings.with_(home=temp / main, knowledge=(corpora[main],))
        results["profiles"][f"resync_{main}"] = bench_index.resync_profile(main_home, embedder)

        questions = bench_query.load_questions(
            knowledge / "questions" / f"{main}.jsonl", QUICK_QUESTIONS if quick else None
        )
        say(f"\nqueries on {main}: {len(questions)} questions, {WARM_UP} warm-up")
        queries = results["queries"] = {
            "corpus": main,
            **bench_query.measure_queries(main_home, embedder, questions, WARM_UP),
        }
        queries.update(bench_query.query_embedding(embedder, questions))
        for key in ("search_ms", "ask_extractive_ms", "ask_stub_ms", "embed_query_ms"):
            if key in queries:
                say(f"  {key[:-3]}: p50 {queries[key]['p50']:.1f} ms, p95 {queries[key]['p95']:.1f} ms")
        queries["cold_start"] = bench_query.cold_start(temp / "seed", corpora["seed"], 1 if quick else 3)
        say(f"  cold start of assistant ask: {queries['cold_start'].get('runs_s')} s")
        queries["served"] = bench_query.served_start(temp / "seed", corpora["seed"], 1 if quick else 3)
        served = queries["served"]
        say(
            f"  assistant serve until Ready: {served.get('ready_runs_s')} s; "
            f"ask answered by it: {served.get('first_ask_runs_s')} s (its first), {served.get('ask_runs_s')} s (again)"
        )

        say(f"\nthe plain LangChain recipe on {main}")
        recipe = bench_query.measure_recipe(
            settings.with_(home=temp / "recipe", knowledge=(corpora[main],)), questions, WARM_UP
        )
        ours = results["indexing"][main]
        recipe.update(
            {
                "corpus": main,
                "ours_chunks": ours["chunks"],
                "ours_index_s": ours["sync_s"],
                "ours_p50_ms": queries["search_ms"]["p50"],
                "ours_p95_ms": queries["search_ms"]["p95"],
                "chunks_ratio": ratio(recipe["chunks"], ours["chunks"]),
                "index_time_ratio": ratio(recipe["index_s"], ours["sync_s"]),
                "p50_ratio": ratio(recipe["query_ms"]["p50"], queries["search_ms"]["p50"]),
                "p95_ratio": ratio(recipe["query_ms"]["p95"], queries["search_ms"]["p95"]),
            }
        )
        results["langchain"] = recipe
        say(
            f"  {recipe['chunks']:,} chunks in {recipe['index_s']:.1f} s (ours {ours['chunks']:,} in "
            f"{ours['sync_s']:.1f} s); query p50 {recipe['query_ms']['p50']:.1f} ms, "
            f"p95 {recipe['query_ms']['p95']:.1f} ms"
        )

        scale_home = temp / "scale"
        shutil.copytree(temp / main, scale_home)
        base = {"home": str(scale_home), "knowledge": [str(corpora[main])], "embeddings": settings.embeddings}
        for target in SCALE_POINTS[:1] if quick else SCALE_POINTS:
            say(f"\nscale: growing the {main} index to {target:,} chunks")
            grown = child({**base, "action": "grow", "target": target, "seed": target})
            size = grown["disk_bytes"] / 2**20
            say(f"  {grown['chunks']:,} chunks, {size:,.0f} MB on disk, grown in {grown['seconds']:.0f} s")
            searched = child({**base, "action": "search", "questions": questions, "warm": WARM_UP})
            results["profiles"][f"search_{grown['chunks']}"] = searched.pop("profile")
            point = {
                "chunks": grown["chunks"],
                "entries": grown["entries"],
                "grow_s": grown["seconds"],
                "grow_parts_s": {k: grown[k] for k in ("generate_s", "vectors_s", "commit_s") if k in grown},
                "disk_bytes": grown["disk_bytes"],
                "chroma_bytes": grown["chroma_bytes"],
                "build_peak_rss_mb": grown["peak_rss_mb"],
                "search_peak_rss_mb": searched.pop("peak_rss_mb"),
                **searched,
            }
            results["scale"].append(point)
            say(
                f"  search p50 {point['search_ms']['p50']:.1f} ms, p95 {point['search_ms']['p95']:.1f} ms; "
                f"first search {point['first_search_ms']:.0f} ms; peak RSS build {point['build_peak_rss_mb']:.0f} MB, "
                f"search {point['search_peak_rss_mb']:.0f} MB"
            )

        from assistant.bench.replica import CHROMA, measure_replicas

        if CHROMA.exists():  # replicas on a Chroma server: start time, and search at the largest scale point
            say(f"\nreplicas on a chroma run server ({main})")
            results["replicas"] = measure_replicas(
                corpora[main], settings.embeddings, questions, SCALE_POINTS[-1:] if not quick else (), say, WARM_UP
            )
        else:
            say(f"\nreplicas: not measured ({CHROMA} is missing)")

    if not quick:  # the shipped encoders (and torch, with the [export] extra) on the same chunks and questions
        from assistant.bench.encoders import measure_encoders

        say("\nencoders")
        measure_encoders(knowledge, results, say=say)

    results["meta"]["load_after"] = load_average()
    results["meta"]["seconds"] = round(time.perf_counter() - started, 1)
    results["targets"] = targets(results)
    write(results, out_dir)
    say("\n" + render_markdown(results))
    say(f"wrote {out_dir / 'results.json'} and {out_dir / 'results.md'}")
    return 0


def setup(settings: Settings, figures: dict[str, Any]) -> Any:
    """Import chromadb and load the encoder once, outside every timed figure."""
    from assistant.index.embeddings import make_embedder
    from assistant.offline import offline_environment

    offline_environment()
    t0 = time.perf_counter()
    import chromadb  # noqa: F401

    figures["chromadb_import_s"] = round(time.perf_counter() - t0, 3)
    t0 = time.perf_counter()
    embedder = make_embedder(settings.embeddings, settings.openai_api_key, settings.openai_base_url)
    embedder.embed_documents(["Warm-up text for the encoder, long enough to exercise a real batch. " * 8] * 64)
    embedder.embed_query("warm up")
    figures["model_load_s"] = round(time.perf_counter() - t0, 3)
    say(f"  chromadb import {figures['chromadb_import_s']:.1f} s, model load + warm-up {figures['model_load_s']:.1f} s")
    return embedder


def write(results: dict[str, Any], out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "results.json").write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    (out_dir / "results.md").write_text(render_markdown(results), encoding="utf-8")
