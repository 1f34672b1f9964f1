"""The `assistant` command line: commands, console output, doctor."""

import gc
from collections.abc import Sequence

from assistant.cli import commands


def main(argv: Sequence[str] | None = None) -> int:
    """The program (`assistant ...`, `python -m assistant ...`): the command, then nothing left to collect.

    The process exits right after a command; its last garbage collections, at exit, would only walk what
    the command loaded (the encoder, the tokenizer's table, the answer's objects) before the operating
    system frees it all, about 0.1 s of a fresh `assistant ask`. `gc.freeze` moves everything alive to a
    generation the collector skips. In-process callers (tests, tools) use `commands.main`, which does not.
    """
    code = commands.main(argv)
    gc.freeze()
    return code


__all__ = ["main"]
