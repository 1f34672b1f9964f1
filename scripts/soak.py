#!/usr/bin/env python3
"""Soak test: many concurrent chat sessions against the real chat UI server on 127.0.0.1.

Starts `ui.app.serve(settings, block=False)` on a free loopback port, over the index in
ASSISTANT_HOME (or a temporary copy of the seed index: `.assistant` when it holds one, else a
fresh index of knowledge/seed), then runs N sessions at once, each a thread with its own
`gradio_client.Client`. Session i asks about its own entry (the GPU concept page for the first,
a different paper abstract for each of the others), then follow-ups that only make sense with
that session's history ("And what caveat does it have?", "What problem does it address?").
`/chat` is stateless - every call carries the session's own history - so a follow-up citing
another session's entry is a mix-up.

Before the load, each session's script is run once serially in-process (calibration); only
scripts whose every answer cites their entry are used, so any miss under load is caused by
the load, not by retrieval quality. Then the load phase, bounded by --seconds: p50/p95
latency and throughput are printed and written as JSON to --out (default results/soak.json).

With --slow N, N more sessions ask a model that trickles one token a second (tests/fake_openai.py,
a real local OpenAI-wire server) through the same server and the same answering slots, with
ASSISTANT_ANSWER_DEADLINE set to --deadline: each of their answers is cut at the deadline, and
no other session may wait beyond it (`waited_beyond_deadline` must be 0).

Usage:
    .venv/bin/python scripts/soak.py [--sessions 20] [--questions 4] [--seconds 120] [--out FILE]
                                     [--slow 4 --deadline 10]

Exit status 0 when every question was answered and none was mixed up (and, with --slow, none
waited beyond the deadline), 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as `python scripts/soak.py` from a checkout
    sys.path.insert(0, str(ROOT))

from assistant.offline import offline_environment  # noqa: E402 - after the sys.path line above

offline_environment()

CONCEPT_FOLLOW_UPS = ("And what caveat does it have?", "What is it also called?", "What does it say about training?")
ABSTRACT_FOLLOW_UPS = (
    "What problem does it address?",
    "And what does it propose?",
    "What does it say about performance?",
    "What results does it report?",
)


@dataclass
class Script:
    """One session's questions; every answer should cite `entry_id`."""

    entry_id: str
    questions: list[str]
    expected: list[str] = field(default_factory=list)  # the answers asked serially (calibration)


@dataclass
class Turn:
    session: int
    question: str
    seconds: float
    cited: list[str] = field(default_factory=list)
    error: str | None = None
    own: bool = False  # cites the session's own entry
    same: bool = False  # the same text as the serial (calibration) answer
    foreign: list[str] = field(default_factory=list)  # cites another session's entry instead
    slow: bool = False  # asked the trickling model (--slow): cut at the deadline, not checked for answers


OWN_ANSWER_SECONDS = 1.5  # a question's own answering, under load, on top of its wait for a slot
SLOW_MARK = "(slowly)"  # a question with this in it is answered by the trickling model
SLOW_REPLY = " ".join(["A GPU is a processor for highly parallel workloads [MLD-0472]."] * 40)


def slow_router(fast: Any, slow: Any, label: str) -> Any:
    """A `ChatModel` answering questions with SLOW_MARK by the chat model `slow`, the rest by `fast`.

    The choice is made on the question's reading, not on a rendered prompt: the offline model answers
    from the reading and the packed entries, and is never sent a prompt. It is named as `fast` is."""
    from dataclasses import dataclass

    from assistant.answer.models import ChatModel

    @dataclass(frozen=True)
    class SlowOrFast(ChatModel):
        def reply(self, reading: Any, packed: Any, messages: Any, *, started: float | None = None) -> Any:
            chosen = slow if SLOW_MARK in reading.text else fast
            return chosen.reply(reading, packed, messages, started=started)

    return SlowOrFast(fast.model, fast.name, label, fast.rewrites_followups)


def percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1))))
    return ordered[rank]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# --- the plan ----------------------------------------------------------------------------------


def first_question(entry: Any) -> str:
    if entry.kind == "concept":
        return f"What is a {entry.title}?" if len(entry.title.split()) == 1 else f"What is {entry.title}?"
    title = re.sub(r"…$", "", entry.title).strip()
    return f"Tell me about the paper: {title}"


def candidate_scripts(assistant: Any, questions: int) -> list[Script]:
    """Concept pages first (the GPU page in the seed), then abstracts in a stable order."""
    entries = sorted(assistant.entries.values(), key=lambda e: (e.kind != "concept", e.id))
    scripts = []
    for entry in entries:
        follow = CONCEPT_FOLLOW_UPS if entry.kind == "concept" else ABSTRACT_FOLLOW_UPS
        asked = [first_question(entry)] + [follow[i % len(follow)] for i in range(questions - 1)]
        scripts.append(Script(entry.id, asked))
    return scripts


