"""The plain LangChain recipe, as a yardstick for retrieval: the same knowledge, the same embeddings.

RecursiveCharacterTextSplitter (1000 characters, 200 overlap) over each entry's title and
text, a langchain-chroma vector store, `similarity_search(k=4)`. Evaluation and benchmarks
run it on the same questions and data as the assistant, so the gap is measured, not claimed.
`RecipeBM25` is the second peer: plain BM25 (bm25s, English stop words and stemming) over the
same splits, so a fused search is held against each of its halves done the plain way.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from pathlib import Path
from typing import Any

from assistant.index.embeddings import embedder_name, make_embedder
from assistant.knowledge.corpus import load_corpus
from assistant.offline import offline_environment
from assistant.settings import Settings

CHUNK_SIZE, CHUNK_OVERLAP, K = 1000, 200, 4


class LangChainRecipe:
    """Builds (once per knowledge fingerprint) and queries the recipe's Chroma store."""

    def __init__(self, settings: Settings, embeddings: Any = None) -> None:
        offline_environment()
        self.settings = settings
        self.root = Path(settings.home) / "baseline-langchain"
        self._embeddings = embeddings
        self._store: Any = None
        self._documents: list[Any] | None = None
        self.index_seconds = 0.0
        self.chunks = 0

    @property
    def embeddings(self) -> Any:
        if self._embeddings is None:
            from assistant.index.embeddings import LangChainEmbeddings

            s = self.settings
            self._embeddings = LangChainEmbeddings(make_embedder(s.embeddings, s.openai_api_key, s.openai_base_url))
        return self._embeddings

    def documents(self) -> list[Any]:
        """The knowledge's entries split as the recipe splits them, read once (both peers search them)."""
        if self._documents is not None:
            return self._documents
        from langchain_core.documents import Document
        from langchain_text_splitters import RecursiveCharacterTextSplitter

        corpus = load_corpus(list(self.settings.knowledge), follow_links=self.settings.follow_links)
        splitter = RecursiveCharacterTextSplitter(chunk_size=CHUNK_SIZE, chunk_overlap=CHUNK_OVERLAP)
        docs = [
            Document(page_content=f"{e.title}\n{e.text}", metadata={"entry_id": e.id}) for e in corpus.entries.values()
        ]
        self._documents = splitter.split_documents(docs)
        return self._documents

    def store(self) -> Any:
        if self._store is not None:
            return self._store
        from langchain_chroma import Chroma

        docs = self.documents()
        name = getattr(self.embeddings, "name", None) or embedder_name(self.settings.embeddings)
        fingerprint = hashlib.sha256(
            json.dumps([name, CHUNK_SIZE, CHUNK_OVERLAP, [d.page_content for d in docs]]).encode()
        ).hexdigest()[:16]
        marker = self.root / "fingerprint"
        fresh = not (marker.exists() and marker.read_text() == fingerprint)
        if fresh:
            shutil.rmtree(self.root, ignore_errors=True)
            self.root.mkdir(parents=True)
        self._store = Chroma(
            collection_name="langchain-recipe",
            embedding_function=self.embeddings,
            persist_directory=str(self.root / "chroma"),
            collection_metadata={"hnsw:space": "cosine"},
        )
        self.chunks = len(docs)
        if fresh:
            started = time.perf_counter()
            self._store.add_documents(docs)
            self.index_seconds = time.perf_counter() - started
            marker.write_text(fingerprint)
        return self._store

    def search_ids(self, question: str) -> list[str]:
        """Entry ids of the k=4 nearest chunks, first occurrence kept."""
        hits = self.store().similarity_search(question, k=K)
        return list(dict.fromkeys(doc.metadata["entry_id"] for doc in hits))


class RecipeBM25:
    """BM25 alone over the recipe's splits: the lexical peer (`assistant eval --modes recipe-bm25`)."""

    def __init__(self, recipe: LangChainRecipe) -> None:
        self.recipe = recipe  # its splits only; no vectors are built for BM25
        self._index: Any = None
        self._ids: list[str] = []

    def _tokenize(self, texts: list[str]) -> Any:
        import bm25s
        import Stemmer

        return bm25s.tokenize(texts, stopwords="en", stemmer=Stemmer.Stemmer("english"), show_progress=False)

    def search_ids(self, question: str) -> list[str]:
        """Entry ids of the k=4 best-scoring splits, first occurrence kept."""
        import bm25s

        if self._index is None:
            docs = self.recipe.documents()
            self._ids = [d.metadata["entry_id"] for d in docs]
            self._index = bm25s.BM25()
            self._index.index(self._tokenize([d.page_content for d in docs]), show_progress=False)
        k = min(K, len(self._ids))
        rows, _ = self._index.retrieve(self._tokenize([question]), k=k, show_progress=False)
        return list(dict.fromkeys(self._ids[int(i)] for i in rows[0]))
