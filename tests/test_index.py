"""The index: incremental sync, manifest checks, crash safety, and search over real Chroma.

Most tests use `FakeEmbeddings` (hashed bag of words, tests/fakes.py) so a sync takes a
second and the number of chunks sent to the encoder can be asserted exactly; Chroma and
the bm25s lexical index are real and live in `tmp_path`. One test uses the real MiniLM
index of the seed corpus that conftest builds once per session.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest

from assistant.errors import EmptyIndexError, IndexMismatchError
from assistant.index.chroma_index import EMBED_BATCH, Index
from assistant.settings import Settings
from tests.conftest import REPO, SEED
from tests.fakes import FakeEmbeddings
from tests.processes import kill_hard, reap

SERVERLESS = "abs-fad87d80f4"
SHARED_ABSTRACT = "abs-76fb5a33ad"  # on pages 003 and 004
PAPERS = REPO / "knowledge" / "mlsys" / "arxiv-mlsys" / "papers.jsonl"


def copy_seed(tmp_path: Path) -> Path:
    target = tmp_path / "seed"
    shutil.copytree(SEED, target)
    return target


def page(folder: Path, prefix: str) -> Path:
    return next(folder.glob(f"{prefix}_*.txt"))


def committed_vectors(index: Index) -> set[str]:
    return {vid for item in index.entries.values() for vid in item.vector_ids()}


@dataclass
class Synced:
    settings: Settings
    seed: Path
    index: Index
    fake: FakeEmbeddings


@pytest.fixture
def synced(tmp_path: Path) -> Synced:
    """A seed copy in tmp_path, indexed once with fake embeddings."""
    seed = copy_seed(tmp_path)
    settings = Settings(home=tmp_path / "home", knowledge=(seed,))
    fake = FakeEmbeddings()
    index = Index(settings, embedder=fake)
    report = index.sync(progress=False)
    assert (report.added, report.embedded_chunks) == (60, fake.embedded)
    return Synced(settings, seed, index, fake)


# --- incremental sync ---------------------------------------------------------------------


def test_first_sync_adds_60_and_the_second_embeds_nothing(tmp_path: Path) -> None:
    seed = copy_seed(tmp_path)
    settings = Settings(home=tmp_path / "home", knowledge=(seed,))
    fake = FakeEmbeddings()
    index = Index(settings, embedder=fake)
    assert index.is_empty

    first = index.sync(progress=False)
    assert (first.added, first.updated, first.removed, first.unchanged) == (60, 0, 0, 0)
    assert first.skipped == []
    assert (first.entries, first.files) == (60, 4)
    assert first.embedded_chunks == first.chunks == fake.embedded == 63
    assert index.vector_ids() == committed_vectors(index)
    assert len(index.vector_ids()) == 63

    second = index.sync(progress=False)
    assert (second.added, second.updated, second.removed, second.unchanged) == (0, 0, 0, 60)
    assert second.embedded_chunks == 0
    assert fake.embedded == 63

    # a fresh process (a new Index on the same home) sees the committed state and embeds nothing
    other = FakeEmbeddings()
    reopened = Index(settings, embedder=other)
    assert set(reopened.entries) == set(index.entries)
    assert reopened.sync(progress=False).embedded_chunks == 0
    assert other.embedded == 0
    manifest = json.loads((tmp_path / "home" / "index" / "manifest.json").read_text())
    assert manifest["embeddings"] == "fake:hashed-bow-64"
    assert (manifest["entries"], manifest["chunks"]) == (60, 63)
    assert manifest["chunking"] == {"version": 2, "max_tokens": 200, "overlap": 1}


def test_editing_the_concept_page_updates_only_that_entry(synced: Synced) -> None:
    index, fake = synced.index, synced.fake
    old_vectors = set(index.entries["MLD-0472"].vector_ids())
    path = page(synced.seed, "000")
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("alongside compute speed.", "alongside raw compute speed."), encoding="utf-8")
    before = fake.embedded

    report = index.sync(progress=False)
    assert (report.added, report.updated, report.removed, report.unchanged) == (0, 1, 0, 59)
    assert report.embedded_chunks == len(index.chunks_of("MLD-0472")) == fake.embedded - before == 4
    assert "alongside raw compute speed" in index.entry("MLD-0472").text
    vectors = index.vector_ids()
    assert vectors == committed_vectors(index)
    assert not old_vectors & vectors  # the edited entry's old vectors are gone from Chroma


def test_rewriting_one_abstract_paragraph_reembeds_only_that_abstract(synced: Synced) -> None:
    """Abstract ids are content-derived, so an edited abstract is a new entry replacing the old one.

    The new paragraph is one line longer, so every paragraph below it moves down a line: those
    entries get their new source lines but are neither updated nor embedded again.
    """
    index, fake = synced.index, synced.fake
    path = page(synced.seed, "002")
    text = path.read_text(encoding="utf-8")
    old_line = next(line for line in text.splitlines() if line.startswith("This paper presents ServerlessLLM"))
    new_paragraph = (
        "This paper presents ServerlessLLM, a system for low-latency serverless LLM inference.\n"
        "It loads checkpoints from local storage and migrates live inference between servers."
    )
    on_page = [e for e in index.entries.values() if e.entry.source.startswith(f"{path.as_posix()}:")]
    on_page = {e.entry.id: (int(e.entry.source.rpartition(":")[2]), e.vector_ids()) for e in on_page}
    line_of_serverless = on_page[SERVERLESS][0]
    path.write_text(text.replace(old_line, new_paragraph), encoding="utf-8")
    before = fake.embedded

    report = index.sync(progress=False)
    assert SERVERLESS not in index.entries
    (new_id,) = [i for i, e in index.entries.items() if e.entry.text == " ".join(new_paragraph.splitlines())]
    assert new_id.startswith("abs-") and new_id not in on_page
    assert index.entry(new_id).source == f"{path.as_posix()}:{line_of_serverless}"
    assert (report.added, report.updated, report.removed, report.unchanged) == (1, 0, 1, 59)
    assert report.embedded_chunks == len(index.chunks_of(new_id)) == fake.embedded - before
    shifted = 0
    for entry_id, (line, vector_ids) in on_page.items():
        if entry_id == SERVERLESS:
            continue
        item = index.entries[entry_id]
        assert item.vector_ids() == vector_ids  # same vectors, nothing re-embedded
        if line > line_of_serverless:
            assert item.entry.source == f"{path.as_posix()}:{line + 1}"
            shifted += 1
    assert shifted == 9  # the nine paragraphs below ServerlessLLM moved down one line
    vectors = index.vector_ids()
    assert vectors == committed_vectors(index)
    assert not set(on_page[SERVERLESS][1]) & vectors  # the old abstract's vectors are gone


def test_deleting_a_file_removes_its_entries_but_keeps_the_shared_abstract(synced: Synced) -> None:
    index = synced.index
    path = page(synced.seed, "004")
    gone = {
        e.entry.id
        for e in index.entries.values()
        if e.entry.source.startswith(path.as_posix()) and e.entry.id != SHARED_ABSTRACT
    }
    gone_vectors = {vid for entry_id in gone for vid in index.entries[entry_id].vector_ids()}
    assert len(gone) == 19
    path.unlink()

    report = index.sync(progress=False)
    assert report.removed == 19
    assert (report.entries, report.files) == (41, 3)
    assert not gone & set(index.entries)
    shared = index.entry(SHARED_ABSTRACT)
    assert shared is not None
    assert shared.source.startswith(page(synced.seed, "003").as_posix())
    assert shared.fields.get("sources", [shared.source]) == [shared.source]
    vectors = index.vector_ids()
    assert not gone_vectors & vectors  # removed entries' vectors are deleted from Chroma
    assert vectors == committed_vectors(index)
    assert len(vectors) == 44


def test_deleting_one_of_two_pages_does_not_reembed_the_shared_abstract(synced: Synced) -> None:
    page(synced.seed, "004").unlink()
    report = synced.index.sync(progress=False)
    assert (report.updated, report.embedded_chunks) == (0, 0)


def test_a_broken_file_is_skipped_and_nothing_indexed_is_lost(synced: Synced) -> None:
    (synced.seed / "zz_broken.txt").write_text("Systems · \nA page whose header lost its id\n", encoding="utf-8")
    report = synced.index.sync(progress=False)
    assert [Path(p.path).name for p in report.skipped] == ["zz_broken.txt"]
    assert report.to_dict()["skipped"][0].endswith(
        "zz_broken.txt:1: expected 'Section · ID' (a concept page) or 'Related papers: ...' on line 1"
    )
    assert (report.entries, report.unchanged, report.embedded_chunks) == (60, 60, 0)
    assert "1 skipped" in report.summary()


def test_an_empty_index_says_how_to_build_it(tmp_path: Path) -> None:
    index = Index(Settings(home=tmp_path / "home", knowledge=(SEED,)), embedder=FakeEmbeddings())
    assert index.is_empty
    assert index.dense("GPU", 3) == [] and index.lexical("GPU", 3) == []
    with pytest.raises(EmptyIndexError, match="assistant index"):
        index.require_entries()


# --- search primitives (fake geometry) -----------------------------------------------------


def test_dense_and_lexical_search_with_fake_embeddings(synced: Synced) -> None:
    index = synced.index
    core = index.chunks_of("MLD-0472")[0]
    dense = index.dense(core.text, 5)  # a chunk's own words: cosine 1 with itself under the fake
    assert dense[0][0].id == "MLD-0472::core:0"
    assert dense[0][1] == pytest.approx(1.0, abs=1e-5)
    assert [score for _, score in dense] == sorted((score for _, score in dense), reverse=True)
    assert len(dense) == 5
    concepts = index.dense("GPU kernels", 5, kind="concept")
    assert concepts and {chunk.kind for chunk, _ in concepts} == {"concept"}
    lexical = index.lexical("ServerlessLLM serverless inference", 3)
    assert lexical[0][0].entry_id == SERVERLESS
    assert index.lexical("zzzunknownword", 3) == []
    assert {c.kind for c, _ in index.lexical("GPU", 10, kind="abstract")} == {"abstract"}


# --- manifest ---------------------------------------------------------------------------------


def test_index_from_another_embedding_model_asks_for_a_rebuild(synced: Synced) -> None:
    with pytest.raises(IndexMismatchError) as raised:
        Index(synced.settings, embedder=FakeEmbeddings(name="fake:other-model")).sync(progress=False)
    message = str(raised.value)
    assert "--rebuild" in message
    assert "fake:hashed-bow-64" in message and "fake:other-model" in message


def test_index_with_other_chunking_asks_for_a_rebuild(synced: Synced) -> None:
    with pytest.raises(IndexMismatchError, match="--rebuild"):
        Index(synced.settings.with_(chunk_tokens=120), embedder=FakeEmbeddings()).sync(progress=False)


def test_a_lexical_index_from_another_tokenizer_is_rebuilt_without_reembedding(synced: Synced) -> None:
    """An index from before the Snowball stemmer answers at once and the next sync refreshes it."""
    manifest_path = synced.settings.home / "index" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    old_generation = manifest["generation"]
    manifest_path.write_text(json.dumps({**manifest, "lexical": "suffix-stripper"}))
    stale = synced.settings.home / "index" / f"lexical-{old_generation}"
    for path in stale.iterdir():  # the old tokenizer's index: no term Snowball would look up
        path.unlink()
    reopened = Index(synced.settings, embedder=FakeEmbeddings())
    assert reopened.lexical("batching serverless inference", 3)[0][0].entry_id == SERVERLESS
    fake = FakeEmbeddings()
    report = Index(synced.settings, embedder=fake).sync(progress=False)
    assert (report.unchanged, fake.embedded) == (60, 0)  # no vector is encoded again
    manifest = json.loads(manifest_path.read_text())
    assert manifest["lexical"] == "snowball-english" and manifest["generation"] == old_generation + 1
    assert Index(synced.settings, embedder=FakeEmbeddings()).lexical("serverless", 3)[0][0].entry_id == SERVERLESS


def test_rebuild_with_another_embedding_model(synced: Synced) -> None:
    other = FakeEmbeddings(name="fake:other-model")
    report = Index(synced.settings, embedder=other).sync(rebuild=True, progress=False)
    assert (report.added, report.embedded_chunks) == (60, other.embedded)
    assert Index(synced.settings, embedder=FakeEmbeddings(name="fake:other-model")).entries.keys() == set(
        synced.index.entries
    )


def test_rebuild_in_the_same_process(synced: Synced) -> None:
    report = synced.index.sync(rebuild=True, progress=False)
    assert (report.added, report.embedded_chunks) == (60, 63)
    assert synced.index.vector_ids() == committed_vectors(synced.index)


def test_rebuild_in_a_fresh_process(synced: Synced, tmp_path: Path) -> None:
    """What `assistant index --rebuild` does when the settings still match: drop, then embed all.

    The index is copied to a path this test process never opened (chromadb keeps one client
    per path per process; see the next test for what happens to such a client).
    """
    home = tmp_path / "copy"
    shutil.copytree(synced.settings.home, home)
    result = run_script({"home": str(home), "paths": [str(synced.seed)], "rebuild": True})
    assert (result["added"], result["unchanged"], result["embedded_chunks"]) == (60, 0, 63)
    index = Index(synced.settings.with_(home=home), embedder=FakeEmbeddings())
    assert len(index.entries) == 60
    assert index.vector_ids() == committed_vectors(index)


def test_index_reopens_after_a_rebuild_by_another_process(synced: Synced) -> None:
    result = run_script({"home": str(synced.settings.home), "paths": [str(synced.seed)], "rebuild": True})
    assert result["added"] == 60
    index = Index(synced.settings, embedder=FakeEmbeddings())
    assert index.vector_ids() == committed_vectors(index)


# --- crash safety -----------------------------------------------------------------------------

SCRIPT = r"""
import json, sys
from pathlib import Path
config = json.loads(sys.argv[1])
sys.path.insert(0, config["repo"])
from assistant.index.chroma_index import Index
from assistant.settings import Settings
from tests.fakes import FakeEmbeddings

