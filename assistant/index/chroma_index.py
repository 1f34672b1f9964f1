"""The index: Chroma vectors plus the committed entry store, kept in sync with the knowledge.

The Chroma client and collection are `chroma_client`'s. Sync is incremental, keyed on entry id and
content hash: unchanged entries are not embedded again, edited ones get new
content-addressed vectors, removed ones are deleted after the new state is committed.
Vectors already in Chroma are reused, so a sync killed half-way resumes where it stopped.

One sync at a time per home (`assistant.index.lock`). Every sync checks Chroma against the committed
generation (the count and a sample of ids; all ids when they disagree): vectors that are
missing are embedded again, vectors no committed chunk names are deleted, and files of other
generations are removed. A Chroma failure (disk full, server gone, damaged files) stops the
sync at the next batch and becomes one `IndexUnavailableError` line naming the fix; the
committed generation keeps answering.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import sys
import threading
import time
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from assistant.errors import (
    AssistantError,
    EmptyIndexError,
    IndexMismatchError,
    IndexUnavailableError,
    SettingsError,
)
from assistant.index.chroma_client import ChromaConnection
from assistant.index.chunk_rows import NO_ROWS, ChunkRows
from assistant.index.chunking import Chunker
from assistant.index.embeddings import (
    Embedder,
    embedder_name,
    encoder_fits,
    known_embeddings,
    make_embedder,
    shipped_encoder,
)
from assistant.index.exact_vectors import LIMIT as EXACT_LIMIT
from assistant.index.exact_vectors import (
    ExactVectors,
    Unconfirmed,
    carried_over,
    confirm,
    discard,
    open_copy,
    stored_form,
)
from assistant.index.freshness import as_now, fingerprints, knowledge_names, stale_reason
from assistant.index.home_files import written_by_assistant
from assistant.index.lease import Lease
from assistant.index.lexical_files import open_lexical
from assistant.index.lock import DEFAULT_WAIT, SyncLock
from assistant.index.piece_signs import FILE_NAME as PIECES_FILE
from assistant.index.piece_signs import PieceSigns, as_signs
from assistant.index.progress import Progress
from assistant.index.record_file import RecordFile
from assistant.index.removal_guard import check_rebuild, check_removal
from assistant.index.search_primitives import SearchPrimitives
from assistant.index.server_store import ServerStore, cached_lexical
from assistant.index.serving import check_not_served_otherwise
from assistant.index.store import Store, StoredEntry, lexical_index, vector_id  # noqa: F401 (re-exported)
from assistant.index.sync_report import RemovalRefused, SyncReport, entry_hash  # noqa: F401 (re-exported)
from assistant.index.writer import BackgroundWriter, is_disk_full
from assistant.knowledge.asked_as import FIELD as ASKED_AS
from assistant.knowledge.asked_as import descriptions_of, sources_of, with_descriptions
from assistant.knowledge.corpus import READING, load_corpus, under
from assistant.offline import offline_environment
from assistant.redaction import strip_userinfo
from assistant.settings import Settings, reranking_for
from assistant.text import LEXICAL_TOKENS, lexical_tokens
from assistant.types import Chunk, Entry

EMBED_BATCH = 256  # chunks per Chroma write (and per call of a remote encoder)
PROGRESS_STEP = 16  # chunks the progress bar moves by while the local encoder streams
WRITE_TIMEOUT = 120.0  # seconds one Chroma write may take before the sync gives up on it


log = logging.getLogger("assistant")


class Index(ChromaConnection, SearchPrimitives):
    """Opens (or creates) the index under `settings.home`; search primitives for retrieval."""

    def __init__(self, settings: Settings, embedder: Embedder | None = None) -> None:
        offline_environment()
        self.settings = settings
        self._embedder = embedder
        self._collection: Any = None
        self._chroma_client: Any = None
        self.store = self._open_store()
        self._lock = threading.Lock()
        self.chunker = Chunker(
            settings.chunk_tokens, settings.chunk_overlap_sentences, encoder_fits(self.embedder_name)
        )
        self.entries: Mapping[str, StoredEntry] = {}
        self.generation = 0
        self.rows: ChunkRows = NO_ROWS
        self._lexical: Any = None
        self.lock_wait: float | None = None  # seconds a sync waits for another one (None: the default)
        self.write_timeout = WRITE_TIMEOUT
        self.read_copy_note: str | None = None  # set when Chroma is searched from a copy (`read_copy`)
        self._syncing = False
        self._fresh_collection = False  # a rebuild against a server: vectors go to a new collection
        self._exact: tuple[ExactVectors, list[Chunk]] | bool | None = None  # the copy a search reads, once looked for
        self._encoded: dict[str, Sequence[float]] | None = None  # the vectors a sync of a small index encoded
        self._chroma_changed = False  # a sync wrote to Chroma (its vector copy was removed first)
        self._pieces: PieceSigns | bool | None = None  # the kept word pieces (`piece_signs`), once opened
        self.reload()

    # --- state -----------------------------------------------------------------------

    def _open_store(self) -> Store | ServerStore:
        """The committed state: files under the home, or with a Chroma server, records in it (`server_store`)."""
        root = Path(self.settings.home) / "index"
        if not self.settings.chroma_url:
            return Store(root)
        store = ServerStore(
            root, self._client, self._chroma, f"the Chroma server at {strip_userinfo(self.settings.chroma_url)}"
        )
        store.commit_pause = self.settings.commit_pause
        return store

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
        from assistant.index.store import FORMAT_VERSION

        return {
            "format": FORMAT_VERSION,
            "embeddings": self.embedder_name,
            "chunking": self.chunker.settings(),
            "lexical": LEXICAL_TOKENS,
        }

    def reload(self) -> None:
        """Read the committed generation; an index built with other settings, or damaged, is left unread.

        The error is kept and raised by anything that would use the index, except a
        rebuild, so `assistant index --rebuild` can repair it.
        """
        self.mismatch: IndexMismatchError | IndexUnavailableError | None = None
        try:
            self.store.check(self.expected_manifest())
            self.entries, self.generation = self.store.load()
        except IndexMismatchError as error:
            if self._embedder is None and not known_embeddings(self.settings.embeddings):  # a typo, not an old index
                raise SettingsError(
                    f"ASSISTANT_EMBEDDINGS={self.settings.embeddings!r} is not an encoder - "
                    "use local, static or openai:<model>"
                ) from error
            self.mismatch = error
            self.entries, self.generation, self.rows, self._lexical = {}, 0, NO_ROWS, None
            return
        except IndexUnavailableError as error:
            self.mismatch = error
            self.entries, self.generation, self.rows, self._lexical = {}, 0, NO_ROWS, None
            return
        self.rows = self.entries.rows if isinstance(self.entries, RecordFile) else ChunkRows.of(self.entries.values())
        self._lexical = None
        self._exact = None

    @property
    def is_empty(self) -> bool:
        return not self.entries

    def require_entries(self) -> None:
        if self.mismatch is not None:
            raise self.mismatch
        if self.is_empty:
            paths = ":".join(p.as_posix() for p in self.settings.knowledge)
            raise EmptyIndexError(f"The index is empty - run: assistant index {paths.replace(':', ' ')}")

    def manifest_or_none(self) -> dict[str, Any] | None:
        """The committed manifest, or None when there is none or it cannot be read (the error is kept)."""
        try:
            return self.store.manifest()
        except AssistantError:
            return None

    def manifest_summary(self) -> dict[str, Any]:
        """What the committed manifest says about the index (knowledge, entries, chunks, updated).

        Read-only; an index not built yet, or one whose manifest cannot be read, gives {}."""
        try:
            manifest = self.store.manifest() or {}
        except IndexUnavailableError:
            return {}
        keys = ("knowledge", "entries", "chunks", "updated", "embeddings")
        return {key: manifest[key] for key in keys if key in manifest}

    def stale_reason(self) -> str | None:
        """Why the committed index does not hold `settings.knowledge` as it is on disk, or None.

        Reads the manifest and stats (at most hashes) the files; no parsing, no Chroma.
        """
        if self.mismatch is not None:
            return None  # built with other settings: a sync would refuse; using it names the fix
        return stale_reason(self.store.manifest(), self.settings.knowledge, self.own_file, self.settings.follow_links)

    def own_file(self, path: Path) -> bool:
        """Whether `path` is one of the files this home's index wrote (never read as knowledge)."""
        return written_by_assistant(Path(self.settings.home))(path)

    def entry(self, entry_id: str) -> Entry | None:
        item = self.entries.get(entry_id)
        return item.entry if item else None

    def chunks_of(self, entry_id: str) -> list[Chunk]:
        """The entry's own chunks, in order: what context and citations may quote (no asked-as chunk)."""
        item = self.entries.get(entry_id)
        return [c for c in item.chunks if c.field != ASKED_AS] if item else []

    @property
    def chunks(self) -> Sequence[Chunk]:
        """Every committed chunk, in store order (row i of the lexical index is chunk i); made when read."""
        return self.rows

    def entries_in_order(self) -> Iterable[StoredEntry]:
        """Every committed entry in store order; cached records are parsed one at a time, not kept."""
        return self.entries.in_order() if isinstance(self.entries, RecordFile) else self.entries.values()

    def tables_dir(self) -> Path | None:
        """Where a replica caches the retriever's tables of the loaded generation (None: made in memory)."""
        return self.store.tables_dir(self.generation) if isinstance(self.store, ServerStore) else None

    def chunk_texts(self) -> Iterator[str]:
        """Every committed chunk's text in store order, read one entry at a time (a lexical index's input)."""
        return (chunk.text for item in self.entries_in_order() for chunk in item.chunks)

    # --- sync ------------------------------------------------------------------------

    def sync(
        self,
        paths: Iterable[Path] | None = None,
        *,
        rebuild: bool = False,
        progress: bool | None = None,
        on_embedded: Callable[[int], None] | None = None,
        allow_removal: bool = False,
        announce: Callable[[], None] | None = None,
    ) -> SyncReport:
        """Make the index match the knowledge under `paths` (default: settings.knowledge).

        Holds the home's sync lock throughout; another sync waits up to `lock_wait` seconds. A sync
        that would remove more than half of the index by mistake (`removal_guard`) raises
        `RemovalRefused` or `KnowledgeSwitchRefused` before anything changes, unless `allow_removal`
        (`--yes`). `paths` given are named knowledge (`assistant index PATH`), not the settings'.
        `announce` is called once the sync has passed those checks, before it changes anything.
        """
        roots = list(paths) if paths is not None else list(self.settings.knowledge)
        check_not_served_otherwise(Path(self.settings.home), roots)  # one home, one knowledge
        lock: SyncLock | Lease = SyncLock(self.store.root, self.lock_wait)
        if isinstance(self.store, ServerStore):  # one writer per server, whichever machine it runs on
            # by default long enough for the lease of a writer that was killed to expire and be taken over
            wait = max(DEFAULT_WAIT, self.settings.lease_seconds + 5) if self.lock_wait is None else self.lock_wait
            lock = Lease(self.store, self.settings.lease_seconds, wait)
        try:
            lock.__enter__()
        except OSError as error:  # a read-only, missing or full home
            if is_disk_full(error):
                raise self._unavailable(error) from error
            reason = error.strerror or type(error).__name__
            raise IndexUnavailableError(
                f"Cannot write the index in {self.store.root} ({reason}) - set ASSISTANT_HOME to a folder you can write"
            ) from error
        try:
            # another process may have committed (or rebuilt) since this Index read the home
            self._collection = None
            if self.read_copy_note is not None:  # searched from a copy until now: a sync writes the home's own
                self._forget_client()
                self.read_copy_note = None
            self._syncing = True
            self.reload()
            carried = carried_over(self.cache_dir, self.embedder_name) if self.keeps_exact_copy else {}
            self._encoded, self._chroma_changed = None, False
            report = self._sync(paths, rebuild, progress, on_embedded, allow_removal, announce)
            self._fresh_collection = False
            if isinstance(self.store, ServerStore):
                self._sweep_collections()
            else:
                started = time.perf_counter()
                self._keep_exact_copy(carried)
                report.seconds += time.perf_counter() - started
            started = time.perf_counter()
            self._keep_piece_signs()
            report.seconds += time.perf_counter() - started
            return report
        finally:
            self._syncing, self._encoded, self._exact = False, None, None
            lock.__exit__(None, None, None)

    def _sync(
        self,
        paths: Iterable[Path] | None,
        rebuild: bool,
        progress: bool | None,
        on_embedded: Callable[[int], None] | None,
        allow_removal: bool = False,
        announce: Callable[[], None] | None = None,
    ) -> SyncReport:
        started = time.perf_counter()
        if rebuild:
            if paths is None and not allow_removal:  # a rebuild from the settings' knowledge: never a switch
                held = self.manifest_or_none() or {}
                check_rebuild(list(self.settings.knowledge), held.get("knowledge") or [], held.get("entries") or 0)
            self.drop()
        elif self.mismatch is not None:
            raise self.mismatch
        self.store.sweep(self.generation)  # generation files a killed sync left behind
        roots = list(paths) if paths is not None else list(self.settings.knowledge)
        own = written_by_assistant(Path(self.settings.home))  # a home inside the knowledge: not knowledge
        files = fingerprints(
            roots, own, self.settings.follow_links
        )  # before reading: a file edited during the sync looks changed next time
        corpus = load_corpus(roots, follow_links=self.settings.follow_links)
        corpus.files = [name for name in corpus.files if not own(Path(name))]
        corpus.problems = [problem for problem in corpus.problems if not own(Path(problem.path))]
        report = SyncReport(
            skipped=list(corpus.problems), files=len(corpus.files), ignored=corpus.ignored, notes=list(corpus.notes)
        )
        chunking = self.chunker.settings()
        fresh: dict[str, StoredEntry] = {}
        to_embed: list[StoredEntry] = []
        damaged = [problem.path for problem in corpus.problems if problem.damaged]
        for entry_id, entry in corpus.entries.items():
            entry = self.described_as_before(entry, damaged)
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
        files = as_now(files, damaged)
        for entry_id, old in self.entries.items():  # nothing indexed is lost to a file or folder that fails to read
            sources = old.entry.fields.get("sources") or [old.entry.source]
            if entry_id not in fresh and any(under(source.rpartition(":")[0], damaged) for source in sources):
                fresh[entry_id] = old
                report.kept += 1
        report.removed = sum(1 for entry_id in self.entries if entry_id not in fresh)
        knowledge = knowledge_names(roots)
        manifest = self.store.manifest() or {}
        if not (allow_removal or rebuild):
            check_removal(
                removed=report.removed,
                total=len(self.entries),
                yields=len(corpus.entries),
                roots=roots,
                held=[str(p) for p in manifest.get("knowledge") or []],
                named=paths is not None,
                problems=corpus.problems,
            )
        if announce is not None:
            announce()
        lexical_fits = manifest.get("lexical") == LEXICAL_TOKENS  # else an older tokenizer's index: rebuilt
        same_rows = [(e, item.hash) for e, item in fresh.items()] == [(e, i.hash) for e, i in self.entries.items()]
        # the committed generation already is this state: nothing to rewrite, but Chroma may have drifted
        same_state = bool(
            same_rows
            and self.generation
            and manifest.get("knowledge") == knowledge
            and lexical_fits
            and all(item.entry == self.entries[e].entry for e, item in fresh.items())
        )
        committed = set(self.rows.vector_ids())
        if not to_embed and not report.removed and self.vectors_agree():
            if same_state:
                self._record_files(manifest, files)
                report.entries, report.chunks = len(self.entries), len(self.rows)
                report.seconds = time.perf_counter() - started
                return report
            existing = committed  # only where entries were read from changed; Chroma already agrees
        else:
            existing = self.vector_ids()
        todo = [item for item in fresh.values() if not set(item.vector_ids()) <= existing]
        report.repaired = sum(
            1 for item in todo for vid in item.vector_ids() if vid in committed and vid not in existing
        )
        if sum(len(item.chunks) for item in fresh.values()) < EXACT_LIMIT:
            self._encoded = {}  # kept for the exact copy of a small index (`exact_vectors`)
        keep_pieces = self.keeps_pieces(item.entry.kind for item in fresh.values())  # the whole knowledge's kinds
        report.embed_seconds = self._embed(todo, existing, report, progress, on_embedded, keep_pieces)
        if not same_state:
            manifest = {
                **self.expected_manifest(),
                "collection": self.collection().name,
                "entries": len(fresh),
                "chunks": sum(len(item.chunks) for item in fresh.values()),
                "knowledge": knowledge,
                "files": files,
                "reading": READING,
                "updated": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            }
            # the same chunks in the same order: the lexical index of this generation still fits
            lexical_from = self.generation if same_rows and lexical_fits else None
            try:
                self.store.commit(fresh, self.generation + 1, manifest, lexical_from=lexical_from)
            except OSError as error:  # a full disk before the manifest was replaced: the old generation stands
                if self._committed_generation() != self.generation + 1:
                    with contextlib.suppress(OSError):
                        self.store.sweep(self.generation)
                    raise self._unavailable(error) from error
            self.reload()
        else:
            self._record_files(manifest, files)
        stale = existing - set(self.rows.vector_ids())
        report.swept = len(stale - committed)  # not the vectors of entries this sync replaced or removed
        collection = self.collection()
        ordered = sorted(stale)
        if ordered:
            self._changing_chroma()
        for start in range(0, len(ordered), 5000):
            self._chroma(collection.delete, ids=ordered[start : start + 5000])
        report.entries, report.chunks = len(self.entries), len(self.rows)
        report.seconds = time.perf_counter() - started
        return report

    def described_as_before(self, entry: Entry, damaged: list[str]) -> Entry:
        """The entry with the asked-as descriptions it was indexed with that came from a file that now
        fails to read: a damaged description file does not strip the entries it describes."""
        old = self.entries.get(entry.id)
        if old is None or not damaged:
            return entry
        sources = sources_of(old.entry)
        if not any(under(source.rpartition(":")[0], damaged) for source in sources):
            return entry
        return with_descriptions(entry, descriptions_of(old.entry), sources)

    def _record_files(self, manifest: dict[str, Any], files: dict[str, Any]) -> None:
        """Refresh the fingerprints of an unchanged generation (touched files, or an index from before them), and
        the readers' edition that read it the same (`corpus.READING`)."""
        if manifest.get("files") != files or manifest.get("reading") != READING:
            with contextlib.suppress(OSError):  # only an optimisation: the next start hashes the files again
                self.store.annotate(files=files, reading=READING)

    def _embed(
        self,
        items: list[StoredEntry],
        existing: set[str],
        report: SyncReport,
        progress: bool | None,
        on_embedded: Callable[[int], None] | None,
        keep_pieces: bool = False,
    ) -> float:
        """Embed and add chunks in batches; Chroma writes overlap with the next batch's encoding. With
        `keep_pieces`, each chunk's word pieces are kept too (`piece_signs`), from the same encoder pass.

        A failed write stops the encoding at the next batch (not after the last one).
        """
        if not items:
            return 0.0
        total = sum(vid not in existing for item in items for vid in item.vector_ids())
        bar = Progress(total, "chunks", "Embedding", progress)
        writer = BackgroundWriter(self.write_vectors, self.write_timeout)
        batches: list[list[tuple[str, Chunk]]] = [[]]  # whole entries, at least EMBED_BATCH chunks a write
        for item in items:
            batches[-1] += [
                (vid, c) for c, vid in zip(item.chunks, item.vector_ids(), strict=True) if vid not in existing
            ]
            if len(batches[-1]) >= EMBED_BATCH:
                batches.append([])
        batches = [batch for batch in batches if batch]
        pieces = self.piece_signs() if keep_pieces else None
        made: list[tuple[str, int, bytes]] = []  # the pieces the encoder threads handed over, as signs
        keep = (lambda text, rows: made.append((text, *as_signs(rows)))) if pieces is not None else None
        vectors = self._vectors([[chunk.text for _, chunk in batch] for batch in batches], keep)
        embed_time = 0.0
        self._changing_chroma()
        encoded: list[list[float]] = []  # vectors of the batch being filled (and of the next one's first texts)
        try:
            for batch in batches:
                writer.check()
                while len(encoded) < len(batch):
                    t0 = time.perf_counter()
                    part = next(vectors)
                    embed_time += time.perf_counter() - t0
                    encoded += part
                    bar.update(len(part))
                writer.submit(batch, encoded[: len(batch)])
                if pieces is not None:
                    kept, made[:] = made[:], []
                    pieces.put_signs(kept)
                if self._encoded is not None:
                    self._encoded.update(zip((vid for vid, _ in batch), encoded[: len(batch)], strict=True))
                encoded = encoded[len(batch) :]
                report.embedded_chunks += len(batch)
                if on_embedded:
                    on_embedded(len(batch))
            writer.finish()
        except BackgroundWriter.Failed as failed:
            self._reconnect_later()
            raise self._unavailable(failed.error) from failed.error
        finally:
            vectors.close()
            writer.close()
            bar.close()
        return embed_time

    def _vectors(
        self, batches: list[list[str]], keep_pieces: Callable[[str, Any], None] | None = None
    ) -> Generator[list[list[float]], None, None]:
        """The vectors of the batches' texts in order, a few at a time (the progress bar moves with them).

        The shipped encoders go text by text, `PROGRESS_STEP` at a time (the first write batch alone takes
        ~8 s here); MiniLM streams them, its threads encoding on while a batch is written
        (`stream_documents`). Any other encoder gets whole write batches (one request each to a remote one).
        """
        if not shipped_encoder(self.embedder_name):
            for batch in batches:
                yield self.embedder.embed_documents(batch)
            return
        texts = [text for batch in batches for text in batch]
        stream = getattr(self.embedder, "stream_documents", None)
        vectors: Iterator[list[float]] = (
            (stream(texts, keep_pieces) if keep_pieces is not None else stream(texts))
            if stream is not None
            else (
                vector
                for start in range(0, len(texts), PROGRESS_STEP)
                for vector in self.embedder.embed_documents(texts[start : start + PROGRESS_STEP])
            )
        )
        try:
            while part := list(itertools.islice(vectors, PROGRESS_STEP)):
                yield part
        finally:
            close = getattr(vectors, "close", None)
            if close is not None:
                close()

    def write_vectors(self, batch: list[tuple[str, Chunk]], vectors: Sequence[Sequence[float]]) -> None:
        """Store (vector id, chunk) pairs with their vectors; they count once a commit names their chunks.

        The chunk text is not stored with the vector: every search reads it from the entry records, so a
        copy in the collection only doubled what a server holds and a sync writes."""
        self.collection().upsert(
            ids=[vid for vid, _ in batch],
            embeddings=vectors,
            metadatas=[{"entry_id": c.entry_id, "kind": c.kind, "field": c.field, "chunk_id": c.id} for _, c in batch],
        )

    def drop(self) -> None:
        """Forget everything (for --rebuild): the vectors, the store and the manifest; never the knowledge.

        Embedded, every collection in our Chroma folder is deleted; a folder that cannot be opened
        or cleaned is damaged, and is moved aside to `chroma.damaged` (replacing an older one) and
        started again empty. Against a server nothing is deleted yet: the sync builds a new collection
        and new records while replicas keep answering from the committed generation, and the old
        collection goes once the rebuilt generation is committed (`_sweep_collections`).
        """
        if isinstance(self.store, ServerStore):
            self._collection, self._fresh_collection, self.mismatch = None, True, None
            self.generation = self._committed_generation() or 0  # generations keep counting up for replicas
            self.entries, self.rows, self._lexical = {}, NO_ROWS, None
            return
        try:
            name = (self.store.manifest() or {}).get("collection")
        except IndexUnavailableError:  # a damaged manifest: its collection cannot be named
            name = None
        self._collection = None
        self._changing_chroma()
        if self.settings.chroma_url:
            if name:
                from chromadb.errors import NotFoundError

                try:
                    self._client().delete_collection(name)
                except NotFoundError:
                    pass
                except Exception as error:
                    raise self._unavailable(error) from error
        else:
            try:
                client = self._client()
                for collection in client.list_collections():
                    if collection.name.startswith("assistant-"):
                        client.delete_collection(collection.name)
                client.list_collections()
            except Exception as error:
                if is_disk_full(error):
                    raise self._unavailable(error) from error
                aside = self._discard_chroma()
                print(f"warning: moved the damaged Chroma folder aside to {aside}", file=sys.stderr)
        self.store.clear()
        self.mismatch = None
        self.entries, self.generation, self.rows, self._lexical = {}, 0, NO_ROWS, None

    # --- the exact copy of a small embedded index (`exact_vectors`) ----------------------------

    @property
    def cache_dir(self) -> Path:
        return self.store.root / "cache"

    # --- the word pieces kept for late interaction (`piece_signs`) ------------------------------

    def piece_signs(self) -> PieceSigns | None:
        """The kept word pieces of the chunks, opened once; None for an encoder without word pieces, or a home
        they cannot be kept in (late interaction then encodes its candidates when asked)."""
        if self._pieces is None:
            has_pieces = callable(getattr(self.embedder, "token_vectors", None))
            opened = PieceSigns.open(self.cache_dir, self.embedder_name) if has_pieces else None
            self._pieces = False if opened is None else opened  # an empty store is falsy (`len`)
        return self._pieces if isinstance(self._pieces, PieceSigns) else None

    def keeps_pieces(self, kinds: Iterable[str]) -> bool:
        """Whether searches of entries of these kinds re-order by late interaction (`settings.reranking_for`), so
        a sync keeps their word pieces."""
        return reranking_for(self.settings.rerank, kinds) != "off"

    def _keep_piece_signs(self) -> None:
        """After a sync: the word pieces of every chunk a search may re-order, kept; those of chunks the index no
        longer holds, dropped. A sync keeps the pieces of what it encodes; this adds what an index synced
        before they were kept lacks (encoded once), and is nothing to do after a sync that changed nothing."""
        chunks = list(self.rows)
        kinds = {stored.entry.kind for stored in self.entries.values()}
        if not (chunks and self.keeps_pieces(kinds)):  # what a knowledge re-ordered before left: gone
            pieces = self.piece_signs() if (self.cache_dir / PIECES_FILE).exists() else None
            if pieces is not None:
                pieces.keep_only(())
            return
        pieces = self.piece_signs()
        if pieces is None:
            return
        texts = [chunk.text for chunk in chunks]
        missing = pieces.missing(texts)
        if missing:
            log.info("Keeping the word pieces of %d chunks for late interaction", len(missing))
            encoder: Any = self.embedder
            for start in range(0, len(missing), PROGRESS_STEP):
                part = missing[start : start + PROGRESS_STEP]
                pieces.put(zip(part, encoder.token_vectors(part), strict=True))
        pieces.keep_only(texts)

    @property
    def keeps_exact_copy(self) -> bool:
        """Whether this index keeps a copy of its vectors beside it: an embedded Chroma, a shipped encoder
        (deterministic, so a vector the copy lacks can be encoded again and checked against Chroma's)."""
        return not (self.settings.chroma_url or isinstance(self.store, ServerStore)) and shipped_encoder(
            self.embedder_name
        )

    def exact_copy(self) -> tuple[ExactVectors, list[Chunk]] | None:
        """The copy of the loaded generation's vectors, with each one's chunk, when a search may read it
        instead of Chroma; None to ask Chroma (no copy, another generation or encoder, a sync running)."""
        if self._exact is None:
            self._exact = (not self._syncing and self._open_exact_copy()) or False
        return self._exact if isinstance(self._exact, tuple) else None

    def _open_exact_copy(self) -> tuple[ExactVectors, list[Chunk]] | None:
        if not self.keeps_exact_copy or self.mismatch is not None or not 0 < len(self.rows) < EXACT_LIMIT:
            return None
        manifest = self.manifest_or_none() or {}
        if manifest.get("generation") != self.generation or manifest.get("embeddings") != self.embedder_name:
            return None
        copy = open_copy(self.cache_dir, self.generation, manifest, self.chroma_path / "chroma.sqlite3")
        if copy is None or len(copy.ids) != len(self.rows):
            return None
        chunks = [self.rows.find(vid) for vid in copy.ids]
        found = [chunk for chunk in chunks if chunk is not None]
        return (copy, found) if len(found) == len(chunks) else None

    def _changing_chroma(self) -> None:
        """Before a sync writes to Chroma: the vector copy no longer says what Chroma holds."""
        if not self._chroma_changed and not isinstance(self.store, ServerStore):
            discard(self.cache_dir)
        self._chroma_changed = True

    def _keep_exact_copy(self, carried: dict[str, tuple[Any, Any]]) -> None:
        """After a sync: write the copy of the committed vectors, confirmed by Chroma, when the index is small
        enough and the copy is not already current. Its vectors are those the sync encoded, else the previous
        copy's, else (an index synced before the copy existed) the chunks encoded again; the copy is kept only
        once Chroma confirmed it (`exact_vectors.confirm`)."""
        if not self.keeps_exact_copy or not 0 < len(self.rows) < EXACT_LIMIT or self.mismatch is not None:
            discard(self.cache_dir)
            return
        if not self._chroma_changed and self._open_exact_copy() is not None:
            return
        ids = self.rows.vector_ids()
        chunks = list(self.rows)
        encoded = dict(self._encoded or {})
        known = encoded.keys() | carried.keys()
        missing = [(vid, chunk.text) for vid, chunk in zip(ids, chunks, strict=True) if vid not in known]
        if missing:
            log.info("Encoding %d chunks again for the copy of the vectors", len(missing))
            texts = [text for _, text in missing]
            encoded.update(zip([vid for vid, _ in missing], self.embedder.embed_documents(texts), strict=True))
        vectors = dict(carried)
        again = [vid for vid in ids if vid in encoded]  # what Chroma was given in this sync replaces the copy's
        if again:
            stored, lengths = stored_form(np.asarray([encoded[vid] for vid in again], dtype=np.float32))
            vectors.update({vid: (stored[n], lengths[n]) for n, vid in enumerate(again)})
        try:
            kinds = {vid: chunk.kind for vid, chunk in zip(ids, chunks, strict=True)}
            collection = self.collection()
            order = confirm(collection, ids, vectors, kinds)
            copy = ExactVectors(
                order,
                np.stack([vectors[vid][0] for vid in order]),
                np.asarray([vectors[vid][1] for vid in order], dtype=np.float32),
                collection.name,
                self.embedder_name,
            )
            copy.save(self.cache_dir, self.generation, self.chroma_path / "chroma.sqlite3")
        except (Unconfirmed, AssistantError, OSError) as why:
            discard(self.cache_dir)
            log.info("The vectors are searched in Chroma only: %s", why)

    def _lexical_index(self) -> Any:
        with self._lock:
            if self._lexical is None and len(self.rows) and isinstance(self.store, ServerStore):
                # derived from the server's records, cached in this home by commit
                if isinstance(self.entries, RecordFile):
                    self.entries.save(self.store.records_dir(self.generation))
                self._lexical = cached_lexical(self.store.lexical_dir(self.generation), self.chunk_texts)
            if self._lexical is None and len(self.rows):
                path = self.store.lexical_dir(self.generation)
                if (self.store.manifest() or {}).get("lexical") != LEXICAL_TOKENS:
                    # built with an older tokenizer: rebuilt in memory (a second for 4,000 chunks) until a sync
                    self._lexical = lexical_index([lexical_tokens(chunk.text) for chunk in self.rows])
                    return self._lexical
                try:
                    self._lexical = open_lexical(path)
                except Exception as error:  # missing or damaged files of the committed generation ...
                    if self._committed_generation() == self.generation:
                        raise self.store.damaged(path, error) from error
                    self.reload()  # ... or another process committed a newer one and removed this one
                    if self.mismatch is not None:
                        raise self.mismatch from error
                    if len(self.rows):
                        self._lexical = open_lexical(self.store.lexical_dir(self.generation))
            return self._lexical

    def committed(self) -> tuple[int, str | None] | None:
        """The committed generation and its commit token as the store says now (None when it cannot say)."""
        try:
            manifest = self.store.manifest() or {}
        except AssistantError:
            return None
        return int(manifest.get("generation", 0)), manifest.get("commit")

    @property
    def loaded(self) -> tuple[int, str | None]:
        """The generation this Index answers from, and its commit token (a server's; None for files)."""
        commits = self.store.commits if isinstance(self.store, ServerStore) else {}
        return self.generation, commits.get(self.generation)

    def successor(self) -> Index:
        """A new Index over the same settings, encoder and Chroma client, loaded from the committed
        generation: a replica builds it beside this one and swaps (this one keeps answering meanwhile)."""
        fresh = Index.__new__(Index)
        fresh.__dict__.update(self.__dict__)
        fresh._lock = threading.Lock()
        fresh._chroma_client, fresh._collection = None, None  # its own connection: a failure here closes only that
        fresh.store = fresh._open_store()
        fresh.reload()
        if len(fresh.rows) and fresh.mismatch is None:
            fresh._lexical_index()  # built (or read from the cache) here, off the request path
        return fresh

    def _committed_generation(self) -> int | None:
        try:
            return int((self.store.manifest() or {}).get("generation", 0))
        except IndexUnavailableError:
            return None
