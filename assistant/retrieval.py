"""Hybrid retrieval: dense and lexical results fused per entry, names and aliases first.

Users name things ("what is NCCL", "HBM", "MoE"), so an exact or fuzzy match of an entry's
title or alias is ranked first; the rest is reciprocal rank fusion of Chroma (dense) and
bm25s (lexical) rankings, one hit per entry. The best dense cosine similarity is kept as
the confidence the refusal threshold is compared against, because fused scores are ranks,
not evidence.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from functools import cached_property

from assistant.index import Index
from assistant.text import words
from assistant.types import Chunk, Source

RRF_K = 60
CANDIDATES = 40
QUESTION_FRAME = re.compile(
    r"^(?:what|who|which)\s+(?:is|are|was|were|does)\s+(?:an?\s+|the\s+)?|^(?:define|explain|describe)\s+|"
    r"^(?:tell me about|what do you know about)\s+|\s+(?:stand for|mean|means|used for|do)\s*$",
)


@dataclass(frozen=True)
class Retrieval:
    sources: list[Source]
    confidence: float  # best dense cosine (or 1.0 on an exact name match)
    name_match: str | None = None


class Retriever:
    """Searches an Index; `mode` is hybrid, dense or lexical."""

    def __init__(self, index: Index, mode: str = "hybrid") -> None:
        self.index = index
        self.mode = mode

    @cached_property
    def names(self) -> dict[str, list[str]]:
        """Normalised title / alias / acronym -> entry ids (concept pages and glossary terms)."""
        table: dict[str, list[str]] = {}
        for entry_id, item in self.index.entries.items():
            entry = item.entry
            if entry.kind != "concept":
                continue
            keys = {entry.title, re.sub(r"\s*\([^)]*\)", "", entry.title), *entry.fields.get("aliases", [])}
            for key in keys:
                norm = normalise_name(key)
                if norm and entry_id not in table.get(norm, []):
                    table.setdefault(norm, []).append(entry_id)
        for entry_id, item in self.index.entries.items():  # technologies a concept page explains
            for technology in item.entry.fields.get("technology", []):
                norm = normalise_name(technology.get("name", ""))
                if norm and norm not in table:
                    table[norm] = [entry_id]
        return table

    def name_lookup(self, query: str) -> list[str]:
        """Entries whose title or alias is what the question asks about (exact, then fuzzy)."""
        subject = normalise_name(QUESTION_FRAME.sub("", query.strip().rstrip("?.! ").lower()))
        if not subject:
            return []
        if subject in self.names:
            return self.names[subject]
        if len(subject) >= 5 and len(subject.split()) <= 4:
            close = difflib.get_close_matches(subject, list(self.names), n=1, cutoff=0.9)
            if close:
                return self.names[close[0]]
        return []

    def retrieve(
        self, query: str, k: int = 10, kind: str | None = None, tags: list[str] | None = None
    ) -> Retrieval:
        dense: list[tuple[Chunk, float]] = []
        lexical: list[tuple[Chunk, float]] = []
        if self.mode in ("hybrid", "dense"):
            dense = best_per_entry(self.index.dense(query, CANDIDATES, kind))
        if self.mode in ("hybrid", "lexical"):
            lexical = best_per_entry(self.index.lexical(query, CANDIDATES, kind))
        named = [
            e for e in self.name_lookup(query) if kind is None or self.index.entries[e].entry.kind == kind
        ]
        fused: dict[str, float] = {}
        chunks: dict[str, Chunk] = {}
        for ranking in (dense, lexical):
            for rank, (chunk, _score) in enumerate(ranking, start=1):
                fused[chunk.entry_id] = fused.get(chunk.entry_id, 0.0) + 1.0 / (RRF_K + rank)
                chunks.setdefault(chunk.entry_id, chunk)
        lists = sum(1 for ranking in (dense, lexical) if ranking) or 1
        best = lists / (RRF_K + 1)
        for entry_id in named:
            fused[entry_id] = fused.get(entry_id, 0.0) + 2 * best  # names outrank any fusion
            chunks.setdefault(entry_id, best_named_chunk(self.index.chunks_of(entry_id), query))
        if tags:
            wanted = {t.lower() for t in tags}
            fused = {e: s for e, s in fused.items() if wanted & entry_tags(self.index, e)}
        ordered = sorted(fused.items(), key=lambda item: (-item[1], item[0]))[:k]
        sources = [
            Source(
                e,
                chunks[e].id,
                chunks[e].title,
                chunks[e].kind,
                chunks[e].text,
                round(min(1.0, s / best), 4),
                rank,
            )
            for rank, (e, s) in enumerate(ordered, start=1)
        ]
        confidence = dense[0][1] if dense else (1.0 if lexical else 0.0)
        if named:
            confidence = max(confidence, 1.0)
        return Retrieval(sources, confidence, named[0] if named else None)


def best_per_entry(hits: list[tuple[Chunk, float]]) -> list[tuple[Chunk, float]]:
    """One hit per entry (its best chunk), order kept."""
    seen: set[str] = set()
    out = []
    for chunk, score in hits:
        if chunk.entry_id not in seen:
            seen.add(chunk.entry_id)
            out.append((chunk, score))
    return out


def best_named_chunk(chunks: list[Chunk], query: str) -> Chunk:
    """The chunk of a named entry that shares most words with the query (first on ties)."""
    asked = set(words(query))
    return max(chunks, key=lambda c: (len(asked & set(words(c.text))), -chunks.index(c)))


def normalise_name(text: str) -> str:
    return " ".join(words(text.replace("_", " ")))


def entry_tags(index: Index, entry_id: str) -> set[str]:
    fields = index.entries[entry_id].entry.fields
    return {str(t).lower() for t in [*fields.get("tags", []), *fields.get("categories", [])]}
