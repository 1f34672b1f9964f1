"""`POST /assistant/ask`: a question from `assistant ask` on this server's home, answered by this server.

The command line would otherwise load the index, the encoder and the model for one question. A
caller proves it can read the home by sending the token the server wrote into its serving marker
(`assistant.index.serving`); the UI's login does not apply, as reading the home gives the index
anyway. The server answers only when it would answer as the caller would in-process: the same
answering settings (`Settings.answering_digest`) and an index that is the committed one with nothing
to sync (`Assistant.is_current`). Anything else is an error status, and the caller answers itself.
"""

from __future__ import annotations

import hmac
import json
from typing import Any

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from assistant import Assistant, AssistantError
from assistant.index.serving import ASK_ROUTE


def ask_route(assistant: Assistant, token: str, concurrency: int) -> Route:
    """The route, answering at most `concurrency` questions at once on worker threads."""
    limiter = anyio.CapacityLimiter(concurrency)

    async def ask(request: Request) -> JSONResponse:
        try:
            body: Any = json.loads(await request.body())
        except ValueError:
            return JSONResponse({"error": "the body is not JSON"}, status_code=400)
        if not isinstance(body, dict) or not hmac.compare_digest(str(body.get("token", "")), token):
            return JSONResponse({"error": "not this home's token"}, status_code=403)
        question = body.get("question")
        if not isinstance(question, str) or not question.strip():
            return JSONResponse({"error": "no question"}, status_code=400)
        if body.get("settings") != assistant.settings.answering_digest():
            return JSONResponse({"error": "answering settings differ"}, status_code=409)
        try:
            answer = await anyio.to_thread.run_sync(answer_if_current, assistant, question, limiter=limiter)
        except AssistantError as error:
            return JSONResponse({"error": str(error)}, status_code=503)
        if answer is None:
            return JSONResponse({"error": "the index has changed since this server loaded it"}, status_code=409)
        return JSONResponse({"answer": answer})

    return Route(ASK_ROUTE, ask, methods=["POST"])


def answer_if_current(assistant: Assistant, question: str) -> dict[str, Any] | None:
    """The answer as a dict, or None when the index is not what a new process would answer from."""
    if not assistant.is_current():
        return None
    return assistant.ask(question).to_dict()
