"""One frozen Settings object, read from the environment once and passed in explicitly.

Nothing else in the package reads ``os.environ`` for configuration; tests build a
``Settings(...)`` directly, so no test depends on the machine's environment.
"""

from __future__ import annotations

import hashlib
import ipaddress
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

from assistant.errors import SettingsError
from assistant.tuning import OfflineAnswerSettings, RefusalSettings, RetrievalSettings, SupportSettings

RETRIEVAL_MODES = ("hybrid", "dense", "lexical")
RERANKERS = ("auto", "learned", "maxsim", "off")


def reranking_for(rerank: str, kinds: Iterable[str]) -> str:
    """How a knowledge of entries of these kinds is re-ordered under `ASSISTANT_RERANK`: `auto` is the learned
    order on documents alone, whose sections the fusion tells apart least (it raised right-file recall@1 on five
    of six documentation sets and on both held-out ones, docs/evaluation.md), and the fused order on the pack,
    whose figures were set without it."""
    if rerank != "auto":
        return rerank
    return "learned" if set(kinds) == {"document"} else "off"


MODELS = ("auto", "extractive", "stub")  # and openai:<model>
MODEL_CHOICES = "auto, openai:<model>, extractive, stub"
# fields that change how a server or a sync runs, never what a question is answered with
NOT_ANSWERING = frozenset(
    {"home", "follows_home", "refresh_seconds", "lease_seconds", "sync_at_start", "commit_pause"}
    | {"host", "port", "ui_auth", "trusted_proxies"}
)
# the request field that bounds a reply's length on the server (assistant.answer.models.token_fields)
TOKEN_PARAMS = ("auto", "max_tokens", "max_completion_tokens")


