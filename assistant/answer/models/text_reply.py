"""LangChain chat models whose reply is computed as one string, then streamed a word at a time.

The scripted test stub is one: it is driven exactly as an OpenAI-compatible model is, by the
rendered prompt. (The offline extractive model answers from the question's reading and the packed
entries as data, `data_reply.DataReplyModel`, and is no LangChain model.)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import Field

from assistant.answer.models.data_reply import pieces
from assistant.answer.prompts import load_prompt


class TextReplyModel(BaseChatModel):
    """Subclasses implement `_reply`; generation and word-by-word streaming come from here."""

    def _reply(self, messages: list[BaseMessage]) -> str:
        raise NotImplementedError

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=self._reply(messages)))])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        text = self._reply(messages)
        for piece in pieces(text):
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=piece))
            if run_manager:
                run_manager.on_llm_new_token(piece, chunk=chunk)
            yield chunk


def default_stub_reply() -> str:
    return load_prompt("refusal")


class StubChatModel(TextReplyModel):
    """A scripted chat model for tests: replies in order (the last repeats), records every call.

    `errors[i]`, when set, is raised by call i instead of replying. The text is emitted exactly
    as scripted, so tests can feed the citation checker broken ids like "[NOPE-1]" on purpose.
    With no replies scripted it refuses, in the words of prompts/refusal.txt.
    """

    replies: list[str] = Field(default_factory=list)
    errors: list[Exception | None] = Field(default_factory=list)
    calls: list[list[BaseMessage]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "stub"

    def _reply(self, messages: list[BaseMessage]) -> str:
        index = len(self.calls)
        self.calls.append(list(messages))
        error = self.errors[index] if index < len(self.errors) else None
        if error is not None:
            raise error
        replies = self.replies or [default_stub_reply()]
        return replies[min(index, len(replies) - 1)]
