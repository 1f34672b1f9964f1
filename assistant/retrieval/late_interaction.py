"""Late interaction: the best fused candidates re-ordered by MaxSim over MiniLM's word-piece vectors.

A question in a user's own words ("the first few layers barely learn because the signal is almost
zero by the time backprop reaches them") and the entry that answers it share few words, and one
pooled vector per text blurs the few they share. Scoring the way ColBERT does, without its
training — for each word piece of the question, its best cosine to any word piece of the entry,
averaged — lets each part of the question find its own match. It re-ranks only the top
`DEPTH` candidates of the fusion (entries the question names, and what a follow-up leans on,
stay first), so it costs a few hundred milliseconds (the candidates' word pieces are encoded at
query time, on the encoder's threads, and the last `CACHE_TEXTS` kept), not a pass over the corpus.

Measured on the realistic set (`README.md`, Evaluation): search-only recall@1 on the calibration
half 0.564 -> 0.647 and MRR@10 0.731 -> 0.802; on the test half 0.553 -> 0.644 and 0.711 -> 0.782.
Only the shipped ONNX encoder exposes word-piece vectors; with `static` or `openai:` embeddings,
or `ASSISTANT_RERANK=off`, the fused order stands.

With the learned order (`ASSISTANT_RERANK=learned`, the default) the question's word pieces are read
by a copy of MiniLM fitted for this (`scripts/train_question_pieces.py`: the calibration questions'
MaxSim against their candidates' pieces), while the candidates' pieces stay the shipped MiniLM's:
the asker's words ("cards", "the prompt phase") land nearer the pieces of the paper that answers.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Protocol

from assistant.index.piece_signs import PieceSigns, as_signs, from_signs

DEPTH = 20  # fused candidates re-ordered (calibration: 10 lost recall@5, 30 gained nothing)
CHUNKS_PER_ENTRY = 3  # an entry scores by its best chunk among its first ones and the one that matched
CACHE_TEXTS = 256  # word-piece matrices kept (float32, ~260 KB each): follow-ups meet the same entries


class TokenEncoder(Protocol):
    def token_vectors(self, texts: list[str]) -> list[Any]: ...


class LateInteraction:
    """Thread-safe; one per index. `scores` gives each candidate text its MaxSim with the query."""

    def __init__(
        self, encoder: TokenEncoder, question_encoder: TokenEncoder | None = None, kept: PieceSigns | None = None
    ) -> None:
        self.encoder = encoder  # the candidates' word pieces
        self.question_encoder = question_encoder or encoder  # the question's (fitted for it, `embeddings.py`)
        self.kept = kept  # the pieces the sync kept (`piece_signs.py`): read back, not encoded; as signs
        self._cache: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def supports(encoder: object) -> bool:
        return callable(getattr(encoder, "token_vectors", None))

    def scores(self, query: str, texts: list[str]) -> list[float]:
        """MaxSim of the query with each text: the mean over query pieces of their best cosine in the text."""
        import numpy as np

        question = np.asarray(self.question_encoder.token_vectors([query])[0], dtype=np.float32)
        matrices = self._matrices(texts)
        return [float((question @ matrix.T).max(axis=1).mean()) for matrix in matrices]

    def _matrices(self, texts: list[str]) -> list[Any]:
        with self._lock:
            found = {t: self._cache[t] for t in texts if t in self._cache}
            for text in found:
                self._cache.move_to_end(text)
        missing = [t for t in dict.fromkeys(texts) if t not in found]
        computed: dict[str, Any] = {}
        if self.kept is not None and missing:
            computed = self.kept.get(missing)
            missing = [t for t in missing if t not in computed]
        encoded = dict(zip(missing, self.encoder.token_vectors(missing), strict=True)) if missing else {}
        if self.kept is not None:  # a text scores alike whether kept or encoded now: as its signs
            self.kept.put(encoded.items())
            computed.update((t, from_signs(*as_signs(m))) for t, m in encoded.items())
        else:
            computed.update((t, m.astype("float32", copy=False)) for t, m in encoded.items())
        with self._lock:
            self._cache.update(computed)
            while len(self._cache) > CACHE_TEXTS:
                self._cache.popitem(last=False)
        return [found[t] if t in found else computed[t] for t in texts]
