"""Chat models: the factory, a scripted stub for tests, and failure translation.

Every chat model the assistant uses is a LangChain ``BaseChatModel``; `stream_reply` and
`complete` are the only places that call one, so client errors (connection refused, timeouts,
429/5xx, a stream cut off half-way) become one-line `ModelError`s that name the fix here and
nowhere else. ``langchain_openai`` is imported inside the factory to keep this import cheap.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from langchain_core import exceptions as lc
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import Field

from assistant.errors import ModelError, SettingsError
from assistant.settings import Settings

DEFAULT_STUB_REPLY = "I cannot answer that from the knowledge base."
MODEL_CHOICES = "auto, openai:<model>, extractive, stub"
OFFLINE_HINT = "set ASSISTANT_MODEL=extractive"
CUT_OFF_MESSAGE = "The model's reply was cut off half-way - ask again"
T = TypeVar("T")


class StreamCutOffError(ModelError):
    """The stream broke after some text arrived; `partial` keeps that text for the UI."""

    def __init__(self, partial: str, message: str = CUT_OFF_MESSAGE) -> None:
        super().__init__(message)
        self.partial = partial


class TextReplyModel(BaseChatModel):
    """A chat model whose reply is computed as one string, then streamed a word at a time.

    Subclasses implement `_reply`; the offline extractive model and the test stub both are.
    """

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
        for piece in re.findall(r"\s*\S+\s*", text) or [text]:
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=piece))
            if run_manager:
                run_manager.on_llm_new_token(piece, chunk=chunk)
            yield chunk


class StubChatModel(TextReplyModel):
    """A scripted chat model for tests: replies in order (the last repeats), records every call.

    `errors[i]`, when set, is raised by call i instead of replying. The text is emitted exactly
    as scripted, so tests can feed the citation checker broken ids like "[NOPE-1]" on purpose.
    """

    replies: list[str] = Field(default_factory=lambda: [DEFAULT_STUB_REPLY])
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
        replies = self.replies or [DEFAULT_STUB_REPLY]
        return replies[min(index, len(replies) - 1)]


def make_chat_model(settings: Settings) -> BaseChatModel:
    """The chat model `settings.resolved_model` names (see the ASSISTANT_MODEL table in DESIGN.md)."""
    name = settings.resolved_model
    if name.startswith("openai:") and name.removeprefix("openai:").strip():
        if not (settings.openai_api_key or settings.openai_base_url):
            raise SettingsError(
                f"ASSISTANT_MODEL={name} needs OPENAI_API_KEY (or OPENAI_BASE_URL for a local server)"
                f" - set one, or {OFFLINE_HINT}"
            )
        from langchain_openai import ChatOpenAI

        guard_client_logs(settings.openai_api_key)
        return ChatOpenAI(
            model=name.removeprefix("openai:").strip(),
            base_url=settings.openai_base_url,
            # a local server ignores the key, but the client refuses to start without one
            api_key=settings.openai_api_key or "not-needed",
            streaming=True,
            timeout=settings.request_timeout,
            max_retries=settings.max_retries,
            temperature=0,
        )
    if name == "stub":
        return StubChatModel()
    if name == "extractive":
        from assistant.extractive import ExtractiveChatModel

        return ExtractiveChatModel()
    raise SettingsError(f"Unknown model {name!r} - set ASSISTANT_MODEL to one of: {MODEL_CHOICES}")


def model_label(settings: Settings) -> str:
    """What the UI and reports show as "answered by"; never contains the API key."""
    name = settings.resolved_model
    if name.startswith("openai:"):
        url = _strip_userinfo(settings.openai_base_url or "https://api.openai.com/v1")
        return _redact(f"{name} @ {url}", settings.openai_api_key)
    return {"extractive": "extractive (offline)", "stub": "stub (scripted test model)"}.get(name, name)


def stream_reply(model: BaseChatModel, messages: LanguageModelInput, *, attempts: int = 2) -> Iterator[str]:
    """Yield the reply's text deltas; retry failures before the first delta, then raise `ModelError`.

    Once text has been shown, a retry would repeat it, so a later failure raises
    `StreamCutOffError` carrying the text received so far instead.
    """
    if attempts < 1:
        raise ValueError(f"attempts must be at least 1, got {attempts}")
    received: list[str] = []
    for attempt in range(1, attempts + 1):
        try:
            # closing() releases the HTTP response at once when the caller stops reading early
            with contextlib.closing(model.stream(messages)) as chunks:  # type: ignore[type-var]
                for chunk in chunks:
                    text = str(chunk.text)
                    if text:
                        received.append(text)
                        yield text
            return
        except ModelError:
            raise
        except Exception as err:
            if received:
                raise StreamCutOffError("".join(received)) from err
            _give_up_or_retry(err, model, attempt, attempts)


def complete(model: BaseChatModel, messages: LanguageModelInput, *, attempts: int = 2) -> str:
    """The whole reply at once, with the same retries and messages as `stream_reply`."""
    if attempts < 1:
        raise ValueError(f"attempts must be at least 1, got {attempts}")
    return _retrying(lambda: str(model.invoke(messages).text), model, attempts)


def _retrying(call: Callable[[], T], model: BaseChatModel, attempts: int) -> T:
    for attempt in range(1, attempts + 1):
        try:
            return call()
        except ModelError:
            raise
        except Exception as err:
            _give_up_or_retry(err, model, attempt, attempts)
    raise AssertionError("unreachable: the last attempt returns or raises")


def _give_up_or_retry(err: Exception, model: BaseChatModel, attempt: int, attempts: int) -> None:
    """Return to retry; raise `ModelError` when out of attempts or retrying cannot help."""
    translated = _translate(err, model)
    if translated is None:
        raise err  # not a model failure but a bug: let it surface with its traceback
    message, retryable = translated
    if not retryable or attempt >= attempts:
        raise ModelError(_redact(message, _api_key(model))) from err


def _translate(err: BaseException, model: BaseChatModel) -> tuple[str, bool] | None:
    """(one-line message naming the fix, worth retrying) for a model failure, None for a bug."""
    who, status = _who(model), getattr(err, "status_code", None)
    names = {cls.__name__ for cls in type(err).__mro__}
    if isinstance(err, (lc.ModelTimeoutError, TimeoutError)) or any("Timeout" in n for n in names):
        seconds = getattr(model, "request_timeout", None)
        after = f" after {seconds:g}s" if isinstance(seconds, int | float) else ""
        return f"{who} timed out{after} - check it is running and not overloaded, or {OFFLINE_HINT}", True
    if isinstance(err, lc.ModelRateLimitError) or status == 429:
        return f"{who} is rate limiting (429) - wait a minute and ask again", True
    if isinstance(err, (lc.ModelAuthenticationError, lc.ModelPermissionDeniedError)):
        return f"{who} rejected the API key ({status}) - check OPENAI_API_KEY, or {OFFLINE_HINT}", False
    if isinstance(err, lc.ModelNotFoundError):
        fix = "check the name in ASSISTANT_MODEL=openai:<model> and that OPENAI_BASE_URL ends in /v1"
        return f"{who} does not know this model or path (404) - {fix}", False
    if isinstance(err, lc.ContextOverflowError):
        return f"{who} says the question and context are too long - ask a shorter question", False
    if isinstance(err, lc.ModelInvalidRequestError) or (
        isinstance(status, int) and 400 <= status < 500 and status not in (408, 409)
    ):
        body = getattr(err, "body", None)  # openai's parsed {"error": {...}} object
        detail = str(body.get("message") if isinstance(body, dict) else getattr(err, "message", err))
        return f"{who} rejected the request ({status}: {_first_line(detail)}) - check ASSISTANT_MODEL", False
    if isinstance(status, int):
        return f"{who} returned an error ({status}) - check the server's log, or {OFFLINE_HINT}", True
    if isinstance(err, (lc.ModelConnectionError, ConnectionError)) or "ConnectError" in names:
        reason = _connection_reason(err)
        if reason:
            fix = f"start it, check OPENAI_BASE_URL, or {OFFLINE_HINT}"
            return f"{who} could not be reached ({reason}) - {fix}", True
        return f"{who} dropped the connection - ask again, or {OFFLINE_HINT}", True
    if isinstance(err, (lc.ModelError, OSError)) or type(err).__module__.split(".")[0] in _CLIENT_MODULES:
        return f"{who} failed ({type(err).__name__}) - ask again, or {OFFLINE_HINT}", True
    return None


_CLIENT_MODULES = {"openai", "httpx", "httpx2", "httpcore", "httpcore2", "h11"}


def _connection_reason(err: BaseException) -> str | None:
    """Why a connection could not be made, from the cause chain; None if it was dropped mid-way."""
    seen: BaseException | None = err
    while seen is not None:
        text = str(seen).lower()
        if isinstance(seen, ConnectionRefusedError) or "refused" in text:
            return "connection refused"
        if "name or service not known" in text or "nodename nor servname" in text or "getaddrinfo" in text:
            return "host not found"
        if type(seen).__name__ == "ConnectError" or "unreachable" in text:
            return "connection failed"
        seen = seen.__cause__ or seen.__context__
    return None


def _who(model: BaseChatModel) -> str:
    client = getattr(model, "root_client", None)
    url = getattr(model, "openai_api_base", None) or getattr(client, "base_url", None)
    return f"The chat model at {_strip_userinfo(str(url))}" if url else f"The chat model ({model._llm_type})"


def _api_key(model: BaseChatModel) -> str | None:
    secret = getattr(model, "openai_api_key", None)
    key = secret.get_secret_value() if hasattr(secret, "get_secret_value") else secret
    return key if isinstance(key, str) else None


def redact(text: str, key: str | None = None) -> str:
    """`text` without the API key, `sk-...` tokens, bearer tokens or passwords in URLs."""
    return _redact(_strip_userinfo(text), key)


class _SecretFilter(logging.Filter):
    """Scrubs secrets from the HTTP client libraries' log records (httpx logs each request's URL
    at INFO, credentials in OPENAI_BASE_URL included)."""

    def __init__(self) -> None:
        super().__init__()
        self.keys: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a malformed record is the logging module's to report, not ours
            return True
        clean = redact(message)
        for key in tuple(self.keys):  # a snapshot: another thread may be adding a key
            clean = _redact(clean, key)
        if clean != message:
            record.msg, record.args = clean, None
        return True


_SECRET_FILTER = _SecretFilter()
_CLIENT_LOGGERS = ("httpx", "httpx2", "httpcore", "httpcore2", "openai", "openai._base_client", "langchain_openai")


def guard_client_logs(key: str | None) -> None:
    """Make the client libraries' loggers drop `key` (and any URL password) from their messages."""
    if key:
        _SECRET_FILTER.keys.add(key)
    for name in _CLIENT_LOGGERS:
        logger = logging.getLogger(name)
        if _SECRET_FILTER not in logger.filters:
            logger.addFilter(_SECRET_FILTER)


def _redact(text: str, key: str | None) -> str:
    """Belt and braces: no message may carry the API key, whatever a server echoes back."""
    if key and len(key) >= 4 and key != "not-needed":
        text = text.replace(key, "***")
    text = re.sub(r"\bsk-[A-Za-z0-9_\-]{6,}", "sk-***", text)
    return re.sub(r"(?i)\bBearer\s+\S+", "Bearer ***", text)


def _strip_userinfo(url: str) -> str:
    return re.sub(r"//[^/@]*@", "//", url)


def _first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line[:200]
