"""The sentence encoders the question is read with, apart from the index's embedder.

Two readings of the question use vectors of their own, whatever embeds the index: the learned
readers (value kind, intent, refusal; `linear_reader.py`) were fitted on the shipped MiniLM's vectors
of the asking sentences, and the offline model weighs a context sentence by its cosine with the
question under the shipped static encoder (`answer/closeness.py`). Both used to be built by name
inside the readers, so an `Assistant(embedder=...)` given a fake still loaded MiniLM to refuse.
A `SentenceEncoders` is handed down with the question's `Reading` instead: `Assistant(encoders=...)`
replaces them for every reader at once, and by default each shipped encoder is built on first use
(the index's `local` embedder is the same cached instance, so it loads once).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from assistant.index.embeddings import Embedder

READERS_ENCODER = "local"  # the encoder the learned readers' weights were fitted on
CLOSENESS_ENCODER = "static"  # fast enough to weigh every context sentence (about 0.2 ms a sentence)
VECTORS_KEPT = 2048  # asking sentences whose vector is kept: a question is read by up to three readers


class SentenceEncoders:
    """The readers' encoders, each the one given or the shipped one built on first use. Thread-safe:
    one instance serves every session; it keeps the vectors of recent asking sentences, so the three
    learned readers encode a question once."""

    def __init__(self, readers: Embedder | None = None, closeness: Embedder | None = None) -> None:
        self._readers = readers
        self._closeness = closeness
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def readers(self) -> Embedder:
        """The encoder of the learned readers' sentence view (`linear_reader.design`)."""
        if self._readers is None:
            from assistant.index.embeddings import make_embedder

            self._readers = make_embedder(READERS_ENCODER)
        return self._readers

    @property
    def closeness(self) -> Embedder:
        """The encoder the offline model weighs context sentences with (`answer/closeness.py`)."""
        if self._closeness is None:
            from assistant.index.embeddings import make_embedder

            self._closeness = make_embedder(CLOSENESS_ENCODER)
        return self._closeness

    def reader_vector(self, text: str) -> np.ndarray:
        """The text's vector under the readers' encoder, encoded once while it is among the recent ones."""
        with self._lock:
            vector = self._vectors.get(text)
        if vector is None:
            import numpy as np

            vector = np.asarray(self.readers.embed_documents([text])[0], np.float32)
            with self._lock:
                self._vectors[text] = vector
                while len(self._vectors) > VECTORS_KEPT:
                    self._vectors.popitem(last=False)
        return vector

    def reader_vectors(self, texts: list[str]) -> np.ndarray:
        """One row per text (a training set's: not kept), each encoded alone as `reader_vector` does."""
        import numpy as np

        return np.asarray(self.readers.embed_documents(texts), np.float32).reshape(len(texts), -1)


SHIPPED = SentenceEncoders()  # the default for every reading not given encoders
