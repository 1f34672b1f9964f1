"""The index under attack: concurrent writers, kill -9, a full disk, damaged files, vanishing
knowledge and a Chroma server that dies mid-sync.

Each test drives a public surface: the CLI (`assistant.cli.commands.main` in-process, or the same `main`
in a subprocess), or the Python API (`Assistant`). Chroma is real (embedded, and a `chroma run`
server for the server case); the encoder is `FakeEmbeddings` (tests/fakes.py), patched in where
the CLI builds its encoder, so a sync takes a second. A full disk is simulated in-process by a
wrapper around Chroma's client whose writes raise what a full disk raises.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from chromadb.errors import InternalError

from assistant import Assistant, Settings
from assistant.cli.commands import main
from assistant.errors import IndexUnavailableError
from assistant.index.chroma_index import Index
from assistant.index.lock import LOCK_NAME, holder
from tests.conftest import REPO, SEED
from tests.fakes import FakeEmbeddings
from tests.processes import chroma_run, kill_hard, reap

FAKE = "fake:hashed-bow-64"  # FakeEmbeddings' name: ASSISTANT_EMBEDDINGS names it, so manifests match
PAPERS = REPO / "knowledge" / "mlsys" / "arxiv-mlsys" / "papers.jsonl"
GPU = "What is a GPU?"


# --- helpers ---------------------------------------------------------------------------------------


def tree_digest(folder: Path) -> str:
    """One hash of every file's path and bytes: the knowledge must come out of every test as it went in."""
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def committed_vectors(index: Index) -> set[str]:
    return {vid for item in index.entries.values() for vid in item.vector_ids()}


