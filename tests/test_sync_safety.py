"""Nothing a user has is lost to a sync: the index they follow, their own files beside the home, the
server's marker, the knowledge an evaluation names, the last commit on a full disk.

Through the CLI (`main` in this process, with the fake encoder patched in where the CLI builds its
encoder, so a sync takes a second; `assistant serve` as a real child process), real Chroma, real
files in tmp_path.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from assistant.cli.commands import main
from assistant.index.chroma_index import Index
from assistant.index.serving import knowledge_key
from assistant.settings import Settings
from tests.conftest import REPO
from tests.fakes import FakeEmbeddings
from tests.processes import free_port, reap

FAKE = "fake:hashed-bow-64"  # FakeEmbeddings' name: ASSISTANT_EMBEDDINGS names it, so manifests match
DOCS = 10


def write_docs(folder: Path, count: int = DOCS) -> Path:
    """`count` Markdown files of one section each: `count` entries."""
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(count):
        (folder / f"runbook-{n}.md").write_text(
            f"# Runbook {n}\n\nStep {n}: drain node {n} of the cluster before patching kernel {n}.\n", "utf-8"
        )
    return folder


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty home; the CLI runs in this process with the fake encoder, ASSISTANT_KNOWLEDGE unset."""
    monkeypatch.setattr("assistant.index.chroma_index.make_embedder", lambda *args, **kwargs: FakeEmbeddings())
    for key in [k for k in os.environ if k.startswith(("ASSISTANT_", "OPENAI_"))]:
        monkeypatch.delenv(key)
    path = tmp_path / "home"
    monkeypatch.setenv("ASSISTANT_HOME", str(path))
    monkeypatch.setenv("ASSISTANT_EMBEDDINGS", FAKE)
    monkeypatch.setenv("ASSISTANT_MODEL", "extractive")
    monkeypatch.chdir(REPO)  # the default knowledge/seed is found from here
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def entries(home: Path) -> set[str]:
    return set(Index(Settings(home=home, embeddings=FAKE), embedder=FakeEmbeddings()).entries)


def held(home: Path) -> list[str]:
    return list(json.loads((home / "index" / "manifest.json").read_text("utf-8"))["knowledge"])


def error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


