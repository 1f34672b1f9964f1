"""Embedding models behind one factory: MiniLM on onnxruntime (default), a static table, or OpenAI.

Settings (`ASSISTANT_EMBEDDINGS`): `local` is MiniLM exported to int8 ONNX
(`onnx_encoder.py`); `static` is a word-piece table distilled from the same weights
(`static_encoder.py`), ~100x cheaper and less accurate; `openai:<model>` calls an endpoint.
Both local encoders ship in `encoder_files/` and load in ~0.1 s, so nothing is downloaded and
torch is not needed. Each is built lazily, once per process, and shared by every session.

The index manifest records `embedder_name(setting)`: for the shipped encoders a name that
carries a hash of their files, so an index built with other files, or with the torch encoder
this replaced (`local:all-MiniLM-L6-v2`), asks for `assistant index --rebuild`.
"""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Protocol

from assistant.errors import SettingsError
from assistant.index.shipped_encoders import ENCODER_FILES, encoder_info
from assistant.offline import offline_environment

if TYPE_CHECKING:
    from tokenizers import Tokenizer

TORCH_NAME = "local:all-MiniLM-L6-v2"  # sentence-transformers on torch, before the ONNX encoder
LOCAL_MAX_PIECES = 256  # the MiniLM encoders' max_seq_length, [CLS] and [SEP] included
SETTINGS = ("local", "static")  # shipped encoders; plus openai:<model>


class Embedder(Protocol):
    """What the index needs: a stable name, documents in batches, one query at a time."""

    name: str

    def embed_documents(self, texts: list[str]) -> list[list[float]]: ...

    def embed_query(self, text: str) -> list[float]: ...


def _shipped(name: str) -> str | None:
    """`local` or `static` for a setting value or a manifest name of a shipped encoder."""
    if name in SETTINGS:
        return name
    return next((key for key in SETTINGS if encoder_info(key)["name"] == name), None)


class OpenAIEmbedder:
    """Any OpenAI-compatible /embeddings endpoint."""

    def __init__(self, model: str, api_key: str | None, base_url: str | None) -> None:
        from langchain_openai import OpenAIEmbeddings

        self.name = f"openai:{model}"
        from pydantic import SecretStr

        self._model = OpenAIEmbeddings(
            model=model,
            api_key=SecretStr(api_key or "not-needed"),
            base_url=base_url,
            check_embedding_ctx_length=False,  # otherwise it fetches a tokenizer at run time; chunks are small
        )

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self._model.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        return self._model.embed_query(text)


_cache: dict[tuple[str, str | None], Embedder] = {}
_cache_lock = threading.Lock()


def make_embedder(name: str, api_key: str | None = None, base_url: str | None = None) -> Embedder:
    """The embedder for a setting value (`local`, `static` or `openai:<model>`), built once per process."""
    shipped = _shipped(name)
    key = (shipped or name, base_url)
    with _cache_lock:
        if key not in _cache:
            if shipped == "local":
                from assistant.index.onnx_encoder import OnnxEncoder

                offline_environment()
                _cache[key] = OnnxEncoder()
            elif shipped == "static":
                from assistant.index.static_encoder import StaticEncoder

                offline_environment()
                _cache[key] = StaticEncoder()
            elif name.startswith("openai:") and name.partition(":")[2]:
                _cache[key] = OpenAIEmbedder(name.partition(":")[2], api_key, base_url)
            elif name == TORCH_NAME:
                raise SettingsError(
                    f"Embeddings {name!r} (MiniLM on torch) were replaced by the ONNX encoder - "
                    "set ASSISTANT_EMBEDDINGS=local and run: assistant index --rebuild"
                )
            else:
                raise SettingsError(f"Unknown embeddings {name!r} - use 'local', 'static' or 'openai:<model>'")
        return _cache[key]


def known_embeddings(setting: str) -> bool:
    """Whether `make_embedder` knows the setting (the replaced torch encoder too: it names its own fix)."""
    return setting in SETTINGS or setting == TORCH_NAME or (setting.startswith("openai:") and bool(setting[7:]))


def shipped_encoder(name: str) -> bool:
    """Whether a setting or manifest name is one of the encoders in `encoder_files/` (they encode text by text)."""
    return _shipped(name) is not None


def embedder_name(setting: str) -> str:
    """The name recorded in the index manifest for a setting value."""
    shipped = _shipped(setting)
    return encoder_info(shipped)["name"] if shipped else setting


# --- the question side of late interaction --------------------------------------------------

QUESTION_PIECES = "question-pieces"  # its key in encoders.json (`scripts/train_question_pieces.py`)


def question_pieces_for(embedder: object) -> Any | None:
    """MiniLM's question side fitted for late interaction, when the candidates' word pieces come from
    the encoder it was fitted against (the shipped MiniLM; a re-export by `make encoder` asks for
    `scripts/train_question_pieces.py` again); None for any other encoder."""
    if getattr(embedder, "name", None) != encoder_info(QUESTION_PIECES)["candidates_encoder"]:
        return None
    return _question_pieces()


@lru_cache(maxsize=1)
def _question_pieces() -> Any:
    from assistant.index.onnx_encoder import OnnxEncoder

    offline_environment()
    [graph] = encoder_info(QUESTION_PIECES)["files"]
    return OnnxEncoder(graph=ENCODER_FILES / graph)


# --- the MiniLM word-piece limit, for the chunker -------------------------------------------


@lru_cache(maxsize=1)
def _local_tokenizer() -> Tokenizer:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(ENCODER_FILES / "minilm-tokenizer.json"))
    tokenizer.no_truncation()  # the shipped tokenizer.json truncates at 128, which would hide overflows
    tokenizer.no_padding()
    return tokenizer


class PieceLimit:
    """Does a text fit MiniLM's word pieces? Also counts many texts at once.

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
    """For MiniLM (ONNX, or the torch reference): does a text fit its 256 word pieces? Else None.

    The static encoder reads 512 pieces, more than any chunk has, so it adds no limit.
    """
    if _shipped(setting) == "local" or setting == TORCH_NAME:
        return PieceLimit()
    return None


# --- LangChain ------------------------------------------------------------------------------


def _langchain_adapter() -> type:
    from langchain_core.embeddings import Embeddings

    class LangChainEmbeddings(Embeddings):
        """Any of our embedders behind LangChain's `Embeddings` interface (for LangChain vector stores)."""

        def __init__(self, embedder: Embedder) -> None:
            self.embedder = embedder
            self.name = embedder.name

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return self.embedder.embed_documents(list(texts))

        def embed_query(self, text: str) -> list[float]:
            return self.embedder.embed_query(text)

    LangChainEmbeddings.__module__ = __name__
    return LangChainEmbeddings


_adapter: type | None = None


def __getattr__(name: str) -> Any:
    """`LangChainEmbeddings` is defined on first use, so importing this module skips langchain_core."""
    global _adapter
    if name == "LangChainEmbeddings":
        if _adapter is None:
            _adapter = _langchain_adapter()
        return _adapter
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