def write_pack(folder: Path, papers: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    lines = PAPERS.read_text(encoding="utf-8").splitlines()[:papers]
    (folder / "papers.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


@dataclass
class Home:
    home: Path
    seed: Path
    fake: FakeEmbeddings

    @property
    def index_dir(self) -> Path:
        return self.home / "index"

    def settings(self, *extra: Path) -> Settings:
        return Settings(home=self.home, knowledge=(self.seed, *extra), embeddings=FAKE, model="extractive")

    def open(self, *extra: Path) -> Index:
        return Index(self.settings(*extra), embedder=FakeEmbeddings())


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Home:
    """A seed copy indexed (fake embeddings) and copied to a home this process has not opened
    (chromadb keeps one client per path; damage is done between processes, not under a live client).
    `main([...])` runs against it with the fake encoder."""
    seed = tmp_path / "seed"
    shutil.copytree(SEED, seed)
    built = tmp_path / "built"
    report = Index(Settings(home=built, knowledge=(seed,), embeddings=FAKE), embedder=FakeEmbeddings()).sync(
        progress=False
    )
    assert (report.entries, report.chunks) == (60, 63)
    home = tmp_path / "home"
    shutil.copytree(built, home)
    fake = FakeEmbeddings()
    monkeypatch.setattr("assistant.index.chroma_index.make_embedder", lambda *args, **kwargs: fake)
    for key in [k for k in os.environ if k.startswith(("ASSISTANT_", "OPENAI_"))]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("ASSISTANT_HOME", str(home))
    monkeypatch.setenv("ASSISTANT_KNOWLEDGE", str(seed))
    monkeypatch.setenv("ASSISTANT_EMBEDDINGS", FAKE)
    monkeypatch.setenv("ASSISTANT_MODEL", "extractive")
    return Home(home, seed, fake)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def assert_answers_gpu(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "ask", GPU, "--json")
    assert code == 0, err
    answer = json.loads(out)
    assert not answer["refused"] and answer["citations"][0]["entry_id"] == "MLD-0472", answer


def assert_one_line(err: str, *words: str) -> None:
    assert err.count("\n") == 1 and err.startswith("error: "), err
    for word in words:
        assert word in err, err


# the CLI in a child process, with the fake encoder (optionally slow) and optional faults
CHILD = r"""
import json, os, signal, sys
config = json.loads(sys.argv[1])
import assistant.index.chroma_index, assistant.index.store
from tests.fakes import FakeEmbeddings

assistant.index.chroma_index.make_embedder = lambda *a, **k: FakeEmbeddings(delay=config["delay"])
if config["die_after_commit"]:  # kill -9 the moment the new manifest is in place
    write = assistant.index.store.write_json_atomic
    def write_then_die(path, data):
        write(path, data)
        os.kill(os.getpid(), signal.SIGKILL)
    assistant.index.store.write_json_atomic = write_then_die
from assistant.cli.commands import main
sys.exit(main(config["argv"]))
"""


def start_cli(
    home: Home, *argv: str, delay: float = 0.0, die_after_commit: bool = False, **env_extra: str
) -> subprocess.Popen:
    config = {"argv": list(argv), "delay": delay, "die_after_commit": die_after_commit}
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ASSISTANT_", "OPENAI_"))}
    env.update(
        ASSISTANT_HOME=str(home.home),
        ASSISTANT_KNOWLEDGE=str(home.seed),
        ASSISTANT_EMBEDDINGS=FAKE,
        ASSISTANT_MODEL="extractive",
        PYTHONUNBUFFERED="1",
        **env_extra,
    )
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, json.dumps(config)],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(proc: subprocess.Popen, timeout: float = 120) -> tuple[int, str, str]:
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        reap(proc)
    return proc.returncode, out, err


# --- one writer per home -------------------------------------------------------------------------


def test_two_index_runs_at_once_take_turns_and_every_committed_vector_is_in_chroma(
    cli: Home, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Both exit 0; one adds the pack, the other waits for it and finds nothing to do."""
    pack = write_pack(tmp_path / "pack", 300)
    runs = [start_cli(cli, "index", str(cli.seed), str(pack), delay=0.3) for _ in range(2)]
    results = [finish(proc) for proc in runs]
    assert [code for code, _, _ in results] == [0, 0], [err[-2000:] for _, _, err in results]
    summaries = sorted(out for _, out, _ in results)
    assert "0 added" in summaries[0] and "360 unchanged" in summaries[0], summaries
    assert "300 added" in summaries[1], summaries
    index = cli.open(pack)
    assert len(index.entries) == 360 and index.generation == 2
    assert index.vector_ids() == committed_vectors(index)
    assert not holder(cli.index_dir / LOCK_NAME)


def test_a_second_sync_that_gives_up_waiting_names_the_holder(
    cli: Home, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pack = write_pack(tmp_path / "pack", 800)
    proc = start_cli(cli, "index", str(cli.seed), str(pack), delay=1.0)
    try:
        deadline = time.monotonic() + 60
        while not holder(cli.index_dir / LOCK_NAME):
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.stderr else ""
            time.sleep(0.05)
        monkeypatch.setattr("assistant.index.lock.DEFAULT_WAIT", 0.5)
        started = time.monotonic()
        code, _, err = run(capsys, "index")
        assert code == 1 and time.monotonic() - started < 15
        assert_one_line(err, "Another sync of the index", f"pid {proc.pid}, started ", "assistant index")
        # the waiting side changed nothing; the holder is killed, and the kernel frees the lock
        kill_hard(proc)
    finally:
        reap(proc)
        for stream in (proc.stdout, proc.stderr):
            if stream:
                stream.close()
    assert not holder(cli.index_dir / LOCK_NAME)
    code, _, err = run(capsys, "index")
    assert code == 0, err
    assert_answers_gpu(capsys)


def test_an_open_assistant_keeps_answering_after_another_process_commits_a_new_generation(
    cli: Home, capsys: pytest.CaptureFixture[str]
) -> None:
    """The other sync removes the generation files this Assistant read its entries from."""
    bot = Assistant(cli.settings(), embedder=FakeEmbeddings())
    (cli.seed / "extra.txt").write_text("Systems · EXT-0001\nNVLink\nA link between GPUs.\n", encoding="utf-8")
    code, out, err = finish(start_cli(cli, "index"))
    assert code == 0 and "1 added" in out, err
    assert not (cli.index_dir / "lexical-1").exists()
    answer = bot.ask(GPU)
    assert not answer.refused and answer.citations[0].entry_id == "MLD-0472"
    assert bot.entry("EXT-0001") is not None  # it now reads the new generation


# --- Chroma checked against the manifest -------------------------------------------------------------


def test_an_emptied_chroma_sqlite3_is_repaired_by_the_next_sync(cli: Home, capsys: pytest.CaptureFixture[str]) -> None:
    (cli.index_dir / "chroma" / "chroma.sqlite3").write_bytes(b"")
    code, out, err = run(capsys, "doctor")
    assert code == 1 and "63 of 63 committed vectors are missing" in out and out.endswith("fix: assistant index\n")
    code, out, err = run(capsys, "index")
    assert code == 0, err
    assert "60 unchanged" in out and "repaired 63 vectors missing from Chroma" in out
    assert cli.fake.embedded == 63
    index = cli.open()
    assert index.vector_ids() == committed_vectors(index) and index.generation == 1
    assert run(capsys, "doctor")[0] == 0
    assert_answers_gpu(capsys)
    code, out, _ = run(capsys, "index")  # and now a sync has nothing to do
    assert code == 0 and "repaired" not in out and cli.fake.embedded == 63


def test_vectors_lost_from_chroma_are_embedded_again_by_a_sync_that_changes_nothing(
    cli: Home, capsys: pytest.CaptureFixture[str]
) -> None:
    index = cli.open()
    lost = sorted(index.entries["MLD-0472"].vector_ids())
    index.collection().delete(ids=lost)
    code, out, err = run(capsys, "index")
    assert code == 0, err
    assert f"repaired {len(lost)} vectors" in out and cli.fake.embedded == len(lost)
    assert index.vector_ids() == committed_vectors(index)


def test_kill_9_right_after_the_commit_leaves_orphans_and_old_files_that_the_next_sync_sweeps(
    cli: Home, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The pack is indexed, then removed; the sync that removes it dies the moment it commits."""
    pack = write_pack(tmp_path / "pack", 300)
    code, _, err = finish(start_cli(cli, "index", str(cli.seed), str(pack)))
    assert code == 0, err
    with_pack = cli.open(pack)
    pack_vectors = {v for e, item in with_pack.entries.items() if e.startswith("arxiv:") for v in item.vector_ids()}
    assert len(pack_vectors) > 500

    proc = start_cli(cli, "index", str(cli.seed), "--yes", die_after_commit=True)  # removes most: said on purpose
    code, _, err = finish(proc)
    assert code == -signal.SIGKILL, err
    index = cli.open()
    assert index.generation == 3 and len(index.entries) == 60  # the commit happened ...
    assert (cli.index_dir / "entries-2.jsonl").exists()  # ... its clean-up did not
    assert pack_vectors <= index.vector_ids()

    code, out, err = run(capsys, "index")
    assert code == 0, err
    assert f"swept {len(pack_vectors)} orphan vectors" in out and "60 unchanged" in out
    assert cli.fake.embedded == 0
    assert index.vector_ids() == committed_vectors(index)
    assert sorted(p.name for p in cli.index_dir.glob("*-*")) == ["entries-3.jsonl", "lexical-3"]
    assert run(capsys, "doctor")[0] == 0


# --- a full disk ---------------------------------------------------------------------------------------


class FaultyCollection:
    """A real Chroma collection whose writes (or every call) raise `error` once `armed`."""

    WRITES = ("add", "upsert", "update", "delete", "modify")

    def __init__(self, collection: Any, faults: Faults) -> None:
        self._collection, self._faults = collection, faults

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._collection, name)
        if not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            self._faults.before(name, name in self.WRITES)
            return attr(*args, **kwargs)

        return call


class FaultyClient:
    def __init__(self, client: Any, faults: Faults) -> None:
        self._client, self._faults = client, faults

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._client, name)
        if name in ("get_collection", "create_collection", "get_or_create_collection"):

            def wrapped(*args: Any, **kwargs: Any) -> Any:
                self._faults.before(name, name != "get_collection")
                return FaultyCollection(attr(*args, **kwargs), self._faults)

            return wrapped
        if name in ("delete_collection",):

            def write(*args: Any, **kwargs: Any) -> Any:
                self._faults.before(name, True)
                return attr(*args, **kwargs)

            return write
        return attr


