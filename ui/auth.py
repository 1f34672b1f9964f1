"""The UI login (ASSISTANT_UI_AUTH) with a backoff on wrong guesses.

Gradio calls the auth function on its event loop, so it must never sleep: after
`FREE_FAILURES` wrong passwords for a user name, or from one client address, further attempts
are refused at once - without checking the password - for a delay that doubles with each
further failure (`BASE_DELAY` up to `MAX_DELAY`). A success clears the user's and the client's
count. The client address comes from `ClientAddressMiddleware`, which Gradio's FastAPI app runs
in front of its routes (pass `middleware()` as `app_kwargs`).
"""

from __future__ import annotations

import contextvars
import hmac
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

FREE_FAILURES = 5
BASE_DELAY = 2.0  # seconds, after the fifth failure; doubled for each one after
MAX_DELAY = 600.0
MAX_TRACKED = 10_000  # user names and addresses remembered; the oldest are forgotten first

client_address: contextvars.ContextVar[str | None] = contextvars.ContextVar("client_address", default=None)


@dataclass
class _Record:
    failures: int = 0
    blocked_until: float = 0.0


class LoginThrottle:
    """An auth function for `gr.Blocks.launch(auth=...)`: one user and password, throttled."""

    def __init__(self, user: str, password: str, clock: Callable[[], float] = time.monotonic) -> None:
        self._user, self._password = user.encode(), password.encode()
        self._clock = clock
        self._records: OrderedDict[str, _Record] = OrderedDict()
        self._lock = threading.Lock()
        self.refused = 0  # attempts refused unchecked while blocked (for tests and logs)

    def _keys(self, username: str) -> list[str]:
        keys = [f"user:{username}"]
        address = client_address.get()
        if address:
            keys.append(f"client:{address}")
        return keys

    def blocked_for(self, username: str) -> float:
        """Seconds until `username` (from the current client) may try again; 0 when it may now."""
        now = self._clock()
        with self._lock:
            records = [self._records.get(key) for key in self._keys(username)]
        return max([0.0, *(r.blocked_until - now for r in records if r)])

    def __call__(self, username: str, password: str) -> bool:
        if self.blocked_for(username) > 0:
            with self._lock:
                self.refused += 1
            return False
        ok = hmac.compare_digest(username.encode(), self._user) & hmac.compare_digest(password.encode(), self._password)
        with self._lock:
            for key in self._keys(username):
                if ok:
                    self._records.pop(key, None)
                    continue
                record = self._records.pop(key, None) or _Record()
                record.failures += 1
                if record.failures >= FREE_FAILURES:
                    delay = min(MAX_DELAY, BASE_DELAY * 2 ** (record.failures - FREE_FAILURES))
                    record.blocked_until = self._clock() + delay
                self._records[key] = record  # most recent last
                while len(self._records) > MAX_TRACKED:
                    self._records.popitem(last=False)
        return ok


class ClientAddressMiddleware:
    """ASGI middleware: the client's address in `client_address` while a request is handled."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        client = scope.get("client") if scope.get("type") == "http" else None
        token = client_address.set(str(client[0]) if client else None)
        try:
            await self.app(scope, receive, send)
        finally:
            client_address.reset(token)


def middleware() -> dict[str, Any]:
    """`app_kwargs` for `launch` that install `ClientAddressMiddleware`."""
    from starlette.middleware import Middleware

    return {"middleware": [Middleware(ClientAddressMiddleware)]}
