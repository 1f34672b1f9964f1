"""Two stateless replicas on one Chroma server: real `chroma run`, real `assistant serve --no-sync`
processes with empty homes, real Gradio servers driven by gradio_client, `assistant index` as the writer.

Both replicas answer; an edit synced by `assistant index` reaches both without a restart (the time it
took is printed); a writer killed (SIGKILL) after writing its generation but before committing it
leaves both answering from the previous generation, and the next sync takes over the expired lease
and commits. The writer is stopped at a known point by ASSISTANT_COMMIT_PAUSE, which makes it wait
before the commit after saying so on stderr.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest

from tests.conftest import REPO, SEED
from tests.processes import chroma_run, free_port, kill_hard, reap

pytestmark = [pytest.mark.server, pytest.mark.filterwarnings("ignore:.*no_silent_downcasting")]

VISIBLE_WITHIN = 60.0  # seconds a commit may take to reach every replica (they poll every second here)
READY_WITHIN = 120.0


def env_for(home: Path, chroma_url: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ASSISTANT_"))}
    return {
        **env,
        "PYTHONPATH": str(REPO),
        "ASSISTANT_HOME": str(home),
        "ASSISTANT_CHROMA_URL": chroma_url,
        "ASSISTANT_EMBEDDINGS": "static",
        "ASSISTANT_MODEL": "extractive",
        "ASSISTANT_REFRESH_SECONDS": "1",
        "ASSISTANT_LEASE_SECONDS": "6",
        **extra,
    }


def assistant(*args: str) -> list[str]:
    return [sys.executable, "-m", "assistant", *args]


def index(knowledge: Path, home: Path, url: str, **extra: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        assistant("index", str(knowledge)),
        cwd=REPO,
        env=env_for(home, url, **extra),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done


@contextmanager
def replica(home: Path, url: str, log: Path) -> Iterator[str]:
    """`assistant serve --no-sync` on a free port with `home` (empty); yields its URL once ready."""
    port = free_port()
    with log.open("w") as out:
        proc = subprocess.Popen(
            assistant("serve", "--no-sync", "--port", str(port)),
            cwd=REPO,
            env=env_for(home, url),
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + READY_WITHIN
        while "Ready: " not in log.read_text(errors="replace"):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the replica did not start:\n{log.read_text(errors='replace')[-3000:]}")
            time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/"
    finally:
        reap(proc)


def ask(client: object, question: str) -> dict:
    result = client.predict(question, [], api_name="/chat")  # type: ignore[attr-defined]
    assert "error" not in result, result
    return result


def cited(result: dict) -> set[str]:
    return {c["entry_id"] for c in result["citations"]}


def wait_until_cited(clients: list[object], question: str, entry_id: str) -> float:
    """Seconds until every replica's answer to `question` cites `entry_id` (fails after VISIBLE_WITHIN)."""
    started = time.monotonic()
    waiting = list(clients)
    while waiting:
        waiting = [c for c in waiting if entry_id not in cited(ask(c, question))]
        if waiting and time.monotonic() - started > VISIBLE_WITHIN:
            pytest.fail(f"{entry_id} did not reach {len(waiting)} replica(s) within {VISIBLE_WITHIN:.0f} s")
        if waiting:
            time.sleep(0.5)
    return time.monotonic() - started


def commits_on(url: str) -> int:
    """How many commits' entry records the server holds."""
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    host, port = url.removeprefix("http://").split(":")
    client = chromadb.HttpClient(host=host, port=int(port), settings=ChromaSettings(anonymized_telemetry=False))
    records = client.get_collection("assistant-entries").get(include=["metadatas"])
    return len({m["commit"] for m in records["metadatas"]})


def page(entry_id: str, title: str, text: str) -> str:
    return f"Systems · {entry_id}\n{title}\n{text}\n"


def test_two_replicas_follow_the_writer_and_survive_a_killed_sync(tmp_path: Path) -> None:
    from gradio_client import Client

    knowledge = tmp_path / "knowledge"
    shutil.copytree(SEED, knowledge)
    writer_home = tmp_path / "writer"
    with ExitStack() as stack:
        data = tmp_path / "chroma"
        url, _server = stack.enter_context(chroma_run(data, tmp_path / "chroma.log"))
        first = index(knowledge, writer_home, url)
        assert "60 added" in first.stdout

        homes = [tmp_path / "replica-a", tmp_path / "replica-b"]
        logs = [tmp_path / "replica-a.log", tmp_path / "replica-b.log"]
        urls = [stack.enter_context(replica(home, url, log)) for home, log in zip(homes, logs, strict=True)]
        clients = [Client(u, verbose=False, download_files=False) for u in urls]
        for client in clients:  # both answer, from the server's index, with homes that held nothing
            assert "MLD-0472" in cited(ask(client, "What is a GPU?"))
        for home in (
            homes
        ):  # what a replica keeps is a cache: the lexical index, records and tables of the committed generation
            cached = sorted(p.relative_to(home / "index").as_posix() for p in home.glob("index/*/*"))
            assert [name.split("-")[0] for name in cached] == ["cache/lexical", "cache/records", "cache/tables"]

        # an edit synced by the writer reaches both replicas without a restart
        (knowledge / "900_zorbulator.txt").write_text(
            page("EXT-0900", "Zorbulator", "A zorbulator shards optimizer state across racks of accelerators."),
            encoding="utf-8",
        )
        index(knowledge, writer_home, url)
        seconds = wait_until_cited(clients, "What is a zorbulator?", "EXT-0900")
        print(f"the edit reached both replicas {seconds:.1f} s after its sync finished")
        for log in logs:
            assert "Switched from generation 1 to 2" in log.read_text(errors="replace")

        # a writer killed after writing generation 3, before committing it
        (knowledge / "901_quillotron.txt").write_text(
            page("EXT-0901", "Quillotron", "A quillotron batches quill requests for a parameter server."),
            encoding="utf-8",
        )
        killed_log = tmp_path / "killed.log"
        with killed_log.open("w") as out:
            proc = subprocess.Popen(
                assistant("index", str(knowledge)),
                cwd=REPO,
                env=env_for(writer_home, url, ASSISTANT_COMMIT_PAUSE="120"),
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        try:
            deadline = time.monotonic() + 120
            while "Generation 3 written" not in killed_log.read_text(errors="replace"):
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"the sync did not reach its commit:\n{killed_log.read_text(errors='replace')}")
                time.sleep(0.1)
            kill_hard(proc)
        finally:
            reap(proc)
        time.sleep(3)  # three polls: a replica that would switch has switched
        for client in clients:
            assert "EXT-0901" not in cited(ask(client, "What is a quillotron?"))
            assert "EXT-0900" in cited(ask(client, "What is a zorbulator?"))
            assert "MLD-0472" in cited(ask(client, "What is a GPU?"))
        for log in logs:
            assert "to 3" not in log.read_text(errors="replace")

        # the next sync waits out the killed writer's lease, removes what it left and commits
        started = time.monotonic()
        again = index(knowledge, writer_home, url)
        print(f"the next sync took {time.monotonic() - started:.1f} s (the killed lease lasts 6 s)")
        assert "1 added" in again.stdout and "taking over the sync lease" in again.stderr.lower()
        assert commits_on(url) == 1  # the killed sync's records were removed; one generation is kept
        seconds = wait_until_cited(clients, "What is a quillotron?", "EXT-0901")
        print(f"generation 3 reached both replicas {seconds:.1f} s after its sync finished")
        assert "MLD-0472" in cited(ask(clients[0], "What is a GPU?"))