def calibrate(assistant: Any, sessions: int, questions: int, budget: float) -> tuple[list[Script], dict[str, Any]]:
    """Keep the scripts whose answers, asked serially, all cite their entry."""
    started = time.monotonic()
    kept: list[Script] = []
    tried = asked = 0
    for script in candidate_scripts(assistant, questions):
        if len(kept) == sessions or time.monotonic() - started > budget:
            break
        tried += 1
        history: list[tuple[str, str]] = []
        for question in script.questions:
            answer = assistant.ask(question, history)
            asked += 1
            if answer.refused or script.entry_id not in {c.entry_id for c in answer.citations}:
                break
            history += [("user", question), ("assistant", answer.text)]
            script.expected.append(answer.text)
        else:
            kept.append(script)
    seconds = time.monotonic() - started
    serial_ms = round(1000 * seconds / asked, 1) if asked else 0.0
    return kept, {"tried": tried, "kept": len(kept), "seconds": round(seconds, 2), "serial_ms_per_question": serial_ms}


# --- the load ------------------------------------------------------------------------------------


def run_session(
    number: int,
    url: str,
    script: Script,
    owners: dict[str, int],
    deadline: float,
    record: Callable[[Turn], None],
    auth: tuple[str, str] | None = None,
    slow: bool = False,
) -> None:
    from gradio_client import Client

    try:
        client = Client(url, verbose=False, download_files=False, auth=auth)
    except Exception as error:  # the server refused or is gone: every question is unanswered
        for question in script.questions:
            record(Turn(number, question, 0.0, error=f"connect: {type(error).__name__}: {error}", slow=slow))
        return
    history: list[list[str]] = []
    for question in script.questions:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            record(Turn(number, question, 0.0, error="not asked: --seconds ran out", slow=slow))
            continue
        started = time.perf_counter()
        try:
            result = client.submit(question, history, api_name="/chat").result(timeout=remaining)
        except Exception as error:  # a timeout or a broken connection
            reason = str(error) or "no answer before --seconds ran out"
            turn = Turn(number, question, time.perf_counter() - started, error=f"{type(error).__name__}: {reason}")
            turn.slow = slow
            record(turn)
            continue
        seconds = time.perf_counter() - started
        if not isinstance(result, dict) or "error" in result:
            message = result.get("error") if isinstance(result, dict) else repr(result)
            record(Turn(number, question, seconds, error=str(message), slow=slow))
            continue
        cited = [c["entry_id"] for c in result.get("citations", [])]
        foreign = [c for c in cited if owners.get(c, number) != number]
        same = len(history) // 2 < len(script.expected) and result.get("text") == script.expected[len(history) // 2]
        record(Turn(number, question, seconds, cited, None, script.entry_id in cited, same, foreign, slow))
        history += [["user", question], ["assistant", result.get("text", "")]]
    client.close()


def load(
    url: str,
    scripts: list[Script],
    seconds: float,
    auth: tuple[str, str] | None = None,
    slow_scripts: list[Script] | None = None,
) -> tuple[list[Turn], float]:
    owners = {script.entry_id: number for number, script in enumerate(scripts)}
    slow_scripts = slow_scripts or []
    turns: list[Turn] = []
    lock = threading.Lock()

    def record(turn: Turn) -> None:
        with lock:
            turns.append(turn)

    started = time.monotonic()
    deadline = started + seconds
    # the slow sessions start first, so they hold the answering slots when the others arrive
    threads = [
        threading.Thread(
            target=run_session,
            args=(len(scripts) + n, url, s, {}, deadline, record, auth, True),
            name=f"slow-session-{n}",
            daemon=True,
        )
        for n, s in enumerate(slow_scripts)
    ] + [
        threading.Thread(
            target=run_session, args=(n, url, s, owners, deadline, record, auth), name=f"session-{n}", daemon=True
        )
        for n, s in enumerate(scripts)
    ]
    for number, thread in enumerate(threads, start=1):
        thread.start()
        if number == len(slow_scripts):
            time.sleep(1.0)  # let the slow questions take the answering slots first
    for thread in threads:
        thread.join(timeout=max(0.0, deadline - time.monotonic()) + 15)
    wall = time.monotonic() - started
    with lock:
        return list(turns), wall


