"""Degenerate repetition in a reply being read: the same line, or the same run of words, again and again.

A small model that has lost the thread does not stop: it repeats a line ("Question: What is a
GPU? machine", 198 times) or a phrase until the token limit or the context's end. Such a reply
says nothing new after its first few repeats, so reading it on only costs the user time and the
server work. `Repetition` watches the text as it arrives and says when it has become a loop; the
reader then stops and notes why. The thresholds are far above what an answer repeats on purpose
(a citation id, a short list marker, one phrase said twice).
"""

from __future__ import annotations

LINE_REPEATS = 3  # the same line (of at least MIN_LINE_CHARS) this many times
MIN_LINE_CHARS = 12
MIN_LOOP_WORDS = 24  # a run of words repeated back to back must cover at least this many words ...
MIN_LOOP_REPEATS = 5  # ... in at least this many repeats (an answer may say one sentence four times)
MAX_PERIOD = 40  # words in the longest repeated run looked for
TAIL_CHARS = 4000  # of the reply's end searched for a loop: room for MAX_PERIOD words x MIN_LOOP_REPEATS


def _normal(line: str) -> str:
    return " ".join(line.lower().split())


class Repetition:
    """Feed the reply's text as it arrives; `feed` returns True once the reply is looping."""

    def __init__(self) -> None:
        self._text = ""
        self._lines: dict[str, int] = {}
        self._checked_lines = 0  # complete lines already counted

    def feed(self, piece: str) -> bool:
        self._text += piece
        return self._repeated_line() or self._looping_tail()

    def _repeated_line(self) -> bool:
        lines = self._text.split("\n")[:-1]  # the last one may still be growing
        for line in lines[self._checked_lines :]:
            key = _normal(line)
            if len(key) >= MIN_LINE_CHARS:
                self._lines[key] = self._lines.get(key, 0) + 1
                if self._lines[key] >= LINE_REPEATS:
                    return True
        self._checked_lines = len(lines)
        return False

    def _looping_tail(self) -> bool:
        """Do the last words repeat one run of `period` words back to back, enough times?"""
        words = [w.lower() for w in self._text[-TAIL_CHARS:].split()]
        for period in range(1, MAX_PERIOD + 1):
            repeats = max(MIN_LOOP_REPEATS, -(-MIN_LOOP_WORDS // period))
            span = period * repeats
            if span > len(words):
                break
            tail = words[-span:]
            if all(tail[i] == tail[i % period] for i in range(period, span)):
                return True
        return False


def is_looping(text: str) -> bool:
    """Whether `text`, read as a whole, has become a loop (for scripts and tests)."""
    return Repetition().feed(text + "\n")  # the newline completes the last line
