"""Start-up: the index follows ASSISTANT_KNOWLEDGE, loads before `serve` is ready, and start errors are one line.

Through the public surfaces: the CLI in child processes (real MiniLM, real Chroma) or `main()` in
process with the fake encoder, the Python API, and `ui.app.serve`.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from assistant import Assistant, Settings
from assistant.cli.commands import main
from assistant.errors import SettingsError
from assistant.index.chroma_index import Index, SyncReport
from assistant.index.progress import Progress
from assistant.offline import offline_env
from tests.conftest import REPO, SEED
from tests.fakes import FakeEmbeddings
from tests.processes import free_port, reap
from tests.test_robust_index import FAKE, Home, assert_one_line, cli, run, start_cli, write_pack  # noqa: F401

GLOSSARY = REPO / "knowledge" / "mlsys" / "ml-glossary" / "terms.jsonl"


def glossary_pack(folder: Path, terms: int = 40) -> Path:
    """The first `terms` glossary records plus "learning rate" (not in the seed corpus)."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = GLOSSARY.read_text(encoding="utf-8").splitlines()
    chosen = lines[:terms] + [line for line in lines if json.loads(line)["term"] == "learning rate"]
    (folder / "terms.jsonl").write_text("\n".join(chosen) + "\n", encoding="utf-8")
    return folder


def cli_env(home: Path, knowledge: Path | str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ASSISTANT_", "OPENAI_"))}
    env.update({"ASSISTANT_HOME": str(home), "ASSISTANT_KNOWLEDGE": str(knowledge), "ASSISTANT_MODEL": "extractive"})
    env.update(extra)
    return offline_env(env)


def assistant_cli(*argv: str, env: dict[str, str], timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "assistant", *argv], cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout
    )


# --- the index follows ASSISTANT_KNOWLEDGE ---------------------------------------------------------------


@pytest.mark.slow
def test_switching_knowledge_answers_from_the_new_knowledge(seed_settings: Settings, tmp_path: Path) -> None:
    """The issue's reproduction: a seed index, then other knowledge -> `ask` syncs and answers from it."""
    pack = glossary_pack(tmp_path / "glossary")
    env = cli_env(seed_settings.home, pack)
    done = assistant_cli("ask", "What is a learning rate?", "--json", env=env)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)  # stdout is the answer only
    assert not answer["refused"] and answer["citations"][0]["entry_id"] == "glossary:learning-rate", answer
    assert f"Indexing {pack.as_posix()}: the index holds {SEED.as_posix()}" in done.stderr
    assert "60 removed" in done.stderr and "Traceback" not in done.stderr
    manifest = json.loads((seed_settings.home / "index" / "manifest.json").read_text())
    assert manifest["knowledge"] == [pack.as_posix()] and list(manifest["files"]) == [f"{pack.as_posix()}/terms.jsonl"]
    again = assistant_cli("ask", "What is a learning rate?", env=env)  # up to date: nothing logged, same answer
    assert again.returncode == 0 and again.stderr == "", again.stderr
    assert "glossary:learning-rate" in again.stdout


