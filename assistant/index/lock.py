"""One writer per index: an exclusive `flock` on `<home>/index/sync.lock`.

A sync holds the lock from before it reads the committed state until after it has committed
and swept, so two `assistant index` runs on one home take turns instead of interleaving
(which used to commit a generation whose vectors the other run had deleted). The holder writes
its pid and start time into the file, so a sync that gives up waiting can say who holds it.
The kernel drops the lock when the holder exits, `kill -9` included; the file itself stays.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path
from typing import IO

from assistant.errors import IndexUnavailableError

LOCK_NAME = "sync.lock"
DEFAULT_WAIT = 30.0  # seconds a second sync waits for the first one before it gives up


class IndexBusyError(IndexUnavailableError):
    """Another process is syncing this index."""


class SyncLock:
    """`with SyncLock(root):` waits up to `wait` seconds for the lock, then raises IndexBusyError."""

    def __init__(self, root: Path, wait: float | None = None) -> None:
        self.path = root / LOCK_NAME
        self.wait = DEFAULT_WAIT if wait is None else wait
        self._handle: IO[str] | None = None

    def __enter__(self) -> SyncLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = self.path.open("a+", encoding="utf-8")
        deadline = time.monotonic() + self.wait
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    who = holder(self.path) or "another process"
                    handle.close()
                    raise IndexBusyError(
                        f"Another sync of the index in {self.path.parent.parent} is running ({who}); "
                        f"waited {self.wait:.0f}s - let it finish, then run: assistant index"
                    ) from None
                time.sleep(0.1)
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()}, started {time.strftime('%Y-%m-%dT%H:%M:%S%z')}\n")
        handle.flush()
        self._handle = handle
        return self

    def __exit__(self, *exc: object) -> None:
        if self._handle is not None:
            fcntl.flock(self._handle.fileno(), fcntl.LOCK_UN)
            self._handle.close()
            self._handle = None


def holder(path: Path) -> str | None:
    """Who holds the lock ("pid N, started T"), or None when nobody does."""
    if not path.exists():
        return None
    with path.open("r", encoding="utf-8") as handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return handle.read().strip() or "a process that has not written its pid yet"
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
        return None