def summarise(turns: list[Turn], scripts: list[Script], wall: float, deadline: float | None = None) -> dict[str, Any]:
    slow = [t for t in turns if t.slow]
    turns = [t for t in turns if not t.slow]
    expected = sum(len(s.questions) for s in scripts)
    answered = [t for t in turns if t.error is None]
    latencies = [t.seconds * 1000 for t in answered]
    slow_ms = [t.seconds * 1000 for t in slow]
    extra: dict[str, Any] = {}
    if slow:
        extra = {
            "slow_requests": len(slow),
            "slow_cut_at_deadline": sum(1 for t in slow if t.error and "ASSISTANT_ANSWER_DEADLINE" in t.error),
            "slow_p50_ms": round(percentile(slow_ms, 50), 1),
            "slow_max_ms": round(max(slow_ms, default=0.0), 1),
            "slow_outcomes": sorted({(t.error or f"answered, citing {t.cited}")[:140] for t in slow}),
            "deadline_seconds": deadline,
            # another session's question that waited longer than the deadline (its own answering,
            # OWN_ANSWER_SECONDS, aside): the slow model starved it
            "waited_beyond_deadline": sum(1 for t in turns if deadline and t.seconds > deadline + OWN_ANSWER_SECONDS),
        }
    return {
        "sessions": len(scripts),
        "questions_per_session": max((len(s.questions) for s in scripts), default=0),
        "requests": expected,
        "answered": len(answered),
        "unanswered": expected - len(answered),
        "errors": [f"session {t.session}: {t.question!r}: {t.error}" for t in turns if t.error][:20],
        "missed_own_entry": sum(1 for t in answered if not t.own),
        "mixed_up": sum(1 for t in answered if t.foreign and not t.own),
        "cited_foreign": sum(1 for t in answered if t.foreign),
        "differs_from_serial": sum(1 for t in answered if not t.same),
        "p50_ms": round(percentile(latencies, 50), 1),
        "p95_ms": round(percentile(latencies, 95), 1),
        "max_ms": round(max(latencies, default=0.0), 1),
        "mean_ms": round(statistics.fmean(latencies), 1) if latencies else 0.0,
        "wall_seconds": round(wall, 2),
        "throughput_rps": round(len(answered) / wall, 2) if wall else 0.0,
        **extra,
    }


def passed(summary: dict[str, Any], deterministic: bool) -> bool:
    """All answered, each citing its own session's entry; with a deterministic model, word for word."""
    clean = summary["unanswered"] == 0 and summary["missed_own_entry"] == 0 and summary["mixed_up"] == 0
    clean = clean and summary["sessions"] > 0 and summary.get("waited_beyond_deadline", 0) == 0
    return clean and (summary["differs_from_serial"] == 0 or not deterministic)


# --- setup -------------------------------------------------------------------------------------


def default_settings(workdir: Path) -> tuple[Any, str]:
    """ASSISTANT_HOME when set; else a temporary copy of the seed index (built when there is none)."""
    from assistant.settings import Settings

    settings = Settings.from_env()
    if os.environ.get("ASSISTANT_HOME"):
        return settings, f"ASSISTANT_HOME={settings.home}"
    home = workdir / "home"
    seed_manifest = ROOT / ".assistant" / "index" / "manifest.json"
    if seed_manifest.exists():
        shutil.copytree(ROOT / ".assistant", home)
        origin = "a copy of .assistant"
    else:
        origin = "a fresh index of knowledge/seed"
    knowledge = settings.knowledge if os.environ.get("ASSISTANT_KNOWLEDGE") else (ROOT / "knowledge" / "seed",)
    return settings.with_(home=home, knowledge=knowledge), origin


