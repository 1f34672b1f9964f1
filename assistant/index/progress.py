"""How long work shows it is alive: a moving bar on a terminal, log lines anywhere else.

Indexing mlsys takes a minute or more. On a terminal a tqdm bar moves with every few chunks;
when stderr is a file or a pipe (`make run | tee`, CI, a service) a bar would be one unreadable
line, so progress is logged to the `assistant` logger as a line every 10% or every 15 seconds,
whichever comes first. The CLI sends that logger to stderr; a library user decides with `logging`.
"""

from __future__ import annotations

import logging
import sys
import time
from typing import Any

log = logging.getLogger("assistant")

MIN_ITEMS = 50  # smaller jobs finish before a report would help
LINE_FRACTION = 0.10
LINE_SECONDS = 15.0
LINE_GAP = 2.0  # no 10% line right after a timed one


class Progress:
    """`update(n)` as work is done, `close()` at the end.

    `show`: None picks a bar on a terminal and lines otherwise; True forces the bar; False shows nothing.
    """

    def __init__(self, total: int, unit: str, what: str, show: bool | None = None) -> None:
        self.total, self.unit, self.what = total, unit, what
        self.done = 0
        self._started = time.monotonic()
        self._last_line = self._started
        self._next_fraction = LINE_FRACTION
        self._bar: Any = None
        self._lines = False
        if total < MIN_ITEMS or show is False:
            return
        if show or sys.stderr.isatty():
            from tqdm import tqdm

            self._bar = tqdm(total=total, unit=unit, desc=what, file=sys.stderr)
        else:
            self._lines = True  # the first line at 10%: an error before then stays the only line

    def update(self, n: int) -> None:
        self.done += n
        if self._bar is not None:
            self._bar.update(n)
        elif self._lines:
            now = time.monotonic()
            fraction = self.done / self.total
            crossed = fraction >= self._next_fraction and now - self._last_line >= LINE_GAP
            if crossed or self.done == self.total or now - self._last_line >= LINE_SECONDS:
                self._line(now)
                while self._next_fraction <= fraction:
                    self._next_fraction += LINE_FRACTION

    def _line(self, now: float) -> None:
        self._last_line = now
        elapsed = now - self._started
        left = elapsed / self.done * (self.total - self.done) if self.done else 0.0
        log.info(
            "%s: %d/%d %s (%.0f%%), %.0f s, about %.0f s left",
            self.what,
            self.done,
            self.total,
            self.unit,
            100 * self.done / self.total,
            elapsed,
            left,
        )

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
