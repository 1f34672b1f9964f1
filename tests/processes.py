"""Child-process helpers for the tests that kill a sync half-way."""

from __future__ import annotations

import os
import signal
import subprocess


def kill_hard(proc: subprocess.Popen) -> None:
    """`kill -9` a running child and make sure it is gone (it must not have finished on its own)."""
    os.kill(proc.pid, signal.SIGKILL)
    assert proc.wait(timeout=15) == -signal.SIGKILL


def reap(proc: subprocess.Popen) -> None:
    """Whatever happened in the test, leave no child behind."""
    if proc.poll() is None:
        proc.kill()
        proc.wait(timeout=15)
