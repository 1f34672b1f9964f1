"""Models that answer from the question's reading and the packed entries as data, not from a prompt.

The offline extractive model is one. It is not a LangChain chat model: it never reads a prompt,
so the command line answers with it without importing LangChain (about 0.7 s of a cold start).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from assistant.answer.context import Packed
    from assistant.question.reading import Reading


def pieces(text: str) -> list[str]:
    """The reply as it is streamed: a word at a time, each with the spaces around it."""
    return re.findall(r"\s*\S+\s*", text) or [text]


@dataclass(frozen=True)
class ReplyPiece:
    """One streamed piece of a computed reply: what the reply reader takes from a chat model's chunk."""

    text: str


class DataReplyModel:
    """A model that answers from the question's reading and the packed entries, as data (`answer`).

    Reading its question and entries back out of a rendered prompt would make it depend on the
    prompt's wording, so it takes none (`ChatModel.reply` hands it the data).
    """

    @property
    def _llm_type(self) -> str:  # the name failure messages give a model without a server
        raise NotImplementedError

    def answer(self, reading: Reading, packed: Packed) -> str:
        raise NotImplementedError

    def answer_chunks(self, reading: Reading, packed: Packed) -> Iterator[ReplyPiece]:
        """The answer streamed a word at a time, as a chat model streams its reply."""
        for piece in pieces(self.answer(reading, packed)):
            yield ReplyPiece(piece)
