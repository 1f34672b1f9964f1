#!/usr/bin/env python3
"""Memory under load: the chat server's resident memory before and after N `/chat` requests.

Starts `ui.app.serve(settings, block=False)` on a free loopback port over ASSISTANT_HOME (or a
temporary copy of the seed index, as scripts/soak.py does), warms it with --clients requests,
reads this process's RSS (the server runs in it), then sends --requests `/chat` requests from
--clients threads through Gradio's HTTP call API - each request a session of its own, as a client
without a session does - and reads the RSS again, and again after --idle seconds without requests
(by default until the server has forgotten the quiet sessions, ui.memory), for --rounds rounds.
Prints the RSS, the growth per request and how many sessions the server's per-session structures
hold; --no-forget keeps every session, as the server did before, to compare. With --out, writes
them as JSON. A measurement, not a test: the exit status is 0 unless requests failed.

    .venv/bin/python scripts/soak_memory.py [--requests 10000] [--clients 20] [--rounds 1] [--idle S]
                                            [--no-forget] [--out FILE]
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from scripts.soak import default_settings, free_port  # noqa: E402

QUESTIONS = ("What is a GPU?", "What caveat does a GPU have?", "What is a GPU also called?")


def rss_mb() -> float:
    """This process's resident memory in MB (Linux /proc)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def ask(client: Any, url: str, question: str) -> bool:
    """One `/chat` request through the call API (a fresh session); True when it was answered."""
    posted = client.post(f"{url}/gradio_api/call/chat", json={"data": [question, []]}, timeout=60)
    event = posted.json()["event_id"]
    with client.stream("GET", f"{url}/gradio_api/call/chat/{event}", timeout=120) as reply:
        lines = [line for line in reply.iter_lines() if line]
    return any(line.startswith("event: complete") for line in lines) and '"error"' not in lines[-1]


def load(url: str, requests: int, clients: int) -> tuple[int, int, float]:
    """Send `requests` requests from `clients` threads; (answered, failed, seconds)."""
    import httpx

    counter = iter(range(requests))
    lock = threading.Lock()
    done = {"ok": 0, "failed": 0}

    def worker() -> None:
        with httpx.Client() as client:
            while True:
                with lock:
                    n = next(counter, None)
                if n is None:
                    return
                try:
                    ok = ask(client, url, QUESTIONS[n % len(QUESTIONS)])
                except Exception:
                    ok = False
                with lock:
                    done["ok" if ok else "failed"] += 1

    started = time.monotonic()
    threads = [threading.Thread(target=worker, daemon=True) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return done["ok"], done["failed"], time.monotonic() - started


def held(app: Any) -> dict[str, int]:
    """How many sessions each per-session structure of the server holds (ui.memory bounds them)."""
    queue = app._queue
    return {
        "sessions": len(app.state_holder.session_data),
        "queue_ids": len(queue.pending_event_ids_session),
        "message_queues": len(queue.pending_messages_per_session),
        "event_records": len(queue.event_analytics),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=10_000, help="requests per round")
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=1, help="rounds of --requests, each followed by --idle")
    parser.add_argument("--idle", type=float, help="seconds without requests after each round (default: until swept)")
    parser.add_argument("--no-forget", action="store_true", help="keep every session (as before ui.memory), to compare")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    if args.requests < 1 or args.clients < 1 or args.rounds < 1 or (args.idle is not None and args.idle < 0):
        parser.error("--requests, --clients and --rounds must be >= 1, --idle >= 0")
    import ui.memory
    from ui.app import MAX_SESSIONS, serve

    idle = args.idle if args.idle is not None else ui.memory.QUIET_SECONDS + 2 * ui.memory.SWEEP_SECONDS
    if args.no_forget:  # the sweep does nothing: Gradio keeps what it keeps
        ui.memory.forget_idle = lambda blocks, now=None: 0  # type: ignore[assignment]
    rounds: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="soak-memory-") as workdir:
        settings, origin = default_settings(Path(workdir))
        app = serve(settings, "127.0.0.1", free_port(), block=False)
        try:
            url = str(app.local_url).rstrip("/")
            load(url, args.clients, args.clients)  # warm: the encoder, the model, the first sessions
            time.sleep(idle)
            gc.collect()
            before = rss_mb()
            print(f"RSS {before:.0f} MB after warming; {held(app)}", flush=True)
            for number in range(1, args.rounds + 1):
                answered, failed, seconds = load(url, args.requests, args.clients)
                gc.collect()
                loaded, loaded_held = rss_mb(), held(app)
                time.sleep(idle)
                gc.collect()
                rested, rested_held = rss_mb(), held(app)
                rounds.append(
                    {
                        "answered": answered,
                        "failed": failed,
                        "seconds": round(seconds, 1),
                        "rss_after_load_mb": round(loaded, 1),
                        "held_after_load": loaded_held,
                        "rss_after_idle_mb": round(rested, 1),
                        "held_after_idle": rested_held,
                    }
                )
                print(
                    f"round {number}: {answered}/{args.requests} answered ({failed} failed) in {seconds:.0f}s; "
                    f"RSS {loaded:.0f} MB ({1024 * (loaded - before) / (number * args.requests):.1f} KB a request "
                    f"since warming), {loaded_held['sessions']} sessions held; after {idle:g}s idle "
                    f"{rested:.0f} MB, {rested_held}",
                    flush=True,
                )
        finally:
            app.close()
    after = rounds[-1]["rss_after_idle_mb"]
    total = args.requests * args.rounds
    failed = sum(r["failed"] for r in rounds)
    result = {
        "index": origin,
        "requests": total,
        "clients": args.clients,
        "forget": not args.no_forget,
        "rounds": rounds,
        "idle_seconds": idle,
        "rss_before_mb": round(before, 1),
        "rss_after_mb": after,
        "rss_growth_mb": round(after - before, 1),
        "kb_per_request": round(1024 * (after - before) / total, 2),
        "max_sessions": MAX_SESSIONS,
    }
    print(
        f"{total - failed}/{total} answered from {args.clients} clients; RSS {before:.0f} MB -> {after:.0f} MB "
        f"after the last idle ({after - before:+.0f} MB, {result['kb_per_request']:.1f} KB a request; "
        f"sessions kept: at most {MAX_SESSIONS}, {'forgotten when quiet' if result['forget'] else 'never forgotten'})"
    )
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
