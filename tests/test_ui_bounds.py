"""Bounded memory and malformed events on the real Gradio server.

The server runs in-process (`ui.app.serve(block=False)`) over a copy of the seed index; requests
go over HTTP: Gradio's call API for `/chat` (each call a session of its own, as from a client
without one) and its queue for the UI's own events, with `null` where Gradio expects event data.
"""

from __future__ import annotations

import json

import httpx
import pytest

from assistant import Settings
from tests.processes import free_port

pytestmark = [pytest.mark.server, pytest.mark.filterwarnings("ignore:.*no_silent_downcasting")]


def call_chat(url: str, question: str) -> dict:
    posted = httpx.post(f"{url}/gradio_api/call/chat", json={"data": [question, []]}, timeout=60)
    event = posted.json()["event_id"]
    with httpx.stream("GET", f"{url}/gradio_api/call/chat/{event}", timeout=120) as reply:
        lines = [line for line in reply.iter_lines() if line.startswith("data:")]
    return json.loads(lines[-1][len("data:") :])[0]


def test_sessions_are_capped_and_a_huge_question_is_not_echoed(
    seed_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ui.app

    monkeypatch.setattr(ui.app, "MAX_SESSIONS", 5)
    app = ui.app.serve(seed_settings, "127.0.0.1", free_port(), block=False)
    try:
        url = app.local_url.rstrip("/")
        for _ in range(12):
            assert call_chat(url, "What is a GPU?")["citations"][0]["entry_id"] == "MLD-0472"
        assert len(app.state_holder.session_data) <= 5  # each call was a session; the oldest were forgotten
        huge = "What is a GPU? " + "very " * 400_000  # 2 MB
        reply = call_chat(url, huge)
        assert len(json.dumps(reply)) < 40_000
        assert len(reply["question"]) <= seed_settings.question_tokens * 16
        assert any("longer than" in note for note in reply["notes"])
    finally:
        app.close()


def test_null_event_data_is_answered_without_a_traceback(
    seed_settings: Settings, capfd: pytest.CaptureFixture[str]
) -> None:
    from ui.app import serve

    app = serve(seed_settings, "127.0.0.1", free_port(), block=False)
    try:
        url = app.local_url.rstrip("/")
        dependencies = httpx.get(f"{url}/config", timeout=10).json()["dependencies"]
        answered = 0
        for index, dependency in enumerate(dependencies):
            inputs = len(dependency.get("inputs", []))
            for event_data in (None, {"index": None}, {"index": "x", "liked": {"a": 1}}):
                body = {
                    "data": [None] * inputs,
                    "fn_index": index,
                    "session_hash": f"s{index}",
                    "event_data": event_data,
                }
                joined = httpx.post(f"{url}/gradio_api/queue/join", json=body, timeout=10)
                if joined.status_code != 200:
                    continue
                with httpx.stream("GET", f"{url}/gradio_api/queue/data?session_hash=s{index}", timeout=60) as stream:
                    for line in stream.iter_lines():
                        if "process_completed" in line:
                            answered += 1
                            break
        assert answered >= len(dependencies)  # every event was answered, not left hanging
        assert call_chat(url, "What is a GPU?")["citations"][0]["entry_id"] == "MLD-0472"  # still serving
    finally:
        app.close()
    out, err = capfd.readouterr()
    assert "Traceback" not in out + err