@dataclass
class Faults:
    error: Callable[[], BaseException] | None = None
    writes_before: int = 0  # writes that succeed before the error starts
    reads_too: bool = False
    hang: threading.Event | None = None  # writes block on this event instead of raising
    writes: int = 0

    def before(self, name: str, is_write: bool) -> None:
        if not is_write and not self.reads_too:
            return
        self.writes += is_write
        if self.writes <= self.writes_before and is_write:
            return
        if self.hang is not None and is_write:
            self.hang.wait(60)
        elif self.error is not None:
            raise self.error()


@pytest.fixture
def faults(monkeypatch: pytest.MonkeyPatch) -> Iterator[Faults]:
    """Every embedded Chroma client this test opens goes through the fault-injecting wrapper."""
    import chromadb

    real = chromadb.PersistentClient
    state = Faults()
    monkeypatch.setattr(chromadb, "PersistentClient", lambda *a, **k: FaultyClient(real(*a, **k), state))
    yield state
    if state.hang is not None:
        state.hang.set()


DISK_FULL: dict[str, Callable[[], BaseException]] = {
    "ENOSPC": lambda: OSError(errno.ENOSPC, "No space left on device"),
    "sqlite full": lambda: InternalError("error returned from database: (code: 13) database or disk is full"),
}


