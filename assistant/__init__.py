"""A cited-answer assistant over ML-systems concept pages and paper abstracts.

    from assistant import Assistant, ask
    ask("What is a GPU?").text

Importing the package is cheap: nothing is read, loaded or opened until it is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assistant.settings import Settings
from assistant.types import Answer, Citation, Entry, Source

if TYPE_CHECKING:
    from assistant.assistant import Assistant, ask

__all__ = ["Answer", "Assistant", "Citation", "Entry", "Settings", "Source", "ask"]


def __getattr__(name: str) -> Any:
    if name in ("Assistant", "ask"):
        from assistant import assistant as module

        return getattr(module, name)
    raise AttributeError(f"module 'assistant' has no attribute {name!r}")