def corpus_reads(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The knowledge paths each sync reads from here on, one item a read (`load_corpus` counted)."""
    import assistant.index.chroma_index

    parse = assistant.index.chroma_index.load_corpus
    parsed: list[object] = []
    monkeypatch.setattr(
        assistant.index.chroma_index,
        "load_corpus",
        lambda paths, **options: parsed.append(paths) or parse(paths, **options),
    )
    return parsed


def test_an_up_to_date_index_is_not_read_again_and_an_edit_syncs_only_what_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed = tmp_path / "seed"
    shutil.copytree(SEED, seed)
    settings = Settings(home=tmp_path / "home", knowledge=(seed,), embeddings=FAKE, model="extractive")
    first = FakeEmbeddings()
    Assistant(settings, embedder=first)  # empty: builds
    assert first.embedded == 63

    parsed = corpus_reads(monkeypatch)
    quiet = FakeEmbeddings()
    Assistant(settings, embedder=quiet)
    assert parsed == [] and quiet.embedded == 0  # no parse, no encoder: a stat of four files

    page = seed / "000_d927b209ddd51874.txt"
    os.utime(page, (time.time() + 5, time.time() + 5))  # touched, not changed: one hash, still no parse
    Assistant(settings, embedder=quiet)
    assert parsed == [] and quiet.embedded == 0

    page.write_text(page.read_text(encoding="utf-8").replace("tensor computation", "tensor math"), encoding="utf-8")
    edited = FakeEmbeddings()
    bot = Assistant(settings, embedder=edited)
    assert len(parsed) == 1 and 0 < edited.embedded < 10  # only the GPU page's chunks
    gpu = bot.entry("MLD-0472")
    assert gpu is not None and "tensor math" in gpu.text


def test_an_index_read_by_an_earlier_edition_of_the_readers_is_read_again_at_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The files are unchanged, but the readers now read them differently (`corpus.READING`): the start syncs,
    re-embedding only the entries whose text changed, and records the edition so the next start does not."""
    from assistant.knowledge.corpus import READING

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "notes.md").write_text("# Notes\n\n## Stop\n\nIt stops after two completions.\n", encoding="utf-8")
    settings = Settings(home=tmp_path / "home", knowledge=(docs,), embeddings=FAKE, model="extractive")
    Assistant(settings, embedder=FakeEmbeddings())
    index = Index(settings, embedder=FakeEmbeddings())
    assert index.store.manifest()["reading"] == READING and index.stale_reason() is None  # type: ignore[index]

    index.store.annotate(reading=READING - 1)  # as an earlier edition left it
    assert "earlier version of its readers" in (Index(settings, embedder=FakeEmbeddings()).stale_reason() or "")
    parsed = corpus_reads(monkeypatch)
    quiet = FakeEmbeddings()
    Assistant(settings, embedder=quiet)
    assert len(parsed) == 1 and quiet.embedded == 0  # read again; the same text is not embedded again
    assert Index(settings, embedder=FakeEmbeddings()).stale_reason() is None


def test_a_missing_knowledge_path_is_one_line_and_the_index_is_kept(
    cli: Home,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ASSISTANT_KNOWLEDGE", f"{cli.seed}:{cli.seed.parent / 'no-such-folder'}")
    code, out, err = run(capsys, "ask", "What is a GPU?")
    assert code == 1 and out == ""
    assert_one_line(err, "no-such-folder does not exist", "fix ASSISTANT_KNOWLEDGE")
    assert len(cli.open().entries) == 60  # nothing was dropped for the mistyped path


def test_an_unreadable_knowledge_path_is_one_line(
    cli: Home,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pack = write_pack(cli.seed.parent / "pack", 5)
    scandir = os.scandir

    def forbidden(path: object = ".") -> object:
        if Path(str(path)) == pack:  # as chmod 000 would for anyone but root (the tests may run as root)
            raise PermissionError(13, "Permission denied", str(path))
        return scandir(path)  # type: ignore[call-overload]

    monkeypatch.setattr(os, "scandir", forbidden)
    monkeypatch.setenv("ASSISTANT_KNOWLEDGE", f"{cli.seed}:{pack}")
    code, out, err = run(capsys, "chat")
    assert code == 1 and out == ""
    assert_one_line(err, f"{pack.as_posix()} cannot be read (Permission denied)", "make it readable")


def test_two_starts_on_a_stale_index_take_turns(cli: Home, tmp_path: Path) -> None:  # noqa: F811
    """Two `ask` processes find the knowledge changed at once: one syncs, the other waits and has nothing to do."""
    write_pack(cli.seed / "pack", 120)  # a new file in the configured folder
    runs = [start_cli(cli, "ask", "What is a GPU?", "--json", delay=0.2) for _ in range(2)]
    results = []
    for proc in runs:
        try:
            out, err = proc.communicate(timeout=120)
        finally:
            reap(proc)
        results.append((proc.returncode, out, err))
    assert [code for code, _, _ in results] == [0, 0], [err[-2000:] for _, _, err in results]
    for _, out, _ in results:
        assert json.loads(out)["citations"][0]["entry_id"] == "MLD-0472"
    indexed = sum("Indexed:" in err for _, _, err in results)
    assert indexed >= 1
    index = cli.open()
    assert len(index.entries) == 180 and index.vectors_agree()
    assert index.stale_reason() is None


# --- loading before ready, progress ------------------------------------------------------------------------


def test_serve_loads_everything_before_it_is_ready(seed_settings: Settings) -> None:
    from ui.app import serve

    fake = FakeEmbeddings()
    bot = Assistant(seed_settings.with_(embeddings=FAKE, home=seed_settings.home.parent / "fake-home"), embedder=fake)
    assert fake.queries == 0
    app = serve(bot.settings, "127.0.0.1", free_port(), block=False, assistant=bot)
    try:
        assert fake.queries == 1  # the encoder answered once before the server listened
        assert bot._chain is not None  # the chat model was built
    finally:
        app.close()


@pytest.mark.server
def test_serve_says_ready_in_one_line_without_gradio_noise(seed_settings: Settings) -> None:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "assistant", "serve", "--port", str(port)],
        cwd=REPO,
        env=cli_env(seed_settings.home, SEED),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # blocks until ready (or exit)
        assert line.startswith(f"Ready: http://127.0.0.1:{port}/ - extractive"), line
        import httpx

        assert httpx.get(f"http://127.0.0.1:{port}/", timeout=10).status_code == 200
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=30)
        reap(proc)
    assert "share=True" not in out + err and "Traceback" not in err
    assert "Loading the index, the encoder and the model" in err


