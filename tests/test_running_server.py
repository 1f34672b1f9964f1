"""`assistant ask` answered by an `assistant serve` running on the same home, and answered in-process
whenever that server would not answer as the process itself would.

Real processes throughout: `assistant serve` and `assistant ask` as child processes, real MiniLM and
real Chroma, on a private copy of the seed knowledge (so a test can edit it).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from assistant import Assistant, Settings
from assistant.index.chroma_index import Index
from assistant.index.serving import MARKER, process_start
from tests.conftest import REPO, SEED
from tests.processes import free_port, kill_hard, reap
from tests.test_startup import cli_env

pytestmark = pytest.mark.server

QUESTION = "What is a GPU?"
SERVED = "answered by the assistant serve running on this home"


def ask(home: Path, knowledge: Path, *flags: str, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "assistant", "ask", QUESTION, *flags],
        cwd=REPO,
        env=cli_env(home, knowledge, **extra),
        capture_output=True,
        text=True,
        timeout=240,
    )


def without_timings(answer: dict) -> dict:
    return {key: value for key, value in answer.items() if key != "timings"}


def without_total(text: str) -> str:
    """The printed answer without its last line (`-- extractive, 12 ms`: the time differs run to run)."""
    assert re.search(r"\n-- extractive, \d+ ms$", text.strip()), text
    return text.strip().rsplit("\n", 1)[0]


@pytest.fixture
def knowledge(tmp_path: Path) -> Path:
    folder = tmp_path / "seed"
    shutil.copytree(SEED, folder)
    return folder


@pytest.fixture
def home(tmp_path: Path, knowledge: Path) -> Path:
    home = tmp_path / "home"
    Index(Settings(home=home, knowledge=(knowledge,))).sync(progress=False)
    return home


@pytest.fixture
def server(home: Path, knowledge: Path) -> Iterator[subprocess.Popen[str]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "assistant", "serve", "--port", str(free_port())],
        cwd=REPO,
        env=cli_env(home, knowledge, GRADIO_ANALYTICS_ENABLED="False", PYTHONUNBUFFERED="1"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        ready = proc.stdout.readline()  # blocks until ready (or exit)
        assert ready.startswith("Ready:"), ready + (proc.stderr.read() if proc.stderr else "")
        yield proc
    finally:
        reap(proc)
        proc.communicate(timeout=30)  # closes its pipes


def in_process(home: Path, knowledge: Path, **settings_changed: str) -> dict:
    settings = Settings(home=home, knowledge=(knowledge,), model="extractive", **settings_changed)  # type: ignore[arg-type]
    return Assistant(settings).ask(QUESTION).to_dict()


def test_the_running_server_answers_as_the_process_would(
    home: Path, knowledge: Path, server: subprocess.Popen[str]
) -> None:
    served = ask(home, knowledge, "--json")
    assert served.returncode == 0, served.stderr
    assert served.stderr.strip().splitlines() == [f"{SERVED} (http://127.0.0.1:{port_of(home)}/)"]
    answer = json.loads(served.stdout)  # stdout is the answer only
    assert answer["citations"][0]["entry_id"] == "MLD-0472"
    assert without_timings(answer) == without_timings(in_process(home, knowledge))

    text = ask(home, knowledge)
    assert text.returncode == 0 and SERVED in text.stderr, text.stderr
    marker = home / MARKER  # hidden, the same home is answered in-process
    hidden = marker.rename(home / "hidden.json")
    try:
        alone = ask(home, knowledge)
    finally:
        hidden.rename(marker)
    assert alone.returncode == 0 and SERVED not in alone.stderr, alone.stderr
    assert without_total(text.stdout) == without_total(alone.stdout)


def test_a_server_asked_with_another_token_or_other_settings_is_not_used(
    home: Path, knowledge: Path, server: subprocess.Popen[str]
) -> None:
    marker = home / MARKER
    record = json.loads(marker.read_text("utf-8"))
    marker.write_text(json.dumps({**record, "token": "not-the-token"}), "utf-8")  # the server refuses it
    try:
        wrong = ask(home, knowledge, "--json")
    finally:
        marker.write_text(json.dumps(record), "utf-8")
    assert wrong.returncode == 0 and SERVED not in wrong.stderr, wrong.stderr
    assert without_timings(json.loads(wrong.stdout)) == without_timings(in_process(home, knowledge))

    lexical = ask(home, knowledge, "--json", ASSISTANT_RETRIEVAL="lexical")  # the server searches hybrid
    assert lexical.returncode == 0 and SERVED not in lexical.stderr, lexical.stderr
    answer = without_timings(json.loads(lexical.stdout))
    assert answer == without_timings(in_process(home, knowledge, retrieval_mode="lexical"))
    assert answer != without_timings(in_process(home, knowledge))


def test_knowledge_edited_after_the_server_loaded_is_answered_in_process(
    home: Path, knowledge: Path, server: subprocess.Popen[str]
) -> None:
    page = knowledge / "000_d927b209ddd51874.txt"
    page.write_text(page.read_text(encoding="utf-8").replace("tensor computation", "tensor math"), encoding="utf-8")
    done = ask(home, knowledge, "--json")
    assert done.returncode == 0 and SERVED not in done.stderr, done.stderr
    assert "tensor math" in json.loads(done.stdout)["text"]  # synced and answered from the edit


def test_a_stale_marker_is_ignored(home: Path, knowledge: Path, server: subprocess.Popen[str]) -> None:
    kill_hard(server)  # no chance to remove its marker
    assert (home / MARKER).exists()
    done = ask(home, knowledge, "--json")
    assert done.returncode == 0 and SERVED not in done.stderr, done.stderr
    assert without_timings(json.loads(done.stdout)) == without_timings(in_process(home, knowledge))


def test_a_marker_naming_a_live_process_that_serves_nothing_is_ignored(home: Path, knowledge: Path) -> None:
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        record = {
            "pid": sleeper.pid,
            "started": process_start(sleeper.pid),
            "knowledge": [str(knowledge.resolve())],
            "url": f"http://127.0.0.1:{free_port()}/",  # nothing listens there
            "token": "a-token",
        }
        (home / MARKER).write_text(json.dumps(record), "utf-8")
        done = ask(home, knowledge, "--json")
    finally:
        reap(sleeper)
    assert done.returncode == 0 and SERVED not in done.stderr, done.stderr
    assert without_timings(json.loads(done.stdout)) == without_timings(in_process(home, knowledge))


def port_of(home: Path) -> int:
    url = json.loads((home / MARKER).read_text("utf-8"))["url"]
    return int(url.rsplit(":", 1)[1].strip("/"))