def run(
    settings: Any,
    sessions: int = 20,
    questions: int = 4,
    seconds: float = 120.0,
    out: Path | None = None,
    echo: Callable[[str], None] = print,
    slow: int = 0,
    deadline: float = 10.0,
) -> dict[str, Any]:
    """Serve, calibrate, load; returns the summary (and writes it to `out`).

    With `slow` > 0, that many more sessions ask a model trickling a token a second, and every
    answer has `deadline` seconds (ASSISTANT_ANSWER_DEADLINE)."""
    from assistant.assistant import Assistant
    from ui.app import parse_auth, serve

    t0 = time.monotonic()
    fake = None
    if slow > 0:
        from assistant.answer.models import make_chat_model
        from tests.fake_openai import FakeOpenAI, Trickle

        fake = FakeOpenAI(default=Trickle(SLOW_REPLY, every=1.0)).start()
        settings = settings.with_(answer_deadline=deadline)
        fast = make_chat_model(settings)
        trickling = make_chat_model(settings.with_(model="openai:trickle", openai_base_url=fake.base_url))
        label = f"{fast.label} + a trickling model for {SLOW_MARK} questions"
        assistant = Assistant(settings, model=slow_router(fast, trickling, label))
    else:
        assistant = Assistant(settings)  # builds the index when it is empty
    scripts, calibration = calibrate(assistant, sessions, questions, budget=max(30.0, seconds / 2))
    # standalone questions: a cut answer adds no history, so a follow-up would be refused without a model call
    slow_scripts = [Script(s.entry_id, [f"{s.questions[0]} {SLOW_MARK}"] * questions) for s in (scripts * slow)[:slow]]
    setup = time.monotonic() - t0
    echo(
        f"index: {len(assistant.entries)} entries; model: {assistant.model_label}; "
        f"calibrated {calibration['kept']}/{calibration['tried']} session scripts in {calibration['seconds']}s "
        f"({calibration['serial_ms_per_question']:.0f} ms per question, one at a time)"
    )
    if len(scripts) < sessions:
        echo(f"warning: only {len(scripts)} entries answer their own follow-ups; running {len(scripts)} sessions")
    app = serve(settings, "127.0.0.1", free_port(), block=False, assistant=assistant)
    try:
        echo(f"server: {app.local_url}; {len(scripts)} sessions x {questions} questions, at most {seconds:g}s")
        if slow_scripts:
            echo(
                f"  plus {len(slow_scripts)} sessions asking a model trickling a token a second; deadline {deadline:g}s"
            )
        turns, wall = load(app.local_url, scripts, seconds, parse_auth(settings.ui_auth), slow_scripts)
    finally:
        app.close()
        if fake is not None:
            fake.close()
    summary = summarise(turns, scripts, wall, deadline if slow_scripts else None)
    summary.update(
        {
            "ok": passed(summary, deterministic=assistant.model_label.startswith(("extractive", "stub"))),
            "model": assistant.model_label,
            "entries": len(assistant.entries),
            "setup_seconds": round(setup, 2),
            "calibration": calibration,
            "scripts": [asdict(s) for s in scripts],
            "seconds_limit": seconds,
        }
    )
    echo(
        f"answered {summary['answered']}/{summary['requests']} in {summary['wall_seconds']}s - "
        f"p50 {summary['p50_ms']:.0f} ms, p95 {summary['p95_ms']:.0f} ms, max {summary['max_ms']:.0f} ms, "
        f"throughput {summary['throughput_rps']:.2f} answers/s; "
        f"mixed up {summary['mixed_up']}, missed own entry {summary['missed_own_entry']}, "
        f"differs from serial {summary['differs_from_serial']} -> {'OK' if summary['ok'] else 'FAILED'}"
    )
    if slow_scripts:
        echo(
            f"slow sessions: {summary['slow_cut_at_deadline']}/{summary['slow_requests']} answers cut at the"
            f" {deadline:g}s deadline (p50 {summary['slow_p50_ms']:.0f} ms, max {summary['slow_max_ms']:.0f} ms);"
            f" other sessions' questions that waited beyond the deadline: {summary['waited_beyond_deadline']}"
        )
    for line in summary["errors"]:
        echo(f"  error: {line}")
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        echo(f"wrote {out}")
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=20, help="concurrent chat sessions (default 20)")
    parser.add_argument("--questions", type=int, default=4, help="questions per session (default 4)")
    parser.add_argument("--seconds", type=float, default=120.0, help="upper bound on the load phase (default 120)")
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "soak.json", help="JSON results file")
    parser.add_argument("--slow", type=int, default=0, help="more sessions asking a model trickling a token a second")
    parser.add_argument("--deadline", type=float, default=10.0, help="ASSISTANT_ANSWER_DEADLINE with --slow")
    args = parser.parse_args(argv)
    if args.sessions < 1 or args.questions < 2 or args.seconds <= 0:
        parser.error("--sessions must be >= 1, --questions >= 2 (a question and a follow-up), --seconds > 0")
    from assistant.errors import AssistantError

    with tempfile.TemporaryDirectory(prefix="soak-") as workdir:
        try:
            settings, origin = default_settings(Path(workdir))
            print(f"index: {origin}")
            summary = run(
                settings, args.sessions, args.questions, args.seconds, args.out, slow=args.slow, deadline=args.deadline
            )
        except AssistantError as error:
            print(f"error: {error}", file=sys.stderr)
            return 1
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # answers that --seconds cut off may still be running in the closed server's worker threads;
    # exiting without interpreter teardown keeps them from aborting the process (exit code 134)
    os._exit(code)
