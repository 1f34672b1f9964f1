"""What the command line writes to stderr besides errors: a passing status line, and log lines.

stdout carries only the answer (scripts pipe it). While the index and the encoder load, a
terminal user sees one status line ("Loading the index and the encoder…") that is erased when
the answer comes; a pipe or a file gets nothing for that, since a line that only says "wait" is
noise in a log. Work that changes something (indexing, with its progress) is logged as lines by
the `assistant` logger, which `log_to_stderr` sends to stderr, erasing the status line first.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager

ERASE = "\r\x1b[K"


class _Line:
    """The status line now on the terminal, if any."""

    text = ""

    @classmethod
    def show(cls, text: str) -> None:
        if sys.stderr.isatty():
            sys.stderr.write(ERASE + text)
            sys.stderr.flush()
            cls.text = text

    @classmethod
    def erase(cls) -> None:
        if cls.text:
            sys.stderr.write(ERASE)
            sys.stderr.flush()
            cls.text = ""


@contextmanager
def status(text: str) -> Iterator[None]:
    """Show `text` as a status line on a terminal while the block runs; erase it after."""
    _Line.show(text)
    try:
        yield
    finally:
        _Line.erase()


class StderrHandler(logging.Handler):
    """Log records as plain lines on the current sys.stderr (looked up per record), after erasing a status line."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            shown = _Line.text
            _Line.erase()
            prefix = "warning: " if record.levelno >= logging.WARNING else ""
            sys.stderr.write(prefix + self.format(record) + "\n")
            sys.stderr.flush()
            if shown:
                _Line.show(shown)
        except Exception:
            self.handleError(record)


def log_to_stderr() -> None:
    """Send the `assistant` logger's INFO lines to stderr (once per process)."""
    logger = logging.getLogger("assistant")
    if not any(isinstance(handler, StderrHandler) for handler in logger.handlers):
        logger.addHandler(StderrHandler())
    logger.setLevel(logging.INFO)
    logger.propagate = False
