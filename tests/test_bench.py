"""`assistant bench`: the pure pieces (percentiles, tables, generated entries, the report) and a
tiny scale build. No test here looks at wall time; the figures themselves come from a real run.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from assistant.bench.queries import load_questions
from assistant.bench.report import render_markdown, targets
from assistant.bench.scale import RESULT, main, synthetic_entries, vocabulary
from assistant.figures import summarise
from assistant.index.chroma_index import Index
from assistant.settings import Settings
from tests.conftest import REPO, SEED
from tests.fakes import FakeEmbeddings

CHUNKING = {"version": 1, "max_tokens": 200, "overlap": 1}
WORDS, SHARES = vocabulary(
    ["GPU memory bandwidth limits pipeline parallel training of large language models on clusters"] * 3
    + ["KV cache offloading serves long contexts; speculative decoding cuts latency"]
)


# --- statistics and tables ------------------------------------------------------------------


# --- generated entries ------------------------------------------------------------------------


def test_vocabulary_is_by_frequency() -> None:
    words, shares = vocabulary(["gpu gpu gpu memory memory cache"])
    assert words == ["gpu", "memory", "cache"]
    assert shares == pytest.approx([0.5, 1 / 3, 1 / 6])


@pytest.mark.parametrize("chunks", [1, 2, 37, 500])
def test_synthetic_entries_have_exactly_the_chunks_asked_for(chunks: int) -> None:
    entries = synthetic_entries(WORDS, SHARES, chunks, seed=7, chunking=CHUNKING)
    assert sum(len(item.chunks) for item in entries) == chunks
    ids = [item.entry.id for item in entries]
    assert len(ids) == len(set(ids))
    for item in entries:
        entry = item.entry
        assert entry.fields["synthetic"] is True
        assert entry.kind in ("concept", "abstract")
        assert entry.id.startswith("glossary:" if entry.kind == "concept" else "abs-")
        assert 1 <= len(item.chunks) <= (1 if entry.kind == "concept" else 3)
        for number_, chunk in enumerate(item.chunks):
            assert chunk.id == f"{entry.id}::{chunk.field}:{number_}"
            assert chunk.text.startswith(entry.title + "\n")
            assert set(chunk.text.replace(".", " ").lower().split()) <= {w.lower() for w in WORDS}
            assert 8 <= len(chunk.text.split()) <= 170


def test_synthetic_entries_are_deterministic_per_seed() -> None:
    first = synthetic_entries(WORDS, SHARES, 60, seed=1, chunking=CHUNKING)
    again = synthetic_entries(WORDS, SHARES, 60, seed=1, chunking=CHUNKING)
    other = synthetic_entries(WORDS, SHARES, 60, seed=2, chunking=CHUNKING)
    assert [(i.entry, i.hash, i.chunks) for i in first] == [(i.entry, i.hash, i.chunks) for i in again]
    assert [i.entry.id for i in first] != [i.entry.id for i in other]
    # the mix follows the mlsys pack: mostly multi-chunk abstracts, some glossary terms
    kinds = [i.entry.kind for i in synthetic_entries(WORDS, SHARES, 2000, seed=3, chunking=CHUNKING)]
    assert 0.1 < kinds.count("concept") / len(kinds) < 0.3


def test_questions_are_read_from_the_question_field() -> None:
    questions = load_questions(REPO / "knowledge" / "questions" / "mlsys.jsonl", limit=3)
    assert len(questions) == 3 and all(isinstance(q, str) and q for q in questions)


# --- the report -------------------------------------------------------------------------------


def small_results(p50_at_100k: float | None) -> dict:
    results = {
        "meta": {"started": "2026-01-01T00:00:00", "quick": p50_at_100k is None, "cpus": 2, "seconds": 12.0},
        "setup": {"model_load_s": 4.0, "chromadb_import_s": 1.0},
        "indexing": {
            "seed": {"entries": 60, "chunks": 63, "sync_s": 3.0, "pipeline_vs_raw": 0.8, "resync_s": 0.1},
            "mlsys": {"entries": 2107, "chunks": 3818, "sync_s": 150.0, "pipeline_vs_raw": 0.9, "resync_s": 0.5},
        },
        "queries": {
            "corpus": "mlsys",
            "questions": 3,
            "search_ms": summarise([20.0, 25.0, 30.0]),
            "cold_start": {"runs_s": [8.0, 9.0], "median_s": 8.5},
            "served": {"ready_runs_s": [4.0], "ask_runs_s": [0.25]},
        },
        "scale": [{"chunks": 10_000, "entries": 5000, "search_ms": summarise([30.0]), "disk_bytes": 2**20}],
        "langchain": {"corpus": "mlsys", "chunks": 5000, "ours_chunks": 3818, "chunks_ratio": 1.31, "query_ms": {}},
        "profiles": {"search_100000": "PROFILE-OF-SEARCH", "resync_mlsys": "PROFILE-OF-RESYNC"},
    }
    if p50_at_100k is not None:
        results["scale"].append({"chunks": 100_000, "entries": 52_000, "search_ms": summarise([p50_at_100k])})
    results["targets"] = targets(results)
    return results


def test_targets_use_mlsys_and_the_100k_point() -> None:
    overhead, resync, search, cold = targets(small_results(61.0))
    assert (overhead["value"], overhead["met"], overhead["basis"]) == (0.9, True, "mlsys")
    assert (resync["value"], resync["met"]) == (0.5, True)
    assert (search["value"], search["met"], search["profile"]) == (61.0, False, "search_100000")
    assert (cold["value"], cold["met"], cold["basis"]) == (8.5, False, "2 fresh processes")
    quick = targets(small_results(None))[2]
    assert quick["met"] is None and "not measured" in quick["basis"]


def test_results_md_has_the_tables_and_profiles_only_for_misses() -> None:
    missed = render_markdown(small_results(61.0))
    assert missed.startswith("# Benchmark results")
    assert "| corpus | entries | chunks | sync s | of it encoding s |" in missed
    assert "| mlsys | 2,107 | 3,818 | 150.00 | – |" in missed
    assert "| search() | 3 | 25.0 | 29.5 |" in missed
    assert "| `assistant serve` until Ready | 1 | 4,000.0 |" in missed
    assert "| `assistant ask` answered by a running serve | 1 | 250.0 |" in missed
    assert "| 100,000 | 52,000 |" in missed
    assert "recipe ÷ ours" in missed
    assert "PROFILE-OF-SEARCH" in missed and "PROFILE-OF-RESYNC" not in missed
    met = render_markdown(small_results(20.0))
    assert "PROFILE-OF-SEARCH" not in met


# --- a tiny scale build -----------------------------------------------------------------------


def test_scale_builder_grows_an_index_that_answers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    seed = tmp_path / "seed"
    shutil.copytree(SEED, seed)
    home = tmp_path / "home"
    fake = FakeEmbeddings()
    settings = Settings(home=home, knowledge=(seed,))
    assert Index(settings, embedder=fake).sync(progress=False).chunks == 63

    config = {"action": "grow", "home": str(home), "knowledge": [str(seed)], "embeddings": fake.name}
    assert main([json.dumps({**config, "target": 500, "seed": 5})]) == 0
    result = json.loads(capsys.readouterr().out.strip().removeprefix(RESULT))
    assert (result["chunks"], result["added_chunks"]) == (500, 437)
    assert result["disk_bytes"] > result["chroma_bytes"] > 0
    assert result["peak_rss_mb"] > 0

    index = Index(settings, embedder=FakeEmbeddings())
    assert len(index.chunks) == 500 and index.generation == 2
    assert index.collection().count() == 500
    synthetic = next(item for item in index.entries.values() if item.entry.fields.get("synthetic"))
    words = " ".join(synthetic.chunks[0].text.split()[:12])
    assert synthetic.entry.id in {c.entry_id for c, _ in index.lexical(words, 5)}
    assert len(index.dense("What is a GPU?", 5)) == 5

    from assistant import Assistant

    bot = Assistant(settings, embedder=FakeEmbeddings(), auto_index=False)
    assert bot.search("What is a GPU?")[0].entry_id == "MLD-0472"  # the real entries still answer

    assert main([json.dumps({**config, "target": 400})]) == 0  # already larger: nothing added
    assert json.loads(capsys.readouterr().out.strip().removeprefix(RESULT))["added_chunks"] == 0


def test_the_replica_figures_get_their_tables() -> None:
    replicas = {
        "corpus": "mlsys",
        "sync_s": 262.2,
        "starts": [{"chunks": 10551, "home": "empty home", "ready_s": 4.1, "lexical_rss_mb": 21.0}],
        "scale": [{"chunks": 100_000, "grow_s": 300, "search_ms": summarise([20.0, 30.0]), "peak_rss_mb": 900}],
    }
    page = render_markdown({"meta": {}, "replicas": replicas})
    assert "## Replicas on a Chroma server (mlsys, synced in 262.2 s)" in page
    assert "| 10,551 | empty home | 4.10 |" in page and "| 100,000 | 300 |" in page
    assert "Replicas" not in render_markdown({"meta": {}})
