#!/usr/bin/env python3
"""Memory under load: the chat server's resident memory before and after N `/chat` requests.

Starts `ui.app.serve(settings, block=False)` on a free loopback port over ASSISTANT_HOME (or a
temporary copy of the seed index, as scripts/soak.py does), warms it with --clients requests,
reads this process's RSS (the server runs in it), then sends --requests `/chat` requests from
--clients threads through Gradio's HTTP call API - each request a session of its own, as a client
without a session does - and reads the RSS again. Prints both and the growth; with --out, writes
them as JSON. A measurement, not a test: the exit status is 0 unless requests failed.

    .venv/bin/python scripts/soak_memory.py [--requests 10000] [--clients 20] [--out FILE]
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=10_000)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    from ui.app import MAX_SESSIONS, serve

    with tempfile.TemporaryDirectory(prefix="soak-memory-") as workdir:
        settings, origin = default_settings(Path(workdir))
        app = serve(settings, "127.0.0.1", free_port(), block=False)
        try:
            url = app.local_url.rstrip("/")
            load(url, args.clients, args.clients)  # warm: the encoder, the model, the first sessions
            gc.collect()
            before = rss_mb()
            answered, failed, seconds = load(url, args.requests, args.clients)
            gc.collect()
            after = rss_mb()
        finally:
            app.close()
    result = {
        "index": origin,
        "requests": args.requests,
        "clients": args.clients,
        "answered": answered,
        "failed": failed,
        "seconds": round(seconds, 1),
        "rss_before_mb": round(before, 1),
        "rss_after_mb": round(after, 1),
        "rss_growth_mb": round(after - before, 1),
        "max_sessions": MAX_SESSIONS,
    }
    print(
        f"{answered}/{args.requests} answered ({failed} failed) from {args.clients} clients in {seconds:.0f}s; "
        f"RSS {before:.0f} MB -> {after:.0f} MB ({after - before:+.0f} MB; sessions kept: at most {MAX_SESSIONS})"
    )
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
