"""The chat UI's event handlers: thin calls into the Assistant, rendering by `ui.render` / `ui.cards`.

One `ChatHandlers` serves every session; the per-session state (a `ui.session.Session` of typed
turns, kept in a `gr.State`) is passed into each call, so concurrent users never share history.
"""

from __future__ import annotations

import logging
import threading
import time
import traceback

import gradio as gr

from assistant.assistant import Assistant
from assistant.errors import AssistantError
from assistant.models import StreamCutOffError
from assistant.redaction import redact
from assistant.types import Answer, Source
from ui import render
from ui.cards import PLACEHOLDER, entry_card
from ui.feedback import record_feedback, vote_of, write_export
from ui.session import Session, Turn

log = logging.getLogger(__name__)

FILTERS = {"Both": None, "Concepts": "concept", "Abstracts": "abstract"}
# While an answer streams in, the chat is updated at most every STREAM_EVERY seconds and only when
# its text changed; each update only appends to the message (no cursor, no re-rendered prefix), so
# Gradio's diff sends just the new characters instead of the whole message again.
STREAM_EVERY = 0.1
BUSY = "Still answering your previous question - wait for it to finish, then ask again."


def new_session() -> Session:
    return Session()


def retrieved_before(error: AssistantError) -> list[Source]:
    """The sources retrieved before the model failed (the chain attaches them to its ModelError)."""
    return list(getattr(error, "sources", None) or [])


