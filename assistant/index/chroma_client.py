"""The Chroma side of the index: the client (embedded under the home, or a server), the vector
collection, and the checks that Chroma holds the committed vectors.

With `chroma_index` the only modules that talk to Chroma (`server_store` uses the client it is given).
Every failure becomes one `IndexUnavailableError` line naming the fix; against a server, the client
is closed after a failure and the next use connects afresh.
"""

from __future__ import annotations

import contextlib
import logging
import re
import shutil
import sys
import threading
import uuid
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from assistant.errors import AssistantError, IndexUnavailableError
from assistant.index.chroma_embedding import ChromaEmbeddingFunction
from assistant.index.chunk_rows import ChunkRows
from assistant.index.read_copy import copy_to_temporary, is_read_only, low_on_space, space_needed
from assistant.index.server_store import ServerStore
from assistant.index.store import REBUILD, Store
from assistant.index.writer import DiskFullError, WriteStalled, is_disk_full
from assistant.redaction import strip_userinfo
from assistant.settings import Settings

if TYPE_CHECKING:
    from assistant.index.embeddings import Embedder

EF_SEARCH = 500  # HNSW search breadth: a narrow search returns a tail that differs between processes
SAMPLE_IDS = 256  # committed vector ids looked up in Chroma on every sync
VECTOR_COLLECTION = re.compile(r"assistant-[0-9a-f]{12}")  # the names `_open_collection` gives

log = logging.getLogger("assistant")


class ChromaConnection:
    """The Chroma half of `Index` (a base class: the attributes below are the Index's)."""

    settings: Settings
    store: Store | ServerStore
    _lock: threading.Lock
    _collection: Any
    _chroma_client: Any
    _fresh_collection: bool
    rows: ChunkRows
    read_copy_note: str | None
    _syncing: bool  # a sync runs: reads go to the home's Chroma, never to a copy it would not write

    if TYPE_CHECKING:

        @property
        def embedder(self) -> Embedder: ...

        @property
        def embedder_name(self) -> str: ...

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
                    copyable = (is_disk_full(error) or is_read_only(error)) and (path / "chroma.sqlite3").exists()
                    if not copyable or self._syncing:  # a sync must write the home's own Chroma, or fail
                        raise
                    self._forget_client()
                    client = self._open_copy(path, error, chromadb.PersistentClient, chroma_settings)
        except Exception as error:  # chromadb raises many types; all mean "cannot open"
            if not url:
                self._forget_client()  # chromadb caches the half-opened client by path
            raise self._unavailable(error) from error
        self._chroma_client = client
        return client

    def _open_copy(
        self, path: Path, error: BaseException, open_client: Any, chroma_settings: Any, say: bool = True
    ) -> Any:
        """Chroma opened from a temporary copy of `path`, which it cannot open in place (`read_copy`);
        `say`: log the note now (else the caller does, once the copy has answered)."""
        why = "the disk is full" if is_disk_full(error) else "the home is read-only"
        copy = copy_to_temporary(path)
        client = open_client(path=str(copy), settings=chroma_settings)
        self.read_copy_note = f"The index in {self.store.root} cannot be written ({why}): searching a copy in {copy}"
        if say:
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
        if is_disk_full(error) or (not url and low_on_space(self.store.root)):
            where = f"the Chroma server at {strip_userinfo(url)}" if url else f"the index in {self.store.root}"
            need = "" if url else f"; {space_needed(self.store.root)}"
            return DiskFullError(
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

    def _read(self, call: Callable[[Any], Any]) -> Any:
        """`call(collection)`, a read of the vector collection. When it fails because the home's disk is
        full (embedded Chroma applies its log before it reads, and cannot apply the log of a write that
        failed for lack of space), the committed index keeps answering from a copy (`read_copy`)."""
        try:
            return call(self.collection())
        except Exception as error:
            failure = error if isinstance(error, AssistantError) else self._unavailable(error)
            in_place = not (self.settings.chroma_url or self._syncing or self.read_copy_note)
            if not (isinstance(failure, DiskFullError) and in_place):  # a copy would not help, or is in use
                if failure is error:
                    raise
                self._reconnect_later()
                raise failure from error
            import chromadb
            from chromadb.config import Settings as ChromaSettings

            self._forget_client()
            try:
                self._chroma_client = self._open_copy(
                    self.chroma_path,
                    failure,
                    chromadb.PersistentClient,
                    ChromaSettings(anonymized_telemetry=False),
                    say=False,
                )
                answer = call(self.collection())
            except Exception:  # no room for a copy, or it fails too: the full disk is the one thing to fix
                raise failure from error
            log.warning("%s", self.read_copy_note)
            return answer

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
        committed = sorted(self.rows.vector_ids())
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

        committed = set(self.rows.vector_ids())
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