paths = tuple(Path(p) for p in config["paths"])
index = Index(Settings(home=Path(config["home"]), knowledge=paths), embedder=FakeEmbeddings(delay=config["delay"]))
print("started", flush=True)
report = index.sync(
    paths, rebuild=config["rebuild"], progress=False, on_embedded=lambda n: print("batch", n, flush=True)
)
print("report", json.dumps(report.to_dict()), flush=True)
"""


def start_script(config: dict, stderr=subprocess.PIPE) -> subprocess.Popen:
    config = {"repo": str(REPO), "delay": 0.0, "rebuild": False, **config}
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen(
        [sys.executable, "-c", SCRIPT, json.dumps(config)],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
    )


def run_script(config: dict, timeout: float = 60) -> dict:
    proc = start_script(config)
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    assert proc.returncode == 0, err
    line = next(line for line in out.splitlines() if line.startswith("report "))
    return json.loads(line.removeprefix("report "))


@dataclass
class Killed:
    home: Path
    seed: Path
    pack: Path
    committed: set[str]  # entry ids of the generation before the killed sync
    committed_vectors: int
    vectors_after_kill: int
    batches_seen: int


@pytest.fixture(scope="module")
def killed(tmp_path_factory: pytest.TempPathFactory) -> Killed:
    """Seed indexed and committed; then a slow sync adding 800 arXiv papers is kill -9'd mid-way."""
    base = tmp_path_factory.mktemp("killed")
    seed = copy_seed(base)
    pack = base / "pack"
    pack.mkdir()
    lines = PAPERS.read_text(encoding="utf-8").splitlines()[:800]
    (pack / "papers.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    home = base / "home"
    index = Index(Settings(home=home, knowledge=(seed,)), embedder=FakeEmbeddings())
    index.sync(progress=False)
    committed, committed_vectors_count = set(index.entries), len(index.vector_ids())
    del index

    log = base / "sync.log"
    with log.open("w") as err:
        proc = start_script({"home": str(home), "paths": [str(seed), str(pack)], "delay": 0.5}, stderr=err)
    lines_out: queue.Queue[str] = queue.Queue()
    reader = threading.Thread(target=lambda: [lines_out.put(line) for line in proc.stdout], daemon=True)
    reader.start()
    batches = 0
    try:
        # 800 papers are ~1,580 chunks, 7 batches of 0.5 s each; kill after the 4th is embedded,
        # when the writer thread has stored at least the first two (it writes while the next embeds)
        while batches < 4:
            try:
                line = lines_out.get(timeout=60)
            except queue.Empty:
                pytest.fail(f"the sync subprocess printed nothing for 60 s: {log.read_text()[-2000:]}")
            assert not line.startswith("report"), "the sync finished before it could be killed"
            batches += line.startswith("batch ")
        assert proc.poll() is None, log.read_text()[-2000:]
        kill_hard(proc)
    finally:
        reap(proc)
        reader.join(timeout=5)  # the pipe is at EOF once the process is dead
        proc.stdout.close()

    probe = Index(Settings(home=home, knowledge=(seed,)), embedder=FakeEmbeddings())
    vectors_after_kill = len(probe.vector_ids())
    del probe
    return Killed(home, seed, pack, committed, committed_vectors_count, vectors_after_kill, batches)


@pytest.fixture
def after_kill(killed: Killed, tmp_path: Path) -> tuple[Killed, Settings]:
    """A private copy of the killed index (each test may sync it)."""
    home = tmp_path / "home"
    shutil.copytree(killed.home, home)
    return killed, Settings(home=home, knowledge=(killed.seed, killed.pack))


def test_killed_sync_leaves_the_previous_generation_answering(after_kill) -> None:
    killed, settings = after_kill
    # the killed run did write vectors (it had embedded and stored at least two batches) ...
    assert killed.vectors_after_kill >= killed.committed_vectors + 2 * EMBED_BATCH
    index = Index(settings, embedder=FakeEmbeddings())
    # ... but the committed state is the old one: same generation, same entries
    assert index.generation == 1
    assert set(index.entries) == killed.committed
    assert not any(entry_id.startswith("arxiv:") for entry_id in index.entries)
    lexical = index.lexical("serverless inference GPU memory", 10)
    assert lexical and {c.entry_id for c, _ in lexical} <= killed.committed
    assert SERVERLESS in [c.entry_id for c, _ in index.lexical("serverless", 3)]
    for query in ["What is a GPU?", "pipeline parallelism training", "KV cache offloading"]:
        assert {c.entry_id for c, _ in index.dense(query, 5)} <= killed.committed, query
    assert index.entry("MLD-0472").title == "GPU"


def test_next_sync_completes_and_reuses_the_killed_runs_vectors(after_kill) -> None:
    killed, settings = after_kill
    fake = FakeEmbeddings()
    index = Index(settings, embedder=fake)
    report = index.sync(progress=False)
    assert (report.added, report.unchanged, report.removed) == (800, 60, 0)
    new_chunks = report.chunks - killed.committed_vectors
    reused = killed.vectors_after_kill - killed.committed_vectors
    assert report.embedded_chunks == fake.embedded == new_chunks - reused
    assert report.embedded_chunks < new_chunks
    assert index.generation == 2
    assert index.vector_ids() == committed_vectors(index)
    assert len(index.entries) == 860
    top = index.lexical("ServerlessLLM", 1)
    assert top[0][0].entry_id == SERVERLESS


def test_dense_search_after_a_killed_sync_still_returns_k_results(after_kill) -> None:
    _, settings = after_kill
    index = Index(settings, embedder=FakeEmbeddings())
    results = index.dense("What is a GPU?", 5)
    assert len(results) == 5
    assert "MLD-0472" in {c.entry_id for c, _ in results}


# --- the real encoder -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def real_index(seed_home: Path) -> Index:
    return Index(Settings(home=seed_home, knowledge=(SEED,)))


def test_real_minilm_dense_search_finds_the_gpu_page(real_index: Index) -> None:
    assert real_index.embedder_name.startswith("onnx-int8:all-MiniLM-L6-v2@")
    assert len(real_index.entries) == 60
    results = real_index.dense("What is a GPU?", 5)
    assert results[0][0].entry_id == "MLD-0472"
    assert results[0][0].field == "core"
    assert 0.3 < results[0][1] <= 1.0


def test_real_lexical_search_finds_serverlessllm(real_index: Index) -> None:
    top3 = [chunk.entry_id for chunk, _ in real_index.lexical("serverless", 3)]
    assert SERVERLESS in top3
