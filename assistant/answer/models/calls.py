"""The only places a chat model is called, and what its failures become.

Retry policy, in one place: the `openai` client's own. ChatOpenAI gets `Settings.max_retries`
(default 2) and the client retries connection errors, timeouts, 408/409/429 and 5xx with
exponential backoff, honouring `Retry-After`; nothing here retries again. What still fails
becomes a one-line `ModelError` that names the fix; a stream that breaks after text was shown
becomes `StreamCutOffError` carrying that text.

Bounds, in one place too (`Limits`, from `Settings`): a whole reply, retries and backoff
included, ends by `answer_deadline` seconds after the answer started - `ASSISTANT_TIMEOUT` is
per read, so a model sending keep-alives or a token a second would otherwise hold the answer
for minutes. The model is read by a worker thread; the caller waits on it only until the
deadline, then abandons it and shuts the HTTP connection down, so the worker ends too. At most
`max_chars` characters are read: past them the connection is closed and the reply is marked
as cut. A reply that falls into a loop (the same line or run of words again and again, see
`repetition`) is closed as soon as the loop is seen, with a note. Every reply shape that is not
a chat completion (malformed events, an empty reply, a stream ending without its finish marker,
JSON or an HTML page where a stream was asked for) becomes one clear `ModelError` or a marked
partial (`StreamCutOffError`), never an empty reply that would read as a refusal.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import queue
import socket
import threading
import time
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from assistant.answer.models.repetition import Repetition
from assistant.errors import ModelError
from assistant.redaction import redact, strip_userinfo

if TYPE_CHECKING:  # LangChain is imported by the models that are LangChain models, not for the offline one
    from langchain_core.language_models import BaseChatModel, LanguageModelInput

    from assistant.answer.models.data_reply import DataReplyModel
    from assistant.settings import Settings

    AnyModel = BaseChatModel | DataReplyModel  # what a reply is read from

OFFLINE_HINT = "set ASSISTANT_MODEL=extractive"
CUT_OFF_MESSAGE = "The model's reply was cut off half-way - ask again"
ENDED_EARLY_MESSAGE = "The model's reply ended without its end marker, so it may be incomplete - ask again"
REPEATING_NOTE = "The model's reply began repeating itself, so it was stopped there and the rest was not read."
_CLIENT_MODULES = {"openai", "httpx", "httpx2", "httpcore", "httpcore2", "h11"}
COMPLETE_SHARE = 1 / 3  # of the deadline, for a short `complete` call (rewriting a follow-up)


@dataclass(frozen=True)
class Limits:
    """How long a reply may take and how much of it is read (see the module docstring)."""

    deadline: float = 90.0  # seconds for a whole reply, retries included
    max_chars: int = 6400  # characters read; the rest is not read at all
    max_tokens: int = 800  # asked of the server (only for the record here: the client sends it)

    @classmethod
    def from_settings(cls, settings: Settings) -> Limits:
        return cls(settings.answer_deadline, settings.max_reply_chars, settings.max_tokens)


class StreamCutOffError(ModelError):
    """The stream broke after some text arrived; `partial` keeps that text for the UI."""

    def __init__(self, partial: str, message: str = CUT_OFF_MESSAGE) -> None:
        super().__init__(message)
        self.partial = partial


# --- the HTTP side: an httpx client whose requests an abandoned call can stop --------------------


class _Abandoned(BaseException):
    """Raised in a worker's HTTP hooks once its caller has gone: a BaseException, so that the
    openai client passes it through instead of retrying it as a connection error."""


class _Call:
    """One reply being read by a worker thread; `abandon` stops it from any thread."""

    def __init__(self, deadline_at: float) -> None:
        self.deadline_at = deadline_at  # time.monotonic()
        self.abandoned = threading.Event()
        self.content_types: list[str] = []  # of each HTTP response (retries make several)
        self.asked_stream = False  # the last request asked for a stream of events
        self._sockets: list[socket.socket] = []  # of the responses being read, while the worker runs
        self._done = False
        self._lock = threading.Lock()

    def remaining(self) -> float:
        return self.deadline_at - time.monotonic()

    @property
    def over_http(self) -> bool:
        return bool(self.content_types)

    def add_socket(self, sock: socket.socket) -> None:
        with self._lock:
            if not self._done:
                self._sockets.append(sock)
        if self.abandoned.is_set():
            self.abandon()

    def done(self) -> None:
        """The worker has finished: its connections are back in the pool, for other calls to use."""
        with self._lock:
            self._done, self._sockets = True, []

    def abandon(self) -> None:
        """Stop the worker: hooks refuse new requests, and a read in progress is woken by shutting its
        socket down (closing a socket does not wake a thread blocked reading it; shutdown does)."""
        self.abandoned.set()
        with self._lock:
            sockets, self._sockets = ([] if self._done else self._sockets), []
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


_worker = threading.local()  # .call: the _Call the current worker thread is reading


def _on_request(request: Any) -> None:
    call: _Call | None = getattr(_worker, "call", None)
    if call is None:
        return
    remaining = call.remaining()
    if call.abandoned.is_set() or remaining <= 0:
        raise _Abandoned()
    content = b""
    with contextlib.suppress(Exception):  # a body still to be streamed has no .content yet
        content = bytes(request.content)
    call.asked_stream = b'"stream":true' in content.replace(b" ", b"")
    # no single wait (connect, a read, the pool) may outlast the deadline
    timeout = dict(request.extensions.get("timeout") or {})
    for name in ("connect", "read", "write", "pool"):
        value = timeout.get(name)
        timeout[name] = remaining if value is None else min(value, remaining)
    request.extensions["timeout"] = timeout


def _on_response(response: Any) -> None:
    call: _Call | None = getattr(_worker, "call", None)
    if call is None:
        return
    call.content_types.append(response.headers.get("content-type", "").split(";")[0].strip().lower())
    stream = response.extensions.get("network_stream")
    sock = stream.get_extra_info("socket") if stream is not None else None
    if isinstance(sock, socket.socket):
        call.add_socket(sock)


@functools.cache
def http_client(limits: Limits) -> Any:
    """The httpx client the factory gives ChatOpenAI: the openai SDK's defaults, plus the hooks that
    let an abandoned reply be stopped. It carries `limits`, so every call on the model knows them.

    One per `Limits`, shared by the models that have them and kept for the process, as LangChain
    keeps its default clients: the connection pool outlives any one model."""
    from openai import DefaultHttpxClient

    class Client(DefaultHttpxClient):
        assistant_limits = limits

    return Client(event_hooks={"request": [_on_request], "response": [_on_response]})


def limits_of(model: AnyModel) -> Limits:
    """The limits the factory attached to `model`'s HTTP client; the defaults for other models."""
    limits = getattr(getattr(model, "http_client", None), "assistant_limits", None)
    return limits if isinstance(limits, Limits) else Limits()


