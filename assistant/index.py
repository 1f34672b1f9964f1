"""The index: Chroma vectors plus the committed entry store, kept in sync with the knowledge.

This is the only module that imports chromadb. Sync is incremental, keyed on entry id and
content hash: unchanged entries are not embedded again, edited ones get new
content-addressed vectors, removed ones are deleted after the new state is committed.
Vectors already in Chroma are reused, so a sync killed half-way resumes where it stopped.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from assistant.chunking import Chunker
from assistant.embeddings import Embedder, embedder_name, encoder_fits, make_embedder
from assistant.errors import EmptyIndexError, IndexMismatchError, IndexUnavailableError
from assistant.knowledge import load_corpus
from assistant.offline import offline_environment
from assistant.redaction import strip_userinfo
from assistant.settings import Settings
from assistant.store import Store, StoredEntry, vector_id
from assistant.text import lexical_tokens
from assistant.types import Chunk, Entry, Problem

EMBED_BATCH = 256  # chunks per encoder call; the encoder batches internally
VOLATILE_FIELDS = ("sources", "anchors")  # where an entry was read from does not change what it says


@dataclass
class SyncReport:
    added: int = 0
    kept: int = 0  # entries of files that failed to read, kept as they were
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    skipped: list[Problem] = field(default_factory=list)
    entries: int = 0
    chunks: int = 0
    embedded_chunks: int = 0
    seconds: float = 0.0
    embed_seconds: float = 0.0
    files: int = 0

    def summary(self) -> str:
        rate = self.entries / self.seconds if self.seconds else 0.0
        return (
            f"{self.entries} entries ({self.chunks} chunks) from {self.files} files: "
            f"{self.added} added, {self.updated} updated, {self.removed} removed, "
            f"{self.unchanged} unchanged, {len(self.skipped)} skipped"
            + (f" ({self.kept} entries of unreadable files kept as they were)" if self.kept else "")
            + "; "
            f"embedded {self.embedded_chunks} chunks in {self.seconds:.1f}s ({rate:.1f} entries/s)"
        )

    def to_dict(self) -> dict[str, Any]:
        data = dict(self.__dict__)
        data["skipped"] = [str(p) for p in self.skipped]
        return data


def entry_hash(entry: Entry, chunking: dict[str, int]) -> str:
    fields = {k: v for k, v in entry.fields.items() if k not in VOLATILE_FIELDS}
    payload = json.dumps([entry.kind, entry.title, entry.text, fields, entry.url, chunking], sort_keys=True)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class Index:
    """Opens (or creates) the index under `settings.home`; search primitives for retrieval."""

    def __init__(self, settings: Settings, embedder: Embedder | None = None) -> None:
        offline_environment()
        self.settings = settings
        self.store = Store(Path(settings.home) / "index")
        self._embedder = embedder
        self._collection: Any = None
        self._chroma_client: Any = None
        self._lock = threading.Lock()
        self.chunker = Chunker(
            settings.chunk_tokens, settings.chunk_overlap_sentences, encoder_fits(self.embedder_name)
        )
        self.entries: dict[str, StoredEntry] = {}
        self.generation = 0
        self._rows: list[Chunk] = []
        self._by_vector: dict[str, Chunk] = {}
        self._lexical: Any = None
        self.reload()

    # --- state -----------------------------------------------------------------------

    @property
    def embedder_name(self) -> str:
        return self._embedder.name if self._embedder is not None else embedder_name(self.settings.embeddings)

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            s = self.settings
            self._embedder = make_embedder(s.embeddings, s.openai_api_key, s.openai_base_url)
        return self._embedder

    def expected_manifest(self) -> dict[str, Any]:
        from assistant.store import FORMAT_VERSION

        return {
            "format": FORMAT_VERSION,
            "embeddings": self.embedder_name,
            "chunking": self.chunker.settings(),
        }

    def reload(self) -> None:
        """Read the committed generation; an index built with other settings is left unread.

        The mismatch is kept and raised by anything that would use the index, except a
        rebuild, so `assistant index --rebuild` can repair it.
        """
        self.mismatch: IndexMismatchError | None = None
        try:
            self.store.check(self.expected_manifest())
        except IndexMismatchError as error:
            self.mismatch = error
            self.entries, self.generation, self._rows, self._by_vector, self._lexical = {}, 0, [], {}, None
            return
        self.entries, self.generation = self.store.load()
        self._rows = [chunk for item in self.entries.values() for chunk in item.chunks]
        self._by_vector = {vector_id(c, item.hash): c for item in self.entries.values() for c in item.chunks}
        self._lexical = None

    @property
    def is_empty(self) -> bool:
        return not self.entries

    def require_entries(self) -> None:
        if self.mismatch is not None:
            raise self.mismatch
        if self.is_empty:
            paths = ":".join(p.as_posix() for p in self.settings.knowledge)
            raise EmptyIndexError(f"The index is empty - run: assistant index {paths.replace(':', ' ')}")

    def entry(self, entry_id: str) -> Entry | None:
        item = self.entries.get(entry_id)
        return item.entry if item else None

    def chunks_of(self, entry_id: str) -> list[Chunk]:
        item = self.entries.get(entry_id)
        return list(item.chunks) if item else []

    @property
    def chunks(self) -> list[Chunk]:
        """Every committed chunk, in store order (row i of the lexical index is chunk i)."""
        return self._rows

    # --- chroma ----------------------------------------------------------------------

    def collection(self) -> Any:
        with self._lock:
            if self._collection is None:
                self._collection = self._open_collection()
            return self._collection

    def _client(self) -> Any:
        """The Chroma client (server or embedded), created once; failures name the fix."""
        if self._chroma_client is not None:
            return self._chroma_client
        import chromadb
        from chromadb.config import Settings as ChromaSettings

        chroma_settings = ChromaSettings(anonymized_telemetry=False)
        url = self.settings.chroma_url
        try:
            if url:
                parsed = urlparse(url if "://" in url else f"http://{url}")
                client = chromadb.HttpClient(
                    host=parsed.hostname or "127.0.0.1",
                    port=parsed.port or (443 if parsed.scheme == "https" else 8000),
                    ssl=parsed.scheme == "https",
                    settings=chroma_settings,
                )
                client.heartbeat()
            else:
                path = self.store.root / "chroma"
                path.mkdir(parents=True, exist_ok=True)
                client = chromadb.PersistentClient(path=str(path), settings=chroma_settings)
        except Exception as error:  # chromadb raises many types; all mean "cannot open"
            raise self._unavailable(error) from error
        self._chroma_client = client
        return client

    def _unavailable(self, error: Exception) -> IndexUnavailableError:
        url = self.settings.chroma_url
        if url:
            return IndexUnavailableError(
                f"Cannot reach the Chroma server at {strip_userinfo(url)} ({type(error).__name__}) - "
                "start it (chroma run --path DIR --host 127.0.0.1 --port PORT) or unset ASSISTANT_CHROMA_URL"
            )
        return IndexUnavailableError(
            f"Cannot open the index in {self.store.root} ({type(error).__name__}) - "
            "rebuild it: assistant index --rebuild"
        )

    def _open_collection(self) -> Any:
        manifest = self.store.manifest() or {}
        name = manifest.get("collection") or f"assistant-{uuid.uuid4().hex[:12]}"
        client = self._client()
        try:
            return client.get_or_create_collection(
                name,
                embedding_function=ChromaEmbeddingFunction(self),
                configuration={"hnsw": {"space": "cosine"}},
                metadata={"embeddings": self.embedder_name},
            )
        except Exception as error:
            raise self._unavailable(error) from error

    def max_batch_size(self) -> int:
        """The most vectors Chroma takes in one write."""
        return int(getattr(self._client(), "get_max_batch_size", lambda: 5000)())

    def vector_ids(self) -> set[str]:
        collection, ids, offset = self.collection(), set(), 0
        while True:
            page = collection.get(include=[], limit=5000, offset=offset)["ids"]
            ids.update(page)
            if len(page) < 5000:
                return ids
            offset += len(page)

    # --- sync ------------------------------------------------------------------------

    def sync(
        self,
        paths: Iterable[Path] | None = None,
        *,
        rebuild: bool = False,
        progress: bool | None = None,
        on_embedded: Callable[[int], None] | None = None,
    ) -> SyncReport:
        """Make the index match the knowledge under `paths` (default: settings.knowledge)."""
        started = time.perf_counter()
        if rebuild:
            self.drop()
        elif self.mismatch is not None:
            raise self.mismatch
        corpus = load_corpus(list(paths) if paths is not None else list(self.settings.knowledge))
        report = SyncReport(skipped=list(corpus.problems), files=len(corpus.files))
        chunking = self.chunker.settings()
        fresh: dict[str, StoredEntry] = {}
        to_embed: list[StoredEntry] = []
        for entry_id, entry in corpus.entries.items():
            digest = entry_hash(entry, chunking)
            old = self.entries.get(entry_id)
            if old is not None and old.hash == digest:
                fresh[entry_id] = StoredEntry(entry, digest, old.chunks)
                report.unchanged += 1
                continue
            fresh[entry_id] = item = StoredEntry(entry, digest, self.chunker.chunks(entry))
            to_embed.append(item)
            if old is None:
                report.added += 1
            else:
                report.updated += 1
        damaged = {problem.path for problem in corpus.problems if problem.damaged}
        for entry_id, old in self.entries.items():  # nothing indexed is lost to a file that fails to read
            sources = old.entry.fields.get("sources") or [old.entry.source]
            if entry_id not in fresh and any(source.rpartition(":")[0] in damaged for source in sources):
                fresh[entry_id] = old
                report.kept += 1
        report.removed = sum(1 for entry_id in self.entries if entry_id not in fresh)
        knowledge = [Path(p).as_posix() for p in (paths or self.settings.knowledge)]
        manifest = self.store.manifest() or {}
        same_rows = [(e, item.hash) for e, item in fresh.items()] == [(e, i.hash) for e, i in self.entries.items()]
        if (
            same_rows
            and self.generation
            and manifest.get("knowledge") == knowledge
            and all(item.entry == self.entries[e].entry for e, item in fresh.items())
        ):
            # nothing to embed, delete or rewrite: the committed generation already is this state
            report.entries, report.chunks = len(self.entries), len(self._rows)
            report.seconds = time.perf_counter() - started
            return report
        # Chroma is read only when vectors may be added or left stale (it costs seconds to open)
        vectors_change = bool(to_embed or report.removed)
        existing = self.vector_ids() if vectors_change else set()
        todo = [item for item in to_embed if not set(item.vector_ids()) <= existing]
        report.embed_seconds = self._embed(todo, existing, report, progress, on_embedded)
        collection = manifest.get("collection") if not vectors_change else None
        manifest = {
            **self.expected_manifest(),
            "collection": collection or self.collection().name,
            "entries": len(fresh),
            "chunks": sum(len(item.chunks) for item in fresh.values()),
            "knowledge": knowledge,
            "updated": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        }
        # the same chunks in the same order: the lexical index of this generation still fits
        self.store.commit(fresh, self.generation + 1, manifest, lexical_from=self.generation if same_rows else None)
        self.reload()
        stale = list(existing - set(self._by_vector))
        for start in range(0, len(stale), 5000):
            self.collection().delete(ids=stale[start : start + 5000])
        report.entries, report.chunks = len(self.entries), len(self._rows)
        report.seconds = time.perf_counter() - started
        return report

    def _embed(
        self,
        items: list[StoredEntry],
        existing: set[str],
        report: SyncReport,
        progress: bool | None,
        on_embedded: Callable[[int], None] | None,
    ) -> float:
        """Embed and add chunks in batches; Chroma writes overlap with the next batch's encoding."""
        if not items:
            return 0.0
        from tqdm import tqdm

        show = sys.stderr.isatty() if progress is None else progress
        bar = tqdm(total=len(items), unit="entries", disable=not show or len(items) < 50, desc="Embedding")
        writer = ThreadPoolExecutor(max_workers=1)
        pending: list[Future] = []
        embed_time = 0.0
        batch: list[tuple[str, Chunk]] = []
        batch_entries = 0

        def flush() -> None:
            nonlocal embed_time, batch, batch_entries
            if not batch:
                return
            texts = [chunk.text for _, chunk in batch]
            t0 = time.perf_counter()
            vectors = self.embedder.embed_documents(texts)
            embed_time += time.perf_counter() - t0
            pending.append(writer.submit(self.write_vectors, list(batch), vectors))
            report.embedded_chunks += len(batch)
            bar.update(batch_entries)
            if on_embedded:
                on_embedded(len(batch))
            batch, batch_entries = [], 0

        try:
            for item in items:
                for chunk, vid in zip(item.chunks, item.vector_ids(), strict=True):
                    if vid not in existing:
                        batch.append((vid, chunk))
                batch_entries += 1
                if len(batch) >= EMBED_BATCH:
                    flush()
            flush()
            for future in pending:
                future.result()
        finally:
            writer.shutdown(wait=True)
            bar.close()
        return embed_time

    def write_vectors(self, batch: list[tuple[str, Chunk]], vectors: Sequence[Sequence[float]]) -> None:
        """Store (vector id, chunk) pairs with their vectors; they count once a commit names their chunks."""
        self.collection().upsert(
            ids=[vid for vid, _ in batch],
            embeddings=vectors,
            documents=[chunk.text for _, chunk in batch],
            metadatas=[{"entry_id": c.entry_id, "kind": c.kind, "field": c.field, "chunk_id": c.id} for _, c in batch],
        )

    def drop(self) -> None:
        """Forget everything (for --rebuild): the collection's vectors, the store and the manifest.

        The Chroma folder itself stays: chromadb caches one client per path, and deleting
        the files under a live client leaves it writing to a read-only database.
        """
        manifest = self.store.manifest() or {}
        if manifest.get("collection"):
            self._collection = None
            with contextlib.suppress(Exception):  # another embedding model's config, or already gone
                self._client().delete_collection(manifest["collection"])
        self._collection = None
        self.store.clear()
        self.mismatch = None
        self.entries, self.generation, self._rows, self._by_vector, self._lexical = {}, 0, [], {}, None

    # --- search primitives -------------------------------------------------------------

    def dense(self, query: str, k: int, kind: str | None = None) -> list[tuple[Chunk, float]]:
        """Nearest chunks to the query's embedding by cosine similarity, best first."""
        if not self._rows:
            return []
        return self.nearest(self.embedder.embed_query(query), k, kind)

    def nearest(self, vector: Sequence[float], k: int, kind: str | None = None) -> list[tuple[Chunk, float]]:
        """Nearest committed chunks to a vector by cosine similarity (1 - cosine distance), best first."""
        if not self._rows:
            return []
        wanted = k + 8
        while True:
            # no count() first: it costs ~13 ms at 100,000 chunks; Chroma returns fewer when it has fewer
            result = self.collection().query(
                query_embeddings=[vector],
                n_results=wanted,
                where={"kind": kind} if kind else None,
                include=["distances"],
            )
            out = []
            for vid, distance in zip(result["ids"][0], result["distances"][0], strict=True):
                chunk = self._by_vector.get(vid)  # vectors of an uncommitted sync are skipped
                if chunk is not None:
                    out.append((chunk, 1.0 - float(distance)))
            if len(out) >= k or len(result["ids"][0]) < wanted:
                break
            wanted *= 4  # a killed or running sync left vectors we skip
        return out[:k]

    def lexical(self, query: str, k: int, kind: str | None = None) -> list[tuple[Chunk, float]]:
        """BM25 over chunk text, best first; an empty list when no query word is known."""
        tokens = lexical_tokens(query)
        retriever = self._lexical_index()
        if retriever is None or not tokens:
            return []
        vocab = retriever.vocab_dict
        tokens = [t for t in tokens if t in vocab]
        if not tokens:
            return []
        import numpy as np

        mask = None
        if kind:
            mask = np.array([chunk.kind == kind for chunk in self._rows], dtype=np.float32)
        ids, scores = retriever.retrieve(
            [tokens], k=min(k, len(self._rows)), show_progress=False, weight_mask=mask, n_threads=0
        )
        return [(self._rows[int(i)], float(s)) for i, s in zip(ids[0], scores[0], strict=True) if s > 0]

    def _lexical_index(self) -> Any:
        with self._lock:
            if self._lexical is None and self._rows:
                import bm25s

                self._lexical = bm25s.BM25.load(str(self.store.lexical_dir(self.generation)))
            return self._lexical


class ChromaEmbeddingFunction:
    """Hands Chroma our embedder, so it never falls back to its default (downloading) one."""

    def __init__(self, index: Index) -> None:
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
