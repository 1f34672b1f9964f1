"""A replica follows the commits of other machines: a thread that looks for a newer generation.

Each replica on a Chroma server polls the manifest record every few seconds
(`ASSISTANT_REFRESH_SECONDS`); one poll is one small read. The work of switching (loading the
generation, building its lexical index) happens on this thread, never on a request.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger("assistant")


class CommitFollower:
    """Calls `refresh` every `seconds` until stopped; a failing call is logged once per kind and retried."""

    def __init__(self, refresh: Callable[[], bool], seconds: float) -> None:
        self.refresh = refresh
        self.seconds = seconds
        self.switches = 0
        self._stop = threading.Event()
        self._last_failure: str | None = None
        self._thread = threading.Thread(target=self._run, name="commit-follower", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.seconds):
            try:
                if self.refresh():
                    self.switches += 1
                self._last_failure = None
            except Exception as error:  # a server gone for a moment: the loaded generation keeps answering
                failure = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
                if failure != self._last_failure:
                    log.warning("Could not look for a newer generation (%s); answering from the loaded one", failure)
                self._last_failure = failure

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=self.seconds + 5)