# --- the worker and the caller ------------------------------------------------------------------


@dataclass(frozen=True)
class _Piece:
    text: str


@dataclass(frozen=True)
class _End:
    finish_reason: str | None
    capped: bool = False
    repeating: bool = False


@dataclass(frozen=True)
class _Failed:
    error: BaseException


def _pump(call: _Call, produce: Callable[[], Iterable[Any]], out: queue.SimpleQueue, max_chars: int) -> None:
    """Worker thread: read the model's chunks into `out` until the end, the cap, a loop or abandonment.

    At the cap or a loop the stream is closed at once (below), which drops the HTTP connection: a
    server that checks for that (llama.cpp's, vLLM, OpenAI) stops generating too."""
    _worker.call = call
    size, finish_reason = 0, None
    loop = Repetition()
    chunks: Iterator[Any] | None = None
    try:
        chunks = iter(produce())
        for chunk in chunks:
            if call.abandoned.is_set():
                return
            metadata = getattr(chunk, "response_metadata", None) or {}
            finish_reason = metadata.get("finish_reason") or finish_reason
            text = str(chunk.text)
            if not text:
                continue
            if size + len(text) > max_chars:
                out.put(_Piece(text[: max_chars - size]))
                out.put(_End(finish_reason, capped=True))
                return  # closing the stream (below) releases its HTTP response unread
            size += len(text)
            out.put(_Piece(text))
            if loop.feed(text):
                out.put(_End(finish_reason, repeating=True))
                return
        out.put(_End(finish_reason))
    except BaseException as error:  # handed to the caller, who decides what it means
        if not isinstance(error, _Abandoned):
            out.put(_Failed(error))
    finally:
        with contextlib.suppress(Exception, _Abandoned):
            getattr(chunks, "close", lambda: None)()
        call.done()
        _worker.call = None


