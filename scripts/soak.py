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

Usage:
    .venv/bin/python scripts/soak.py [--sessions 20] [--questions 4] [--seconds 120] [--out FILE]

Exit status 0 when every question was answered and none was mixed up, 1 otherwise.
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
) -> None:
    from gradio_client import Client

    try:
        client = Client(url, verbose=False, download_files=False, auth=auth)
    except Exception as error:  # the server refused or is gone: every question is unanswered
        for question in script.questions:
            record(Turn(number, question, 0.0, error=f"connect: {type(error).__name__}: {error}"))
        return
    history: list[list[str]] = []
    for question in script.questions:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            record(Turn(number, question, 0.0, error="not asked: --seconds ran out"))
            continue
        started = time.perf_counter()
        try:
            result = client.submit(question, history, api_name="/chat").result(timeout=remaining)
        except Exception as error:  # a timeout or a broken connection
            reason = str(error) or "no answer before --seconds ran out"
            record(Turn(number, question, time.perf_counter() - started, error=f"{type(error).__name__}: {reason}"))
            continue
        seconds = time.perf_counter() - started
        if not isinstance(result, dict) or "error" in result:
            message = result.get("error") if isinstance(result, dict) else repr(result)
            record(Turn(number, question, seconds, error=str(message)))
            continue
        cited = [c["entry_id"] for c in result.get("citations", [])]
        foreign = [c for c in cited if owners.get(c, number) != number]
        same = len(history) // 2 < len(script.expected) and result.get("text") == script.expected[len(history) // 2]
        record(Turn(number, question, seconds, cited, None, script.entry_id in cited, same, foreign))
        history += [["user", question], ["assistant", result.get("text", "")]]
    client.close()


def load(
    url: str, scripts: list[Script], seconds: float, auth: tuple[str, str] | None = None
) -> tuple[list[Turn], float]:
    owners = {script.entry_id: number for number, script in enumerate(scripts)}
    turns: list[Turn] = []
    lock = threading.Lock()

    def record(turn: Turn) -> None:
        with lock:
            turns.append(turn)

    started = time.monotonic()
    deadline = started + seconds
    threads = [
        threading.Thread(
            target=run_session, args=(n, url, s, owners, deadline, record, auth), name=f"session-{n}", daemon=True
        )
        for n, s in enumerate(scripts)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=max(0.0, deadline - time.monotonic()) + 15)
    wall = time.monotonic() - started
    with lock:
        return list(turns), wall


def summarise(turns: list[Turn], scripts: list[Script], wall: float) -> dict[str, Any]:
    expected = sum(len(s.questions) for s in scripts)
    answered = [t for t in turns if t.error is None]
    latencies = [t.seconds * 1000 for t in answered]
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
    }


def passed(summary: dict[str, Any], deterministic: bool) -> bool:
    """All answered, each citing its own session's entry; with a deterministic model, word for word."""
    clean = summary["unanswered"] == 0 and summary["missed_own_entry"] == 0 and summary["mixed_up"] == 0
    clean = clean and summary["sessions"] > 0
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
) -> dict[str, Any]:
    """Serve, calibrate, load; returns the summary (and writes it to `out`)."""
    from assistant.assistant import Assistant
    from ui.app import parse_auth, serve

    t0 = time.monotonic()
    assistant = Assistant(settings)  # builds the index when it is empty
    scripts, calibration = calibrate(assistant, sessions, questions, budget=max(30.0, seconds / 2))
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
        turns, wall = load(app.local_url, scripts, seconds, parse_auth(settings.ui_auth))
    finally:
        app.close()
    summary = summarise(turns, scripts, wall)
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
    args = parser.parse_args(argv)
    if args.sessions < 1 or args.questions < 2 or args.seconds <= 0:
        parser.error("--sessions must be >= 1, --questions >= 2 (a question and a follow-up), --seconds > 0")
    from assistant.errors import AssistantError

    with tempfile.TemporaryDirectory(prefix="soak-") as workdir:
        try:
            settings, origin = default_settings(Path(workdir))
            print(f"index: {origin}")
            summary = run(settings, args.sessions, args.questions, args.seconds, args.out)
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
