"""The search primitives of the index: dense (Chroma) and lexical (BM25) candidates over the committed chunks."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from assistant.knowledge.asked_as import FIELD as ASKED_AS
from assistant.text import lexical_tokens
from assistant.types import Chunk

if TYPE_CHECKING:
    from assistant.index.chunk_rows import ChunkRows
    from assistant.index.embeddings import Embedder
    from assistant.index.exact_vectors import ExactVectors


class SearchPrimitives:
    """The search half of `Index` (a base class: the attributes below are the Index's)."""

    rows: ChunkRows

    if TYPE_CHECKING:

        @property
        def embedder(self) -> Embedder: ...

        def collection(self) -> Any: ...

        def _read(self, call: Callable[[Any], Any]) -> Any: ...

        def _lexical_index(self) -> Any: ...

        def exact_copy(self) -> tuple[ExactVectors, list[Chunk]] | None: ...

    def dense(self, query: str, k: int, kind: str | None = None) -> list[tuple[Chunk, float]]:
        """Nearest chunks to the query's embedding by cosine similarity, best first."""
        if not len(self.rows):
            return []
        return self.nearest(self.embedder.embed_query(query), k, kind)

    def nearest(
        self, vector: Sequence[float], k: int, kind: str | None = None, *, described: bool = True
    ) -> list[tuple[Chunk, float]]:
        """Nearest committed chunks to a vector by cosine similarity (1 - cosine distance), best first;
        `described=False` leaves out asked-as descriptions (what the entries themselves say).

        A small embedded index is searched in its exact copy (`exact_vectors`), which gives what Chroma
        gives without opening it; Chroma answers otherwise."""
        if not len(self.rows):
            return []
        wanted = k + 8  # what Chroma is asked for
        exact = self.exact_copy()
        if exact is not None:
            copy, chunks = exact
            allowed = None
            if kind or not described:
                allowed = np.asarray(
                    [(not kind or c.kind == kind) and (described or c.field != ASKED_AS) for c in chunks]
                )
            found = copy.nearest(vector, k, wanted, allowed)
            if found is not None:
                return [(chunks[position], 1.0 - distance) for position, distance in found]
        conditions: list[dict[str, Any]] = [{"kind": kind}] if kind else []
        if not described:
            conditions.append({"field": {"$ne": ASKED_AS}})
        where = conditions[0] if len(conditions) == 1 else {"$and": conditions} if conditions else None
        while True:

            def query(collection: Any, n: int = wanted) -> Any:
                return collection.query(query_embeddings=[vector], n_results=n, where=where, include=["distances"])

            # no count() first: it costs ~13 ms at 100,000 chunks; Chroma returns fewer when it has fewer
            result = self._read(query)
            out = []
            for vid, distance in zip(result["ids"][0], result["distances"][0], strict=True):
                chunk = self.rows.find(vid)  # vectors of an uncommitted sync are skipped
                if chunk is not None:
                    out.append((chunk, 1.0 - float(distance)))
            if len(out) >= k or len(result["ids"][0]) < wanted:
                break
            wanted *= 4  # a killed or running sync left vectors we skip
        return out[:k]

    def lexical(self, query: str, k: int, kind: str | None = None) -> list[tuple[Chunk, float]]:
        """BM25 over chunk text, best first; an empty list when no query word is known."""
        tokens = lexical_tokens(query)
        retriever = self._lexical_index()
        if retriever is None or not tokens:
            return []
        vocab = retriever.vocab_dict
        tokens = [t for t in tokens if t in vocab]
        if not tokens:
            return []
        mask = self.rows.kind_mask(kind) if kind else None
        ids, scores = retriever.retrieve(
            [tokens], k=min(k, len(self.rows)), show_progress=False, weight_mask=mask, n_threads=0
        )
        return [(self.rows[int(i)], float(s)) for i, s in zip(ids[0], scores[0], strict=True) if s > 0]

    def lexical_frequencies(self, tokens: Iterable[str]) -> tuple[int, dict[str, int]]:
        """The chunk count and, per lexical token (a stem), how many chunks hold it (0 when none):
        read off the BM25 index's columns, so nothing is counted at query time."""
        retriever = self._lexical_index()
        if retriever is None:
            return 0, {}
        vocab, starts = retriever.vocab_dict, retriever.scores["indptr"]
        found = {t: int(starts[vocab[t] + 1] - starts[vocab[t]]) if t in vocab else 0 for t in tokens}
        return int(retriever.scores["num_docs"]), found