class ReplyStream(Iterator[str]):
    """The text deltas of one reply, read by a worker within the limits.

    After the iteration, `notes` says how the reply was shortened (the token limit, the character
    cap), for the answer to carry; `finish_reason` is what the server said ended it.
    """

    def __init__(
        self,
        model: AnyModel,
        produce: Callable[[], Iterable[Any]],
        limits: Limits,
        deadline_at: float,
    ) -> None:
        self.model = model
        self.limits = limits
        self.notes: list[str] = []
        self.finish_reason: str | None = None
        self._call = _Call(deadline_at)
        self._produce = produce
        self._gen = self._read()

    def __next__(self) -> str:
        return next(self._gen)

    def close(self) -> None:
        self._gen.close()

    def _read(self) -> Generator[str, None, None]:
        call, out = self._call, queue.SimpleQueue()  # type: ignore[var-annotated]
        context = contextvars.copy_context()  # LangChain's callbacks and tracing live in context variables
        worker = threading.Thread(
            target=context.run,
            args=(_pump, call, self._produce, out, self.limits.max_chars),
            name="model-reply",
            daemon=True,
        )
        received: list[str] = []
        worker.start()
        try:
            while True:
                remaining = call.remaining()
                try:
                    if remaining <= 0:
                        raise queue.Empty
                    item = out.get(timeout=remaining)
                except queue.Empty:
                    raise self._deadline_error("".join(received)) from None
                if isinstance(item, _Piece):
                    received.append(item.text)
                    yield item.text
                elif isinstance(item, _End):
                    self._finish(item, "".join(received))
                    return
                else:
                    self._fail(item.error, "".join(received))
        finally:
            call.abandon()  # a no-op when the worker is done; else it stops reading at once

    def _finish(self, end: _End, text: str) -> None:
        self.finish_reason = end.finish_reason
        if not text.strip():
            raise ModelError(redact(self._not_a_reply() or self._empty(), _api_key(self.model)))
        if end.repeating:
            self.notes.append(REPEATING_NOTE)
        elif end.capped:
            self.notes.append(
                f"The model's reply passed {self.limits.max_chars:,} characters; it was cut there and the rest"
                " was not read."
            )
        elif end.finish_reason == "length":
            self.notes.append(
                f"The model's reply reached the {self.limits.max_tokens}-token limit (ASSISTANT_MAX_TOKENS)"
                " and ends there."
            )
        elif self._call.over_http and end.finish_reason is None:
            # an OpenAI-wire stream always ends with a finish_reason; without it the reply is incomplete
            raise StreamCutOffError(text, ENDED_EARLY_MESSAGE)

    def _fail(self, error: BaseException, text: str) -> None:
        if isinstance(error, ModelError):
            raise error
        if text:
            raise StreamCutOffError(text) from error
        if not isinstance(error, Exception):
            raise error  # KeyboardInterrupt and the like
        raise translate(error, self.model, self._call) from error

    def _deadline_error(self, text: str) -> ModelError:
        seconds = f"{self.limits.deadline:g}s (ASSISTANT_ANSWER_DEADLINE)"
        if text:
            return StreamCutOffError(text, f"The model was still replying after {seconds}; its reply was cut off")
        return ModelError(
            f"{_who(self.model)} did not reply within {seconds} - it may be overloaded; ask again, or {OFFLINE_HINT}"
        )

    def _empty(self) -> str:
        return f"{_who(self.model)} sent an empty reply - ask again, or {OFFLINE_HINT}"

    def _not_a_reply(self) -> str | None:
        return _not_a_reply(self.model, self._call)


def _deadline_at(limits: Limits, started: float | None, share: float = 1.0) -> float:
    """The monotonic time the reply must end by; `started` is a `time.perf_counter()` of the answer's start."""
    now = time.monotonic()
    spent = time.perf_counter() - started if started is not None else 0.0
    return now + max(0.0, limits.deadline * share - spent)


