"""The only places a chat model is called, and what its failures become.

Retry policy, in one place: the `openai` client's own. ChatOpenAI gets `Settings.max_retries`
(default 2) and the client retries connection errors, timeouts, 408/409/429 and 5xx with
exponential backoff, honouring `Retry-After`; nothing here retries again. What still fails
becomes a one-line `ModelError` that names the fix; a stream that breaks after text was shown
becomes `StreamCutOffError` carrying that text.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from langchain_core import exceptions as lc
from langchain_core.language_models import BaseChatModel, LanguageModelInput

from assistant.errors import ModelError
from assistant.redaction import redact, strip_userinfo

OFFLINE_HINT = "set ASSISTANT_MODEL=extractive"
CUT_OFF_MESSAGE = "The model's reply was cut off half-way - ask again"
_CLIENT_MODULES = {"openai", "httpx", "httpx2", "httpcore", "httpcore2", "h11"}


class StreamCutOffError(ModelError):
    """The stream broke after some text arrived; `partial` keeps that text for the UI."""

    def __init__(self, partial: str, message: str = CUT_OFF_MESSAGE) -> None:
        super().__init__(message)
        self.partial = partial


def stream_reply(model: BaseChatModel, messages: LanguageModelInput) -> Iterator[str]:
    """Yield the reply's text deltas; a failure raises `ModelError` (or `StreamCutOffError` after text)."""
    received: list[str] = []
    try:
        # closing() releases the HTTP response at once when the caller stops reading early
        with contextlib.closing(model.stream(messages)) as chunks:  # type: ignore[type-var]
            for chunk in chunks:
                text = str(chunk.text)
                if text:
                    received.append(text)
                    yield text
    except ModelError:
        raise
    except Exception as err:
        if received:
            raise StreamCutOffError("".join(received)) from err
        raise translate(err, model) from err


def complete(model: BaseChatModel, messages: LanguageModelInput) -> str:
    """The whole reply at once, with the same failure messages as `stream_reply`."""
    try:
        return str(model.invoke(messages).text)
    except ModelError:
        raise
    except Exception as err:
        raise translate(err, model) from err


def translate(err: Exception, model: BaseChatModel) -> ModelError:
    """A model failure as a one-line `ModelError`; anything else (a bug) is re-raised as it is."""
    message = _message(err, model)
    if message is None:
        raise err  # not a model failure but a bug: let it surface with its traceback
    return ModelError(redact(message, _api_key(model)))


def _message(err: BaseException, model: BaseChatModel) -> str | None:
    """One line naming the fix for a model failure; None when `err` is not one."""
    who, status = _who(model), getattr(err, "status_code", None)
    names = {cls.__name__ for cls in type(err).__mro__}
    if isinstance(err, lc.ModelTimeoutError | TimeoutError) or any("Timeout" in n for n in names):
        seconds = getattr(model, "request_timeout", None)
        after = f" after {seconds:g}s" if isinstance(seconds, int | float) else ""
        return f"{who} timed out{after} - check it is running and not overloaded, or {OFFLINE_HINT}"
    if isinstance(err, lc.ModelRateLimitError) or status == 429:
        return f"{who} is rate limiting (429) - wait a minute and ask again"
    if isinstance(err, lc.ModelAuthenticationError | lc.ModelPermissionDeniedError):
        return f"{who} rejected the API key ({status}) - check OPENAI_API_KEY, or {OFFLINE_HINT}"
    if isinstance(err, lc.ModelNotFoundError):
        fix = "check the name in ASSISTANT_MODEL=openai:<model> and that OPENAI_BASE_URL ends in /v1"
        return f"{who} does not know this model or path (404) - {fix}"
    if isinstance(err, lc.ContextOverflowError):
        return f"{who} says the question and context are too long - ask a shorter question"
    if isinstance(err, lc.ModelInvalidRequestError) or (
        isinstance(status, int) and 400 <= status < 500 and status not in (408, 409)
    ):
        body = getattr(err, "body", None)  # openai's parsed {"error": {...}} object
        detail = str(body.get("message") if isinstance(body, dict) else getattr(err, "message", err))
        return f"{who} rejected the request ({status}: {_first_line(detail)}) - check ASSISTANT_MODEL"
    if isinstance(status, int):
        return f"{who} returned an error ({status}) - check the server's log, or {OFFLINE_HINT}"
    if isinstance(err, lc.ModelConnectionError | ConnectionError) or "ConnectError" in names:
        reason = _connection_reason(err)
        if reason:
            return f"{who} could not be reached ({reason}) - start it, check OPENAI_BASE_URL, or {OFFLINE_HINT}"
        return f"{who} dropped the connection - ask again, or {OFFLINE_HINT}"
    if isinstance(err, lc.ModelError | OSError) or type(err).__module__.split(".")[0] in _CLIENT_MODULES:
        return f"{who} failed ({type(err).__name__}) - ask again, or {OFFLINE_HINT}"
    return None


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
    return f"The chat model at {strip_userinfo(str(url))}" if url else f"The chat model ({model._llm_type})"


def _api_key(model: BaseChatModel) -> str | None:
    secret = getattr(model, "openai_api_key", None)
    key = getattr(secret, "get_secret_value", lambda: secret)()
    return key if isinstance(key, str) else None


def _first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line[:200]