def test_a_port_in_use_is_one_line_before_any_loading(seed_settings: Settings) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = assistant_cli("serve", "--port", str(port), env=cli_env(seed_settings.home, SEED), timeout=60)
    assert done.returncode == 1 and done.stdout == ""
    assert_one_line(done.stderr, f"Port {port} on 127.0.0.1 is in use", f"--port {port + 1}")
    assert "Loading" not in done.stderr  # found before the index and the encoder were loaded


@pytest.mark.parametrize(
    ("variable", "value", "words"),
    [
        ("ASSISTANT_PORT", "99999", "is not a TCP port"),
        ("ASSISTANT_PORT", "http", "is not a number"),
        ("ASSISTANT_MODEL", "gpt4", "one of: auto, openai:<model>, extractive, stub"),
        ("ASSISTANT_EMBEDDINGS", "minilm", "use local, static or openai:<model>"),
        ("ASSISTANT_TIMEOUT", "0", "must be above 0"),
        ("ASSISTANT_REFUSAL_THRESHOLD", "20", "must be from 0 to 1"),
        ("ASSISTANT_RETRIEVAL", "fuzzy", "use one of hybrid, dense, lexical"),
    ],
)
def test_a_bad_setting_is_one_line_naming_it(
    seed_settings: Settings,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    variable: str,
    value: str,
    words: str,
) -> None:
    for key, val in cli_env(seed_settings.home, SEED, **{variable: value}).items():
        monkeypatch.setenv(key, val)
    assert main(["serve", "--port", str(free_port())]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert_one_line(err, words)
    assert variable in err or variable == "ASSISTANT_RETRIEVAL"


def test_an_unwritable_home_names_the_setting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    for key, val in cli_env(blocker / "home", SEED).items():
        monkeypatch.setenv(key, val)
    assert main(["ask", "What is a GPU?"]) == 1
    assert_one_line(capsys.readouterr().err, "set ASSISTANT_HOME to a folder you can write")


def test_indexing_off_a_terminal_logs_progress_lines(
    cli: Home,  # noqa: F811
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("assistant.index.progress.LINE_GAP", 0.0)
    pack = write_pack(tmp_path / "pack", 300)
    code, out, err = run(capsys, "index", str(cli.seed), str(pack))
    assert code == 0
    lines = [line.partition(",")[0] for line in err.splitlines() if line.startswith("Embedding: ")]
    # the fake encoder takes whole write batches (~256 chunks): a line per batch, the last at 100%
    assert len(lines) == 3 and lines[-1] == "Embedding: 599/599 chunks (100%)", lines
    assert "chunks/s" in out


def test_the_bar_moves_every_few_chunks_with_a_local_encoder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A shipped encoder is called 16 chunks at a time, so the bar moves long before the first write batch."""
    from assistant.index.embeddings import embedder_name

    steps: list[int] = []
    monkeypatch.setattr(Progress, "update", lambda self, n: steps.append(n))
    local = FakeEmbeddings(name=embedder_name("local"))
    Index(Settings(home=tmp_path / "home", knowledge=(SEED,)), embedder=local).sync(progress=False)
    assert sum(steps) == 63 and max(steps) == 16 and len(steps) == 4


def test_progress_lines_come_every_tenth(caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("assistant.index.progress.LINE_GAP", 0.0)
    with caplog.at_level(logging.INFO, logger="assistant"):
        progress = Progress(1000, "chunks", "Embedding", None)  # stderr is not a terminal under pytest
        for _ in range(100):
            progress.update(10)
        progress.close()
    messages = [record.getMessage() for record in caplog.records]
    assert len(messages) == 10 and messages[0].startswith("Embedding: 100/1000 chunks (10%)")
    with caplog.at_level(logging.INFO, logger="assistant"):
        caplog.clear()
        Progress(1000, "chunks", "Embedding", False).update(1000)
        Progress(20, "chunks", "Embedding", None).update(20)  # too small to report
    assert caplog.records == []


def test_nothing_to_do_prints_no_rate() -> None:
    report = SyncReport(entries=2107, chunks=3818, unchanged=2107, files=2, seconds=0.11)
    assert report.summary().endswith("nothing to embed; took 0.1s") and "/s" not in report.summary()
    busy = SyncReport(entries=60, chunks=63, added=60, files=4, embedded_chunks=63, seconds=2.0)
    assert "embedded 63 chunks in 2.0s (31.5 chunks/s)" in busy.summary()


def test_ask_off_a_terminal_writes_only_the_answer(seed_settings: Settings) -> None:
    """The loading status is for terminals; a pipe gets the answer on stdout and nothing on stderr."""
    done = assistant_cli("ask", "What is a GPU?", env=cli_env(seed_settings.home, SEED))
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert done.stdout.startswith("A processor designed for highly parallel workloads")


def test_ask_on_a_terminal_shows_a_loading_status_then_erases_it(seed_settings: Settings) -> None:
    """stderr on a terminal (a pty) gets the status line and its erasure; stdout (a pipe) still only the answer."""
    import pty

    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "assistant", "ask", "What is a GPU?"],
            cwd=REPO,
            env=cli_env(seed_settings.home, SEED),
            stdout=subprocess.PIPE,
            stderr=follower,
            timeout=240,
        )
        os.close(follower)
        seen = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # EIO: the terminal's other end is closed and drained
                break
            if not chunk:
                break
            seen += chunk
    finally:
        os.close(leader)
    assert done.returncode == 0
    assert seen == "\r\x1b[KLoading the index and the encoder…\r\x1b[K".encode(), seen
    assert done.stdout.decode().startswith("A processor designed for highly parallel workloads")


def test_python_m_assistant_is_the_cli() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "assistant", "--help"], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and "index" in done.stdout and "serve" in done.stdout


def test_settings_reject_bad_values_directly() -> None:
    with pytest.raises(SettingsError, match="ASSISTANT_PORT=0"):
        Settings(port=0)
    with pytest.raises(SettingsError, match="Unknown model 'openai:'"):
        Settings(model="openai:")
    assert Settings(model="openai:gpt-4o-mini", embeddings="openai:text-embedding-3-small").port == 7860


def test_the_same_knowledge_named_relative_or_absolute_needs_no_sync(
    seed_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)
    assert Index(seed_settings).stale_reason() is None  # indexed as an absolute path
    assert Index(seed_settings.with_(knowledge=(Path("knowledge/seed"),))).stale_reason() is None
    other = Index(seed_settings.with_(knowledge=(Path("knowledge/mlsys"),))).stale_reason()
    assert other == f"the index holds {SEED.as_posix()}, the settings name knowledge/mlsys"
