"""Exceptions whose messages say how to fix the problem.

They are raised deep inside the library and translated to a one-line CLI message or a
friendly chat message only at the edges (cli/, ui/app.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from assistant.types import Source


class AssistantError(Exception):
    """Base class: the message is meant for the user and names the fix."""


class SettingsError(AssistantError):
    """A setting has a value the assistant cannot use."""


class KnowledgeError(AssistantError):
    """A knowledge file or line could not be read (file, line and what was expected)."""

    def __init__(self, path: str, line: int, expected: str) -> None:
        self.path, self.line, self.expected = path, line, expected
        super().__init__(f"{path}:{line}: {expected}")


class IndexMismatchError(AssistantError):
    """The index on disk was built with other settings; it must be rebuilt."""


class IndexUnavailableError(AssistantError):
    """The index (embedded or server) cannot be opened or reached."""


class EmptyIndexError(AssistantError):
    """Nothing has been indexed yet."""


class ModelError(AssistantError):
    """The chat model failed after its retries (down, timing out, rate limited).

    `sources` holds what retrieval found before the model failed, so the UI can still show it.
    """

    sources: list[Source]

    def __init__(self, *args: object) -> None:
        super().__init__(*args)
        self.sources = []
