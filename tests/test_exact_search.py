"""The exact copy of a small embedded index's vectors, and the lexical index read without bm25s.

A search of an index of fewer than 500 vectors reads the copy instead of opening Chroma
(`assistant.index.exact_vectors`); it must give what Chroma gives, to the bit, and fall back to Chroma
whenever the copy is not certainly the committed one. Real MiniLM, real embedded Chroma, real files;
a fresh `assistant ask` runs in a child process so what it imports can be seen.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import bm25s
import numpy as np
import pytest

from assistant import Settings
from assistant.index import exact_vectors
from assistant.index.chroma_index import Index
from assistant.index.exact_vectors import KIND, LIMIT
from assistant.index.lexical_files import LexicalFiles
from assistant.offline import offline_env
from assistant.question.user_terms import with_literature_terms
from assistant.text import lexical_tokens
from tests.conftest import REPO, SEED

QUESTIONS = [
    json.loads(line)["question"] for line in (REPO / "knowledge/questions/seed.jsonl").read_text("utf-8").splitlines()
]
FILTERS = [(None, True), ("concept", True), ("abstract", True), (None, False), ("concept", False)]
PAPERS = REPO / "knowledge" / "mlsys" / "arxiv-mlsys" / "papers.jsonl"


def both_ways(index: Index, vector: list[float], k: int, kind: str | None, described: bool) -> tuple[Any, Any]:
    """The same search through the copy and through Chroma, as (chunk id, score) lists."""
    assert index.exact_copy() is not None, "the copy is not used"
    exact = [(chunk.id, score) for chunk, score in index.nearest(vector, k, kind, described=described)]
    kept, index._exact = index._exact, False  # as if there were no copy
    try:
        chroma = [(chunk.id, score) for chunk, score in index.nearest(vector, k, kind, described=described)]
    finally:
        index._exact = kept
    return exact, chroma


def copies(settings: Settings) -> list[str]:
    cache = Path(settings.home) / "index" / "cache"
    return sorted(path.name for path in cache.iterdir()) if cache.is_dir() else []


def ask_in_a_child(settings: Settings, question: str) -> dict[str, Any]:
    """`assistant ask --json` in a fresh process: its answer, and which heavy libraries it imported."""
    code = (
        "import json, sys\n"
        "from assistant.cli.commands import main\n"
        f"code = main(['ask', {question!r}, '--json'])\n"
        "loaded = [name for name in ('chromadb', 'bm25s', 'scipy') if name in sys.modules]\n"
        "print(json.dumps({'code': code, 'imported': loaded}), file=sys.stderr)\n"
    )
    env = offline_env(
        {
            **{k: v for k, v in os.environ.items() if not k.startswith(("ASSISTANT_", "OPENAI_"))},
            "ASSISTANT_HOME": str(settings.home),
            "ASSISTANT_KNOWLEDGE": ":".join(str(p) for p in settings.knowledge),
            "ASSISTANT_EMBEDDINGS": settings.embeddings,
            "ASSISTANT_MODEL": "extractive",
        }
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=240)
    status = json.loads(done.stderr.strip().splitlines()[-1])
    assert status["code"] == 0, done.stderr
    return {"answer": json.loads(done.stdout), "imported": status["imported"]}


# --- the same results as Chroma -----------------------------------------------------------------------


def test_the_copy_gives_chromas_neighbours_and_scores_bit_for_bit(seed_settings: Settings) -> None:
    index = Index(seed_settings)
    assert len(copies(seed_settings)) == 1 and index.exact_copy() is not None
    for question in QUESTIONS:
        vector = index.embedder.embed_query(question)
        for kind, described in FILTERS:
            exact, chroma = both_ways(index, vector, 40, kind, described)
            assert exact == chroma, (question, kind, described)
            assert len(exact) == min(40, sum(1 for c in index.chunks if kind in (None, c.kind)))


def test_chroma_distances_are_what_the_copy_computes(seed_settings: Settings) -> None:
    """The arithmetic alone: for a vector Chroma was given and a query, the distance Chroma reports is the
    copy's float32 value, not merely close to it (a plain float64 cosine is not)."""
    index = Index(seed_settings)
    collection = index.collection()
    held = collection.get(include=["embeddings"], limit=5)
    query = index.embedder.embed_query("How do GPUs talk to each other?")
    found = collection.query(query_embeddings=[query], n_results=len(index.chunks), include=["distances"])
    copy, _ = index.exact_copy() or (None, None)
    assert copy is not None
    position = {vid: n for n, vid in enumerate(copy.ids)}
    ours = exact_vectors.cosine_distances(copy.stored, exact_vectors.query_form(query))
    theirs = np.asarray(found["distances"][0], dtype=np.float32)
    assert ours[[position[vid] for vid in found["ids"][0]]].tobytes() == theirs.tobytes()
    stored = np.asarray(held["embeddings"], dtype=np.float32)
    naive = 1 - (stored / np.linalg.norm(stored, axis=1, keepdims=True)) @ (np.asarray(query) / np.linalg.norm(query))
    assert not np.array_equal(naive.astype(np.float32), ours[[position[vid] for vid in held["ids"]]])


