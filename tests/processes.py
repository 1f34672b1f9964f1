"""Child processes and ports for the tests: free ports, a real `chroma run`, killing a sync half-way."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

CHROMA = Path(sys.executable).parent / "chroma"
STARTUP_SECONDS = 30


def free_port() -> int:
    """A port nobody listens on: bind to get one, then close it."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def chroma_run(data: Path, log: Path) -> Iterator[tuple[str, subprocess.Popen]]:
    """A `chroma run` server on 127.0.0.1 over `data`, its output in `log`; stopped on exit."""
    assert CHROMA.exists(), f"{CHROMA} is missing - install chromadb into the venv"
    port = free_port()
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(CHROMA), "run", "--path", str(data), "--host", "127.0.0.1", "--port", str(port)],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for_heartbeat(url, proc, log)
        yield url, proc
    finally:
        stop(proc)


def wait_for_heartbeat(url: str, proc: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"chroma run exited with {proc.returncode}:\n{log.read_text(errors='replace')[-3000:]}")
        try:
            with urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.2)
    pytest.fail(f"no heartbeat from {url} within {STARTUP_SECONDS} s:\n{log.read_text(errors='replace')[-3000:]}")


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def kill_hard(proc: subprocess.Popen) -> None:
    """`kill -9` a running child and make sure it is gone (it must not have finished on its own)."""
    os.kill(proc.pid, signal.SIGKILL)
    assert proc.wait(timeout=15) == -signal.SIGKILL


def reap(proc: subprocess.Popen) -> None:
    """Whatever happened in the test, leave no child behind."""
    if proc.poll() is None:
        proc.kill()
        proc.wait(timeout=15)