@pytest.fixture
def following(home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """The home follows a folder of 10 documents (`assistant index docs`)."""
    docs = write_docs(tmp_path / "docs")
    code, out, err = run(capsys, "index", str(docs))
    assert code == 0 and f"{DOCS} added" in out, err
    return docs


# --- 5a: a sync that would remove most of the index asks for --yes ----------------------------------------


def test_indexing_one_file_of_the_followed_folder_asks_for_yes(
    home: Path, following: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = entries(home)
    one = following / "runbook-3.md"
    code, out, err = run(capsys, "index", str(one))
    assert code == 1 and out == ""
    line = error_line(err)
    assert f"would remove {DOCS - 1} of the {DOCS} entries" in line and line.endswith(f"{one.as_posix()} --yes")
    assert entries(home) == before and held(home) == [following.as_posix()]
    code, out, err = run(capsys, "index", str(one), "--yes")  # said on purpose: done
    assert code == 0 and f"{DOCS - 1} removed" in out, err
    assert len(entries(home)) == 1


def test_a_start_up_sync_after_most_files_vanished_keeps_the_index(
    home: Path, following: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    """A share half-mounted: 9 of 10 files gone. `ask` answers from the index as it was and says how to
    remove them; `assistant index` refuses in one line; nothing is removed."""
    before = entries(home)
    for path in sorted(following.glob("*.md"))[1:]:
        path.unlink()
    code, out, err = run(capsys, "ask", "How do I drain node 7 before patching?")
    assert code == 0 and "Runbook 7" in out, err
    warned = [r.getMessage() for r in caplog.records if "answering from the index as it was" in r.getMessage()]
    assert len(warned) == 1 and f"would remove {DOCS - 1} of the {DOCS} entries" in warned[0], warned
    assert warned[0].endswith("assistant index --yes")
    code, out, err = run(capsys, "index")
    assert code == 1 and error_line(err).endswith("assistant index --yes")
    assert entries(home) == before


# --- 5b: a one-off ASSISTANT_KNOWLEDGE never replaces the followed index ---------------------------------------


def test_a_one_off_knowledge_setting_never_removes_the_followed_index(
    home: Path, following: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    before = entries(home)
    monkeypatch.setenv("ASSISTANT_KNOWLEDGE", "knowledge/seed")
    for argv in (("ask", "What is a GPU?"), ("index",), ("index", "--rebuild"), ("chat",)):
        code, out, err = run(capsys, *argv)
        assert code == 1 and out == "", (argv, out)
        line = error_line(err)
        assert f"This home follows {following.as_posix()} ({DOCS} entries)" in line, line
        assert "ASSISTANT_HOME" in line and "assistant index knowledge/seed --yes" in line, line
        assert entries(home) == before and held(home) == [following.as_posix()]
    monkeypatch.delenv("ASSISTANT_KNOWLEDGE")
    other = write_docs(following.parent / "other", 3)  # naming other paths: said on purpose, with --yes
    code, out, err = run(capsys, "index", str(other))
    assert code == 1 and "the knowledge this home follows" in error_line(err)
    assert entries(home) == before
    code, out, err = run(capsys, "index", str(other), "--yes")
    assert code == 0 and f"{DOCS - 3} removed" in out, err  # runbook-0 to -2 have the same ids there
    assert held(home) == [other.as_posix()]


def test_the_shipped_default_is_replaced_without_yes(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A fresh home holds knowledge/seed until you name your own: that switch asks nothing."""
    code, out, err = run(capsys, "index")
    assert code == 0 and "60 added" in out, err
    code, out, err = run(capsys, "index", str(write_docs(tmp_path / "docs")))
    assert code == 0 and "60 removed" in out, err


# --- 5c: a home inside the knowledge folder ------------------------------------------------------------------


def test_a_home_inside_the_knowledge_leaves_the_users_files_alone(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    knowledge = write_docs(tmp_path / "notes", 2)
    mine = {
        "index/entries-journal.md": "# Entries journal\n\nWhat we entered into the ledger this week.\n",
        "index/lexical-analysis.md": "# Lexical analysis\n\nTokens, lexemes and stemming of the notes.\n",
        "index/plan.tmp": "a plan of mine\n",
        "index/entries-notes.txt": "Scratch notes about entries.\n",
    }
    for name, text in mine.items():
        (knowledge / name).parent.mkdir(parents=True, exist_ok=True)
        (knowledge / name).write_text(text, "utf-8")
    monkeypatch.setenv("ASSISTANT_HOME", str(knowledge))  # the home is the knowledge folder
    for _ in range(2):
        code, out, err = run(capsys, "index", str(knowledge))
        assert code == 0, err
        (knowledge / "runbook-0.md").write_text("# Runbook 0\n\nAn edit: a new generation is written.\n", "utf-8")
    for name, text in mine.items():
        assert (knowledge / name).read_text("utf-8") == text, name
    ids = entries(knowledge)
    assert {"doc:index/entries-journal.md#top", "doc:index/lexical-analysis.md#top"} <= ids, ids
    assert len(ids) == 5, ids  # two runbooks, three notes of mine: none of the index's own files
    assert err.count("skipped") == 1 and "plan.tmp" in err, err  # only my own file of an unknown type
    code, out, err = run(capsys, "index", str(knowledge))  # and the index is up to date with itself
    assert code == 0 and "5 unchanged" in out and "0 added" in out, err


# --- 5e and 7: the server's marker --------------------------------------------------------------------------

SERVE = r"""
import sys
import assistant.index.chroma_index
from tests.fakes import FakeEmbeddings
assistant.index.chroma_index.make_embedder = lambda *a, **k: FakeEmbeddings()
from assistant.cli.commands import main
sys.exit(main(sys.argv[1:]))
"""


def start_serve(home: Path, *extra: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ASSISTANT_", "OPENAI_"))}
    env.update(ASSISTANT_HOME=str(home), ASSISTANT_EMBEDDINGS=FAKE, ASSISTANT_MODEL="extractive", PYTHONUNBUFFERED="1")
    server = subprocess.Popen(
        [sys.executable, "-c", SERVE, "serve", "--port", str(free_port()), *extra],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None
    ready = server.stdout.readline()
    if not ready.startswith("Ready:"):
        reap(server)
        pytest.fail(f"serve did not start: {ready}{server.stderr.read() if server.stderr else ''}")
    return server


@pytest.mark.server
def test_the_serving_marker_names_the_followed_knowledge(
    home: Path, following: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    server = start_serve(home)
    try:
        marker = json.loads((home / "serving.json").read_text("utf-8"))
        assert marker["pid"] == server.pid and marker["knowledge"] == knowledge_key([following])
        code, out, err = run(capsys, "index")  # the knowledge it serves: allowed
        assert code == 0 and f"{DOCS} unchanged" in out, err
        monkeypatch.setenv("ASSISTANT_KNOWLEDGE", str(write_docs(following.parent / "other", 3)))
        code, out, err = run(capsys, "index", "--yes")  # other knowledge: refused, whatever --yes says
        assert code == 1 and f"is being served by process {server.pid}" in error_line(err)
    finally:
        server.terminate()
        server.communicate(timeout=30)
        reap(server)
    assert entries(home) == {f"doc:runbook-{n}.md#top" for n in range(DOCS)}


@pytest.mark.server
def test_serve_removes_its_marker_when_stopped_by_sigterm(home: Path, following: Path) -> None:
    server = start_serve(home)
    try:
        assert (home / "serving.json").exists()
        server.send_signal(signal.SIGTERM)
        server.communicate(timeout=30)
    finally:
        reap(server)
    assert not (home / "serving.json").exists()


# --- 5f: eval scores the knowledge it names ------------------------------------------------------------------


def test_eval_names_the_knowledge_it_scored_and_never_switches_a_followed_home(
    home: Path, following: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The home follows documents. `assistant eval` scores against them and its results.json says so (it
    said knowledge/seed); naming knowledge/seed for it refuses in one line instead of re-pointing the home."""
    questions = tmp_path / "questions.jsonl"
    questions.write_text(
        json.dumps(
            {"id": "q1", "question": "How do I drain node 7?", "type": "single", "gold": ["doc:runbook-7.md#top"]}
        )
        + "\n",
        "utf-8",
    )
    out_dir = tmp_path / "results"
    argv = ("eval", "--questions", str(questions), "--modes", "hybrid", "--out", str(out_dir))
    code, _, err = run(capsys, *argv)
    assert code == 0, err
    results = json.loads((out_dir / "results.json").read_text("utf-8"))
    assert results["settings"]["knowledge"] == [following.as_posix()]
    assert results["headline"]["recall@5"] == 1.0, results["headline"]
    monkeypatch.setenv("ASSISTANT_KNOWLEDGE", "knowledge/seed")
    code, _, err = run(capsys, *argv[:-1], str(tmp_path / "seed-results"))
    assert code == 1 and "ASSISTANT_HOME" in error_line(err) and not (tmp_path / "seed-results").exists()
    assert held(home) == [following.as_posix()] and len(entries(home)) == DOCS


def test_the_makefile_gives_each_evaluation_a_home_of_its_own() -> None:
    """`make eval` names each question set's knowledge and home, whatever the default home follows."""
    makefile = (REPO / "Makefile").read_text("utf-8")
    recipe = makefile.split("\neval:", 1)[1].split("\n\n", 1)[0]
    commands = [line for line in recipe.replace("\\\n", " ").splitlines() if "assistant eval" in line]
    assert len(commands) == 2
    homes = set()
    for command in commands:
        assert "ASSISTANT_HOME=" in command and "ASSISTANT_KNOWLEDGE=" in command, command
        homes.add(command.split("ASSISTANT_HOME=")[1].split()[0])
    assert len(homes) == 2 and ".assistant" not in homes


# --- 5g: a full disk during a sync -------------------------------------------------------------------------


class FullDisk:
    """The home's disk fills during a sync: a Chroma write raises ENOSPC, and from then on the embedded
    Chroma in the home cannot read either (its log of the failed write cannot be applied), as real
    Chroma does: `Error in compaction`. A Chroma opened elsewhere (a copy on another disk) works."""

    def __init__(self, home: Path) -> None:
        self.home = home.resolve()
        self.full = False

    def free_bytes(self, real: Any) -> Any:
        """The file system's free space as this disk makes it: none in the home once it is full."""

        def free(path: Path) -> int | None:
            if self.full and path.resolve().is_relative_to(self.home):
                return 0
            return real(path)

        return free

    def wrap(self, client: Any, path: str) -> Any:
        disk = self
        in_home = Path(path).resolve().is_relative_to(disk.home)

        class Collection:
            def __init__(self, real: Any) -> None:
                self._real = real

            def __getattr__(self, name: str) -> Any:
                attr = getattr(self._real, name)
                if not callable(attr) or not in_home:
                    return attr

                def call(*args: Any, **kwargs: Any) -> Any:
                    if name in ("add", "upsert"):
                        disk.full = True
                        raise OSError(errno.ENOSPC, "No space left on device")
                    if disk.full:
                        from chromadb.errors import InternalError

                        raise InternalError("Error executing plan: Error in compaction: Failed to apply logs")
                    return attr(*args, **kwargs)

                return call

        class Client:
            def __getattr__(self, name: str) -> Any:
                attr = getattr(client, name)
                if name in ("get_collection", "create_collection", "get_or_create_collection"):
                    return lambda *a, **k: Collection(attr(*a, **k))
                return attr

        return Client()


def test_a_full_disk_during_a_sync_keeps_the_last_commit_answering(
    home: Path,
    following: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    import chromadb

    from assistant.index import read_copy

    real = chromadb.PersistentClient
    disk = FullDisk(home)
    monkeypatch.setattr(chromadb, "PersistentClient", lambda *a, **k: disk.wrap(real(*a, **k), k.get("path", "")))
    free = getattr(read_copy, "free_bytes", None)
    monkeypatch.setattr(read_copy, "free_bytes", disk.free_bytes(free), raising=False)
    (following / "runbook-new.md").write_text("# Runbook new\n\nA new step for the on-call engineer.\n", "utf-8")
    code, out, err = run(capsys, "ask", "How do I drain node 7 before patching?")
    assert disk.full  # the start-up sync met the full disk ...
    assert code == 0 and "Runbook 7" in out, err  # ... and the last commit still answered
    said = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert any(line.startswith("The disk is full") and "answering from the index as it was" in line for line in said)
    assert any("(the disk is full): searching a copy in" in line for line in said), said
    assert not any("rebuild" in line or "compaction" in line for line in said), said
    code, out, err = run(capsys, "ask", "How do I drain node 4 before patching?")  # a later start too
    assert code == 0 and "Runbook 4" in out, err
    code, out, err = run(capsys, "index")
    line = error_line(err)
    assert code == 1 and "The disk is full" in line and "free some space" in line, line
    assert "compaction" not in line and "rebuild" not in line, line
    assert len(entries(home)) == DOCS
