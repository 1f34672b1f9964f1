"""A saved bm25s index searched without importing bm25s: what its `retrieve` does, on the files it wrote.

bm25s builds the lexical index and saves it as three arrays (the BM25 score of each word in each chunk, by
column), the vocabulary and its parameters. Importing bm25s also imports scipy.sparse, which only
building needs: about a seventh of a second of a fresh `assistant ask`. A search needs the arrays alone,
so this reads them (mapped) and scores a query as bm25s 0.3's numpy backend does, call for call: each
query word's column added with `np.add.at` in the query's order, then the scores multiplied by the weight
mask. The scores are bm25s's to the bit (`tests/test_exact_search.py` compares both on real indexes).

The best `k` are chosen differently: among the chunks that score, with equal scores in row order. bm25s
runs `np.argpartition` over every chunk, and most chunks of a large index score 0 for a question; numpy's
selection is about twenty times slower over an array of mostly equal values (14 ms against 0.7 ms at
100,000 chunks), which made the lexical search the slowest part of a search at scale. Its order among
equal scores was the partition's accident; row order makes it the same on every run and machine.
An index saved with other parameters (another method, dtype or backend) is read by bm25s.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

# what this reader scores as bm25s does: the parameters `store.lexical_index` builds with
READS = {"method": "lucene", "dtype": "float32", "int_dtype": "int32", "backend": "numpy"}


class UnreadableParameters(ValueError):
    """The saved index was built with parameters this reader does not score like bm25s."""


class LexicalFiles:
    """The arrays and vocabulary of a saved bm25s index, with the parts of bm25s's interface a search uses:
    `vocab_dict`, `scores` (data, indices, indptr, num_docs) and `retrieve`."""

    def __init__(self, folder: Path) -> None:
        params = json.loads((folder / "params.index.json").read_text(encoding="utf-8"))
        if any(params.get(key) != value for key, value in READS.items()):
            raise UnreadableParameters(f"{folder} was built with {params}")
        self.vocab_dict: dict[str, int] = json.loads((folder / "vocab.index.json").read_text(encoding="utf-8"))
        self.scores: dict[str, Any] = {
            "data": np.load(folder / "data.csc.index.npy", mmap_mode="r"),
            "indices": np.load(folder / "indices.csc.index.npy", mmap_mode="r"),
            "indptr": np.load(folder / "indptr.csc.index.npy", mmap_mode="r"),
            "num_docs": params["num_docs"],
        }

    def retrieve(
        self,
        query_tokens: Sequence[Sequence[str]],
        k: int,
        *,
        weight_mask: np.ndarray | None = None,
        show_progress: bool = False,
        n_threads: int = 0,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The `k` best chunks of each query (rows, best first) and their scores, as `bm25s.BM25.retrieve`
        returns them (`show_progress` and `n_threads` are accepted for its signature; nothing runs apart)."""
        if k > self.scores["num_docs"]:
            raise ValueError(f"k of {k} is larger than the {self.scores['num_docs']} chunks")
        found = [self._top(self._scored(tokens, weight_mask), k) for tokens in query_tokens]
        return np.array([rows for rows, _ in found]), np.array([scores for _, scores in found])

    def _scored(self, tokens: Sequence[str], weight_mask: np.ndarray | None) -> np.ndarray:
        """Every chunk's score (bm25s: `get_scores_from_ids`, `_compute_relevance_from_scores`)."""
        data, indices, indptr = self.scores["data"], self.scores["indices"], self.scores["indptr"]
        ids = np.asarray([self.vocab_dict[token] for token in tokens if token in self.vocab_dict], dtype=np.int32)
        starts, ends = indptr[ids], indptr[ids + 1]
        scores = np.zeros(self.scores["num_docs"], dtype=np.float32)
        for start, end in zip(starts, ends, strict=True):
            np.add.at(scores, indices[start:end], data[start:end])
        if weight_mask is not None:
            scores *= weight_mask
        return scores

    @staticmethod
    def _top(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The best `k` rows and their scores, best first and equal scores by row. When fewer than `k` rows
        score, rows that do not fill the rest with their 0 (callers keep the scoring ones)."""
        scoring = np.flatnonzero(scores)
        if len(scoring) > k:
            values = scores[scoring]
            kth = np.partition(values, len(values) - k)[len(values) - k]  # the k-th best score
            above = scoring[values > kth]
            scoring = np.concatenate([above, scoring[values == kth][: k - len(above)]])
        elif len(scoring) < k:
            scoring = np.concatenate([scoring, np.flatnonzero(scores == 0)[: k - len(scoring)]])
        chosen = scores[scoring]
        order = np.lexsort((scoring, -chosen))
        return scoring[order], chosen[order]


def open_lexical(folder: Path) -> Any:
    """The saved lexical index in `folder`, read by `LexicalFiles`, or by bm25s when built otherwise."""
    try:
        return LexicalFiles(folder)
    except UnreadableParameters:
        import bm25s

        return bm25s.BM25.load(str(folder), mmap=True)
