"""Writing encoded batches to Chroma on a thread of their own, and telling a full disk from other failures.

Encoding the next batch overlaps the write of the last one; a write that fails or stalls stops the sync
at the next batch instead of hanging it.
"""

from __future__ import annotations

import errno
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from assistant.errors import IndexUnavailableError

WRITE_QUEUE = 2  # encoded batches waiting for the writer; encoding stops when a write fails


class DiskFullError(IndexUnavailableError):
    """The disk holding the index has no room: freeing space fixes it, the last commit still answers."""


class WriteStalled(TimeoutError):
    """A Chroma write did not return in time (the writer thread is left to finish or hang)."""


def is_disk_full(error: BaseException | None) -> bool:
    """An out-of-space failure anywhere in the chain: ENOSPC/EDQUOT, or SQLite's 'database or disk is full'."""
    seen = 0
    while error is not None and seen < 10:
        if isinstance(error, DiskFullError):
            return True
        if isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        text = str(error).lower()
        if "database or disk is full" in text or "no space left on device" in text:
            return True
        error, seen = error.__cause__ or error.__context__, seen + 1
    return False


class BackgroundWriter:
    """One daemon thread writing encoded batches while the next one is encoded.

    At most `WRITE_QUEUE` batches wait. A failed write is raised (as `Failed`) by the next
    `check`, `submit` or `finish`; a write that takes longer than `timeout` seconds is abandoned
    the same way (its thread is a daemon, so a write hung on a full disk does not hold the process).
    """

    class Failed(Exception):
        def __init__(self, error: BaseException) -> None:
            super().__init__(str(error))
            self.error = error

    def __init__(self, write: Callable[..., None], timeout: float) -> None:
        self._write = write
        self._timeout = timeout
        self._queue: queue.Queue[tuple[Any, ...] | None] = queue.Queue(maxsize=WRITE_QUEUE)
        self._error: BaseException | None = None
        self._busy_since: float | None = None
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="chroma-writer", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._closed:
            try:
                job = self._queue.get(timeout=0.2)
            except queue.Empty:
                continue
            if job is None:
                return
            if self._error is None:
                self._busy_since = time.monotonic()
                try:
                    self._write(*job)
                except BaseException as error:
                    self._error = error
                finally:
                    self._busy_since = None

    def check(self) -> None:
        if self._error is not None:
            raise self.Failed(self._error)
        busy = self._busy_since
        if busy is not None and time.monotonic() - busy > self._timeout:
            self._error = WriteStalled(f"a write of vectors took more than {self._timeout:.0f}s")
            raise self.Failed(self._error)

    def submit(self, *job: Any) -> None:
        self._put(job)

    def _put(self, job: tuple[Any, ...] | None) -> None:
        while True:
            self.check()
            try:
                self._queue.put(job, timeout=0.2)
                return
            except queue.Full:
                continue

    def finish(self) -> None:
        """Wait for every submitted write."""
        self._put(None)
        while self._thread.is_alive():
            self._thread.join(timeout=0.2)
            self.check()
        self.check()

    def close(self) -> None:
        """Stop the thread when it is idle; a hung write is left to its daemon thread."""
        self._closed = True
