"""What the server keeps per session: bounded, and forgotten once the session goes quiet.

Gradio keeps, for every session it has seen, a copy of the page's state (about 60 KB with this
page), an asyncio queue for its messages and an entry in its queue's bookkeeping, and drops
none of them when the session goes quiet: `/chat` from a script is a new session per call, so
the server grew by about 60 KB a request up to the session cap (`MAX_SESSIONS`), its queue
entries grew on past it, and nothing was released when idle (scripts/soak_memory.py).

`forget_idle` drops a session nobody is waiting on once it has gone `QUIET_SECONDS` without a
request while holding no conversation (a script's call, a page where nothing was asked), or
`IDLE_SECONDS` while holding one, together with Gradio's queue entries for it. It also caps
Gradio's per-event records and its login cookies, which grow by one per event and per login.
`SessionSweeper` runs it every `SWEEP_SECONDS` on the server's event loop, where Gradio changes
those structures, so never in the middle of one of Gradio's changes.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime
from typing import Any

log = logging.getLogger(__name__)

MAX_SESSIONS = 500  # sessions kept at most; the least recently used beyond it are forgotten
IDLE_SECONDS = 3 * 3600.0  # a conversation untouched this long is emptied
QUIET_SECONDS = 5.0  # a session without a conversation is forgotten after this long without a request
SWEEP_SECONDS = 1.0
ANALYTICS_EVENTS = 1000  # Gradio's per-event records for its monitoring page (off here); it keeps 10,000
LOGINS_KEPT = 10_000  # login cookies honoured (ASSISTANT_UI_AUTH); Gradio keeps every one it issued


def holds_conversation(state: Any) -> bool:
    """Whether a Gradio session's state holds a conversation with at least one turn (`ui.session`)."""
    return any(getattr(value, "turns", None) for value in getattr(state, "state_data", {}).values())


def forget_idle(blocks: Any, now: datetime | None = None) -> int:
    """Forget the quiet and idle sessions of a launched app and Gradio's queue entries for them.

    A session with an event queued or running is kept. Returns how many sessions were forgotten.
    Call it on the server's event loop, or when no request is being served.
    """
    holder, queue = blocks.state_holder, blocks._queue
    now = now or datetime.now()
    pending: dict[str, set[str]] = queue.pending_event_ids_session
    forgotten = 0
    with holder.lock:
        for session in list(holder.session_data):
            if pending.get(session):
                continue
            used = holder.time_last_used.get(session)
            quiet = (now - used).total_seconds() if used else float("inf")
            limit = IDLE_SECONDS if holds_conversation(holder.session_data.get(session)) else QUIET_SECONDS
            if quiet > limit:
                holder.session_data.pop(session, None)
                holder.time_last_used.pop(session, None)
                forgotten += 1
        held = set(holder.session_data)
    for session in list(pending):
        if not pending.get(session) and session not in held:
            pending.pop(session, None)
    messages = queue.pending_messages_per_session
    for session in list(messages):
        waiting = messages.get(session)
        if session not in held and session not in pending and waiting is not None and waiting.empty():
            messages.pop(session, None)
    queue.ANALYTICS_MAX_EVENTS = min(queue.ANALYTICS_MAX_EVENTS, ANALYTICS_EVENTS)
    analytics = queue.event_analytics
    while len(analytics) > queue.ANALYTICS_MAX_EVENTS:
        analytics.pop(next(iter(analytics)))
    tokens = getattr(getattr(blocks, "server_app", None), "tokens", None)
    if isinstance(tokens, dict) and len(tokens) > LOGINS_KEPT:  # the oldest logins must log in again
        for token in list(tokens)[: len(tokens) - LOGINS_KEPT]:
            tokens.pop(token, None)
    return forgotten


async def sweep_while_serving(server_app: Any) -> None:
    """Every SWEEP_SECONDS, `forget_idle` on the app; until cancelled when the server stops."""
    blocks = server_app.get_blocks()
    while True:
        try:
            forget_idle(blocks)
        except Exception:  # a Gradio whose structures changed: keep serving, say why memory may grow
            log.exception("Forgetting idle sessions failed; they stay until the session cap evicts them")
            return
        await asyncio.sleep(SWEEP_SECONDS)


class SessionSweeper:
    """ASGI middleware: runs `sweep_while_serving` for as long as the server runs (its lifespan)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") != "lifespan" or "app" not in scope:
            await self.app(scope, receive, send)
            return
        task = asyncio.create_task(sweep_while_serving(scope["app"]))
        try:
            await self.app(scope, receive, send)
        finally:
            task.cancel()
