"""What the UI server keeps per session is bounded, and released once the session is idle.

Gradio keeps, for every session it has seen, a copy of the page's state (about 60 KB), an
asyncio queue for its messages (about 3 KB) and its entry in the queue's bookkeeping, and never
drops a session that went quiet. The tests drive the real server over HTTP: `/chat` through
the call API (every call a session of its own, as from a script without one) and the chat's
own `respond` event through the queue with a session hash of their choosing (a browser tab
with a conversation). They assert on those data structures, never on the process's memory;
scripts/soak_memory.py measures that.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import httpx
import pytest

from assistant import Settings
from tests.processes import free_port

pytestmark = [pytest.mark.server, pytest.mark.filterwarnings("ignore:.*no_silent_downcasting")]


def call_chat(url: str, question: str) -> dict[str, Any]:
    """`/chat` through the call API: a new session each time."""
    posted = httpx.post(f"{url}/gradio_api/call/chat", json={"data": [question, []]}, timeout=60)
    event = posted.json()["event_id"]
    with httpx.stream("GET", f"{url}/gradio_api/call/chat/{event}", timeout=120) as reply:
        lines = [line for line in reply.iter_lines() if line.startswith("data:")]
    return json.loads(lines[-1][len("data:") :])[0]


def ask_in_page(url: str, session_hash: str, question: str) -> None:
    """The chat's own question event for the tab `session_hash`: its conversation gets a turn."""
    config = httpx.get(f"{url}/config", timeout=10).json()
    question_box = next(c["id"] for c in config["components"] if c["props"].get("elem_id") == "question")
    index = next(i for i, d in enumerate(config["dependencies"]) if [question_box, "submit"] in d["targets"])
    body = {"data": [question, None, "Both"], "fn_index": index, "session_hash": session_hash, "event_data": None}
    assert httpx.post(f"{url}/gradio_api/queue/join", json=body, timeout=10).status_code == 200
    with httpx.stream("GET", f"{url}/gradio_api/queue/data?session_hash={session_hash}", timeout=60) as stream:
        for line in stream.iter_lines():
            if "process_completed" in line:
                assert '"success": true' in line or '"success":true' in line, line
                return
    raise AssertionError("the question was never answered")


def turns_of(app: Any, session_hash: str) -> int:
    values = app.state_holder.session_data[session_hash].state_data.values()
    return sum(len(getattr(value, "turns", [])) for value in values)


def held(app: Any) -> dict[str, set[str]]:
    """The sessions each per-session structure holds."""
    queue = app._queue
    return {
        "state": set(app.state_holder.session_data),
        "pending ids": set(queue.pending_event_ids_session),
        "message queues": set(queue.pending_messages_per_session),
    }