def stream_reply(
    model: BaseChatModel,
    messages: LanguageModelInput,
    *,
    started: float | None = None,
    limits: Limits | None = None,
) -> ReplyStream:
    """The reply's text deltas; a failure raises `ModelError` (or `StreamCutOffError` after text).

    The reply ends by `limits.deadline` seconds after `started` (a `time.perf_counter()`, default
    now); `limits` default to the ones the factory attached to the model.
    """
    return stream_chunks(model, lambda: model.stream(messages), started=started, limits=limits)


def stream_chunks(
    model: AnyModel,
    chunks: Callable[[], Iterable[Any]],
    *,
    started: float | None = None,
    limits: Limits | None = None,
) -> ReplyStream:
    """As `stream_reply`, for a reply made some other way than from a prompt: `chunks` makes the reply's
    message chunks, in the worker, within the same limits (the offline model's answer from data)."""
    limits = limits or limits_of(model)
    return ReplyStream(model, chunks, limits, _deadline_at(limits, started))


def complete(model: BaseChatModel, messages: LanguageModelInput, *, limits: Limits | None = None) -> str:
    """The whole reply at once, with the same failure messages as `stream_reply`, in a third of the deadline."""
    limits = limits or limits_of(model)
    reply = ReplyStream(model, lambda: [model.invoke(messages)], limits, _deadline_at(limits, None, COMPLETE_SHARE))
    return "".join(reply)


# --- failure messages ---------------------------------------------------------------------------


def translate(err: Exception, model: AnyModel, call: _Call | None = None) -> ModelError:
    """A model failure as a one-line `ModelError`; anything else (a bug) is re-raised as it is."""
    message = _message(err, model)
    if message is None and call is not None and call.over_http:
        # the server answered, and the client could not make a reply of it
        message = _not_a_reply(model, call) or (
            f"{_who(model)} sent a reply that is not a valid chat completion ({type(err).__name__})"
            f" - check that it is OpenAI-compatible, or {OFFLINE_HINT}"
        )
    if message is None:
        raise err  # not a model failure but a bug: let it surface with its traceback
    return ModelError(redact(message, _api_key(model)))


def _not_a_reply(model: AnyModel, call: _Call) -> str | None:
    """A message when the server answered with something other than chat-completion JSON or events."""
    kinds = [kind for kind in call.content_types if kind not in ("text/event-stream", "application/json")]
    if not kinds and call.asked_stream and call.content_types[-1:] == ["application/json"]:
        return (
            f"{_who(model)} answered with one JSON document where a stream of events was asked for - check that"
            f" the server supports streaming (stream=true), or {OFFLINE_HINT}"
        )
    if not kinds:
        return None
    what = "an HTML page" if "html" in kinds[-1] else f"a {kinds[-1] or 'untyped'} document"
    return (
        f"{_who(model)} answered with {what} instead of a chat completion - check that OPENAI_BASE_URL is the"
        f" server's OpenAI-compatible address (ending in /v1), or {OFFLINE_HINT}"
    )


def _message(err: BaseException, model: AnyModel) -> str | None:
    """One line naming the fix for a model failure; None when `err` is not one."""
    from langchain_core import exceptions as lc  # only once a model has failed

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
        if "max_tokens" in detail or "max_completion_tokens" in detail:  # the server wants the other name
            return (
                f"{who} rejected the request ({status}: {_first_line(detail)}) - set ASSISTANT_TOKEN_PARAM"
                " to the parameter it accepts (max_tokens or max_completion_tokens)"
            )
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


def _who(model: AnyModel) -> str:
    client = getattr(model, "root_client", None)
    url = getattr(model, "openai_api_base", None) or getattr(client, "base_url", None)
    return f"The chat model at {strip_userinfo(str(url))}" if url else f"The chat model ({model._llm_type})"


def _api_key(model: AnyModel) -> str | None:
    secret = getattr(model, "openai_api_key", None)
    key = getattr(secret, "get_secret_value", lambda: secret)()
    return key if isinstance(key, str) else None


def _first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line[:200]
