"""A real local HTTP server speaking the OpenAI chat-completions wire format, for tests.

The `openai` client (through ChatOpenAI) talks to it over a real socket, so retries, timeouts,
SSE parsing and dropped connections are exercised for real instead of mocked.

    with FakeOpenAI() as server:
        server.script(Status(429, retry_after=1), Reply("Hello [MLD-0472]."))
        ...  # point Settings(openai_base_url=server.base_url) at it
        server.requests  # [(path, headers with lower-case names, json_body), ...]
        server.token_params  # [{"max_tokens": 800, ...}, ...]: the length limits each chat request sent

Each chat request consumes the next scripted item; an empty queue repeats `server.default`.
"""

from __future__ import annotations

import itertools
import json
import re
import socket
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    """Answer with `text` (as one JSON body, or as SSE deltas of about a word each)."""

    text: str


@dataclass(frozen=True)
class Status:
    """Answer with an HTTP error in OpenAI's `{"error": {...}}` shape."""

    code: int
    retry_after: float | None = None
    message: str | None = None
    echo_authorization: bool = False  # append the request's Authorization header, as some proxies do


@dataclass(frozen=True)
class CutOff:
    """Send `text` (streamed: as deltas; else: half a JSON body), then drop the connection."""

    text: str


@dataclass(frozen=True)
class Delay:
    """Wait `seconds` before answering with `then` (the default reply when None)."""

    seconds: float
    then: Step | None = None


@dataclass(frozen=True)
class Trickle:
    """Stream `text` a word at a time, `every` seconds apart (a slow or overloaded model)."""

    text: str
    every: float = 1.0


@dataclass(frozen=True)
class KeepAlive:
    """Send only SSE comments (`: keep-alive`), `every` seconds apart, for `seconds`; then `then`."""

    seconds: float
    every: float = 0.2
    then: Step | None = None


@dataclass(frozen=True)
class Flood:
    """Stream `chars` characters in deltas of `piece` characters, ignoring max_tokens (numbered
    sentences: "GPU memory bandwidth matters. (1) ...")."""

    chars: int
    piece: int = 1000
    word: str = "GPU memory bandwidth matters. "


@dataclass(frozen=True)
class Events:
    """Stream these SSE `data:` payloads as they are (dicts as JSON, strings raw); then `[DONE]`
    when `done`, and end the body cleanly either way (no dropped connection)."""

    events: tuple[dict[str, Any] | str, ...]
    done: bool = True


@dataclass(frozen=True)
class Raw:
    """Answer with this body, content type and status, whatever was asked (an HTML error page,
    a JSON completion when a stream was asked for)."""

    body: str
    content_type: str = "text/html; charset=utf-8"
    code: int = 200


@dataclass(frozen=True)
class Loop:
    """Stream `line` again and again, `times` times, whatever limit was asked: a small model stuck in
    a loop ("Question: What is a GPU? machine", 198 lines of it)."""

    line: str = "Question: What is a GPU? machine\n"
    times: int = 500
    every: float = 0.0  # seconds between repeats


@dataclass(frozen=True)
class Ramble:
    """Stream a word per token, honouring only the length limits named in `honours`: without one of
    them in the request, `tokens` words (llama.cpp's Python server ignores max_completion_tokens and
    went on for 4,086). The words are numbered (`word1 word2 ...`), so the text never loops. Ends with
    finish_reason "length", as a server stopped by a limit does."""

    honours: tuple[str, ...] = ("max_tokens",)
    tokens: int = 4086
    word: str = "step"
    every: float = 0.0  # seconds between words


@dataclass(frozen=True)
class RejectsMaxTokens:
    """OpenAI's reasoning models: a request carrying `max_tokens` gets a 400; any other gets `then`."""

    then: Step | None = None


Step = Reply | Status | CutOff | Delay | Trickle | KeepAlive | Flood | Events | Raw | Loop | Ramble | RejectsMaxTokens
LENGTH_LIMITS = ("max_tokens", "max_completion_tokens")

ERROR_CODES = {401: "invalid_api_key", 404: "model_not_found", 429: "rate_limit_exceeded"}


def deltas(text: str) -> list[str]:
    """Split text into word-sized pieces that join back to exactly `text`."""
    return re.findall(r"\s*\S+\s*", text) or [text]


