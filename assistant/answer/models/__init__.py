"""Chat models: the factory, and what each configured model can do.

`make_chat_model` turns `Settings` into a `ChatModel`: the model (a LangChain chat model, or a
`DataReplyModel` that answers from data) plus the capabilities the chain asks about (whether it can
rewrite a follow-up into a standalone question) and the label shown as "answered by". Capabilities
are decided here, from the configuration, never by reading the label. Calls and failure messages are
in `assistant.answer.models.calls`. LangChain is imported only for a model that is one: the offline
model answers without it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from assistant.answer.models.calls import (
    OFFLINE_HINT,
    Limits,
    ReplyStream,
    StreamCutOffError,
    complete,
    http_client,
    stream_chunks,
    stream_reply,
)
from assistant.answer.models.data_reply import DataReplyModel
from assistant.errors import ModelError, SettingsError
from assistant.redaction import PLACEHOLDER_KEY, guard_client_logs, redact, strip_userinfo
from assistant.settings import Settings

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from assistant.answer.context import Packed
    from assistant.question.reading import Reading

__all__ = [
    "ChatModel",
    "DataReplyModel",
    "Limits",
    "Prompt",
    "ReplyStream",
    "StreamCutOffError",
    "complete",
    "make_chat_model",
    "model_label",
    "stream_reply",
    "token_fields",
]

MODEL_CHOICES = "auto, openai:<model>, extractive, stub"
Prompt = Sequence[tuple[str, str]]  # a rendered prompt: (role, text) messages, "system" or "human"


@dataclass(frozen=True)
class ChatModel:
    """A configured chat model and what it can do."""

    model: BaseChatModel | DataReplyModel
    name: str  # what Answer.model records: "extractive", "openai:<model>", ...
    label: str  # "answered by" in the UI, without secrets
    rewrites_followups: bool = False  # worth a call to turn a follow-up into a standalone question

    @property
    def llm(self) -> BaseChatModel:
        """The LangChain model, to send a prompt; a model that answers from data takes none."""
        if isinstance(self.model, DataReplyModel):
            raise ModelError(
                f"The {self.model._llm_type} model answers from the question and its entries, not from a prompt"
            )
        return self.model

    def reply(self, reading: Reading, packed: Packed, messages: Prompt, *, started: float | None = None) -> ReplyStream:
        """The answer's text deltas, within the model's limits (`stream_reply`): a model that answers from
        data (the offline extractive one) gets the question's reading and the packed entries, any other
        the rendered prompt `messages` ((role, text) pairs, which LangChain reads as its messages)."""
        model = self.model
        if isinstance(model, DataReplyModel):
            return stream_chunks(model, lambda: model.answer_chunks(reading, packed), started=started)
        return stream_reply(model, messages, started=started)


def make_chat_model(settings: Settings) -> ChatModel:
    """The chat model `settings.resolved_model` names (see ASSISTANT_MODEL in the README)."""
    name = settings.resolved_model
    if name.startswith("openai:") and name.removeprefix("openai:").strip():
        if not (settings.openai_api_key or settings.openai_base_url):
            raise SettingsError(
                f"ASSISTANT_MODEL={name} needs OPENAI_API_KEY (or OPENAI_BASE_URL for a local server)"
                f" - set one, or {OFFLINE_HINT}"
            )
        from langchain_openai import ChatOpenAI
        from pydantic import SecretStr

        guard_client_logs(settings.openai_api_key)
        model = ChatOpenAI(
            model=name.removeprefix("openai:").strip(),
            base_url=settings.openai_base_url,
            # a local server ignores the key, but the client refuses to start without one
            api_key=SecretStr(settings.openai_api_key or PLACEHOLDER_KEY),
            streaming=True,
            timeout=settings.request_timeout,
            max_retries=settings.max_retries,  # the one retry policy: see assistant.answer.models.calls
            **token_fields(settings),  # the server stops there; calls.py caps what is read too
            # the deadline and the character cap: hooks that let an abandoned reply be stopped
            http_client=http_client(Limits.from_settings(settings)),
            temperature=0,
        )
        return ChatModel(model, name, model_label(settings), rewrites_followups=True)
    if name == "stub":
        from assistant.answer.models.text_reply import StubChatModel

        return ChatModel(StubChatModel(), name, model_label(settings))
    if name == "extractive":
        from assistant.answer.models.extractive import ExtractiveChatModel

        return ChatModel(ExtractiveChatModel(tuning=settings.offline_answer), name, model_label(settings))
    raise SettingsError(f"Unknown model {name!r} - set ASSISTANT_MODEL to one of: {MODEL_CHOICES}")


# OpenAI's own endpoints: they take max_completion_tokens, and their reasoning models reject max_tokens
OPENAI_HOSTS = ("api.openai.com", ".openai.azure.com")


def token_fields(settings: Settings) -> dict[str, Any]:
    """ChatOpenAI arguments that send the reply's token limit under the name the server honours.

    ChatOpenAI sends its `max_completion_tokens`; OpenAI-compatible servers that predate that name
    (llama.cpp's Python server among them) ignore it and generate to the context's end, so they get
    `max_tokens` too, in the request body (ASSISTANT_TOKEN_PARAM, see Settings.token_param).
    """
    limit = settings.max_tokens
    choice = settings.token_param
    if choice == "auto":
        host = (urlsplit(settings.openai_base_url).hostname or "") if settings.openai_base_url else "api.openai.com"
        choice = "max_completion_tokens" if host.endswith(OPENAI_HOSTS) else "both"
    fields: dict[str, Any] = {}
    if choice in ("max_completion_tokens", "both"):
        fields["max_completion_tokens"] = limit
    if choice in ("max_tokens", "both"):
        fields["extra_body"] = {"max_tokens": limit}
    return fields


def model_label(settings: Settings) -> str:
    """What the UI and reports show as "answered by"; never contains the API key."""
    name = settings.resolved_model
    if name.startswith("openai:"):
        url = strip_userinfo(settings.openai_base_url or "https://api.openai.com/v1")
        return redact(f"{name} @ {url}", settings.openai_api_key)
    return {"extractive": "extractive (offline)", "stub": "stub (scripted test model)"}.get(name, name)
