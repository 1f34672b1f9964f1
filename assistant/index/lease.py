"""One writer at a time across machines: a lease record in the Chroma server that a sync holds.

The file lock (`assistant.index.lock`) only serialises syncs of one home on one machine. Against a
server, a sync takes the `lease` record of the `assistant-state` collection: its owner (host and pid),
a random token and an expiry. It renews the expiry every third of the lease while it runs, checks
before it commits that the lease is still its own, and deletes it when done. A lease whose expiry
has passed (its writer was killed or lost the network) is taken over by the next sync.

Chroma has no compare-and-swap, so taking the lease is: read it; when it is free or expired, write
ours; wait `SETTLE` seconds for a concurrent writer's write to land; read it again, and hold it only
when it still carries our token. Two syncs racing for it can both believe they won only when one
reads and writes inside the other's settle window; the loser then finds another token at its next
renewal or at the check before its commit, and stops without committing. Expiries are wall-clock
times written by the holder, so clocks must agree to well within the lease (NTP does). The limits are
written up in docs/deployment.md.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from typing import Any

from assistant.index.lock import IndexBusyError
from assistant.index.server_store import ServerStore

LEASE = "lease"
SETTLE = 1.0  # seconds between writing our lease and reading it back
POLL = 0.5  # seconds between looks at a lease another sync holds

log = logging.getLogger("assistant")


class LostLeaseError(IndexBusyError):
    """Another sync took the lease while this one ran (it ran past the expiry, or both took it at once)."""


class Lease:
    """`with Lease(store, seconds, wait):` holds the server's sync lease; IndexBusyError after `wait` seconds."""

    def __init__(self, store: ServerStore, seconds: float, wait: float, settle: float = SETTLE) -> None:
        self.store = store
        self.seconds = seconds
        self.wait = wait
        self.settle = settle
        self.owner = f"{socket.gethostname()} pid {os.getpid()}"
        self.token = uuid.uuid4().hex
        self.lost: dict[str, Any] | None = None  # the lease that replaced ours
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None

    def __enter__(self) -> Lease:
        deadline = time.monotonic() + self.wait
        while True:
            current = self.store.read(LEASE)
            if current is None or current.get("token") == self.token or expired(current):
                if current is not None and current.get("token") != self.token:
                    log.info("Taking over the sync lease of %s, which expired", current.get("owner", "another sync"))
                self._write()
                time.sleep(self.settle)
                if (self.store.read(LEASE) or {}).get("token") == self.token:
                    break
                continue  # another sync wrote after us: its lease stands, wait for it
            if time.monotonic() >= deadline:
                until = time.strftime("%H:%M:%S", time.localtime(float(current.get("expires", 0))))
                raise IndexBusyError(
                    f"Another sync of the index on {self.store.where} is running ({current.get('owner', 'unknown')}, "
                    f"its lease runs until {until} unless renewed); waited {self.wait:.0f}s - let it finish, "
                    "then run: assistant index"
                )
            time.sleep(POLL)
        self._renewer = threading.Thread(target=self._renew, name="sync-lease", daemon=True)
        self._renewer.start()
        self.store.before_commit = self.confirm
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self.store.before_commit = None
        if self._renewer is not None:
            self._renewer.join(timeout=5)
        try:
            if (self.store.read(LEASE) or {}).get("token") == self.token:
                self.store.remove(LEASE)
        except Exception as error:  # the server went away: the lease expires on its own
            log.info("The sync lease was left to expire (%s)", type(error).__name__)

    def _write(self) -> None:
        now = time.time()
        expires = now + self.seconds
        record = {"owner": self.owner, "token": self.token, "taken": now, "expires": expires}
        self.store.write(LEASE, record, token=self.token, expires=expires)

    def _renew(self) -> None:
        """Every third of the lease: extend it while it is still ours, else note who took it."""
        while not self._stop.wait(self.seconds / 3):
            try:
                current = self.store.read(LEASE)
                if (current or {}).get("token") != self.token:
                    self.lost = current or {"owner": "nobody (it was deleted)"}
                    return
                self._write()
            except Exception as error:  # a brief outage: the next renewal tries again; the check before commit decides
                log.info("Could not renew the sync lease (%s)", type(error).__name__)

    def confirm(self) -> None:
        """Before the commit: the lease is still ours and unexpired (extended when it is near its end), else
        LostLeaseError and nothing is committed."""
        current = self.store.read(LEASE) or {}
        if self.lost is None and current.get("token") == self.token and not expired(current):
            if expired(current, margin=self.seconds / 2):
                self._write()  # the commit is one write away: no renewal should be due during it
            return
        if self.lost is None and current.get("token") == self.token:
            why = "its lease on {where} expired (it was not renewed in time)"
        else:
            why = f"it lost its lease on {{where}} to {(current or self.lost or {}).get('owner', 'another sync')}"
        raise LostLeaseError(
            f"This sync committed nothing: {why.format(where=self.store.where)}; the index answers as before - "
            "let any other sync finish, then run: assistant index"
        )


def expired(lease: dict[str, Any], margin: float = 0.0) -> bool:
    """Whether the lease's expiry (wall-clock seconds) has passed, `margin` seconds early."""
    try:
        return float(lease.get("expires", 0)) <= time.time() + margin
    except (TypeError, ValueError):
        return True
