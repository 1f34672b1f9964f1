"""The `assistant` command line: commands, console output, doctor."""

from assistant.cli.commands import main

__all__ = ["main"]