@pytest.fixture
def served(seed_settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The UI server, its own sweep kept from running: each test sweeps when it chooses."""
    import ui.memory
    from ui.app import serve

    monkeypatch.setattr(ui.memory, "SWEEP_SECONDS", 3600.0)
    app = serve(seed_settings, "127.0.0.1", free_port(), block=False)
    yield app
    app.close()


def test_sessions_without_a_conversation_are_forgotten_once_quiet_and_conversations_once_idle(served: Any) -> None:
    from ui.memory import IDLE_SECONDS, QUIET_SECONDS, forget_idle

    url = served.local_url.rstrip("/")
    started = datetime.now()
    for _ in range(12):
        assert call_chat(url, "What is a GPU?")["citations"][0]["entry_id"] == "MLD-0472"
    for tab in ("tab-a", "tab-b"):
        ask_in_page(url, tab, "What is a GPU?")
    asked = datetime.now()
    assert len(held(served)["state"]) >= 14 and len(held(served)["pending ids"]) >= 14  # Gradio keeps them all

    assert forget_idle(served, now=started + timedelta(seconds=QUIET_SECONDS / 2)) == 0  # none quiet long enough
    forgotten = forget_idle(served, now=asked + timedelta(seconds=QUIET_SECONDS + 1))
    assert forgotten >= 12
    kept = held(served)
    assert kept["state"] == {"tab-a", "tab-b"}, kept  # the two conversations, and nothing else
    assert kept["pending ids"] <= {"tab-a", "tab-b"} and kept["message queues"] <= {"tab-a", "tab-b"}

    ask_in_page(url, "tab-a", "And what caveat does it have?")
    assert turns_of(served, "tab-a") == 2  # a kept conversation goes on

    forget_idle(served, now=datetime.now() + timedelta(seconds=IDLE_SECONDS + 1))
    assert held(served) == {"state": set(), "pending ids": set(), "message queues": set()}
    ask_in_page(url, "tab-a", "What is a GPU?")
    assert turns_of(served, "tab-a") == 1  # an idle conversation was emptied; the tab starts again
    assert call_chat(url, "What is a GPU?")["citations"][0]["entry_id"] == "MLD-0472"  # still serving


def test_every_per_session_structure_stays_within_the_session_cap(
    seed_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ui.app
    import ui.memory
    from ui.memory import forget_idle

    monkeypatch.setattr(ui.app, "MAX_SESSIONS", 5)
    monkeypatch.setattr(ui.memory, "SWEEP_SECONDS", 3600.0)
    monkeypatch.setattr(ui.memory, "ANALYTICS_EVENTS", 5)
    app = ui.app.serve(seed_settings, "127.0.0.1", free_port(), block=False)
    try:
        url = str(app.local_url).rstrip("/")
        for n in range(9):  # more tabs with a conversation than the cap
            ask_in_page(url, f"tab-{n}", "What is a GPU?")
        forget_idle(app)  # nothing is quiet yet: only what the cap evicted goes
        for name, sessions in held(app).items():
            assert len(sessions) <= 5, (name, sessions)
        assert held(app)["state"] == {f"tab-{n}" for n in range(4, 9)}  # the most recent five
        assert len(app._queue.event_analytics) <= 5  # per-event records Gradio keeps for its monitoring page
    finally:
        app.close()


def test_the_running_server_forgets_quiet_sessions_by_itself(
    seed_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ui.memory
    from ui.app import serve

    monkeypatch.setattr(ui.memory, "QUIET_SECONDS", 0.0)
    monkeypatch.setattr(ui.memory, "SWEEP_SECONDS", 0.2)
    app = serve(seed_settings, "127.0.0.1", free_port(), block=False)
    try:
        url = str(app.local_url).rstrip("/")
        for _ in range(10):
            call_chat(url, "What is a GPU?")
        ask_in_page(url, "tab-a", "What is a GPU?")
        for _ in range(100):  # bounded: the sweep runs every 0.2 s; give it up to 100 looks
            if held(app)["state"] == {"tab-a"}:
                break
            time.sleep(0.2)
        assert held(app)["state"] == {"tab-a"}
        assert held(app)["pending ids"] <= {"tab-a"}
    finally:
        app.close()


def test_login_cookies_are_capped_and_the_newest_stay_valid(
    seed_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ui.memory
    from ui.app import serve
    from ui.memory import forget_idle

    monkeypatch.setattr(ui.memory, "SWEEP_SECONDS", 3600.0)
    monkeypatch.setattr(ui.memory, "LOGINS_KEPT", 5)
    app = serve(seed_settings.with_(ui_auth="alice:correct-horse"), "127.0.0.1", free_port(), block=False)
    clients = [httpx.Client(timeout=10) for _ in range(8)]
    try:
        url = str(app.local_url)
        for client in clients:  # eight logins, as eight scripts' gradio_client.Client(auth=...) make
            assert client.post(url + "login", data={"username": "alice", "password": "correct-horse"}).is_success
        assert len(app.server_app.tokens) == 8  # Gradio keeps every login
        forget_idle(app)
        assert len(app.server_app.tokens) == 5
        assert clients[-1].get(url + "config").status_code == 200  # the newest logins still work
        assert clients[0].get(url + "config").status_code in (401, 403)  # the oldest must log in again
    finally:
        for client in clients:
            client.close()
        app.close()
