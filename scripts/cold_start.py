"""Cold-start figures: `import assistant`, `assistant ask` and `assistant serve` in fresh processes.

    python scripts/cold_start.py [--home DIR] [--runs 3]

`--home` is an index of knowledge/seed (built first when empty). Each figure is the wall time of
a new process, so it includes the interpreter, the imports, opening the index and loading the
encoder: what a user waits for. `serve` is timed until its page answers (ready) and until the
first `/chat` answer arrives.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def timed(command: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def serve_times(env: dict[str, str]) -> tuple[float, float]:
    """Seconds from starting `assistant serve` until its page answers, and until the first /chat answer."""
    from gradio_client import Client

    port = free_port()
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "assistant", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/"
    try:
        while True:
            if proc.poll() is not None:
                raise SystemExit(f"serve exited with {proc.returncode}")
            try:
                if httpx.get(url, timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        ready = time.perf_counter() - started
        client = Client(url, verbose=False)
        client.predict("What is a GPU?", [], api_name="/chat")
        answered = time.perf_counter() - started
        client.close()
        return ready, answered
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, help="an ASSISTANT_HOME with the seed corpus (default: a new one)")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    home = args.home or Path(tempfile.mkdtemp(prefix="cold-start-"))
    env = {
        **os.environ,
        "ASSISTANT_HOME": str(home),
        "ASSISTANT_KNOWLEDGE": "knowledge/seed",
        "ASSISTANT_MODEL": "extractive",
        "GRADIO_ANALYTICS_ENABLED": "False",
    }
    subprocess.run([sys.executable, "-m", "assistant", "index"], env=env, check=True, stdout=subprocess.DEVNULL)
    rows: dict[str, list[float]] = {"import assistant": [], 'assistant ask "What is a GPU?"': []}
    rows["serve: ready"], rows["serve: first answer"] = [], []
    for _ in range(args.runs):
        rows["import assistant"].append(timed([sys.executable, "-c", "import assistant"], env))
        rows['assistant ask "What is a GPU?"'].append(
            timed([sys.executable, "-m", "assistant", "ask", "What is a GPU?"], env)
        )
        ready, answered = serve_times(env)
        rows["serve: ready"].append(ready)
        rows["serve: first answer"].append(answered)
    print("| cold path (fresh process, wall) | runs (s) |")
    print("|---|---|")
    for name, values in rows.items():
        print(f"| {name} | {' / '.join(f'{v:.2f}' for v in values)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