@dataclass(frozen=True)
class Settings:
    home: Path = Path(".assistant")
    knowledge: tuple[Path, ...] = (Path("knowledge/seed"),)
    # ASSISTANT_KNOWLEDGE unset: follow the knowledge the home's index was last built from (what
    # `assistant index PATH` set), `knowledge` being the default for a home that holds none
    follows_home: bool = False
    model: str = "auto"
    embeddings: str = "local"
    chroma_url: str | None = field(default=None, repr=False)  # URLs may carry user:password
    # with a Chroma server: how often a replica looks for a newer committed generation, how long a sync's
    # lease lasts unless renewed, and whether starting syncs the knowledge (`serve --no-sync`: read only)
    refresh_seconds: float = 5.0
    lease_seconds: float = 60.0
    sync_at_start: bool = True
    # seconds a sync waits after writing a new generation, before committing it: only for tests that kill
    # a sync at that point (ASSISTANT_COMMIT_PAUSE)
    commit_pause: float = 0.0
    # links to files outside the folder they are in (`creds.txt -> ~/.aws/credentials`) are listed and
    # never read, unless this is on (ASSISTANT_FOLLOW_LINKS); links to folders are never followed
    follow_links: bool = False
    openai_api_key: str | None = field(default=None, repr=False)
    openai_base_url: str | None = field(default=None, repr=False)
    # chunking
    chunk_tokens: int = 200
    chunk_overlap_sentences: int = 1
    # retrieval and answering
    retrieval_mode: str = "hybrid"
    # the best fused candidates re-ordered: "learned" weighs late interaction with the fusion's evidence
    # (assistant.retrieval.learned_order), "maxsim" orders by late interaction alone
    # (assistant.retrieval.late_interaction), "off" keeps the fusion; "auto": learned on a knowledge of
    # documents alone, reading the pieces the sync kept (assistant.index.piece_signs), off on the pack, where
    # it gained 0-3 points on unseen sets (docs/retrieval-stages.md)
    rerank: str = "auto"
    # a third lexical leg searching the question with the rare words of the dense leg's best chunks
    # (assistant.retrieval.dense_feedback); always on under a re-ranking (the learned order weighs its rank);
    # off by default: without that order it gains nothing on unseen sets (docs/retrieval-stages.md)
    dense_feedback: bool = False
    top_k: int = 8
    context_tokens: int = 1800
    # sentences of each entry the model reads (those sharing most words with the question); 0: whole
    # chunks. For small models: docs/local-model.md measures what it does to a 270M model's answers
    context_sentences: int = 0
    question_tokens: int = 512
    # the tuned numbers of each stage, described in assistant/tuning.py; the refusal decision
    # (README "Refusals") reads ASSISTANT_REFUSAL_THRESHOLD into refusal.clear_miss
    retrieval: RetrievalSettings = field(default_factory=RetrievalSettings)
    refusal: RefusalSettings = field(default_factory=RefusalSettings)
    support: SupportSettings = field(default_factory=SupportSettings)
    offline_answer: OfflineAnswerSettings = field(default_factory=OfflineAnswerSettings)
    # openai-compatible model behaviour
    request_timeout: float = 30.0  # per read: a model that keeps sending can go on past it ...
    max_retries: int = 2
    answer_deadline: float = 90.0  # ... but a whole answer, retries included, ends within this
    max_tokens: int = 800  # reply tokens asked of the server; characters read are capped too
    # how max_tokens is sent: OpenAI's API wants max_completion_tokens (its reasoning models reject
    # max_tokens), while llama.cpp's Python server and others honour only max_tokens; "auto" sends
    # max_completion_tokens to OpenAI and both names to any other server
    token_param: str = "auto"
    # a generated reply that keeps no verified citation is replaced by the extractive answer to the same
    # context, after a note saying so (docs/local-model.md, "When nothing the model wrote verifies")
    extractive_fallback: bool = True
    # UI
    host: str = "127.0.0.1"
    port: int = 7860
    ui_auth: str | None = field(default=None, repr=False)
    # addresses (or networks) of reverse proxies in front of the UI: only their X-Forwarded-For
    # names the client the login throttle counts (ui/auth.py); by default the header is ignored
    trusted_proxies: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        """Every value is checked here, so a bad one stops the start with one line, before any work."""
        if (not self.model.startswith("openai:") and self.model not in MODELS) or self.model == "openai:":
            # the words of assistant.answer.models' own message (not imported: it would import LangChain)
            raise SettingsError(f"Unknown model {self.model!r} - set ASSISTANT_MODEL to one of: {MODEL_CHOICES}")
        if not 0 < self.port < 65536:
            raise SettingsError(f"ASSISTANT_PORT={self.port} is not a TCP port - give one from 1 to 65535")
        if not self.request_timeout > 0:
            raise SettingsError(f"ASSISTANT_TIMEOUT={self.request_timeout:g} must be above 0 - give seconds")
        if not 0 <= self.refusal.clear_miss <= 1:
            raise SettingsError(
                f"ASSISTANT_REFUSAL_THRESHOLD={self.refusal.clear_miss:g} must be from 0 to 1 "
                f"(default {RefusalSettings().clear_miss:.2f})"
            )
        if not self.answer_deadline > 0:
            raise SettingsError(f"ASSISTANT_ANSWER_DEADLINE={self.answer_deadline:g} must be above 0 - give seconds")
        if self.max_tokens < 1:
            raise SettingsError(f"ASSISTANT_MAX_TOKENS={self.max_tokens} must be at least 1 - give a token count")
        if self.context_sentences < 0:
            raise SettingsError(
                f"ASSISTANT_CONTEXT_SENTENCES={self.context_sentences} must be 0 (whole chunks) or more sentences"
            )
        if self.token_param not in TOKEN_PARAMS:
            raise SettingsError(
                f"ASSISTANT_TOKEN_PARAM={self.token_param!r} is not known - use one of {', '.join(TOKEN_PARAMS)}"
            )
        if self.rerank not in RERANKERS:
            raise SettingsError(f"ASSISTANT_RERANK={self.rerank!r} is not known - use one of {', '.join(RERANKERS)}")
        if not self.refresh_seconds > 0:
            raise SettingsError(f"ASSISTANT_REFRESH_SECONDS={self.refresh_seconds:g} must be above 0 - give seconds")
        if not self.lease_seconds >= 2:
            raise SettingsError(f"ASSISTANT_LEASE_SECONDS={self.lease_seconds:g} must be at least 2 - give seconds")
        if self.commit_pause < 0:
            raise SettingsError(f"ASSISTANT_COMMIT_PAUSE={self.commit_pause:g} must be 0 or more - give seconds")
        if self.retrieval_mode not in RETRIEVAL_MODES:
            raise SettingsError(
                f"ASSISTANT_RETRIEVAL={self.retrieval_mode!r} is not known - use one of {', '.join(RETRIEVAL_MODES)}"
            )
        for proxy in self.trusted_proxies:
            try:
                ipaddress.ip_network(proxy)  # strict, as uvicorn reads it
            except ValueError:
                raise SettingsError(
                    f"ASSISTANT_TRUSTED_PROXIES: {proxy!r} is not an IP address or network - "
                    "give the proxies' addresses, comma-separated (e.g. 127.0.0.1 or 10.0.0.0/8)"
                ) from None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        base = cls()

        def number(name: str, default: float, kind: type = float):
            raw = env.get(name)
            if raw is None or raw == "":
                return default
            try:
                return kind(raw)
            except ValueError:
                raise SettingsError(f"{name}={raw!r} is not a number - unset it or give a number") from None

        def switch(name: str, default: bool) -> bool:
            raw = (env.get(name) or "").strip().lower()
            if not raw:
                return default
            if raw in ("on", "1", "true", "yes"):
                return True
            if raw in ("off", "0", "false", "no"):
                return False
            raise SettingsError(f"{name}={raw!r} is not a switch - give on or off")

        knowledge = env.get("ASSISTANT_KNOWLEDGE")
        return cls(
            home=Path(env.get("ASSISTANT_HOME") or base.home),
            knowledge=tuple(Path(p) for p in knowledge.split(":") if p) if knowledge else base.knowledge,
            follows_home=not knowledge,
            model=env.get("ASSISTANT_MODEL") or base.model,
            embeddings=env.get("ASSISTANT_EMBEDDINGS") or base.embeddings,
            chroma_url=env.get("ASSISTANT_CHROMA_URL") or None,
            refresh_seconds=number("ASSISTANT_REFRESH_SECONDS", base.refresh_seconds),
            lease_seconds=number("ASSISTANT_LEASE_SECONDS", base.lease_seconds),
            sync_at_start=switch("ASSISTANT_SYNC", base.sync_at_start),
            commit_pause=number("ASSISTANT_COMMIT_PAUSE", base.commit_pause),
            follow_links=switch("ASSISTANT_FOLLOW_LINKS", base.follow_links),
            openai_api_key=env.get("OPENAI_API_KEY") or None,
            openai_base_url=env.get("OPENAI_BASE_URL") or None,
            retrieval_mode=env.get("ASSISTANT_RETRIEVAL") or base.retrieval_mode,
            rerank=env.get("ASSISTANT_RERANK") or base.rerank,
            dense_feedback=switch("ASSISTANT_DENSE_FEEDBACK", base.dense_feedback),
            refusal=replace(base.refusal, clear_miss=number("ASSISTANT_REFUSAL_THRESHOLD", base.refusal.clear_miss)),
            request_timeout=number("ASSISTANT_TIMEOUT", base.request_timeout),
            answer_deadline=number("ASSISTANT_ANSWER_DEADLINE", base.answer_deadline),
            max_tokens=int(number("ASSISTANT_MAX_TOKENS", base.max_tokens, int)),
            token_param=env.get("ASSISTANT_TOKEN_PARAM") or base.token_param,
            context_sentences=int(number("ASSISTANT_CONTEXT_SENTENCES", base.context_sentences, int)),
            extractive_fallback=switch("ASSISTANT_EXTRACTIVE_FALLBACK", base.extractive_fallback),
            host=env.get("ASSISTANT_HOST") or base.host,
            port=int(number("ASSISTANT_PORT", base.port, int)),
            ui_auth=env.get("ASSISTANT_UI_AUTH") or None,
            trusted_proxies=tuple(p.strip() for p in env.get("ASSISTANT_TRUSTED_PROXIES", "").split(",") if p.strip()),
        )

    @property
    def question_chars(self) -> int:
        """Characters of a question worth reading: more than `question_tokens` tokens of any text (what the
        chain reads of a question and a history turn, and what the UI keeps of a 50 MB paste)."""
        return self.question_tokens * 16

    def with_(self, **changes) -> Settings:
        """A copy with some fields changed (the CLI's flags use this)."""
        return replace(self, **changes)

    @property
    def max_reply_chars(self) -> int:
        """Characters of a reply read (and verified): room for `max_tokens` of any sane tokenizer."""
        return max(2000, self.max_tokens * 8)

    def answering_digest(self) -> str:
        """A digest of every setting that can change an answer (the model, its server and key, the
        knowledge as absolute paths, every tuned number): two processes whose digests agree answer a
        question alike from the same index. `assistant ask` compares it with a running server's."""
        values = {f.name: repr(getattr(self, f.name)) for f in fields(self) if f.name not in NOT_ANSWERING}
        values["knowledge"] = repr(sorted(str(Path(p).expanduser().resolve()) for p in self.knowledge))
        values["model"] = repr(self.resolved_model)  # "auto" is the model it stands for
        return hashlib.sha256(repr(sorted(values.items())).encode("utf-8")).hexdigest()

    @property
    def resolved_model(self) -> str:
        """The model `auto` stands for: OpenAI-compatible when configured, else extractive."""
        if self.model != "auto":
            return self.model
        if self.openai_api_key or self.openai_base_url:
            return "openai:gpt-4o-mini"
        return "extractive"
