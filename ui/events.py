"""Event data from the browser, read without trusting it.

Gradio builds `gr.LikeData`, `gr.SelectData` and `gr.RetryData` from the event's payload and
raises inside its own code (a traceback in the server log) when the payload is `null` or lacks a
key. `ChatEvent` takes the same place in a handler's signature (Gradio passes it because it is an
`EventData`) but reads whatever came: a missing or malformed field is None, and `turn_index`
says which conversation turn a message index points at, or None.
"""

from __future__ import annotations

from typing import Any

import gradio as gr


class ChatEvent(gr.EventData):
    """A chat message's like, select or retry event: `index`, `value`, `liked`, each None when absent."""

    def __init__(self, target: Any, _data: Any) -> None:
        data = _data if isinstance(_data, dict) else {}
        super().__init__(target, data)
        self.index: Any = data.get("index")
        self.value: Any = data.get("value")
        self.liked: Any = data.get("liked")


NO_EVENT = ChatEvent(None, None)  # a call that came without event data at all


def turn_index(data: Any) -> int | None:
    """The turn a chat message index points at (a turn is a question and its answer), or None."""
    index = getattr(data, "index", None)
    if isinstance(index, list | tuple):
        index = index[0] if index else None
    if isinstance(index, bool) or not isinstance(index, int | str):
        return None
    try:
        value = int(index)
    except ValueError:
        return None
    return value // 2 if value >= 0 else None