class ChatHandlers:
    """The event handlers of one app; each call works on the caller's own session dict."""

    def __init__(self, assistant: Assistant) -> None:
        self.assistant = assistant
        self._answering: set[object] = set()  # sessions with an answer running: one each
        self._answering_lock = threading.Lock()

    def _claim(self, key: object) -> bool:
        """Start an answer for session `key`; False while one is still running for it."""
        with self._answering_lock:
            if key in self._answering:
                return False
            self._answering.add(key)
            return True

    def _release(self, key: object) -> None:
        with self._answering_lock:
            self._answering.discard(key)

    def log_failure(self, what: str, subject: str) -> None:
        """Log the exception being handled, with its traceback, minus the API key and URL passwords."""
        key = self.assistant.settings.openai_api_key
        log.error("%s %r failed\n%s", what, redact(subject[:200], key), redact(traceback.format_exc(), key).rstrip())

    # --- answering ----------------------------------------------------------------------

    def _stream(self, question: str, history: list[tuple[str, str]], kind: str | None):
        return self.assistant.stream(question, history, kind=kind)

    def messages(self, session: Session, partial: str | None = None) -> list[dict[str, str]]:
        out: list[dict[str, str]] = []
        turns = session.turns
        for index, turn in enumerate(turns):
            out.append({"role": "user", "content": render.user_message(turn.question)})
            if turn.answer:
                if turn.rendered is None:  # a finished answer is rendered once, not on every delta
                    turn.rendered = render.render_answer(turn.answer, turn.numbering, turn=index)
                content = turn.rendered
            elif turn.error:
                content = render.render_error(turn.error, len(turn.sources))
            elif index == len(turns) - 1 and partial is not None:
                content = render.render_partial(partial)
            else:
                content = "…"
            out.append({"role": "assistant", "content": content})
        return out

    def respond(self, question: str, session: Session, filter_label: str, request: gr.Request | None = None):
        """Generator: the chat with the answer streaming in, then the verified answer and panels.

        One answer runs per session: a second question while the first is answering is refused
        (and stays in the box), so one user cannot take every answering slot. The answer's
        deadline (ASSISTANT_ANSWER_DEADLINE, enforced in `assistant.models.calls`) frees the slot.
        """
        key = getattr(request, "session_hash", None) or id(session)
        if not self._claim(key):
            gr.Info(BUSY)
            skip = gr.skip()
            yield skip, skip, skip, skip, skip, skip, skip
            return
        try:
            yield from self._respond(question, session, filter_label)
        finally:
            self._release(key)

    def _respond(self, question: str, session: Session, filter_label: str):
        question = question or ""
        kind = FILTERS.get(filter_label)
        history = session.history()
        turn = Turn(question.strip())
        session.turns.append(turn)
        skip = gr.skip()
        yield self.messages(session, ""), session, "", skip, skip, skip, skip
        parts: list[str] = []
        shown, shown_text = 0.0, ""
        try:
            for part in self._stream(question, history, kind):
                if isinstance(part, Answer):
                    turn.numbering = render.number_citations(part.text, part.citations)
                    turn.answer = part
                    continue
                parts.append(part)
                if time.monotonic() - shown >= STREAM_EVERY:
                    text = "".join(parts)
                    parts = [text]
                    if render.partial_visible(text) != render.partial_visible(shown_text):
                        shown, shown_text = time.monotonic(), text
                        yield self.messages(session, text), session, skip, skip, skip, skip, skip
            if turn.answer is None:
                raise RuntimeError("the answer stream ended without an Answer")
        except StreamCutOffError as err:
            turn.error = f"{err} (partial reply: {render.shorten(err.partial, 300)})"
            turn.sources = retrieved_before(err)
        except AssistantError as err:
            turn.error = str(err) or render.GENERIC_ERROR
            turn.sources = retrieved_before(err)
        except Exception:
            self.log_failure("answering", question)
            turn.error = render.GENERIC_ERROR
        if turn.answer:
            turn.sources = turn.answer.sources
        session.selected = len(session.turns) - 1
        chips, sources, picker = self.panels(session, filter_label)
        yield self.messages(session), session, "", chips, sources, picker, PLACEHOLDER

    # --- panels ---------------------------------------------------------------------------

    def panels(self, session: Session, filter_label: str, chip: str | None = None):
        turn = session.selected_turn()
        choices = render.chip_choices(turn.answer, turn.numbering) if turn else []
        chips = gr.update(choices=choices, value=chip, visible=bool(choices))
        sources = turn.sources if turn else []
        html = render.sources_html(sources, FILTERS.get(filter_label), "")
        picker = gr.update(choices=render.source_choices(sources), value=None)
        return chips, html, picker

    def refilter(self, session: Session, filter_label: str):
        """A new filter re-draws the selected answer's sources panel; the next question uses it too."""
        _, html, picker = self.panels(session, filter_label)
        return html, picker

    def card(self, session: Session, entry_id: str | None) -> str:
        """The card of an entry, with its quote when the selected answer cites it."""
        if not entry_id:
            return PLACEHOLDER
        turn = session.selected_turn()
        cited = turn.answer.citations if turn and turn.answer else []
        citation = next((c for c in cited if c.entry_id == entry_id), None)
        number = turn.numbering.get(entry_id) if turn and citation else None
        try:
            entry = self.assistant.entry(entry_id)
        except Exception:
            self.log_failure("opening entry", entry_id)
            entry = None
        return entry_card(
            entry,
            citation.quote if citation else None,
            number=number,
            supported=citation.supported if citation else True,
            entry_id=entry_id,
        )

    def open_chip(self, entry_id: str | None, session: Session) -> str:
        return self.card(session, entry_id)

    def open_inline_chip(self, target: str, session: Session, filter_label: str):
        """A click on a chip inside the chat ("turn|entry id|nonce"): select that turn, open the card."""
        turn_text, _, rest = (target or "").partition("|")
        entry_id = rest.rpartition("|")[0] or rest
        if turn_text.isdigit() and int(turn_text) < len(session.turns):
            session.selected = int(turn_text)
        chips, html, picker = self.panels(session, filter_label, chip=entry_id or None)
        return session, chips, html, picker, self.card(session, entry_id)

    def select_message(self, session: Session, filter_label: str, data: gr.SelectData):
        """Clicking an earlier answer shows its chips and sources."""
        index = data.index[0] if isinstance(data.index, list | tuple) else data.index
        turn_index = int(index) // 2
        if turn_index == session.selected or turn_index >= len(session.turns):
            return gr.skip(), gr.skip(), gr.skip(), gr.skip()
        session.selected = turn_index
        chips, html, picker = self.panels(session, filter_label)
        return session, chips, html, picker

    # --- feedback, export, reset ------------------------------------------------------------

    def like(self, session: Session, data: gr.LikeData) -> None:
        index = data.index[0] if isinstance(data.index, list | tuple) else data.index
        turns = session.turns
        turn_index = int(index) // 2
        vote = vote_of(data.liked)
        if vote is None or turn_index >= len(turns) or not turns[turn_index].answer:
            return
        record_feedback(self.assistant.settings.home, turns[turn_index], vote)
        gr.Info("Thanks - your feedback was saved.")

    def export(self, session: Session):
        if not session.turns:
            gr.Warning("Nothing to export yet - ask a question first.")
            return gr.update(value=None, visible=False)
        path = write_export(session.turns, self.assistant.model_label)
        return gr.update(value=str(path), visible=True)

    def clear(self):
        chips, html, picker = self.panels(new_session(), "Both")
        return [], new_session(), chips, html, picker, PLACEHOLDER, gr.update(value=None, visible=False)

    # --- /chat API --------------------------------------------------------------------------

    def chat_api(self, question: str, history: list | None = None, request: gr.Request | None = None) -> dict:
        """Answer a question; history is a list of [role, text] pairs. Errors come back as {"error": ...}.

        As in the chat, one answer runs per client session at a time."""
        try:
            pairs = render.parse_history(history)
        except ValueError as err:
            return {"error": str(err)}
        key = ("api", getattr(request, "session_hash", None) or object())
        if not self._claim(key):
            return {"error": BUSY}
        try:
            return render.api_payload(self.assistant.ask(question, pairs))
        except AssistantError as err:
            return {"error": str(err) or render.GENERIC_ERROR}
        except Exception:
            self.log_failure("/chat for", str(question))
            return {"error": render.GENERIC_ERROR}
        finally:
            self._release(key)
