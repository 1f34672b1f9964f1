"""`assistant ask` answered by an `assistant serve` already running on the same home.

A fresh process spends most of its time loading (Chroma, the encoder, the lexical index); a server
on the same home has all of it loaded. The server's marker (`<home>/serving.json`,
`assistant.index.serving`) gives its address and a token; the question goes there with the token
and the digest of this process's answering settings. The server answers only as this process
would (the same settings, its index the committed one with nothing to sync); anything else - no
live server, a refusal, a dropped connection, a reply that is not an answer - is None, and the
caller answers in-process. Standard library only: nothing heavy is imported to ask.
"""

from __future__ import annotations

import json
from typing import Any

from assistant.index.freshness import followed_knowledge
from assistant.index.serving import ASK_ROUTE, live_server
from assistant.settings import Settings
from assistant.types import Answer

CONNECT_SECONDS = 2.0  # a live local server accepts at once; the answer itself may take the model's deadline


def served_answer(settings: Settings, question: str) -> tuple[Answer, str] | None:
    """The answer of the server running on `settings.home` and its address, or None to answer in-process."""
    record = live_server(settings.home)
    url, token = (record or {}).get("url"), (record or {}).get("token")
    if not isinstance(url, str) or not isinstance(token, str):
        return None  # no live server, or one that does not answer the command line
    import urllib.request  # only with a server to ask (http.client, ssl: not needed to answer in-process)

    digest = followed_knowledge(settings).answering_digest()
    body = json.dumps({"question": question, "token": token, "settings": digest}).encode("utf-8")
    request = urllib.request.Request(
        url.rstrip("/") + ASK_ROUTE, data=body, headers={"Content-Type": "application/json"}, method="POST"
    )
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # the server is local: no proxy
    try:
        with opener.open(request, timeout=CONNECT_SECONDS + settings.answer_deadline) as response:
            payload: Any = json.load(response)
        return Answer.from_dict(payload["answer"]), url
    except (OSError, ValueError, KeyError, TypeError, AttributeError):  # HTTP errors are OSErrors
        return None