@pytest.mark.parametrize("kind", list(DISK_FULL))
def test_a_full_disk_stops_the_sync_at_the_next_batch_and_the_previous_index_answers(
    cli: Home, tmp_path: Path, capsys: pytest.CaptureFixture[str], faults: Faults, kind: str
) -> None:
    pack = write_pack(tmp_path / "pack", 800)  # ~1,580 chunks: 7 batches
    faults.error, faults.writes_before = DISK_FULL[kind], 1
    started = time.monotonic()
    code, out, err = run(capsys, "index", str(cli.seed), str(pack))
    assert code == 1 and out == ""
    assert_one_line(err, "The disk is full", "free some space, then run: assistant index")
    assert time.monotonic() - started < 30
    assert cli.fake.calls <= 4  # encoding stopped within a batch or two of the failed write, not after all 7
    assert json.loads((cli.index_dir / "manifest.json").read_text())["generation"] == 1
    assert_answers_gpu(capsys)  # reads still work while every write fails
    assert {p.name for p in cli.index_dir.glob("*-*")} == {"entries-1.jsonl", "lexical-1"}

    faults.error = None  # space freed: the same command completes
    code, out, err = run(capsys, "index", str(cli.seed), str(pack))
    assert code == 0, err
    index = cli.open(pack)
    assert len(index.entries) == 860 and index.vector_ids() == committed_vectors(index)


