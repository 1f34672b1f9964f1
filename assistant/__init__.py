"""A cited-answer assistant over ML-systems concept pages, paper abstracts and a team's own documents.

    from assistant import Assistant, ask
    ask("What is a GPU?").text

Importing the package is cheap: nothing is read, loaded or opened until it is used. These names are
the public surface (the chat UI uses them too): the assistant and its settings, what it answers with
(`Answer`, `Citation`, `Source`, `Entry`, `KnowledgeStatus`), the errors it raises, the sentence encoders
the question is read with (`SentenceEncoders`, to replace them), and helpers for showing an answer
(`find_markers`: the `[entry-id]` markers in its text; `plain_math`: LaTeX as words; `segments`: its
prose and its quoted code and table `Block`s, in order).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assistant.errors import AssistantError, SettingsError
from assistant.settings import Settings
from assistant.types import Answer, Citation, Entry, KnowledgeStatus, Source

if TYPE_CHECKING:
    from assistant.answer.models.calls import StreamCutOffError
    from assistant.assistant import Assistant, ask
    from assistant.blocks import Block, segments
    from assistant.knowledge.math_text import plain_math
    from assistant.question.encoders import SentenceEncoders
    from assistant.verify.citations import find_markers

__all__ = [
    "Answer",
    "Assistant",
    "AssistantError",
    "Block",
    "Citation",
    "Entry",
    "KnowledgeStatus",
    "SentenceEncoders",
    "Settings",
    "SettingsError",
    "Source",
    "StreamCutOffError",
    "ask",
    "find_markers",
    "plain_math",
    "segments",
]

# loaded on first use: each pulls in a stage (the answer chain, the model client, the verifier)
_LAZY = {
    "Assistant": "assistant.assistant",
    "ask": "assistant.assistant",
    "StreamCutOffError": "assistant.answer.models.calls",
    "find_markers": "assistant.verify.citations",
    "plain_math": "assistant.knowledge.math_text",
    "Block": "assistant.blocks",
    "segments": "assistant.blocks",
    "SentenceEncoders": "assistant.question.encoders",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from importlib import import_module

        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'assistant' has no attribute {name!r}")
