"""Concurrent sessions: scripts/soak.py at a small scale over the real server, and session isolation.

`/chat` is stateless (each call carries its own history), and the UI's own events are private
(not callable through gradio_client), so isolation is checked twice: over the real server, each
session's follow-ups must cite that session's entry; in-process, concurrent `ChatHandlers.respond`
calls on separate `new_session()` dicts must keep their turns apart.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from types import ModuleType

import pytest

from assistant import Assistant, Settings
from tests.script_modules import load_script

pytestmark = [
    pytest.mark.filterwarnings("ignore:.*no_silent_downcasting"),  # gradio's queue stats vs pandas 3
    pytest.mark.filterwarnings("ignore:The copy keyword is deprecated"),
]


def load_soak() -> ModuleType:
    return load_script("soak")


@pytest.mark.server
def test_soak_five_sessions_three_questions_all_answered_none_mixed_up(seed_settings: Settings, tmp_path: Path):
    soak = load_soak()
    out = tmp_path / "soak.json"
    lines: list[str] = []
    summary = soak.run(seed_settings, sessions=5, questions=3, seconds=90, out=out, echo=lines.append)
    assert summary["sessions"] == 5 and summary["requests"] == 15
    assert summary["answered"] == 15, summary["errors"]
    assert summary["mixed_up"] == 0 and summary["missed_own_entry"] == 0
    assert summary["differs_from_serial"] == 0  # the extractive model is deterministic: same words as serially
    assert summary["ok"] is True
    scripts = summary["scripts"]
    assert len({s["entry_id"] for s in scripts}) == 5  # a different entry per session
    assert scripts[0]["entry_id"] == "MLD-0472" and scripts[0]["questions"][1] == "And what caveat does it have?"
    assert summary["p50_ms"] > 0 and summary["p95_ms"] >= summary["p50_ms"] and summary["throughput_rps"] > 0
    assert json.loads(out.read_text()) == summary
    assert any("p50" in line and "p95" in line for line in lines)


def test_soak_summary_counts_mix_ups_and_misses() -> None:
    soak = load_soak()
    scripts = [soak.Script("A-1", ["q1", "q2"], ["a1", "a2"]), soak.Script("B-2", ["q1", "q2"], ["b1", "b2"])]
    turns = [
        soak.Turn(0, "q1", 0.1, ["A-1"], None, True, True),
        soak.Turn(0, "q2", 0.3, ["B-2"], None, False, False, ["B-2"]),  # session 0 answered from session 1's entry
        soak.Turn(1, "q1", 0.2, ["B-2"], None, True, True),
        soak.Turn(1, "q2", 0.0, error="not asked: --seconds ran out"),
    ]
    summary = soak.summarise(turns, scripts, wall=1.0)
    assert (summary["answered"], summary["unanswered"], summary["mixed_up"], summary["missed_own_entry"]) == (
        3,
        1,
        1,
        1,
    )
    assert summary["differs_from_serial"] == 1 and summary["p50_ms"] == 200.0 and summary["throughput_rps"] == 3.0
    assert not soak.passed(summary, deterministic=True)


def test_new_sessions_never_share_state() -> None:
    from ui.handlers import new_session
    from ui.session import Session, Turn

    a, b = new_session(), new_session()
    a.turns.append(Turn("What is a GPU?"))
    a.selected = 0
    assert b == Session() and a.turns is not b.turns


def test_concurrent_ui_sessions_keep_their_own_history(seed_assistant: Assistant) -> None:
    """Four sessions answer at once through one ChatHandlers; each follow-up resolves "it" from its own turns."""
    from ui.handlers import ChatHandlers, new_session

    h = ChatHandlers(seed_assistant)
    soak = load_soak()
    scripts, _ = soak.calibrate(seed_assistant, sessions=4, questions=2, budget=60)
    assert len(scripts) == 4
    sessions = [new_session() for _ in scripts]
    barrier = threading.Barrier(len(scripts))
    failures: list[BaseException] = []

    def talk(script, session) -> None:
        try:
            barrier.wait(timeout=30)
            for question in script.questions:
                list(h.respond(question, session, "Both"))
        except BaseException as error:  # reported below, with the session
            failures.append(error)

    threads = [threading.Thread(target=talk, args=pair) for pair in zip(scripts, sessions, strict=True)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not failures and not any(t.is_alive() for t in threads)
    for script, session in zip(scripts, sessions, strict=True):
        assert [t.question for t in session.turns] == script.questions
        for turn, expected in zip(session.turns, script.expected, strict=True):
            assert turn.answer is not None and turn.answer.text == expected
            assert script.entry_id in [c.entry_id for c in turn.answer.citations]
