"""What a sync reports, how an entry's content is hashed, and the refusal to remove most of an index by mistake."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from assistant.errors import AssistantError
from assistant.knowledge.asked_as import SOURCES as ASKED_AS_SOURCES
from assistant.types import Entry, Problem

# where an entry was read from does not change what it says
VOLATILE_FIELDS = ("sources", "anchors", "path", ASKED_AS_SOURCES)


@dataclass
class SyncReport:
    added: int = 0
    kept: int = 0  # entries of files that failed to read, kept as they were
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    skipped: list[Problem] = field(default_factory=list)
    entries: int = 0
    chunks: int = 0
    embedded_chunks: int = 0
    seconds: float = 0.0
    embed_seconds: float = 0.0
    files: int = 0
    repaired: int = 0  # chunks of committed entries whose vectors were missing from Chroma, embedded again
    swept: int = 0  # vectors in Chroma that no committed chunk named (left by a killed sync), deleted
    ignored: int = 0  # files a .assistantignore names
    notes: list[str] = field(default_factory=list)  # files read, but not whole (a PDF's pages without text)

    def summary(self) -> str:
        if self.embedded_chunks:  # a rate only for work done: a no-op sync has none worth printing
            rate = self.embedded_chunks / self.seconds if self.seconds else 0.0
            work = f"embedded {self.embedded_chunks} chunks in {self.seconds:.1f}s ({rate:.1f} chunks/s)"
        else:
            work = f"nothing to embed; took {self.seconds:.1f}s"
        return (
            f"{self.entries} entries ({self.chunks} chunks) from {self.files} files: "
            f"{self.added} added, {self.updated} updated, {self.removed} removed, "
            f"{self.unchanged} unchanged, {len(self.skipped)} skipped"
            + (f" ({self.kept} entries of unreadable files kept as they were)" if self.kept else "")
            + f"; {work}"
            + (f"; repaired {self.repaired} vectors missing from Chroma" if self.repaired else "")
            + (f"; swept {self.swept} orphan vectors" if self.swept else "")
            + (f"; {self.ignored} files ignored by .assistantignore" if self.ignored else "")
        )

    def to_dict(self) -> dict[str, Any]:
        data = dict(self.__dict__)
        data["skipped"] = [str(p) for p in self.skipped]
        return data


def entry_hash(entry: Entry, chunking: dict[str, int]) -> str:
    fields = {k: v for k, v in entry.fields.items() if k not in VOLATILE_FIELDS}
    payload = json.dumps([entry.kind, entry.title, entry.text, fields, entry.url, chunking], sort_keys=True)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class RemovalRefused(AssistantError):
    """A sync would remove most of the index by mistake (`removal_guard` says when); nothing was changed."""

    def __init__(self, message: str, removed: int, total: int) -> None:
        super().__init__(message)
        self.removed, self.total = removed, total
