"""The default encoder: MiniLM (all-MiniLM-L6-v2) as an int8 ONNX graph on onnxruntime.

It computes what sentence-transformers does (256 word pieces at most, mean pooling over the
tokens, L2 normalisation) without torch: the graph and tokenizer ship in `encoder_files/`,
built by `scripts/export_encoder.py`, which also records why this quantisation (dynamic int8,
per-channel weights) and how close it stays to the torch encoder (cosine >= 0.99 per text).

Every text runs alone, unpadded. Dynamic int8 scales activations over the whole input, so a
text inside a batch would get another vector than alone; one at a time, a text's vector
depends only on the text, bit for bit, whatever else is embedded with it. Throughput comes
from running texts in parallel threads instead (onnxruntime releases the GIL), each run on a
single thread that does not spin, so it never fights Chroma's or bm25s's threads for a core.
The threads are as many as the cores, at most 4, or `OMP_NUM_THREADS` when set (the knob torch
honoured before).

Against the torch encoder it replaces (`python -m assistant.bench.encoders`, 2 cores, 3,818 mlsys
chunks): 85 CPU-s to encode them instead of 294, 3 ms per query instead of 16, 0.4-0.6 s to load
in a fresh process instead of 5-11 s, and the same retrieval (recall@5 / MRR@10 within noise).
"""

from __future__ import annotations

import functools
import os
import threading
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from assistant.index.shipped_encoders import ENCODER_FILES, encoder_info

MAX_PIECES = 256  # the encoder's max_seq_length, [CLS] and [SEP] included
AHEAD = 16  # texts per thread submitted ahead of the one a sync waits for (`stream_documents`)
RECENT_VECTORS = 64  # short texts whose vector `vector` keeps: a question is read by the search and the readers
RECENT_LENGTH = 1000  # characters: a question, not a chunk a sync streams past


def default_threads() -> int:
    configured = os.environ.get("OMP_NUM_THREADS", "")
    return int(configured) if configured.isdigit() and int(configured) > 0 else min(4, os.cpu_count() or 1)


class OnnxEncoder:
    """Thread-safe: one instance serves every session; `embed_documents` fans out over threads."""

    def __init__(
        self,
        files: Path = ENCODER_FILES,
        info: dict[str, Any] | None = None,
        threads: int = 0,
        graph: Path | None = None,
        recent: int = RECENT_VECTORS,
    ) -> None:
        import numpy as np
        import onnxruntime
        from tokenizers import Tokenizer

        info = info or encoder_info("local")
        self.name: str = info["name"]
        self._np = np
        self._tokenizer = Tokenizer.from_file(str(files / "minilm-tokenizer.json"))
        self._tokenizer.enable_truncation(max_length=info.get("max_pieces", MAX_PIECES))
        self._tokenizer.no_padding()  # the shipped tokenizer.json pads to 128
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        # on x86 without VNNI, onnxruntime's u8 x s8 int8 kernel sums pairs of products in 16 bits, which
        # saturate: this has it widen them first, so the products are exact as on a VNNI CPU (where it changes
        # nothing); the vectors come close to a VNNI machine's, not to the same bits. On one AVX2-only CPU:
        # worst cosine to the torch encoder 0.985 -> 0.992, embedding about 20% slower there.
        options.add_session_config_entry("session.x64quantprecision", "1")
        options.log_severity_level = 3
        self._session = onnxruntime.InferenceSession(
            str(graph or files / "minilm-int8.onnx"), options, providers=["CPUExecutionProvider"]
        )
        self._inputs = {i.name for i in self._session.get_inputs()}
        self.threads = threads or default_threads()
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()
        self._recent: OrderedDict[str, Any] = OrderedDict()
        self._recent_size = recent
        self._recent_lock = threading.Lock()

    def hidden(self, text: str) -> Any:
        """The last layer's vector of each word piece, [CLS] and [SEP] included (float32, pieces x 384)."""
        np = self._np
        ids = np.asarray([self._tokenizer.encode(text).ids], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
        return self._session.run(None, {k: v for k, v in feeds.items() if k in self._inputs})[0][0]

    def vector(self, text: str) -> Any:
        """One text's unit vector (float32 array of 384). A question is encoded once though the search
        (`embed_query`) and the learned readers (`embed_documents` of its asking sentence) both ask for it:
        the last `recent` short texts' vectors are kept (a text's vector depends on it alone), and a caller
        gets its own copy."""
        if len(text) > RECENT_LENGTH or not self._recent_size:
            return self._pooled(self.hidden(text))
        with self._recent_lock:
            kept = self._recent.get(text)
            if kept is not None:
                self._recent.move_to_end(text)
                return kept.copy()
        vector = self._pooled(self.hidden(text))
        with self._recent_lock:
            self._recent[text] = vector.copy()
            while len(self._recent) > self._recent_size:
                self._recent.popitem(last=False)
        return vector

    def _pooled(self, rows: Any) -> Any:
        pooled = rows.mean(axis=0)
        return pooled / max(float(self._np.linalg.norm(pooled)), 1e-12)

    def token_vectors(self, texts: list[str]) -> list[Any]:
        """Each text's word-piece vectors as unit rows, [CLS] and [SEP] left out (for late interaction)."""
        return self._each(self._unit_rows, texts)

    def _unit_rows(self, text: str) -> Any:
        return self._unit(self.hidden(text))

    def _unit(self, rows: Any) -> Any:
        rows = rows[1:-1] if len(rows) > 2 else rows
        return rows / self._np.maximum(self._np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)

    def _vector_kept(self, text: str, keep: Callable[[str, Any], None]) -> Any:
        """`vector(text)`, handing its word-piece vectors (`token_vectors`) to `keep` on the way: a sync keeps
        them for late interaction without encoding the text twice (`piece_signs.py`)."""
        rows = self.hidden(text)
        keep(text, self._unit(rows))
        return self._pooled(rows)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [v.tolist() for v in self._each(self.vector, texts)]

    def _each(self, encode: Callable[[str], Any], texts: list[str]) -> list[Any]:
        """`encode` of every text, each run alone, spread over the encoder's threads."""
        if len(texts) < 2 or self.threads < 2:
            return [encode(text) for text in texts]
        return list(self._executor().map(encode, texts))

    def embed_query(self, text: str) -> list[float]:
        return self.vector(text).tolist()

    def stream_documents(
        self, texts: Iterable[str], keep_pieces: Callable[[str, Any], None] | None = None
    ) -> Iterator[list[float]]:
        """Each text's vector, in order, while the threads encode up to `AHEAD` texts further on.

        What `embed_documents` on batches cost a sync: every batch waited for its slowest text with the
        other threads idle. Texts not reached yet are cancelled when the caller stops (a failed write).
        With `keep_pieces`, each text's word-piece vectors go to it too (`_vector_kept`).
        """
        encode: Callable[[str], Any] = (
            self.vector if keep_pieces is None else functools.partial(self._vector_kept, keep=keep_pieces)
        )
        if self.threads < 2:
            yield from (encode(text).tolist() for text in texts)
            return
        pool = self._executor()
        pending: deque[Future[Any]] = deque()
        try:
            for text in texts:
                pending.append(pool.submit(encode, text))
                if len(pending) >= AHEAD * self.threads:
                    yield pending.popleft().result().tolist()
            while pending:
                yield pending.popleft().result().tolist()
        finally:
            for future in pending:
                future.cancel()

    def _executor(self) -> ThreadPoolExecutor:
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=self.threads, thread_name_prefix="encoder")
            return self._pool
