"""The static encoder (`ASSISTANT_EMBEDDINGS=static`): a word-piece table distilled from MiniLM.

For corpora too large to run the transformer over: a text's vector is the weighted mean of
its word pieces' rows in a 256-dimensional table (model2vec's distillation of the same
weights, built by `scripts/export_encoder.py`), so encoding costs a lookup instead of six
transformer layers. The cost is recall. `python -m assistant.bench.encoders` on 2 cores, 3,818 mlsys
chunks: 1.9 CPU-s to encode them against 85 for the ONNX encoder (and 294 for torch); recall@5 /
MRR@10 of the hybrid retriever on the mlsys questions 0.90-0.91 / 0.88 against 0.95 / 0.94
(seed questions 0.99 / 0.99 against 1.00 / 1.00); the dense ranking alone falls from 0.93 / 0.89
to 0.75 / 0.72, so BM25 and name matching carry most of what is left.

This computes exactly what model2vec's `StaticModel.encode` does (no special tokens, unknown
pieces dropped, the same truncation, mean, L2 normalisation), with numpy and `tokenizers` only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assistant.index.shipped_encoders import ENCODER_FILES, encoder_info


class StaticEncoder:
    """Stateless after loading, so safe to share between threads."""

    def __init__(self, files: Path = ENCODER_FILES, info: dict[str, Any] | None = None) -> None:
        import numpy as np
        from tokenizers import Tokenizer

        info = info or encoder_info("static")
        self.name: str = info["name"]
        self._np = np
        self._tokenizer = Tokenizer.from_file(str(files / "static-tokenizer.json"))
        self._tokenizer.no_truncation()
        self._tokenizer.no_padding()
        with np.load(files / "static-256.npz") as table:
            self._vectors = table["vectors"]  # float16, one row per word piece
            self._weights = table["weights"].astype(np.float32)  # SIF weight per word piece
        self._unk = info.get("unk_id")
        self._max_tokens = int(info.get("max_tokens", 512))
        self._max_chars = int(info.get("max_chars", 512 * 6))
        self.dimensions = int(self._vectors.shape[1])

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        np = self._np
        clipped = [text[: self._max_chars] for text in texts]
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for row, encoding in enumerate(self._tokenizer.encode_batch(clipped, add_special_tokens=False)):
            ids = [i for i in encoding.ids if i != self._unk][: self._max_tokens]
            if ids:
                out[row] = (self._vectors[ids].astype(np.float32) * self._weights[ids, None]).mean(axis=0)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return (out / np.maximum(norms, 1e-12)).tolist()

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]
