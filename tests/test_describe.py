"""`assistant describe`: asked-as descriptions for a user's own knowledge, from the configured chat model.

A real local HTTP server speaks the OpenAI wire format (tests/fake_openai.py); it reads each request's
numbered entries and describes them, so batching, resuming and what is kept can be checked exactly.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeOpenAI, Reply, Status, Step
from test_documents import HANDBOOK, write_wiki

from assistant.cli.commands import main
from assistant.index.chroma_index import Index
from assistant.knowledge.asked_as import FIELD
from assistant.settings import Settings

NUMBERED = re.compile(r"^(\d+)\. (.+)$", re.M)


class Describer(FakeOpenAI):
    """Describes every numbered entry of a request (one line names the title, which must be dropped);
    a scripted step, when there is one, answers instead."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[list[str]] = []

    def step_for(self, body: dict[str, Any]) -> Step:
        if self._queue:
            return self.next_step()
        prompt = body["messages"][-1]["content"]
        titles = NUMBERED.findall(prompt)
        self.batches.append([title for _, title in titles])
        lines = []
        for number, title in titles:
            topic = title.split(" › ")[-1].lower()
            lines += [
                f"{number}| something about the {len(title)} character heading that people ask for",
                f"{number}| where do I read what our team wrote on number {number}",
                f"{number}| {topic} explained",  # names the title: dropped
            ]
        return Reply("\n".join(lines))


@pytest.fixture
def server() -> Any:
    with Describer() as fake:
        yield fake


@pytest.fixture
def wiki_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: Describer) -> Path:
    wiki = write_wiki(tmp_path / "wiki")
    monkeypatch.setenv("ASSISTANT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ASSISTANT_KNOWLEDGE", str(wiki))
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("ASSISTANT_MODEL", "openai:local")
    monkeypatch.setenv("ASSISTANT_ANSWER_DEADLINE", "20")
    return wiki


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def records(path: Path) -> dict[str, dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    return {row["id"]: row for row in rows}


def test_without_a_chat_model_it_refuses_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "ASSISTANT_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ASSISTANT_KNOWLEDGE", str(write_wiki(tmp_path / "wiki")))
    code, out, err = run(capsys, "describe")
    assert code == 1 and out == ""
    assert err.strip().startswith("error: assistant describe needs a chat model - set OPENAI_BASE_URL")
    assert not (tmp_path / "wiki" / "asked-as.jsonl").exists()


def test_it_describes_every_entry_in_batches_and_the_index_searches_them(
    wiki_env: Path, server: Describer, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "describe", "--batch", "5")
    assert code == 0, err
    written = records(wiki_env / "asked-as.jsonl")
    assert len(written) == 12 and [len(b) for b in server.batches] == [5, 5, 2]
    storage = written["doc:handbook.md#storage"]
    assert storage["asked_as"] == [
        "something about the 30 character heading that people ask for",
        "where do I read what our team wrote on number 4",
    ]  # the line that named "Storage" was dropped
    assert re.fullmatch(r"[0-9a-f]{16}", storage["for"])
    assert "described 12 entries (0 already described" in out and "prompt +" in out and "reply tokens" in out
    assert "described 12/12 entries" in err
    # the next sync reads them like the shipped pack's descriptions: search-only chunks of the entry
    assert run(capsys, "index")[0] == 0
    index = Index(Settings(home=Path(wiki_env.parent / "home")))
    entry = index.entries["doc:handbook.md#storage"]
    assert entry.entry.fields[FIELD] == storage["asked_as"]
    assert any(chunk.field == FIELD for chunk in entry.chunks)


def test_a_second_run_describes_only_what_changed(
    wiki_env: Path, server: Describer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "describe")[0] == 0
    first = records(wiki_env / "asked-as.jsonl")
    server.batches.clear()
    code, out, _ = run(capsys, "describe")
    assert code == 0 and server.batches == [] and "described 0 entries (12 already described" in out
    (wiki_env / "handbook.md").write_text(HANDBOOK.replace("wiped after 30 days", "wiped after 14 days"), "utf-8")
    code, out, _ = run(capsys, "describe")
    assert code == 0 and server.batches == [["GPU cluster handbook › Storage"]]
    lines = (wiki_env / "asked-as.jsonl").read_text("utf-8").splitlines()
    assert len(lines) == 13 and json.loads(lines[-1])["for"] != first["doc:handbook.md#storage"]["for"]


def test_an_interrupted_run_resumes_where_it_stopped(
    wiki_env: Path, server: Describer, capsys: pytest.CaptureFixture[str]
) -> None:
    server.script(Reply("1| the first entry asked about in plain words\n2| and the second one asked about too"))
    server.script(*[Status(500)] * 3)  # the server fails from the second batch on (the client retries twice)
    code, _, err = run(capsys, "describe", "--batch", "2")
    assert code == 1 and err.strip().splitlines()[-1].startswith("error: The chat model at")
    assert "Traceback" not in err
    assert len(records(wiki_env / "asked-as.jsonl")) == 2
    code, out, _ = run(capsys, "describe", "--batch", "4")
    assert code == 0 and "described 10 entries (2 already described" in out
    assert len(records(wiki_env / "asked-as.jsonl")) == 12


def test_entries_the_model_gave_nothing_for_are_named(
    wiki_env: Path, server: Describer, capsys: pytest.CaptureFixture[str]
) -> None:
    # a refusal, and a copy of the prompt's own example line (what a small base model does)
    server.script(
        Reply(
            "I am sorry, I cannot help with that.\n1| how do I stop a job from starting on a machine before I repair it"
        )
    )
    code, out, err = run(capsys, "describe", "--batch", "12")
    assert code == 0
    assert "described 0 entries (0 already described, 12 without a usable reply)" in out
    assert "no usable description for doc:handbook.md#top" in err
    assert not (wiki_env / "asked-as.jsonl").read_text("utf-8")