def test_a_full_disk_while_writing_the_generation_files_keeps_the_previous_one(
    cli: Home, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import assistant.index.store

    def no_space(*args: Any, **kwargs: Any) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(assistant.index.store, "build_lexical", no_space)
    (cli.seed / "extra.txt").write_text("Systems · EXT-0001\nNVLink\nA link between GPUs.\n", encoding="utf-8")
    code, _, err = run(capsys, "index")
    assert code == 1
    assert_one_line(err, "The disk is full")
    assert {p.name for p in cli.index_dir.glob("*-*")} == {"entries-1.jsonl", "lexical-1"}  # no half generation
    assert_answers_gpu(capsys)


def test_a_chroma_write_that_hangs_is_abandoned_in_one_line(
    cli: Home, tmp_path: Path, capsys: pytest.CaptureFixture[str], faults: Faults, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("assistant.index.chroma_index.WRITE_TIMEOUT", 2.0)
    faults.hang = threading.Event()
    pack = write_pack(tmp_path / "pack", 800)
    started = time.monotonic()
    code, _, err = run(capsys, "index", str(cli.seed), str(pack))
    assert code == 1 and time.monotonic() - started < 30
    assert_one_line(err, "a write of vectors took more than 2s", "free some space, then run: assistant index")
    assert cli.fake.calls <= 4


def test_ask_while_the_disk_is_full(cli: Home, capsys: pytest.CaptureFixture[str], faults: Faults) -> None:
    faults.error = DISK_FULL["sqlite full"]
    assert_answers_gpu(capsys)  # opening and querying the index writes nothing
    faults.reads_too = True  # a Chroma that fails even to read: one line, no traceback
    code, _, err = run(capsys, "ask", GPU)
    assert code == 1
    assert_one_line(err, "The disk is full")


# --- damaged files under the home ------------------------------------------------------------------------


def truncate(path: Path, size: int) -> None:
    with path.open("r+b") as handle:
        handle.truncate(size)


DAMAGE: dict[str, tuple[Callable[[Path], None], str]] = {
    # name: (damage to <home>/index, words of the one-line error)
    "manifest truncated": (lambda d: truncate(d / "manifest.json", 40), "manifest.json is damaged"),
    "manifest garbage": (lambda d: (d / "manifest.json").write_bytes(b"\x00\xff" * 50), "manifest.json is damaged"),
    "manifest emptied": (lambda d: (d / "manifest.json").write_bytes(b""), "manifest.json is damaged"),
    "entries missing": (lambda d: (d / "entries-1.jsonl").unlink(), "entries-1.jsonl is missing"),
    "entries truncated mid-line": (lambda d: truncate(d / "entries-1.jsonl", 20_000), "entries-1.jsonl is damaged"),
    "entries cut at a line": (
        lambda d: (d / "entries-1.jsonl").write_text(
            "".join((d / "entries-1.jsonl").read_text().splitlines(keepends=True)[:30])
        ),
        "entries-1.jsonl is damaged",
    ),
    "lexical missing": (lambda d: shutil.rmtree(d / "lexical-1"), "lexical-1 is missing"),
    "chroma.sqlite3 truncated": (
        lambda d: truncate(d / "chroma" / "chroma.sqlite3", 100_000),
        "database disk image is malformed",
    ),
    "chroma.sqlite3 overwritten": (
        lambda d: (d / "chroma" / "chroma.sqlite3").write_bytes(os.urandom(200_000)),
        "Cannot use the index",
    ),
    "chroma folder missing": (lambda d: shutil.rmtree(d / "chroma"), ""),
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_file_under_the_home_is_named_and_the_fix_doctor_names_repairs_it(
    cli: Home, capsys: pytest.CaptureFixture[str], damage: str
) -> None:
    hurt, words = DAMAGE[damage]
    knowledge = tree_digest(cli.seed)
    hurt(cli.index_dir)
    code, out, err = run(capsys, "ask", GPU)
    if words:  # the damaged index is not used: one line with the fix
        assert code == 1
        assert_one_line(err, words)
        assert err.rstrip().endswith("rebuild it: assistant index --rebuild")
    code, out, _ = run(capsys, "doctor")
    assert code == 1 and "problem: " in out
    fix = out.strip().splitlines()[-1].removeprefix("fix: ")
    assert fix in ("assistant index --rebuild", "assistant index"), out
    code, _, err = run(capsys, *fix.split()[1:])
    assert code == 0, err
    code, out, _ = run(capsys, "doctor")
    assert code == 0 and out.endswith("the index is healthy\n"), out
    assert_answers_gpu(capsys)
    assert tree_digest(cli.seed) == knowledge


def test_rebuild_repairs_every_damage_at_once(cli: Home, capsys: pytest.CaptureFixture[str]) -> None:
    knowledge = tree_digest(cli.seed)
    for hurt, _ in DAMAGE.values():
        with contextlib.suppress(FileNotFoundError):  # an earlier damage already removed the file
            hurt(cli.index_dir)
    code, _, err = run(capsys, "index", "--rebuild")
    assert code == 0, err
    assert run(capsys, "doctor")[0] == 0
    assert_answers_gpu(capsys)
    assert tree_digest(cli.seed) == knowledge


def test_a_damaged_hnsw_file_is_found_by_doctor_and_rebuilt(
    cli: Home, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Chroma persists its HNSW files past 1,000 vectors; their ids still list fine when they are damaged."""
    pack = write_pack(tmp_path / "pack", 800)
    code, _, err = finish(start_cli(cli, "index", str(cli.seed), str(pack)))
    assert code == 0, err
    (data,) = (cli.index_dir / "chroma").glob("*/data_level0.bin")
    truncate(data, 100)
    monkeypatch.setenv("ASSISTANT_KNOWLEDGE", f"{cli.seed}:{pack}")
    code, out, _ = run(capsys, "doctor")
    # Chroma's HNSW reader reports the damage, or (seen about one run in three) crashes the doctor's child process
    assert code == 1 and ("problem: chroma: Cannot use the index" in out or "Chroma crashed (SIGSEGV)" in out), out
    assert out.endswith("fix: assistant index --rebuild\n")
    code, out, err = run(capsys, "index", "--rebuild")
    assert code == 0 and "860 added" in out, err
    assert run(capsys, "doctor")[0] == 0
    assert_answers_gpu(capsys)


# --- knowledge that vanishes or cannot be read mid-sync ------------------------------------------------------


@pytest.fixture
def with_pack(cli: Home, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Home, Path, set[str]]:
    """The seed plus a subfolder holding a pack of 20 papers, indexed through the CLI."""
    pack = write_pack(cli.seed / "pack", 20)
    code, out, err = run(capsys, "index")
    assert code == 0 and "20 added" in out, err
    return cli, pack, {e for e in cli.open().entries if e.startswith("arxiv:")}


def test_a_file_removed_mid_sync_is_a_problem_and_its_entries_are_kept(
    with_pack: tuple[Home, Path, set[str]], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import assistant.knowledge.corpus

    home, _, papers = with_pack
    gpu_page = next(home.seed.glob("000_*.txt"))
    read_text = assistant.knowledge.corpus.read_text

    def removed_as_it_is_read(path: Path, *args: Any) -> str | None:
        if path.name == gpu_page.name:
            path.unlink()  # listed a moment ago, gone now
        return read_text(path, *args)

    monkeypatch.setattr(assistant.knowledge.corpus, "read_text", removed_as_it_is_read)
    code, out, err = run(capsys, "index")
    assert code == 0
    assert f"{gpu_page.name}: the file was removed while it was read - its entries are kept as they were" in err
    assert "0 removed" in out and "1 skipped" in out
    index = home.open()
    assert "MLD-0472" in index.entries and papers <= set(index.entries)
    assert_answers_gpu(capsys)


def test_an_unreadable_file_is_a_problem_and_its_entries_are_kept(
    with_pack: tuple[Home, Path, set[str]], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    home, pack, papers = with_pack
    target = pack / "papers.jsonl"
    opener = Path.open

    def forbidden(self: Path, *args: Any, **kwargs: Any) -> Any:
        if self == target:  # as a chmod 000 file reads for anyone but root (these tests may run as root)
            raise PermissionError(errno.EACCES, "Permission denied", str(self))
        return opener(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", forbidden)
    code, out, err = run(capsys, "index")
    assert code == 0
    assert "papers.jsonl: cannot read the file (Permission denied) - its entries are kept as they were" in err
    assert "0 removed" in out and "(20 entries of unreadable files kept as they were)" in out
    assert papers <= set(home.open().entries)


def test_an_unreadable_subfolder_keeps_its_entries_and_is_named(
    with_pack: tuple[Home, Path, set[str]], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    home, pack, papers = with_pack
    scandir = os.scandir

    def forbidden(path: Any = ".") -> Any:
        if Path(path) == pack:
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return scandir(path)

    monkeypatch.setattr(os, "scandir", forbidden)
    code, out, err = run(capsys, "index")
    assert code == 0
    assert "pack: cannot read the folder (Permission denied) - its entries are kept as they were" in err
    assert "0 removed" in out and "(20 entries of unreadable files kept as they were)" in out
    assert papers <= set(home.open().entries)
    monkeypatch.setattr(os, "scandir", scandir)  # readable again: nothing to do
    code, out, _ = run(capsys, "index")
    assert code == 0 and "0 removed" in out and "80 unchanged" in out


# --- a Chroma server that dies mid-sync ----------------------------------------------------------------------


@pytest.fixture
def chroma_server(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen]]:
    """A `chroma run` of this test's own (the test kills it)."""
    data = tmp_path / "chroma-server"
    data.mkdir()
    with chroma_run(data, tmp_path / "chroma-server.log") as server:
        yield server


class KillServer(FakeEmbeddings):
    """Fake embeddings that kill the Chroma server as the second batch is encoded."""

    def __init__(self, server: subprocess.Popen) -> None:
        super().__init__(delay=0.3)
        self.server = server

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if self.calls == 1:
            self.server.kill()
            self.server.wait(timeout=15)
        return super().embed_documents(texts)


@pytest.mark.server
def test_chroma_server_killed_mid_index_fails_fast_and_queries_say_unavailable(
    chroma_server: tuple[str, subprocess.Popen],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url, server = chroma_server
    seed = tmp_path / "seed"
    shutil.copytree(SEED, seed)
    pack = write_pack(tmp_path / "pack", 800)
    settings = Settings(home=tmp_path / "home", knowledge=(seed,), chroma_url=url, model="extractive")
    code, out, err = finish(
        start_cli(Home(settings.home, seed, FakeEmbeddings()), "index", ASSISTANT_CHROMA_URL=url)
    )  # the seed, indexed by another process (whose client closes when it exits)
    assert code == 0 and "60 added" in out, err

    killer = KillServer(server)
    bot = Assistant(settings, embedder=killer)
    started = time.monotonic()
    with pytest.raises(IndexUnavailableError) as raised:
        bot.index([seed, pack], progress=False)
    assert time.monotonic() - started < 60
    assert f"Cannot reach the Chroma server at {url}" in str(raised.value)
    assert killer.calls <= 4  # of 7 batches: stopped at the first failed write, not after encoding all
    with pytest.raises(IndexUnavailableError, match="Cannot reach the Chroma server"):
        bot.ask(GPU)
    for key, value in {"HOME": str(settings.home), "KNOWLEDGE": str(seed), "CHROMA_URL": url}.items():
        monkeypatch.setenv(f"ASSISTANT_{key}", value)
    monkeypatch.setenv("ASSISTANT_EMBEDDINGS", FAKE)
    code, out, _ = run(capsys, "doctor")
    assert code == 1 and f"problem: chroma: Cannot reach the Chroma server at {url}" in out, out
    assert "chroma run" in out and out.endswith("fix: see the problem above\n")

    # the committed state lives in the server: started again over its data, it still names generation 1
    with chroma_run(tmp_path / "chroma-server", tmp_path / "chroma-again.log") as (again, _proc):
        manifest = Index(settings.with_(chroma_url=again), embedder=FakeEmbeddings()).store.manifest()
    assert manifest is not None and manifest["generation"] == 1 and manifest["entries"] == 60


# --- HNSW search breadth ---------------------------------------------------------------------------------------


def test_collections_search_with_ef_search_500_and_an_older_one_is_raised(cli: Home, tmp_path: Path) -> None:
    fresh = Home(tmp_path / "fresh", cli.seed, FakeEmbeddings())
    index = fresh.open()
    index.sync(progress=False)
    assert index.collection().configuration_json["hnsw"]["ef_search"] == 500

    older = cli.open()  # built before: Chroma's default ef_search
    name = older.store.manifest()["collection"]
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    client = chromadb.PersistentClient(path=str(older.chroma_path), settings=ChromaSettings(anonymized_telemetry=False))
    with warnings.catch_warnings():  # chromadb re-reads the (legacy) embedding function config
        warnings.simplefilter("ignore", DeprecationWarning)
        client.get_collection(name).modify(configuration={"hnsw": {"ef_search": 100}})
    assert client.get_collection(name).configuration_json["hnsw"]["ef_search"] == 100
    assert older.dense(GPU, 3)  # opening the collection raises it
    assert client.get_collection(name).configuration_json["hnsw"]["ef_search"] == 500
