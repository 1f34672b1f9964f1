"""The embedding function handed to Chroma, so it never falls back to its default (downloading) one."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from assistant.index.embeddings import Embedder


class HasEmbedder(Protocol):
    @property
    def embedder(self) -> Embedder: ...


class ChromaEmbeddingFunction:
    """Hands Chroma our embedder, so it never falls back to its default (downloading) one."""

    def __init__(self, index: HasEmbedder) -> None:
        self._index = index

    def __call__(self, input: list[str]) -> list[Any]:
        import numpy as np

        return [np.asarray(v, dtype=np.float32) for v in self._index.embedder.embed_documents(list(input))]

    @staticmethod
    def name() -> str:
        return "assistant"

    def is_legacy(self) -> bool:
        return True  # not persisted in the collection's configuration; rebuilt from our settings

    def get_config(self) -> dict[str, Any]:
        return {}

    def default_space(self) -> str:
        return "cosine"

    def supported_spaces(self) -> list[str]:
        return ["cosine"]

    def embed_query(self, input: list[str]) -> list[Any]:
        return self(input)
