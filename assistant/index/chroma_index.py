"""The index: Chroma vectors plus the committed entry store, kept in sync with the knowledge.

This is the only module that imports chromadb. Sync is incremental, keyed on entry id and
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
import hashlib
import json
import logging
import re
import shlex
import shutil
import sys
import threading
import time
import uuid
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from assistant.errors import (
    AssistantError,
    EmptyIndexError,
    IndexMismatchError,
    IndexUnavailableError,
    SettingsError,
)
from assistant.index.chroma_embedding import ChromaEmbeddingFunction
from assistant.index.chunking import Chunker
from assistant.index.embeddings import (
    Embedder,
    embedder_name,
    encoder_fits,
    known_embeddings,
    make_embedder,
    shipped_encoder,
)
from assistant.index.freshness import as_now, fingerprints, knowledge_names, stale_reason
from assistant.index.lease import Lease
from assistant.index.lock import DEFAULT_WAIT, SyncLock
from assistant.index.progress import Progress
from assistant.index.read_copy import copy_to_temporary, is_read_only, space_needed
from assistant.index.server_store import ServerStore, cached_lexical
from assistant.index.serving import check_not_served_otherwise
from assistant.index.store import REBUILD, Store, StoredEntry, lexical_index, vector_id
from assistant.index.writer import BackgroundWriter, WriteStalled, is_disk_full
from assistant.knowledge.asked_as import FIELD as ASKED_AS
from assistant.knowledge.asked_as import SOURCES as ASKED_AS_SOURCES
from assistant.knowledge.asked_as import descriptions_of, sources_of, with_descriptions
from assistant.knowledge.corpus import load_corpus, under
from assistant.offline import offline_environment
from assistant.redaction import strip_userinfo
from assistant.settings import Settings
from assistant.text import LEXICAL_TOKENS, lexical_tokens
from assistant.types import Chunk, Entry, Problem

EMBED_BATCH = 256  # chunks per Chroma write (and per call of a remote encoder)
PROGRESS_STEP = 16  # chunks per call of a local encoder: the progress bar moves this often
# where an entry was read from does not change what it says
VOLATILE_FIELDS = ("sources", "anchors", "path", ASKED_AS_SOURCES)
WRITE_TIMEOUT = 120.0  # seconds one Chroma write may take before the sync gives up on it
EF_SEARCH = 500  # HNSW search breadth: a narrow search returns a tail that differs between processes
VECTOR_COLLECTION = re.compile(r"assistant-[0-9a-f]{12}")  # the names `_open_collection` gives
SAMPLE_IDS = 256  # committed vector ids looked up in Chroma on every sync


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
    repaired: int = 0  # chunks of committed entries whose vectors were missing from Chroma, embedded again
    swept: int = 0  # vectors in Chroma that no committed chunk named (left by a killed sync), deleted
    ignored: int = 0  # files a .assistantignore names
    notes: list[str] = field(default_factory=list)  # files read, but not whole (a PDF's pages without text)

    def summary(self) -> str:
        if self.embedded_chunks:  # a rate only for work done: a no-op sync has none worth printing
            rate = self.embedded_chunks / self.seconds if self.seconds else 0.0
            work = f"embedded {self.embedded_chunks} chunks in {self.seconds:.1f}s ({rate:.1f} chunks/s)"
        else:
            work = f"nothing to embed; took {self.seconds:.1f}s"
        return (
            f"{self.entries} entries ({self.chunks} chunks) from {self.files} files: "
            f"{self.added} added, {self.updated} updated, {self.removed} removed, "
            f"{self.unchanged} unchanged, {len(self.skipped)} skipped"
            + (f" ({self.kept} entries of unreadable files kept as they were)" if self.kept else "")
            + f"; {work}"
            + (f"; repaired {self.repaired} vectors missing from Chroma" if self.repaired else "")
            + (f"; swept {self.swept} orphan vectors" if self.swept else "")
            + (f"; {self.ignored} files ignored by .assistantignore" if self.ignored else "")
        )

    def to_dict(self) -> dict[str, Any]:
        data = dict(self.__dict__)
        data["skipped"] = [str(p) for p in self.skipped]
        return data


def entry_hash(entry: Entry, chunking: dict[str, int]) -> str:
    fields = {k: v for k, v in entry.fields.items() if k not in VOLATILE_FIELDS}
    payload = json.dumps([entry.kind, entry.title, entry.text, fields, entry.url, chunking], sort_keys=True)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


log = logging.getLogger("assistant")


class RemovalRefused(AssistantError):
    """A sync would remove most of the index because its knowledge yields nothing: a wrong or empty path,
    an unmounted drive, files of a format it does not read. Nothing was changed."""

    def __init__(self, removed: int, total: int, roots: list[Path], problems: list[Problem]) -> None:
        named = " ".join(shlex.quote(Path(root).as_posix()) for root in roots)
        why = f" ({problems[0].message})" if len(problems) == 1 else ""
        super().__init__(
            f"{named or 'the knowledge'} yields no entries{why}, so this sync would remove {removed} of the "
            f"{total} entries in the index - nothing was changed; check the path, or to empty the index "
            f"run: assistant index {named} --yes"
        )
        self.removed, self.total = removed, total


class Index:
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
        self.entries: dict[str, StoredEntry] = {}
        self.generation = 0
        self._rows: list[Chunk] = []
        self._by_vector: dict[str, Chunk] = {}
        self._lexical: Any = None
        self.lock_wait: float | None = None  # seconds a sync waits for another one (None: the default)
        self.write_timeout = WRITE_TIMEOUT
        self.read_copy_note: str | None = None  # set when Chroma is searched from a copy (`read_copy`)
        self._fresh_collection = False  # a rebuild against a server: vectors go to a new collection
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
            self.entries, self.generation, self._rows, self._by_vector, self._lexical = {}, 0, [], {}, None
            return
        except IndexUnavailableError as error:
            self.mismatch = error
            self.entries, self.generation, self._rows, self._by_vector, self._lexical = {}, 0, [], {}, None
            return
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
        return stale_reason(self.store.manifest(), self.settings.knowledge)

    def entry(self, entry_id: str) -> Entry | None:
        item = self.entries.get(entry_id)
        return item.entry if item else None

    def chunks_of(self, entry_id: str) -> list[Chunk]:
        """The entry's own chunks, in order: what context and citations may quote (no asked-as chunk)."""
        item = self.entries.get(entry_id)
        return [c for c in item.chunks if c.field != ASKED_AS] if item else []

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
                path = self.chroma_path
                path.mkdir(parents=True, exist_ok=True)
                try:
                    client = chromadb.PersistentClient(path=str(path), settings=chroma_settings)
                except Exception as error:
                    if not (is_disk_full(error) or is_read_only(error)) or not (path / "chroma.sqlite3").exists():
                        raise
                    self._forget_client()
                    client = self._open_copy(path, error, chromadb.PersistentClient, chroma_settings)
        except Exception as error:  # chromadb raises many types; all mean "cannot open"
            if not url:
                self._forget_client()  # chromadb caches the half-opened client by path
            raise self._unavailable(error) from error
        self._chroma_client = client
        return client

    def _open_copy(self, path: Path, error: BaseException, open_client: Any, chroma_settings: Any) -> Any:
        """Chroma opened from a temporary copy of `path`, which it cannot open in place (`read_copy`)."""
        why = "the disk is full" if is_disk_full(error) else "the home is read-only"
        copy = copy_to_temporary(path)
        client = open_client(path=str(copy), settings=chroma_settings)
        self.read_copy_note = f"The index in {self.store.root} cannot be written ({why}): searching a copy in {copy}"
        log.warning("%s", self.read_copy_note)
        return client

    @property
    def chroma_path(self) -> Path:
        """Where embedded Chroma keeps its files (unused with a server)."""
        return self.store.root / "chroma"

    def _unavailable(self, error: BaseException) -> IndexUnavailableError:
        """One line for a Chroma failure: what failed and the one thing that fixes it."""
        if isinstance(error, IndexUnavailableError):
            return error
        url = self.settings.chroma_url
        if is_disk_full(error):
            where = f"the Chroma server at {strip_userinfo(url)}" if url else f"the index in {self.store.root}"
            need = "" if url else f"; {space_needed(self.store.root)}"
            return IndexUnavailableError(
                f"The disk is full: {where} cannot store more ({type(error).__name__}{need}) - "
                "free some space, then run: assistant index (the previous index still answers)"
            )
        if isinstance(error, WriteStalled):
            where = f"the Chroma server at {strip_userinfo(url)}" if url else f"the index in {self.store.root}"
            return IndexUnavailableError(
                f"Stopped: {error} in {where} (is its disk full?) - "
                "free some space, then run: assistant index (the previous index still answers)"
            )
        if url:
            return IndexUnavailableError(
                f"Cannot reach the Chroma server at {strip_userinfo(url)} ({type(error).__name__}) - "
                "start it (chroma run --path DIR --host 127.0.0.1 --port PORT) or unset ASSISTANT_CHROMA_URL"
            )
        detail = str(error).splitlines()[0][:120] if str(error) else ""
        return IndexUnavailableError(
            f"Cannot use the index in {self.store.root} ({type(error).__name__}"
            + (f": {detail}" if detail else "")
            + f") - {REBUILD}"
        )

    def _chroma(self, call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """A Chroma call whose failure becomes one IndexUnavailableError line."""
        try:
            return call(*args, **kwargs)
        except AssistantError:
            raise
        except Exception as error:
            self._reconnect_later()
            raise self._unavailable(error) from error

    def _reconnect_later(self) -> None:
        """After a failure against a server, close our client: the next use connects (and checks) afresh."""
        client = self._chroma_client
        if self.settings.chroma_url and client is not None:
            self._chroma_client, self._collection = None, None
            # chromadb's close() releases the client's systems but leaves their HTTP connections open
            for owner in (client, getattr(client, "_admin_client", None)):
                session: Any = getattr(getattr(owner, "_server", None), "_session", None)
                if session is not None:
                    with contextlib.suppress(Exception):
                        session.close()
            with contextlib.suppress(Exception):
                client.close()

    def _open_collection(self) -> Any:
        """The manifest's collection (found without writing, so it opens on a full disk), else a new one."""
        from chromadb.errors import NotFoundError

        manifest = self.store.manifest() or {}
        name = (None if self._fresh_collection else manifest.get("collection")) or f"assistant-{uuid.uuid4().hex[:12]}"
        client = self._client()
        function = ChromaEmbeddingFunction(self)
        try:
            try:
                collection = client.get_collection(name, embedding_function=function)
            except NotFoundError:
                collection = client.create_collection(
                    name,
                    embedding_function=function,
                    configuration={"hnsw": {"space": "cosine", "ef_search": EF_SEARCH}},
                    metadata={"embeddings": self.embedder_name},
                )
        except Exception as error:
            self._reconnect_later()
            raise self._unavailable(error) from error
        hnsw = (getattr(collection, "configuration_json", None) or {}).get("hnsw") or {}
        if hnsw.get("ef_search", EF_SEARCH) < EF_SEARCH:  # created before ef_search was set
            try:
                with warnings.catch_warnings():  # chromadb re-reads our (legacy) embedding function's config
                    warnings.simplefilter("ignore", DeprecationWarning)
                    collection.modify(configuration={"hnsw": {"ef_search": EF_SEARCH}})
            except Exception as error:  # a full disk: search as before rather than not at all
                print(f"warning: could not raise ef_search ({type(error).__name__})", file=sys.stderr)
        return collection

    def _sweep_collections(self) -> None:
        """Against a server: delete vector collections the manifest does not name (the one a rebuild
        replaced, or one a killed rebuild left). One index per Chroma database, so they are ours."""
        named = (self.store.manifest() or {}).get("collection")
        client = self._client()
        for collection in self._chroma(client.list_collections):
            name = getattr(collection, "name", collection)
            if named and name != named and VECTOR_COLLECTION.fullmatch(name):
                with contextlib.suppress(Exception):  # another sync's clean-up got there first
                    client.delete_collection(name)

    def _forget_client(self) -> None:
        """Drop our embedded client and chromadb's cached one for this path (private API, best effort)."""
        self._collection = None
        self._chroma_client = None
        try:
            from chromadb.api.shared_system_client import SharedSystemClient

            system = SharedSystemClient._identifier_to_system.pop(str(self.chroma_path), None)
            SharedSystemClient._identifier_to_refcount.pop(str(self.chroma_path), None)
            if system is not None:
                system.stop()
        except Exception:  # a half-opened system fails to stop; it is unreachable now anyway
            pass

    def _discard_chroma(self) -> Path | None:
        """Move a damaged embedded Chroma folder aside (replacing an older one); it is rebuilt empty."""
        self._forget_client()
        path = self.chroma_path
        if not path.exists():
            return None
        aside = path.with_name("chroma.damaged")
        shutil.rmtree(aside, ignore_errors=True)
        path.rename(aside)
        return aside

    def max_batch_size(self) -> int:
        """The most vectors Chroma takes in one write."""
        return int(getattr(self._client(), "get_max_batch_size", lambda: 5000)())

    def vector_ids(self) -> set[str]:
        collection, ids, offset = self.collection(), set(), 0
        while True:
            page = self._chroma(collection.get, include=[], limit=5000, offset=offset)["ids"]
            ids.update(page)
            if len(page) < 5000:
                return ids
            offset += len(page)

    def vectors_agree(self) -> bool:
        """Quick check that Chroma holds exactly the committed vectors: the count and a sample of ids."""
        committed = sorted(self._by_vector)
        collection = self.collection()
        if self._chroma(collection.count) != len(committed):
            return False
        if not committed:
            return True
        sample = committed[:: max(1, len(committed) // SAMPLE_IDS)]
        found = self._chroma(collection.get, ids=sample, include=[])["ids"]
        return len(set(found)) == len(sample)

    def vector_health(self) -> tuple[int, int, int, int]:
        """Without writing: (committed vectors, missing from Chroma, in Chroma but not committed,
        sampled vectors that a search by their own embedding does not find, which means a damaged HNSW index).
        """
        from chromadb.errors import NotFoundError

        committed = set(self._by_vector)
        name = (self.store.manifest() or {}).get("collection")
        if not name:
            return 0, 0, 0, 0
        try:
            collection = self._client().get_collection(name, embedding_function=ChromaEmbeddingFunction(self))
        except NotFoundError:
            return len(committed), len(committed), 0, 0
        except Exception as error:
            raise self._unavailable(error) from error
        ids: set[str] = set()
        offset = 0
        while True:
            page = self._chroma(collection.get, include=[], limit=5000, offset=offset)["ids"]
            ids.update(page)
            offset += len(page)
            if len(page) < 5000:
                break
        present = sorted(committed & ids)
        sample = present[:: max(1, len(present) // 8)]
        lost = 0
        if sample:
            stored = self._chroma(collection.get, ids=sample, include=["embeddings"])
            found = self._chroma(
                collection.query, query_embeddings=list(stored["embeddings"]), n_results=10, include=[]
            )
            lost = sum(vid not in near for vid, near in zip(stored["ids"], found["ids"], strict=True))
        return len(committed), len(committed - ids), len(ids - committed), lost

    # --- sync ------------------------------------------------------------------------

    def sync(
        self,
        paths: Iterable[Path] | None = None,
        *,
        rebuild: bool = False,
        progress: bool | None = None,
        on_embedded: Callable[[int], None] | None = None,
        allow_removal: bool = False,
    ) -> SyncReport:
        """Make the index match the knowledge under `paths` (default: settings.knowledge).

        Holds the home's sync lock throughout; another sync waits up to `lock_wait` seconds. A sync
        whose knowledge yields no entries at all while it would remove more than half of the index
        raises `RemovalRefused` before anything changes, unless `allow_removal` (`--yes`).
        """
        roots = list(paths) if paths is not None else list(self.settings.knowledge)
        check_not_served_otherwise(Path(self.settings.home), roots)  # one home, one knowledge
        lock: SyncLock | Lease = SyncLock(self.store.root, self.lock_wait)
        if isinstance(self.store, ServerStore):  # one writer per server, whichever machine it runs on
            wait = DEFAULT_WAIT if self.lock_wait is None else self.lock_wait
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
            self.reload()
            report = self._sync(paths, rebuild, progress, on_embedded, allow_removal)
            self._fresh_collection = False
            if isinstance(self.store, ServerStore):
                self._sweep_collections()
            return report
        finally:
            lock.__exit__(None, None, None)

    def _sync(
        self,
        paths: Iterable[Path] | None,
        rebuild: bool,
        progress: bool | None,
        on_embedded: Callable[[int], None] | None,
        allow_removal: bool = False,
    ) -> SyncReport:
        started = time.perf_counter()
        if rebuild:
            self.drop()
        elif self.mismatch is not None:
            raise self.mismatch
        self.store.sweep(self.generation)  # generation files a killed sync left behind
        roots = list(paths) if paths is not None else list(self.settings.knowledge)
        files = fingerprints(roots)  # before reading: a file edited during the sync looks changed next time
        corpus = load_corpus(roots)
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
        if not corpus.entries and report.removed * 2 > len(self.entries) and not (allow_removal or rebuild):
            raise RemovalRefused(report.removed, len(self.entries), roots, corpus.problems)
        knowledge = knowledge_names(roots)
        manifest = self.store.manifest() or {}
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
        committed = set(self._by_vector)
        if not to_embed and not report.removed and self.vectors_agree():
            if same_state:
                self._record_files(manifest, files)
                report.entries, report.chunks = len(self.entries), len(self._rows)
                report.seconds = time.perf_counter() - started
                return report
            existing = committed  # only where entries were read from changed; Chroma already agrees
        else:
            existing = self.vector_ids()
        todo = [item for item in fresh.values() if not set(item.vector_ids()) <= existing]
        report.repaired = sum(
            1 for item in todo for vid in item.vector_ids() if vid in committed and vid not in existing
        )
        report.embed_seconds = self._embed(todo, existing, report, progress, on_embedded)
        if not same_state:
            manifest = {
                **self.expected_manifest(),
                "collection": self.collection().name,
                "entries": len(fresh),
                "chunks": sum(len(item.chunks) for item in fresh.values()),
                "knowledge": knowledge,
                "files": files,
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
        stale = existing - set(self._by_vector)
        report.swept = len(stale - committed)  # not the vectors of entries this sync replaced or removed
        collection = self.collection()
        ordered = sorted(stale)
        for start in range(0, len(ordered), 5000):
            self._chroma(collection.delete, ids=ordered[start : start + 5000])
        report.entries, report.chunks = len(self.entries), len(self._rows)
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
        """Refresh the fingerprints of an unchanged generation (touched files, or an index from before them)."""
        if manifest.get("files") != files:
            with contextlib.suppress(OSError):  # only an optimisation: the next start hashes the files again
                self.store.annotate(files=files)

    def _embed(
        self,
        items: list[StoredEntry],
        existing: set[str],
        report: SyncReport,
        progress: bool | None,
        on_embedded: Callable[[int], None] | None,
    ) -> float:
        """Embed and add chunks in batches; Chroma writes overlap with the next batch's encoding.

        A failed write stops the encoding at the next batch (not after the last one).
        """
        if not items:
            return 0.0
        total = sum(vid not in existing for item in items for vid in item.vector_ids())
        bar = Progress(total, "chunks", "Embedding", progress)
        # the bar moves every few chunks, not per write batch: the first batch alone takes ~8 s here.
        # The shipped encoders encode text by text anyway; any other keeps whole batches (one request each).
        text_by_text = shipped_encoder(self.embedder_name)
        writer = BackgroundWriter(self.write_vectors, self.write_timeout)
        embed_time = 0.0
        batch: list[tuple[str, Chunk]] = []

        def flush() -> None:
            nonlocal embed_time, batch
            if not batch:
                return
            writer.check()
            texts = [chunk.text for _, chunk in batch]
            vectors: list[list[float]] = []
            step = PROGRESS_STEP if text_by_text else len(texts)
            for start in range(0, len(texts), step):
                t0 = time.perf_counter()
                vectors += self.embedder.embed_documents(texts[start : start + step])
                embed_time += time.perf_counter() - t0
                bar.update(len(texts[start : start + step]))
            writer.submit(list(batch), vectors)
            report.embedded_chunks += len(batch)
            if on_embedded:
                on_embedded(len(batch))
            batch = []

        try:
            for item in items:
                for chunk, vid in zip(item.chunks, item.vector_ids(), strict=True):
                    if vid not in existing:
                        batch.append((vid, chunk))
                if len(batch) >= EMBED_BATCH:
                    flush()
            flush()
            writer.finish()
        except BackgroundWriter.Failed as failed:
            self._reconnect_later()
            raise self._unavailable(failed.error) from failed.error
        finally:
            writer.close()
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
            self.entries, self._rows, self._by_vector, self._lexical = {}, [], {}, None
            return
        try:
            name = (self.store.manifest() or {}).get("collection")
        except IndexUnavailableError:  # a damaged manifest: its collection cannot be named
            name = None
        self._collection = None
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
        self.entries, self.generation, self._rows, self._by_vector, self._lexical = {}, 0, [], {}, None

    # --- search primitives -------------------------------------------------------------

    def dense(self, query: str, k: int, kind: str | None = None) -> list[tuple[Chunk, float]]:
        """Nearest chunks to the query's embedding by cosine similarity, best first."""
        if not self._rows:
            return []
        return self.nearest(self.embedder.embed_query(query), k, kind)

    def nearest(
        self, vector: Sequence[float], k: int, kind: str | None = None, *, described: bool = True
    ) -> list[tuple[Chunk, float]]:
        """Nearest committed chunks to a vector by cosine similarity (1 - cosine distance), best first;
        `described=False` leaves out asked-as descriptions (what the entries themselves say)."""
        if not self._rows:
            return []
        conditions: list[dict[str, Any]] = [{"kind": kind}] if kind else []
        if not described:
            conditions.append({"field": {"$ne": ASKED_AS}})
        where = conditions[0] if len(conditions) == 1 else {"$and": conditions} if conditions else None
        wanted = k + 8
        while True:
            # no count() first: it costs ~13 ms at 100,000 chunks; Chroma returns fewer when it has fewer
            result = self._chroma(
                self.collection().query,
                query_embeddings=[vector],
                n_results=wanted,
                where=where,
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

    def lexical_frequencies(self, tokens: Iterable[str]) -> tuple[int, dict[str, int]]:
        """The chunk count and, per lexical token (a stem), how many chunks hold it (0 when none):
        read off the BM25 index's columns, so nothing is counted at query time."""
        retriever = self._lexical_index()
        if retriever is None:
            return 0, {}
        vocab, starts = retriever.vocab_dict, retriever.scores["indptr"]
        found = {t: int(starts[vocab[t] + 1] - starts[vocab[t]]) if t in vocab else 0 for t in tokens}
        return int(retriever.scores["num_docs"]), found

    def _lexical_index(self) -> Any:
        with self._lock:
            if self._lexical is None and self._rows and isinstance(self.store, ServerStore):
                # derived from the server's records, cached in this home by commit
                self._lexical = cached_lexical(self.store.lexical_dir(self.generation), [c.text for c in self._rows])
            if self._lexical is None and self._rows:
                import bm25s

                path = self.store.lexical_dir(self.generation)
                if (self.store.manifest() or {}).get("lexical") != LEXICAL_TOKENS:
                    # built with an older tokenizer: rebuilt in memory (a second for 4,000 chunks) until a sync
                    self._lexical = lexical_index([lexical_tokens(chunk.text) for chunk in self._rows])
                    return self._lexical
                try:
                    self._lexical = bm25s.BM25.load(str(path))
                except Exception as error:  # missing or damaged files of the committed generation ...
                    if self._committed_generation() == self.generation:
                        raise self.store.damaged(path, error) from error
                    self.reload()  # ... or another process committed a newer one and removed this one
                    if self.mismatch is not None:
                        raise self.mismatch from error
                    if self._rows:
                        self._lexical = bm25s.BM25.load(str(self.store.lexical_dir(self.generation)))
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
        if fresh._rows and fresh.mismatch is None:
            fresh._lexical_index()  # built (or read from the cache) here, off the request path
        return fresh

    def _committed_generation(self) -> int | None:
        try:
            return int((self.store.manifest() or {}).get("generation", 0))
        except IndexUnavailableError:
            return None
