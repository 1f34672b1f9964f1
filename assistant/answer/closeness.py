"""How close in meaning a context sentence is to the question, for the offline model's choice of sentences.

Word coverage alone picks the sentence that repeats the question's words; the sentence that answers often
says it in other words ("without requiring historical data" for "needs months of telemetry?"). The
cosine of the two under the shipped static encoder (model2vec's distillation of MiniLM,
`index/static_encoder.py`) reads that, with no fitting and at a lookup's cost: about 0.2 ms a sentence
against 3-4 ms for the transformer. Picking the one sentence of a gold paper that holds a fact the
asker wanted, on the 388 single and follow-up questions of realistic-dev5 to -dev9: word overlap
0.24, this cosine 0.32, the transformer's 0.32; three sentences 0.56 / 0.63 / 0.65
(docs/retrieval-stages.md, "Answer length and sentence choice").

An entry's sentences are encoded together on first use, so an answer that quotes two entries encodes
about twenty sentences, not the whole context.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from assistant.index.embeddings import Embedder


class Closeness:
    """The question's closeness to sentences under `encoder` (the reading's `encoders.closeness`), one
    answer's worth, not shared. The question is encoded once; the caller keeps what it needs
    (`EntryView.meaning` asks once per entry)."""

    def __init__(self, question: str, encoder: Embedder) -> None:
        self.question = question
        self.encoder = encoder
        self._question_vector: Any = None

    def of(self, texts: Sequence[str]) -> list[float]:
        """Cosine of each text with the question, in -1..1 (0 for an empty question)."""
        if not texts:
            return []
        import numpy as np

        encoder = self.encoder
        if self._question_vector is None:
            self._question_vector = np.asarray(encoder.embed_query(self.question), dtype=np.float32)
        vectors = np.asarray(encoder.embed_documents(list(texts)), dtype=np.float32)
        values = np.nan_to_num(vectors @ self._question_vector)  # a text of unknown pieces only has no vector
        return [float(v) for v in values]
