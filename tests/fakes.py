"""Fake embeddings with designed geometry, for tests that need an index but not a model.

`FakeEmbeddings` is a hashed bag of words: every lower-cased word is hashed (md5, so the
same on every run and in every process, unlike Python's salted `hash`) into one of
`dims` buckets, and the counts are L2-normalised. Cosine similarity is then word overlap:
texts that share words are close, texts that share none are (nearly) orthogonal, and a
query made of an entry's own words finds that entry. It loads nothing, so an index of
thousands of chunks builds in a second, and it counts what it embeds, so tests can assert
exactly how many chunks a sync sent to the encoder (an unchanged corpus: zero).
"""

from __future__ import annotations

import hashlib
import math
import re
import time

WORD = re.compile(r"[a-z0-9]+")


class FakeEmbeddings:
    """Deterministic hashed bag-of-words vectors; `embedded` counts texts, `calls` batches."""

    def __init__(self, dims: int = 64, name: str | None = None, delay: float = 0.0) -> None:
        self.dims = dims
        self.name = name or f"fake:hashed-bow-{dims}"
        self.delay = delay  # seconds slept per embed_documents call (a slow encoder)
        self.calls = 0  # embed_documents calls (batches)
        self.embedded = 0  # documents embedded, summed over calls
        self.queries = 0  # embed_query calls

    def vector(self, text: str) -> list[float]:
        counts = [0.0] * self.dims
        for word in WORD.findall(text.lower()):
            bucket = int.from_bytes(hashlib.md5(word.encode("utf-8")).digest()[:4], "big") % self.dims
            counts[bucket] += 1.0
        norm = math.sqrt(sum(c * c for c in counts))
        if norm == 0.0:  # no words at all: a fixed unit vector rather than a zero one
            counts[0], norm = 1.0, 1.0
        return [c / norm for c in counts]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.calls += 1
        self.embedded += len(texts)
        if self.delay:
            time.sleep(self.delay)
        return [self.vector(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        self.queries += 1
        return self.vector(text)
