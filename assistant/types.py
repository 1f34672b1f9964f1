"""The value types every layer passes around: Entry, Problem, Chunk, Source, Citation, Answer,
KnowledgeStatus.

They are plain frozen dataclasses so they serialise to JSON (``to_dict``) for the CLI,
the UI endpoint and the evaluation report without any framework in between.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Kind = Literal["concept", "abstract", "document"]
KINDS: tuple[Kind, ...] = ("concept", "abstract", "document")


@dataclass(frozen=True)
class Entry:
    """One unit of knowledge: a concept page, a glossary term or a paper abstract."""

    id: str
    kind: Kind
    title: str
    text: str
    fields: dict[str, Any] = field(default_factory=dict)
    source: str = ""  # repo-relative "path:line" of the first place it was read from
    url: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Problem:
    """Something in a knowledge file that could not be read; it was skipped."""

    path: str
    line: int
    message: str
    # the file holds knowledge that could not be read (as opposed to a wrong path or a clash):
    # entries indexed from it before are kept until it reads cleanly again
    damaged: bool = True

    def __str__(self) -> str:
        """`notes.md:12: ...` for a line, `notes.md: ...` for the whole file (line 0)."""
        return f"{self.path}:{self.line}: {self.message}" if self.line else f"{self.path}: {self.message}"


@dataclass(frozen=True)
class Chunk:
    """A piece of an entry small enough for the encoder to see whole."""

    id: str
    entry_id: str
    kind: Kind
    title: str
    field: str
    text: str  # the text that is embedded and searched (title-prefixed)


@dataclass(frozen=True)
class Source:
    """A retrieved chunk, with the entry it belongs to; higher score is better."""

    entry_id: str
    chunk_id: str
    title: str
    kind: Kind
    text: str
    score: float
    rank: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Citation:
    """A cited entry and the sentence of that entry that supports the claim."""

    entry_id: str
    title: str
    kind: Kind
    url: str | None
    quote: str
    supported: bool = True
    support: float = 1.0  # how strongly the quote supports the claim, 0..1

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Answer:
    """What ``Assistant.ask`` returns: text with [ID] markers, verified citations, sources."""

    question: str
    text: str
    citations: list[Citation] = field(default_factory=list)
    sources: list[Source] = field(default_factory=list)
    refused: bool = False
    model: str = ""
    timings: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "text": self.text,
            "citations": [c.to_dict() for c in self.citations],
            "sources": [s.to_dict() for s in self.sources],
            "refused": self.refused,
            "model": self.model,
            "timings": dict(self.timings),
            "notes": list(self.notes),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Answer:
        """The Answer `to_dict` wrote (a served answer read back); KeyError or TypeError when it is not one."""
        return cls(
            question=str(data["question"]),
            text=str(data["text"]),
            citations=[Citation(**c) for c in data["citations"]],
            sources=[Source(**s) for s in data["sources"]],
            refused=bool(data["refused"]),
            model=str(data["model"]),
            timings={str(k): float(v) for k, v in data["timings"].items()},
            notes=[str(n) for n in data["notes"]],
        )


@dataclass(frozen=True)
class KnowledgeStatus:
    """What the index holds and who answers, for a UI header that tells the truth.

    `knowledge` is what the settings ask for (as configured); `indexed_from` is what the committed
    index was built from (its manifest), so a mismatch can be shown instead of silently served.
    """

    knowledge: tuple[str, ...]
    indexed_from: tuple[str, ...]
    concepts: int
    papers: int
    chunks: int
    indexed_at: str | None  # the manifest's commit time, ISO 8601; None before the first sync
    model: str
    documents: int = 0  # sections of the user's own documents

    @property
    def entries(self) -> int:
        return self.concepts + self.papers + self.documents

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