def test_equal_distances_come_in_chromas_order_not_the_stores(tmp_path: Path) -> None:
    """Two documents with the same text have the same vectors: Chroma lists them in the order it was given
    them (its labels), which here is not the store's order; the copy follows Chroma."""
    knowledge = tmp_path / "docs"
    knowledge.mkdir()
    text = "# Ring all-reduce\n\nEach GPU sends a slice of its gradients to the next one around a ring.\n"
    (knowledge / "b-notes.md").write_text(text, encoding="utf-8")
    settings = Settings(home=tmp_path / "home", knowledge=(knowledge,), model="extractive")
    Index(settings).sync(progress=False)
    (knowledge / "a-notes.md").write_text(text, encoding="utf-8")  # sorts first in the store, added to Chroma last
    index = Index(settings)
    index.sync(progress=False)
    vector = index.embedder.embed_query("How does ring all-reduce work?")
    exact, chroma = both_ways(index, vector, 10, None, True)
    assert exact == chroma
    first, second = exact[0][0], exact[1][0]
    assert exact[0][1] == exact[1][1] and first.startswith("doc:b-notes") and second.startswith("doc:a-notes"), exact
    store_order = [chunk.id for chunk in index.chunks]
    assert store_order.index(second) < store_order.index(first)


def test_a_tie_cut_by_chromas_window_is_left_to_chroma() -> None:
    """Equal distances that run from inside the first k past the window Chroma is asked for: Chroma keeps an
    arbitrary part of them, so the copy answers nothing and the search asks Chroma."""
    same = np.ones((12, 4), dtype=np.float32)
    stored, lengths = exact_vectors.stored_form(same)
    copy = exact_vectors.ExactVectors([f"v{n}" for n in range(12)], stored, lengths, "c", "e")
    assert copy.nearest([1.0, 0.0, 0.0, 0.0], 3, 10, None) is None
    assert copy.nearest([1.0, 0.0, 0.0, 0.0], 3, 12, None) is not None  # the window holds them all


# --- a fresh `assistant ask` ----------------------------------------------------------------------------


def test_a_fresh_ask_on_a_small_index_does_not_open_chroma_and_answers_as_chroma_does(seed_settings: Settings) -> None:
    fast = ask_in_a_child(seed_settings, "What is a GPU?")
    assert fast["imported"] == [], fast["imported"]  # neither Chroma nor bm25s (and its scipy)
    exact_vectors.discard(Path(seed_settings.home) / "index" / "cache")
    slow = ask_in_a_child(seed_settings, "What is a GPU?")
    assert "chromadb" in slow["imported"]
    fast["answer"].pop("timings"), slow["answer"].pop("timings")  # how long it took is all that differs
    assert fast["answer"] == slow["answer"] and fast["answer"]["citations"][0]["entry_id"] == "MLD-0472"


def test_an_edited_file_is_answered_from_the_next_copy(tmp_path: Path, seed_home: Path) -> None:
    seed = tmp_path / "seed"
    shutil.copytree(SEED, seed)
    shutil.copytree(seed_home, tmp_path / "home")
    settings = Settings(home=tmp_path / "home", knowledge=(seed,), model="extractive")
    Index(settings).sync(progress=False)  # the copied home now follows this folder
    before = copies(settings)
    page = seed / "000_d927b209ddd51874.txt"
    page.write_text(page.read_text("utf-8").replace("widely used for tensor computation", "the engine of matrix math"))
    report = Index(settings).sync(progress=False)
    assert report.updated == 1
    after = copies(settings)
    assert len(after) == 1 and after != before
    index = Index(settings)
    assert after[0].startswith(f"{KIND}-{index.generation}-")
    answer = ask_in_a_child(settings, "What is a GPU?")
    assert answer["imported"] == [] and "the engine of matrix math" in answer["answer"]["text"], answer
    vector = index.embedder.embed_query("What is a GPU?")
    exact, chroma = both_ways(index, vector, 40, None, True)
    assert exact == chroma


