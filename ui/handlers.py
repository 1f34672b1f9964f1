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

from assistant import Answer, Assistant, AssistantError, Source, StreamCutOffError
from assistant.redaction import redact
from ui import render
from ui.cards import PLACEHOLDER, entry_card
from ui.events import NO_EVENT, ChatEvent, turn_index
from ui.examples import example_questions
from ui.header import header_html
from ui.ratings import record_feedback, vote_of, write_export
from ui.session import Session, Turn
from ui.sources import sources_html

log = logging.getLogger(__name__)

FILTERS = {"Both": None, "Concepts": "concept", "Abstracts": "abstract"}
# While an answer streams in, the chat is updated at most every STREAM_EVERY seconds and only when
# its text changed; each update only appends to the message (no cursor, no re-rendered prefix), so
# Gradio's diff sends just the new characters instead of the whole message again.
STREAM_EVERY = 0.1
OUTPUTS = 6  # what an answering event updates: chat, session, question box, sources, card, widen button
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
                    turn.rendered = render.render_answer(turn.answer, turn.numbering, turn=index, kind=turn.kind)
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

        Yields (chatbot, session, question box, sources, card, widen button). One answer runs per
        session: a second question while the first is answering is refused (and stays in the box),
        so one user cannot take every answering slot. The answer's deadline
        (ASSISTANT_ANSWER_DEADLINE, enforced in `assistant.answer.models.calls`) frees the slot.
        """
        yield from self._guarded(request, session, question, filter_label, None)

    def retry(self, session: Session, filter_label: str, data: ChatEvent = NO_EVENT, request: gr.Request | None = None):
        """The Chatbot's retry button: ask that turn's question again, dropping it and what followed."""
        turn = turn_index(data)
        if turn is None or turn >= len(session.turns):
            yield (gr.skip(),) * OUTPUTS
            return
        yield from self._guarded(request, session, session.turns[turn].question, filter_label, turn)

    def widen(self, session: Session):
        """'Search everything': the filter back to Both and the refused question back in the box."""
        turn = session.refused_under_filter()
        return "Both", turn.question if turn else gr.skip()

    def _guarded(self, request, session: Session, question: str, filter_label: str, drop_from: int | None):
        key = getattr(request, "session_hash", None) or id(session)
        if not self._claim(key):
            gr.Info(BUSY)
            yield (gr.skip(),) * OUTPUTS
            return
        try:
            if drop_from is not None:
                del session.turns[drop_from:]
            yield from self._respond(question, session, filter_label)
        except Exception:  # never a traceback in the page: whatever slipped through is logged
            self.log_failure("answering", str(question))
            yield (gr.skip(),) * OUTPUTS
        finally:
            self._release(key)

    def _respond(self, question: str, session: Session, filter_label: str):
        # what the turn keeps and the chat shows is bounded like what the chain reads (a 50 MB paste)
        question = (question if isinstance(question, str) else "")[: self.assistant.settings.question_chars]
        kind = FILTERS.get(filter_label)
        history = session.history()
        turn = Turn(question.strip(), kind=kind)
        session.turns.append(turn)
        skip = gr.skip()
        yield self.messages(session, ""), session, "", skip, skip, gr.update(visible=False)
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
                        yield self.messages(session, text), session, skip, skip, skip, skip
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
        widen = gr.update(visible=session.refused_under_filter() is not None)
        yield self.messages(session), session, "", self.panel(session, filter_label), PLACEHOLDER, widen

    def examples(self) -> list[str]:
        """Questions the loaded knowledge can answer (`ui.examples`); none if the index cannot be read."""
        try:
            return example_questions(self.assistant.entries.values())
        except Exception:
            self.log_failure("choosing", "example questions")
            return []

    # --- panels ---------------------------------------------------------------------------

    def panel(self, session: Session, filter_label: str) -> str:
        """The sources panel of the selected answer, labelled with what that answer searched."""
        turn = session.selected_turn()
        if turn is None:
            return sources_html([], filter_kind=FILTERS.get(filter_label))
        return sources_html(
            turn.sources,
            turn.kind,
            numbering=turn.numbering,
            turn=session.selected,
            filter_kind=FILTERS.get(filter_label),
            unverified=render.unverified_ids(turn.answer),
        )

    def refilter(self, session: Session, filter_label: str) -> str:
        """A new filter applies to the next question; the panel keeps the answer's own sources and says so."""
        return self.panel(session, filter_label)

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

    def open_target(self, target: str, session: Session, filter_label: str):
        """A tap on a citation marker or a source row ("turn|entry id|nonce"): select that turn, open the card."""
        turn_text, _, rest = (target or "").partition("|")
        entry_id = rest.rpartition("|")[0] or rest
        if turn_text.isdigit() and int(turn_text) < len(session.turns):
            session.selected = int(turn_text)
        return session, self.panel(session, filter_label), self.card(session, entry_id)

    def select_message(self, session: Session, filter_label: str, data: ChatEvent = NO_EVENT):
        """Clicking an earlier answer shows its sources."""
        turn = turn_index(data)
        if turn is None or turn == session.selected or turn >= len(session.turns):
            return gr.skip(), gr.skip()
        session.selected = turn
        return session, self.panel(session, filter_label)

    # --- feedback, export, reset ------------------------------------------------------------

    def like(self, session: Session, data: ChatEvent = NO_EVENT) -> None:
        turns = session.turns
        turn = turn_index(data)
        vote = vote_of(getattr(data, "liked", None))
        if vote is None or turn is None or turn >= len(turns) or not turns[turn].answer:
            return
        record_feedback(self.assistant.settings.home, turns[turn], vote)
        gr.Info("Thanks - your feedback was saved.")

    def export(self, session: Session):
        if not session.turns:
            gr.Warning("Nothing to export yet - ask a question first.")
            return gr.update(value=None, visible=False)
        path = write_export(session.turns, self.assistant.model_label)
        return gr.update(value=str(path), visible=True)

    def clear(self, filter_label: str = "Both"):
        html = self.panel(new_session(), filter_label)
        hidden = gr.update(value=None, visible=False)
        return [], new_session(), html, PLACEHOLDER, hidden, gr.update(visible=False)

    def offers_filter(self) -> bool:
        """Whether the Concepts / Abstracts filter means anything: the knowledge holds concept pages or
        paper abstracts (a team's documents alone have neither, so the filter is not shown)."""
        try:
            status = self.assistant.status()
        except Exception:
            self.log_failure("reading", "the index status")
            return True
        return bool(status.concepts or status.papers)

    def header(self) -> str:
        """The header, read again on each page load so it tells what the index holds now."""
        try:
            status = self.assistant.status()
        except Exception:
            self.log_failure("reading", "the index status")
            status = None
        try:
            label = self.assistant.model_label
        except Exception:
            self.log_failure("reading", "the model label")
            label = "unknown"
        return header_html(status, label)

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
