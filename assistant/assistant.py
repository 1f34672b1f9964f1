"""`Assistant`: the one object the Python API, the CLI, the chat UI and the evaluation share."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from assistant.answer.followups import History
from assistant.errors import AssistantError, IndexUnavailableError, SettingsError
from assistant.index.chroma_index import Index, RemovalRefused, SyncReport, is_disk_full
from assistant.index.embeddings import Embedder
from assistant.index.follow import CommitFollower
from assistant.index.freshness import followed_knowledge, knowledge_names, knowledge_problem
from assistant.index.lock import IndexBusyError
from assistant.index.read_copy import is_read_only
from assistant.index.serving import check_not_served_otherwise
from assistant.question.encoders import SHIPPED, SentenceEncoders
from assistant.retrieval.search import Retriever
from assistant.settings import Settings
from assistant.types import Answer, Entry, KnowledgeStatus, Source

if TYPE_CHECKING:  # LangChain is imported when a question is first answered, not to open or sync the index
    from langchain_core.language_models import BaseChatModel

    from assistant.answer.chain import AnswerChain
    from assistant.answer.models import ChatModel
    from assistant.answer.models.data_reply import DataReplyModel

log = logging.getLogger("assistant")


class Assistant:
    """Opens the index, syncs it with `settings.knowledge` when it holds other knowledge, and answers.

    With `auto_index` (the default) a start on an index built from other paths, or from files that
    changed since, syncs it first (`sync_knowledge`); an index that is up to date costs a look at the
    manifest and a stat of each file. `embedder` and `model` replace the configured embedding and
    chat models (tests pass fakes); `model` is a LangChain chat model, a model that answers from data
    (`DataReplyModel`, as the extractive one) or an `assistant.answer.models.ChatModel` that also says
    what it can do. `encoders` replace the sentence encoders every reading of the question uses besides
    the index's (`question.encoders`: the learned readers' MiniLM and the offline model's static
    encoder); an `embedder` alone leaves them as shipped, since the readers' weights were fitted on
    MiniLM's vectors.
    """

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        embedder: Embedder | None = None,
        model: BaseChatModel | DataReplyModel | ChatModel | None = None,
        encoders: SentenceEncoders | None = None,
        auto_index: bool = True,
    ) -> None:
        settings = settings or Settings.from_env()
        if settings.chroma_url:  # the knowledge followed is the one the server's manifest names
            self._index = Index(settings, embedder)
            self.settings = followed_knowledge(settings, self._index.manifest_or_none())
            self._index.settings = self.settings
        else:
            self.settings = followed_knowledge(settings)
            self._index = Index(self.settings, embedder)
        self._model = model
        self._chat_model: ChatModel | None = None
        self.encoders = encoders or SHIPPED
        self._chain: AnswerChain | None = None
        self._retriever = Retriever(self._index, self.settings)
        self._follower: CommitFollower | None = None
        self._refused: tuple[int, str | None] | None = None  # a committed generation this one cannot use
        if auto_index and self.settings.sync_at_start:
            self.sync_knowledge()

    # --- knowledge -------------------------------------------------------------------

    def index(
        self,
        paths: Iterable[Path | str] | None = None,
        *,
        rebuild: bool = False,
        progress: bool | None = None,
        allow_removal: bool = False,
        announce: Callable[[], None] | None = None,
    ) -> SyncReport:
        """Sync the knowledge into the index; returns counts of what changed.

        `paths` become the knowledge this home follows (recorded in the manifest as absolute paths, so
        later starts without ASSISTANT_KNOWLEDGE follow them from any folder). A path that does not
        exist or cannot be read is a SettingsError before anything changes, and a sync that would remove
        more than half of the index by mistake refuses (`assistant.index.removal_guard`) unless `allow_removal`.
        `announce` is called once the sync has passed its checks, before it changes anything.
        """
        given = None if paths is None else [Path(p) for p in paths]
        problem = knowledge_problem(given, "check the path") if given else knowledge_problem(self.settings.knowledge)
        if problem:
            raise SettingsError(problem)
        if given is not None:
            given = [p if p.is_absolute() else p.absolute() for p in given]
        report = self._index.sync(
            given, rebuild=rebuild, progress=progress, allow_removal=allow_removal, announce=announce
        )
        if given is not None:
            self.settings = self.settings.with_(knowledge=tuple(given))
            self._index.settings = self.settings
        self._retriever = Retriever(self._index, self.settings)
        self._chain = None
        return report

    def sync_knowledge(self) -> SyncReport | None:
        """Sync when the index does not hold `settings.knowledge` as it is on disk; None when it already does.

        A knowledge path that is missing or unreadable is a SettingsError: syncing without it
        would drop its entries. A sync that cannot finish for a full disk, a home that may not be
        written (an index baked into an image) or another sync holding the lock too long leaves the
        committed index answering, with a warning.
        """
        reason = self._index.stale_reason()
        if reason is None:
            return None
        problem = knowledge_problem(self.settings.knowledge)
        if problem:
            raise SettingsError(problem)
        check_not_served_otherwise(self.settings.home, self.settings.knowledge)  # before saying it indexes

        announced: list[bool] = []

        def announce() -> None:  # once the sync runs or fails to: a refusal is the one line said
            if not announced:
                announced.append(True)
                log.info("Indexing %s: %s", ":".join(knowledge_names(self.settings.knowledge)), reason)

        try:
            report = self.index(announce=announce)
        except RemovalRefused as refused:  # most of the knowledge is gone: keep answering from what is indexed
            log.warning("%s", str(refused).replace("nothing was changed", "answering from the index as it was"))
            return None
        except IndexUnavailableError as error:  # a full disk or a busy lock: the last commit still answers
            announce()  # why a sync was tried, then why it could not run
            if self._index.is_empty or not (
                isinstance(error, IndexBusyError) or is_disk_full(error) or is_read_only(error)
            ):
                raise  # nothing to answer from, or nothing would answer (a Chroma server gone)
            log.warning("%s; answering from the index as it was", str(error).rstrip("."))
            return None
        for skipped in report.skipped:
            log.warning("skipped %s", skipped)
        log.info("Indexed: %s", report.summary())
        return report

    def load(self) -> None:
        """Load now what the first question would wait for: the encoder, the vectors, the lexical index,
        the chat model, the token table a long context is counted with. The server calls it before it says
        it is ready; an empty index loads nothing."""
        self._chain = self.chain  # builds the chat model (LangChain only for a model that uses it)
        if not self._index.is_empty and self._index.mismatch is None:
            self._retriever.retrieve("loading", k=1)
            from assistant.text import encoding

            encoding()  # tiktoken's table: about 0.1 s, paid by the first long context otherwise

    def is_current(self) -> bool:
        """Whether this Assistant answers as a new one on this home would: from the committed generation,
        which holds the configured knowledge as it is on disk (no sync due). A running server checks it
        before it answers for `assistant ask`."""
        index = self._index
        return index.mismatch is None and index.committed() == index.loaded and index.stale_reason() is None

    def refresh(self) -> bool:
        """Switch to a newer committed generation, when there is one; True when it switched.

        The new generation is loaded beside the one answering (its entries, its lexical index, the
        retriever's name tables) and then swapped in: a question already being answered finishes on
        the generation it started with. A store that cannot say (a server gone) keeps what is loaded.
        """
        current = self._index
        committed = current.committed()
        if committed is None or committed in (current.loaded, self._refused) or not committed[0]:
            return False  # unreadable, unchanged, refused before, or none: keep answering
        started = time.perf_counter()
        fresh = current.successor()
        if fresh.mismatch is not None:
            self._refused = committed  # said once, not at every poll
            log.warning(
                "Generation %d cannot be used (%s); answering from generation %d",
                committed[0],
                fresh.mismatch,
                current.generation,
            )
            return False
        retriever = Retriever(fresh, self.settings)
        if not fresh.is_empty:
            retriever.retrieve("loading", k=1)  # builds what the first question would wait for
        chain = None
        if self._chain is not None:
            from assistant.answer.chain import AnswerChain

            chain = AnswerChain(self.settings, fresh, retriever, self.chat_model, self.encoders)
        self._index, self._retriever, self._chain = fresh, retriever, chain
        log.info(
            "Switched from generation %d to %d (%d entries, %d chunks) in %.1f s",
            current.generation,
            fresh.generation,
            len(fresh.entries),
            len(fresh.chunks),
            time.perf_counter() - started,
        )
        return True

    def follow_commits(self, seconds: float | None = None) -> CommitFollower:
        """Look for a newer committed generation every `seconds` (default `settings.refresh_seconds`) on a
        thread of its own, and switch to it (`refresh`); what replicas on a Chroma server run."""
        if self._follower is None:
            self._follower = CommitFollower(self.refresh, seconds or self.settings.refresh_seconds)
        return self._follower

    def stop_following(self) -> None:
        if self._follower is not None:
            self._follower.stop()
            self._follower = None

    @property
    def retriever(self) -> Retriever:
        """The hybrid retriever over the index (tools time its parts)."""
        return self._retriever

    def entry(self, entry_id: str) -> Entry | None:
        return self._index.entry(entry_id)

    @property
    def entries(self) -> dict[str, Entry]:
        return {entry_id: item.entry for entry_id, item in self._index.entries.items()}

    def status(self) -> KnowledgeStatus:
        """The knowledge loaded (as configured and as indexed), its size and age, and the model label."""
        summary = self._index.manifest_summary()
        kinds = self._retriever.tables.kinds if not self._index.is_empty else {}  # counted once per generation
        return KnowledgeStatus(
            knowledge=tuple(Path(p).as_posix() for p in self.settings.knowledge),
            indexed_from=tuple(str(p) for p in summary.get("knowledge") or ()),
            concepts=kinds.get("concept", 0),
            papers=kinds.get("abstract", 0),
            chunks=len(self._index.chunks),
            indexed_at=summary.get("updated"),
            model=self.model_label,
            documents=kinds.get("document", 0),
        )

    def search(self, query: str, k: int = 8, *, kind: str | None = None, tags: list[str] | None = None) -> list[Source]:
        """Entry-level hybrid search, best first."""
        if not query or not query.strip():
            raise AssistantError("The search query is empty - type what to look for")
        self._index.require_entries()
        return self._retriever.retrieve(query, k=k, kind=kind, tags=tags).sources

    # --- answering -------------------------------------------------------------------

    @property
    def model_label(self) -> str:
        """Who answers ("answered by"), known without building the model."""
        if self._model is None:
            from assistant.answer.models import model_label

            return model_label(self.settings)
        return self.chat_model.label

    @property
    def chat_model(self) -> ChatModel:
        """The configured chat model (built on first use), or the one passed in."""
        if self._chat_model is None:
            from assistant.answer.models import ChatModel, DataReplyModel, make_chat_model

            if self._model is None:
                self._chat_model = make_chat_model(self.settings)
            elif isinstance(self._model, ChatModel):
                self._chat_model = self._model
            else:  # a bare model: a computed reply cannot rewrite questions, a real LLM can
                from assistant.answer.models.text_reply import TextReplyModel  # a LangChain model was passed

                name = getattr(self._model, "_llm_type", "custom")
                computed = isinstance(self._model, DataReplyModel | TextReplyModel)
                self._chat_model = ChatModel(self._model, name, name, not computed)
        return self._chat_model

    @property
    def chain(self) -> AnswerChain:
        if self._chain is None:
            from assistant.answer.chain import AnswerChain

            self._chain = AnswerChain(self.settings, self._index, self._retriever, self.chat_model, self.encoders)
        return self._chain

    def stream(
        self, question: str, history: History | None = None, *, kind: str | None = None
    ) -> Iterator[str | Answer]:
        """Text deltas as they are generated, then the final verified Answer as the last item.

        `kind` ("concept" or "abstract") restricts what the answer may draw on.
        """
        yield from self.chain.stream(question, history, kind)

    def ask(self, question: str, history: History | None = None, *, kind: str | None = None) -> Answer:
        answer = None
        for part in self.stream(question, history, kind=kind):
            if isinstance(part, Answer):
                answer = part
        assert answer is not None
        return answer


_default: Assistant | None = None


def ask(question: str, history: History | None = None) -> Answer:
    """Module-level shortcut: one Assistant with default settings, created on first use."""
    global _default
    if _default is None:
        _default = Assistant()
    return _default.ask(question, history)