def test_repairs_sweeps_and_rebuilds_keep_the_copy_in_step(seed_settings: Settings) -> None:
    index = Index(seed_settings)
    vector = index.embedder.embed_query("How do GPUs share gradients?")
    lost = sorted(index.rows.vector_ids())[:3]
    index.collection().delete(ids=lost)  # Chroma lost vectors: the next sync embeds them again
    report = Index(seed_settings).sync(progress=False)
    assert report.repaired == 3
    index = Index(seed_settings)
    assert both_ways(index, vector, 40, None, True)[0] == both_ways(index, vector, 40, None, True)[1]

    index.collection().add(ids=["stray@000000000000"], embeddings=[vector], metadatas=[{"kind": "concept"}])
    Index(seed_settings).sync(progress=False)  # sweeps the stray vector (a killed sync's), then writes the copy again
    index = Index(seed_settings)
    assert index.collection().count() == len(index.chunks)
    exact, chroma = both_ways(index, vector, 40, None, True)
    assert exact == chroma

    Index(seed_settings).sync(rebuild=True, progress=False)
    index = Index(seed_settings)
    assert len(copies(seed_settings)) == 1 and index.generation == 1
    exact, chroma = both_ways(index, vector, 40, None, True)
    assert exact == chroma


# --- whatever is uncertain goes to Chroma ------------------------------------------------------------------


def first_copy(settings: Settings) -> Path:
    (found,) = (Path(settings.home) / "index" / "cache").glob(f"{KIND}-*")
    return found


def grow(path: Path) -> None:
    with path.open("ab") as handle:
        handle.write(bytes(4096))


def edit_copy_json(settings: Settings, **changes: Any) -> None:
    path = first_copy(settings) / "copy.json"
    path.write_text(json.dumps({**json.loads(path.read_text("utf-8")), **changes}), encoding="utf-8")


UNCERTAIN = {
    "missing": lambda s: shutil.rmtree(first_copy(s)),
    "another generation": lambda s: first_copy(s).rename(first_copy(s).with_name(f"{KIND}-999-abcdef123456")),
    "another encoder": lambda s: edit_copy_json(s, embeddings="static-minilm@000000000000"),
    "another collection": lambda s: edit_copy_json(s, collection="assistant-000000000000"),
    "cut short": lambda s: (first_copy(s) / "stored.npy").write_bytes(b"\x93NUMPY"),
    "Chroma's database changed": lambda s: grow(Path(s.home) / "index" / "chroma" / "chroma.sqlite3"),
}


@pytest.mark.parametrize("uncertain", list(UNCERTAIN))
def test_an_uncertain_copy_is_not_read_and_chroma_answers(seed_settings: Settings, uncertain: str) -> None:
    index = Index(seed_settings)
    vector = index.embedder.embed_query("What is a GPU?")
    expected = [(chunk.id, score) for chunk, score in index.nearest(vector, 10)]
    UNCERTAIN[uncertain](seed_settings)
    index = Index(seed_settings)
    assert index.exact_copy() is None
    if uncertain != "Chroma's database changed":  # Chroma reads a grown database as before
        assert [(chunk.id, score) for chunk, score in index.nearest(vector, 10)] == expected


