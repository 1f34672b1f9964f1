"""The UI login (ASSISTANT_UI_AUTH), throttled by client so a guesser cannot lock the user out.

Three counts of wrong passwords, each with its own backoff, in the way fail2ban and
Django-axes lock an (address, user) pair rather than the user:

- the client and user name pair, and the client address alone (an IPv6 client by its /64,
  which one machine owns whole): after `FREE_FAILURES` failures that client waits, for a delay
  doubling with each further failure from `BASE_DELAY` up to `MAX_DELAY`;
- the user name over all clients: after `NAME_FREE_FAILURES`, the name is guarded - a client
  that has failed before is refused on it, while a client that never failed is still checked,
  so the right password from a clean client always gets in and a guesser spread over many
  addresses gets one guess from each.

Gradio calls the auth function on its event loop, so it never sleeps: a blocked attempt is
refused at once without checking the password. A success clears that client's counts. Counts
end an hour (`FORGET_AFTER`) after their last failure; at most `MAX_TRACKED` are kept, user
names as fixed-size digests. The client address comes from `ClientAddressMiddleware`, which
Gradio's FastAPI app runs in front of its routes (`ui.app.app_kwargs`), and it
is the connection's peer unless that peer is a trusted proxy (`trusted_proxies_for_launch`).
"""

from __future__ import annotations

import contextvars
import hashlib
import hmac
import ipaddress
import os
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

FREE_FAILURES = 5  # per client, and per client and user name
NAME_FREE_FAILURES = 20  # per user name over all clients, before the name is guarded
BASE_DELAY = 2.0  # seconds, after the last free failure; doubled for each one after
MAX_DELAY = 600.0
FORGET_AFTER = 3600.0  # seconds after its last failure that a count is forgotten
MAX_TRACKED = 10_000  # counts kept; the least recently failed are forgotten first

client_address: contextvars.ContextVar[str | None] = contextvars.ContextVar("client_address", default=None)


@dataclass
class _Record:
    failures: int = 0
    blocked_until: float = 0.0
    last_failure: float = 0.0


def client_of(address: str | None) -> str | None:
    """The client an address stands for: itself, an IPv6 address's /64, None when unknown."""
    if not address:
        return None
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address[:64]
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network(f"{ip}/64", strict=False))
    return str(ip)


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


class LoginThrottle:
    """An auth function for `gr.Blocks.launch(auth=...)`: one user and password, throttled by client."""

    def __init__(self, user: str, password: str, clock: Callable[[], float] = time.monotonic) -> None:
        self._user, self._password = _digest(user), _digest(password)
        self._clock = clock
        self._records: OrderedDict[tuple[str, bytes], _Record] = OrderedDict()
        self._lock = threading.Lock()
        self.refused = 0  # attempts refused unchecked while blocked (for tests and logs)

    def _keys(self, username: str) -> tuple[tuple[str, bytes] | None, tuple[str, bytes], tuple[str, bytes]]:
        """(client, client and name, name) keys; no client key when the address is unknown."""
        client = client_of(client_address.get())
        name = _digest(username)
        pair = ("pair", _digest(f"{client or ''}\0") + name)
        return (("client", _digest(client)) if client else None), pair, ("name", name)

    def _live(self, key: tuple[str, bytes] | None, now: float) -> _Record | None:
        record = self._records.get(key) if key else None
        if record and now - record.last_failure > FORGET_AFTER and now >= record.blocked_until:
            del self._records[key]  # type: ignore[arg-type]
            return None
        return record

    def _wait(self, username: str, now: float) -> float:
        client_key, pair_key, name_key = self._keys(username)
        client, pair, name = self._live(client_key, now), self._live(pair_key, now), self._live(name_key, now)
        clean = client_key is not None and client is None and pair is None
        records = [client, pair] + ([] if clean else [name])
        return max([0.0, *(r.blocked_until - now for r in records if r)])

    def blocked_for(self, username: str) -> float:
        """Seconds until `username` from the current client may try again; 0 when it may now."""
        with self._lock:
            return self._wait(username, self._clock())

    def __call__(self, username: str, password: str) -> bool:
        with self._lock:
            if self._wait(username, self._clock()) > 0:
                self.refused += 1
                return False
        # both compared in full, as fixed-size digests: the time taken tells nothing about either
        ok = hmac.compare_digest(_digest(username), self._user) & hmac.compare_digest(_digest(password), self._password)
        with self._lock:
            now = self._clock()
            client_key, pair_key, name_key = self._keys(username)
            if ok:
                for key in (client_key, pair_key):
                    if key:
                        self._records.pop(key, None)
                return True
            for key, free in ((client_key, FREE_FAILURES), (pair_key, FREE_FAILURES), (name_key, NAME_FREE_FAILURES)):
                if key:
                    self._fail(key, free, now)
            while len(self._records) > MAX_TRACKED:
                self._records.popitem(last=False)
        return False

    def _fail(self, key: tuple[str, bytes], free: int, now: float) -> None:
        record = self._records.pop(key, None) or _Record()
        record.failures += 1
        record.last_failure = now
        if record.failures >= free:
            record.blocked_until = now + min(MAX_DELAY, BASE_DELAY * 2 ** min(64, record.failures - free))
        self._records[key] = record  # the most recently failed last

    def tracked(self) -> int:
        """How many counts are kept (bounded by MAX_TRACKED)."""
        with self._lock:
            return len(self._records)

    def tracked_bytes(self) -> int:
        """The memory the kept counts take, roughly: their keys and records."""
        with self._lock:
            return sum(sys.getsizeof(k[1]) + sys.getsizeof(r) for k, r in self._records.items())


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


@contextmanager
def trusted_proxies_for_launch(proxies: Sequence[str]) -> Iterator[None]:
    """While Gradio launches, tell uvicorn whose X-Forwarded-For to believe: only `proxies`.

    Uvicorn rewrites the client address from X-Forwarded-For when the peer is in its
    FORWARDED_ALLOW_IPS, which defaults to 127.0.0.1 - so any local process, or anyone through an
    SSH tunnel, could name a fresh address per guess. Gradio builds uvicorn's config inside
    `launch` without a way to pass the list, and uvicorn reads it from the environment then.
    """
    before = os.environ.get("FORWARDED_ALLOW_IPS")
    # an empty list would be parsed as one empty name; a name no peer can have trusts nobody
    os.environ["FORWARDED_ALLOW_IPS"] = ",".join(proxies) or "no-trusted-proxy"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("FORWARDED_ALLOW_IPS", None)
        else:
            os.environ["FORWARDED_ALLOW_IPS"] = before