class FakeOpenAI:
    """The server: `base_url`, `script(...)`, `default`, `requests`; a context manager."""

    def __init__(self, default: Step = Reply("Hello from the fake model.")) -> None:
        self.default = default
        self.requests: list[tuple[str, dict[str, str], Any]] = []
        self.hangups = 0  # replies the client stopped reading (a write to it failed)
        self.sent_bytes = 0  # of streamed reply bodies
        self._queue: deque[Step] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.fake = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    @property
    def token_params(self) -> list[dict[str, Any]]:
        """The length limits each chat request carried, by name (an empty dict: none was sent)."""
        with self._lock:
            bodies = [body for path, _, body in self.requests if path.rstrip("/").endswith("/chat/completions")]
        return [{name: body[name] for name in LENGTH_LIMITS if name in body} for body in bodies]

    def script(self, *steps: Step) -> None:
        with self._lock:
            self._queue.extend(steps)

    def step_for(self, body: dict) -> Step:
        """The step that answers this request body: the next scripted one (subclasses may look at the body)."""
        return self.next_step()

    def next_step(self) -> Step:
        with self._lock:
            return self._queue.popleft() if self._queue else self.default

    def start(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def close(self) -> None:
        self._stopping.set()  # wakes handlers sleeping in a Delay
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients hanging up (timeouts, closed pooled connections) is normal here; bugs are not."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive and chunked bodies, like real servers

    def log_message(self, format: str, *args: Any) -> None:  # quiet test output
        pass

    def setup(self) -> None:
        super().setup()
        # send each event at once, as real servers do (Nagle's delay would pace a stream at ~40 ms an event)
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    @property
    def fake(self) -> FakeOpenAI:
        return self.server.fake  # type: ignore[attr-defined]

    def do_GET(self) -> None:
        self._record(None)
        if self.path.rstrip("/") == "/v1/models":
            model = {"id": "gpt-4o-mini", "object": "model", "created": 0, "owned_by": "fake"}
            self._send(200, json.dumps({"object": "list", "data": [model]}).encode())
        else:
            self._error(404, f"Unknown path {self.path}")

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        self._record(body)
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._error(404, f"Unknown path {self.path}")
            return
        try:
            self._play(self.fake.step_for(body), body)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout, a deadline, a cap)
            with self.fake._lock:
                self.fake.hangups += 1
            self.close_connection = True

    def _record(self, body: Any) -> None:
        headers = {name.lower(): value for name, value in self.headers.items()}
        with self.fake._lock:
            self.fake.requests.append((self.path, headers, body))

    def _play(self, step: Step, body: dict[str, Any]) -> None:
        if isinstance(step, Delay):
            if not self.fake._stopping.wait(step.seconds):
                self._play(step.then or self.fake.default, body)
        elif isinstance(step, Status):
            message = step.message
            if step.echo_authorization:
                message = f"{message or 'Rejected'} (Authorization: {self.headers.get('Authorization')})"
            self._error(step.code, message, step.retry_after)
        elif isinstance(step, Raw):
            self._send(step.code, step.body.encode(), content_type=step.content_type)
        elif isinstance(step, RejectsMaxTokens):
            if "max_tokens" in body:
                message = "Unsupported parameter: 'max_tokens' is not supported with this model."
                self._error(400, f"{message} Use 'max_completion_tokens' instead.")
            else:
                self._play(step.then or self.fake.default, body)
        elif isinstance(step, Loop | Ramble):
            self._endless_stream(step, body)
        elif isinstance(step, Trickle | KeepAlive | Flood | Events):
            self._special_stream(step, body)
        elif body.get("stream"):
            self._stream(step.text, body, cut=isinstance(step, CutOff))
        else:
            self._complete(step.text, body, cut=isinstance(step, CutOff))

    def _complete(self, text: str, body: dict[str, Any], cut: bool) -> None:
        message = {"role": "assistant", "content": text}
        payload = _envelope(body, "chat.completion", {"message": message, "finish_reason": "stop"})
        payload["usage"] = _usage(body, text)
        self._send(200, json.dumps(payload).encode(), cut=cut)

    def _stream(self, text: str, body: dict[str, Any], cut: bool) -> None:
        self._start_stream()
        self._event(_envelope(body, "chat.completion.chunk", {"delta": {"role": "assistant", "content": ""}}))
        for piece in deltas(text):
            self._event(_envelope(body, "chat.completion.chunk", {"delta": {"content": piece}}))
        if cut:
            self._drop()  # no final chunk, no [DONE], no terminating zero-length chunk
            return
        self._event(_envelope(body, "chat.completion.chunk", {"delta": {}, "finish_reason": "stop"}))
        if (body.get("stream_options") or {}).get("include_usage"):
            usage_chunk = _envelope(body, "chat.completion.chunk", None)
            usage_chunk["usage"] = _usage(body, text)
            self._event(usage_chunk)
        self._chunk(b"data: [DONE]\n\n")
        self._chunk(b"")  # end of the chunked body

    def _special_stream(self, step: Trickle | KeepAlive | Flood | Events, body: dict[str, Any]) -> None:
        self._start_stream()
        chunk = "chat.completion.chunk"
        if isinstance(step, Events):
            for event in step.events:
                self._chunk(f"data: {event if isinstance(event, str) else json.dumps(event)}\n\n".encode())
            if step.done:
                self._chunk(b"data: [DONE]\n\n")
            self._chunk(b"")
            return
        self._event(_envelope(body, chunk, {"delta": {"role": "assistant", "content": ""}}))
        if isinstance(step, KeepAlive):
            until = time.monotonic() + step.seconds
            while time.monotonic() < until:
                self._chunk(b": keep-alive\n\n")
                if self.fake._stopping.wait(step.every):
                    return
            then = step.then or self.fake.default
            text = then.text if isinstance(then, Reply) else ""
            pieces = deltas(text) if text else []
        elif isinstance(step, Trickle):
            pieces = deltas(step.text)
        else:
            # numbered, so the flood is one long reply, not a loop (which the reader would stop at once)
            sentences = (f"{step.word.strip()} ({n}) " for n in itertools.count(1))
            text = "".join(itertools.islice(sentences, step.chars // len(step.word) + 1))[: step.chars]
            pieces = [text[i : i + step.piece] for i in range(0, len(text), step.piece)]
        for number, piece in enumerate(pieces):
            if isinstance(step, Trickle) and number and self.fake._stopping.wait(step.every):
                return
            self._event(_envelope(body, chunk, {"delta": {"content": piece}}))
        self._event(_envelope(body, chunk, {"delta": {}, "finish_reason": "stop"}))
        self._chunk(b"data: [DONE]\n\n")
        self._chunk(b"")

    def _endless_stream(self, step: Loop | Ramble, body: dict[str, Any]) -> None:
        """A reply that ends only at a limit the step honours (or its own end), with finish_reason "length"."""
        if isinstance(step, Loop):
            pieces, every = [step.line] * step.times, step.every
        else:
            limits = [body[name] for name in step.honours if isinstance(body.get(name), int)]
            pieces, every = [f"{step.word}{n} " for n in range(1, min([step.tokens, *limits]) + 1)], step.every
        self._start_stream()
        chunk = "chat.completion.chunk"
        self._event(_envelope(body, chunk, {"delta": {"role": "assistant", "content": ""}}))
        for number, piece in enumerate(pieces):
            if number and every and self.fake._stopping.wait(every):
                return
            self._event(_envelope(body, chunk, {"delta": {"content": piece}}))
        self._event(_envelope(body, chunk, {"delta": {}, "finish_reason": "length"}))
        self._chunk(b"data: [DONE]\n\n")
        self._chunk(b"")

    def _start_stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def _event(self, payload: dict[str, Any]) -> None:
        self._chunk(f"data: {json.dumps(payload)}\n\n".encode())

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()
        with self.fake._lock:
            self.fake.sent_bytes += len(data)

    def _drop(self) -> None:
        """Close the socket abruptly, mid-body, the way a crashed server would."""
        self.wfile.flush()
        self.connection.shutdown(socket.SHUT_RDWR)
        self.close_connection = True

    def _error(self, code: int, message: str | None, retry_after: float | None = None) -> None:
        kind = "server_error" if code >= 500 else "requests" if code == 429 else "invalid_request_error"
        error = {
            "message": message or f"Fake error {code}",
            "type": kind,
            "param": None,
            "code": ERROR_CODES.get(code),
        }
        headers = {"Retry-After": f"{retry_after:g}"} if retry_after is not None else {}
        self._send(code, json.dumps({"error": error}).encode(), headers)

    def _send(
        self,
        code: int,
        data: bytes,
        headers: dict[str, str] | None = None,
        cut: bool = False,
        content_type: str = "application/json",
    ) -> None:
        """A JSON response; `cut` promises the whole body but sends half, then hangs up."""
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data[: len(data) // 2] if cut else data)
        if cut:
            self._drop()


def _envelope(body: dict[str, Any], kind: str, choice: dict[str, Any] | None) -> dict[str, Any]:
    choices = [] if choice is None else [{"index": 0, "finish_reason": None, "logprobs": None, **choice}]
    return {
        "id": "chatcmpl-fake",
        "object": kind,
        "created": int(time.time()),
        "model": body.get("model", "fake"),
        "choices": choices,
    }


def _usage(body: dict[str, Any], text: str) -> dict[str, int]:
    prompt = sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))
    completion = len(text.split())
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def chunk(content: str | None = None, finish_reason: str | None = None, choices: bool = True) -> dict[str, Any]:
    """One streamed `chat.completion.chunk` payload, for `Events`; `choices=False` sends `choices: []`."""
    delta = {} if content is None else {"content": content}
    choice = {"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "fake",
        "choices": [choice] if choices else [],
    }


def completion(text: str | None, choices: bool = True) -> str:
    """A whole (non-streamed) `chat.completion` body as JSON text, for `Raw`."""
    message = {"role": "assistant", "content": text}
    choice = {"index": 0, "message": message, "finish_reason": "stop", "logprobs": None}
    body = {"id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": "fake"}
    return json.dumps({**body, "choices": [choice] if choices else []})