def test_a_chroma_server_index_keeps_no_copy(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home", knowledge=(SEED,), chroma_url="http://127.0.0.1:9")
    index = Index(settings)
    assert not index.keeps_exact_copy and index.exact_copy() is None


def test_an_index_of_limit_vectors_or_more_keeps_no_copy_and_a_smaller_one_does(tmp_path: Path) -> None:
    """With the static encoder (256 dimensions, fast): the copy exists only below the limit."""
    pack = tmp_path / "pack"
    pack.mkdir()
    lines = PAPERS.read_text(encoding="utf-8").splitlines()
    (pack / "papers.jsonl").write_text("\n".join(lines[:120]) + "\n", encoding="utf-8")
    settings = Settings(home=tmp_path / "home", knowledge=(pack,), embeddings="static", model="extractive")
    Index(settings).sync(progress=False)
    index = Index(settings)
    assert 0 < len(index.chunks) < LIMIT and index.exact_copy() is not None
    for question in QUESTIONS[:10]:
        vector = index.embedder.embed_query(question)
        exact, chroma = both_ways(index, vector, 40, None, True)
        assert exact == chroma
    (pack / "papers.jsonl").write_text("\n".join(lines[:400]) + "\n", encoding="utf-8")
    Index(settings).sync(progress=False)
    index = Index(settings)
    assert len(index.chunks) >= LIMIT
    assert copies(settings) == [] and index.exact_copy() is None and len(index.nearest(vector, 5)) == 5


def test_a_copy_that_fails_to_be_written_leaves_no_half_copy_and_the_next_sync_writes_it(
    seed_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    exact_vectors.discard(Path(seed_settings.home) / "index" / "cache")
    save = np.save
    calls: list[str] = []

    def full_disk(path: Any, array: Any, *args: Any, **kwargs: Any) -> None:
        calls.append(str(path))
        if str(path).endswith("lengths.npy"):  # the second file: the first is already written
            raise OSError(28, "No space left on device")
        save(path, array, *args, **kwargs)

    monkeypatch.setattr(exact_vectors.np, "save", full_disk)
    index = Index(seed_settings)
    index.sync(progress=False)  # the sync itself succeeds; the copy is not kept
    assert calls and copies(seed_settings) == []
    vector = index.embedder.embed_query("What is a GPU?")
    index = Index(seed_settings)
    assert index.exact_copy() is None and index.nearest(vector, 1)[0][0].entry_id == "MLD-0472"
    (Path(seed_settings.home) / "index" / "cache" / f"{KIND}-{index.generation}-0123456789ab.deadbeef.tmp").mkdir()
    monkeypatch.setattr(exact_vectors.np, "save", save)
    Index(seed_settings).sync(progress=False)  # nothing to sync: the missing copy is written, the leftover removed
    assert len(copies(seed_settings)) == 1 and not copies(seed_settings)[0].endswith(".tmp")
    assert Index(seed_settings).exact_copy() is not None


# --- the lexical index read without bm25s -------------------------------------------------------------------


def test_the_lexical_files_score_and_choose_as_bm25s_does(seed_settings: Settings) -> None:
    """The same scores to the bit and the same best chunks as bm25s; among equal scores, row order (bm25s's
    order there is its partition's accident, and where the k-th place is tied it may keep other rows)."""
    index = Index(seed_settings)
    folder = index.store.lexical_dir(index.generation)
    ours, theirs = LexicalFiles(folder), bm25s.BM25.load(str(folder), mmap=True)
    assert ours.vocab_dict == theirs.vocab_dict and ours.scores["num_docs"] == theirs.scores["num_docs"]
    compared = ties = 0
    for question in QUESTIONS:
        for text in (question, with_literature_terms(question)):
            tokens = [t for t in lexical_tokens(text) if t in theirs.vocab_dict]
            for kind in (None, "concept", "abstract"):
                mask = index.rows.kind_mask(kind) if kind else None
                for k in (1, 10, len(index.chunks)):
                    rows, scores = ours.retrieve([tokens], k=k, weight_mask=mask)
                    their_rows, their_scores = theirs.retrieve(
                        [tokens], k=k, show_progress=False, weight_mask=mask, n_threads=0
                    )
                    assert scores.tobytes() == their_scores.tobytes()  # the same scores, best first
                    ours_by_score = grouped(rows[0], scores[0])
                    theirs_by_score = grouped(their_rows[0], their_scores[0])
                    last = float(scores[0][-1])  # rows tied at the k-th place may differ; every better one may not
                    assert {s: r for s, r in ours_by_score.items() if s != last} == {
                        s: r for s, r in theirs_by_score.items() if s != last
                    }
                    assert list(zip(-scores[0], rows[0], strict=True)) == sorted(zip(-scores[0], rows[0], strict=True))
                    ties += any(len(r) > 1 for s, r in ours_by_score.items() if s > 0)
                    compared += 1
    assert compared > 500 and ties > 0  # the seed has equal scores, so the row order is exercised


def grouped(rows: np.ndarray, scores: np.ndarray) -> dict[float, set[int]]:
    """The rows of each score."""
    by_score: dict[float, set[int]] = {}
    for row, score in zip(rows.tolist(), scores.tolist(), strict=True):
        by_score.setdefault(score, set()).add(row)
    return by_score


def test_the_best_chunks_are_chosen_among_those_that_score() -> None:
    """A large index where almost every chunk scores 0: the scoring ones come first, best first, then rows
    that do not score fill the k asked for."""
    scores = np.zeros(100_000, dtype=np.float32)
    scores[[5, 70_000, 99_999, 12]] = [2.0, 3.5, 2.0, 1.0]
    rows, values = LexicalFiles._top(scores, 3)
    assert rows.tolist() == [70_000, 5, 99_999] and values.tolist() == [3.5, 2.0, 2.0]
    rows, values = LexicalFiles._top(scores, 6)
    assert rows.tolist() == [70_000, 5, 99_999, 12, 0, 1] and values.tolist() == [3.5, 2.0, 2.0, 1.0, 0.0, 0.0]
    rows, _ = LexicalFiles._top(scores, 2)
    assert rows.tolist() == [70_000, 5]  # of the two tied at the k-th place, the first row
