"""Nothing indexed is lost by a command that names a path; the path named is the knowledge followed.

Through the CLI, as a user types it: exit codes, the one line printed, entry counts before and after.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from test_documents import write_wiki

from assistant.cli.commands import main
from assistant.index.chroma_index import Index
from assistant.settings import Settings

SEED_ENTRIES = 60


@pytest.fixture
def seeded(seed_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home holding the default knowledge, ASSISTANT_KNOWLEDGE unset (the home's own knowledge followed)."""
    home = tmp_path / "home"
    shutil.copytree(seed_home, home)
    monkeypatch.setenv("ASSISTANT_HOME", str(home))
    monkeypatch.setenv("ASSISTANT_MODEL", "extractive")
    monkeypatch.delenv("ASSISTANT_KNOWLEDGE", raising=False)
    monkeypatch.chdir(Path(__file__).resolve().parent.parent)  # the default knowledge/seed is found from here
    return home


def entries(home: Path) -> set[str]:
    return set(Index(Settings(home=home)).entries)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_missing_path_is_an_error_and_removes_nothing(seeded: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = entries(seeded)
    code, _out, err = run(capsys, "index", "/no/such/path")
    assert code == 1
    assert err.strip() == "error: The knowledge path /no/such/path does not exist - check the path"
    assert entries(seeded) == before and len(before) == SEED_ENTRIES


@pytest.mark.parametrize("what", ["an empty folder", "a folder of unknown files"])
def test_knowledge_that_yields_nothing_asks_for_yes(
    seeded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], what: str
) -> None:
    folder = tmp_path / "nothing"
    folder.mkdir()
    if what == "a folder of unknown files":
        (folder / "photo.jpg").write_bytes(b"\xff\xd8\xff" + bytes(32))
    code, out, err = run(capsys, "index", str(folder))
    assert code == 1
    line = err.strip().splitlines()[-1]
    assert line.startswith(f"error: {folder.as_posix()} yields no entries")
    assert f"would remove {SEED_ENTRIES} of the {SEED_ENTRIES} entries" in line and line.endswith("--yes")
    assert len(entries(seeded)) == SEED_ENTRIES
    code, out, err = run(capsys, "index", str(folder), "--yes")
    assert code == 0 and f"{SEED_ENTRIES} removed" in out
    assert entries(seeded) == set()


def test_the_path_indexed_is_the_knowledge_the_home_follows(
    seeded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wiki = write_wiki(tmp_path / "wiki")
    code, out, err = run(capsys, "index", str(wiki))
    assert code == 0, err
    assert "12 added" in out and f"{SEED_ENTRIES} removed" in out
    assert f"this home now follows {wiki.as_posix()}" in out
    after = entries(seeded)
    assert all(e.startswith("doc:") for e in after) and len(after) == 12
    # the next commands follow the wiki instead of syncing the home back to knowledge/seed
    code, out, err = run(capsys, "ask", "Which node has a flaky NVLink bridge?", "--json")
    assert code == 0, err
    answer = json.loads(out)
    assert [c["entry_id"] for c in answer["citations"]] == ["doc:status.html#known-issues"]
    assert entries(seeded) == after
    code, out, err = run(capsys, "doctor")
    assert code == 0 and "the index is healthy" in out, out + err


def test_knowledge_named_in_the_environment_never_replaces_the_indexed_path(
    seeded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    wiki = write_wiki(tmp_path / "wiki")
    monkeypatch.setenv("ASSISTANT_KNOWLEDGE", "knowledge/seed")
    code, out, err = run(capsys, "index", str(wiki))
    assert code == 0
    assert "ASSISTANT_KNOWLEDGE names other knowledge" in err and f"unset it to follow {wiki.as_posix()}" in err
    code, out, err = run(capsys, "ask", "What is a GPU?", "--json")
    assert code == 1 and out == "" and "assistant index knowledge/seed --yes" in err
    assert len(entries(seeded)) == 12


def test_a_start_on_knowledge_that_yields_nothing_answers_from_the_index(
    seeded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("ASSISTANT_KNOWLEDGE", str(empty))
    code, out, err = run(capsys, "ask", "What is a GPU?")
    assert code == 0, err
    assert "[1] MLD-0472" in out or "MLD-0472" in out
    assert "yields no entries" in err and "answering from the index as it was" in err
    assert len(entries(seeded)) == SEED_ENTRIES


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_fifo_or_device_as_knowledge_is_refused_without_being_opened(
    seeded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    if kind == "fifo":
        path = tmp_path / "pipe"
        os.mkfifo(path)  # opening it for reading would block forever
        what = "a FIFO (named pipe)"
    else:
        path, what = Path("/dev/zero"), "a device"
    code, _out, err = run(capsys, "index", str(path))
    assert code == 1
    assert err.strip() == (
        f"error: The knowledge path {path.as_posix()} is {what}, not a file or folder of knowledge - check the path"
    )
    assert len(entries(seeded)) == SEED_ENTRIES


def test_a_fifo_inside_a_folder_is_listed_and_skipped(
    seeded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wiki = write_wiki(tmp_path / "wiki")
    os.mkfifo(wiki / "notes.md")
    code, out, err = run(capsys, "index", str(wiki))
    assert code == 0
    assert f"skipped {(wiki / 'notes.md').as_posix()}: a FIFO (named pipe) - skipped, never read" in err
    assert "1 skipped" in out


def test_doctor_calls_an_empty_index_a_problem(
    seeded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run(capsys, "index", str(empty), "--yes")[0] == 0
    code, out, _err = run(capsys, "doctor")
    assert code == 1
    assert "problem: entries: the index holds no entries" in out
    assert out.strip().splitlines()[-1] == f"fix: assistant index {empty.as_posix()}"
