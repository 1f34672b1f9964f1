"""The committed state of an index kept in a Chroma server, so app replicas need no state of their own.

With `ASSISTANT_CHROMA_URL` set, what `store.Store` keeps as files under the home lives in two
collections of the server beside the vectors:

- `assistant-entries`: one record per entry of a generation (the entry, its hash and its chunks, as
  JSON in the document), id `<commit>:<position>`, metadata `commit` and `generation`;
- `assistant-state`: the `manifest` record (the manifest as JSON: the knowledge it was built from,
  embeddings, chunking, the committed generation and its commit token) and the sync's `lease`
  (`assistant.index.lease`).

A sync writes every record of its new generation under a fresh commit token first and upserts the
manifest record last: that single-record write is the commit point. A sync killed before it leaves
the previous generation, which the manifest still names, whole; the records it wrote are orphans
that the next sync's `sweep` deletes. Records of two syncs never mix, because each writes under its
own token. A replica whose home is empty reads the committed records once and caches them under
`<home>/index/cache/`, one folder per commit (`record_file`), with the lexical index it derives from them
(`cached_lexical`) and the retriever's tables (`retrieval.corpus_tables`).

Chroma stores no record without a vector: these records carry a one-dimensional constant vector
through an embedding function of their own (never Chroma's default, which would download a model).
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from assistant.index.cache_folder import replace_folder
from assistant.index.lexical_files import open_lexical
from assistant.index.record_file import (
    RecordFile,
    RecordsIncomplete,
    open_or_none,
    parse_record,
    record_of,
    write_records,
)
from assistant.index.store import (
    FORMAT_VERSION,
    REBUILD,
    IndexDamagedError,
    StoredEntry,
    check_manifest,
    lexical_index,
)
from assistant.text import lexical_tokens

ENTRIES = "assistant-entries"
STATE = "assistant-state"
MANIFEST = "manifest"
WRITE_BATCH = 256  # entry records per write
READ_BATCH = 1000  # records per read by id
ONE = [1.0]  # the vector every state record carries

log = logging.getLogger("assistant")


class RecordVectors:
    """The embedding function of the state collections: a constant vector (the records are looked up by id)."""

    def __call__(self, input: list[str]) -> list[Any]:
        import numpy as np

        return [np.asarray(ONE, dtype=np.float32) for _ in input]

    @staticmethod
    def name() -> str:
        return "assistant-records"

    def is_legacy(self) -> bool:
        return True

    def get_config(self) -> dict[str, Any]:
        return {}

    def default_space(self) -> str:
        return "l2"

    def supported_spaces(self) -> list[str]:
        return ["l2"]

    def embed_query(self, input: list[str]) -> list[Any]:
        return self(input)


class ServerStore:
    """Reads and writes generations in a Chroma server; the same methods as `store.Store`.

    `client` opens (or returns) the Chroma client, `call` runs one Chroma call and turns its failure
    into one `IndexUnavailableError` line, `where` names the server in messages. `root` is the local
    cache folder (`<home>/index`), which may not exist or be writable.
    """

    def __init__(self, root: Path, client: Callable[[], Any], call: Callable[..., Any], where: str) -> None:
        self.root = root
        self.where = where
        self._client = client
        self._call = call
        self._collections: dict[str, Any] = {}
        self._opened_by: Any = None
        self.commits: dict[int, str] = {}  # generation -> commit token, of the generations loaded here
        self.before_commit: Callable[[], None] | None = None  # the sync's last check (its lease) before the flip
        self.commit_pause = 0.0  # seconds to wait before the flip (tests kill a sync there)

    # --- records ---------------------------------------------------------------------

    def collection(self, name: str) -> Any:
        client = self._call(self._client)
        if client is not self._opened_by:  # reconnected since: the old handles belong to the old client
            self._collections, self._opened_by = {}, client
        if name not in self._collections:
            self._collections[name] = self._call(
                client.get_or_create_collection,
                name,
                embedding_function=RecordVectors(),
                configuration={"hnsw": {"space": "l2"}},
                metadata={"holds": "assistant index state"},
            )
        return self._collections[name]

    def read(self, record_id: str) -> dict[str, Any] | None:
        """A state record's JSON (the manifest, the lease), or None when there is none."""
        found = self._call(self.collection(STATE).get, ids=[record_id], include=["documents"])
        if not found["ids"]:
            return None
        try:
            data = json.loads(found["documents"][0] or "")
        except ValueError as error:
            raise self.damaged(Path(record_id), error) from error
        if not isinstance(data, dict):
            raise self.damaged(Path(record_id), ValueError("not a JSON object"))
        return data

    def write(self, record_id: str, data: dict[str, Any], **metadata: str | int | float) -> None:
        document = json.dumps(data, sort_keys=True, ensure_ascii=False)
        self._call(
            self.collection(STATE).upsert,
            ids=[record_id],
            documents=[document],
            embeddings=[ONE],
            metadatas=[{"record": record_id, **metadata}],
        )

    def remove(self, record_id: str) -> None:
        self._call(self.collection(STATE).delete, ids=[record_id])

    # --- the Store interface -----------------------------------------------------------

    def manifest(self) -> dict[str, Any] | None:
        """The committed manifest, None before the first sync; IndexDamagedError when unreadable."""
        data = self.read(MANIFEST)
        if data is not None and not (isinstance(data.get("generation"), int) and isinstance(data.get("commit"), str)):
            raise self.damaged(Path(MANIFEST), ValueError("no generation number"))
        return data

    def annotate(self, **fields: Any) -> None:
        """Add or replace manifest fields that do not change the committed generation (under the lease)."""
        manifest = self.manifest()
        if manifest is not None:
            self.write(MANIFEST, {**manifest, **fields}, generation=manifest["generation"], commit=manifest["commit"])

    def damaged(self, path: Path, error: Exception) -> IndexDamagedError:
        detail = str(error).splitlines()[0][:120] if str(error) else type(error).__name__
        return IndexDamagedError(f"The index record {path.name} on {self.where} is damaged ({detail}) - {REBUILD}")

    def check(self, expected: dict[str, Any]) -> None:
        """Raise when the index on the server was built with other embeddings or chunking."""
        check_manifest(self.manifest(), expected, f"on {self.where}")

    def load(self) -> tuple[RecordFile, int]:
        """The committed generation's entries (cached in this home by commit, `record_file`); read again
        once when a newer commit replaced them meanwhile."""
        for _attempt in range(3):
            manifest = self.manifest()
            if manifest is None:
                return write_records([]), 0
            generation, commit, count = int(manifest["generation"]), manifest["commit"], int(manifest.get("entries", 0))
            self.commits = {generation: commit}
            cached = open_or_none(self.records_dir(generation), count)
            if cached is not None:
                return cached, generation
            try:
                return write_records(self._records(commit, count)), generation
            except RecordsIncomplete:
                pass
            newer = self.manifest()
            if newer is None or newer.get("commit") == commit:  # still committed, yet records are missing
                break
        raise IndexDamagedError(f"The index on {self.where} misses entry records of its generation - {REBUILD}")

    def _records(self, commit: str, count: int) -> Iterator[tuple[StoredEntry, bytes]]:
        """The `count` records of `commit` in store order, as JSON; RecordsIncomplete when some are missing."""
        collection = self.collection(ENTRIES)
        for start in range(0, count, READ_BATCH):
            wanted = [record_id(commit, position) for position in range(start, min(count, start + READ_BATCH))]
            found = self._call(collection.get, ids=wanted, include=["documents"])
            documents = dict(zip(found["ids"], found["documents"], strict=True))
            if len(documents) != len(wanted):
                raise RecordsIncomplete(commit)
            for rid in wanted:
                line = (documents[rid] or "").encode("utf-8")
                try:
                    item = parse_record(json.loads(line))
                except (ValueError, TypeError, KeyError) as error:
                    raise self.damaged(Path(rid), ValueError(type(error).__name__)) from error
                yield item, line

    def tables_dir(self, generation: int) -> Path:
        """Where this home caches the retriever's tables of a loaded generation (by its commit token)."""
        commit = self.commits.get(generation, "none")
        return self.root / "cache" / f"tables-{generation}-{commit[:12]}"

    def records_dir(self, generation: int) -> Path:
        """Where this home caches the entry records of a loaded generation (by its commit token)."""
        commit = self.commits.get(generation, "none")
        return self.root / "cache" / f"records-{generation}-{commit[:12]}"

    def clear(self) -> None:
        """Remove the manifest and every entry record (the lease stays with its sync)."""
        self.remove(MANIFEST)
        self.sweep(None)

    def sweep(self, generation: int | None) -> int:
        """Delete the entry records of every commit but the committed one (all of them for None).

        Records of a sync killed before its commit, and of generations replaced since. Returns how many.
        """
        keep = self.commits.get(generation) if generation is not None else None
        if generation is not None and keep is None:
            manifest = self.manifest()
            keep = manifest["commit"] if manifest and manifest["generation"] == generation else None
            if keep is None:
                return 0  # not the committed generation: nothing is known to be stale
        collection = self.collection(ENTRIES)
        removed = 0
        where = {"commit": {"$ne": keep}} if keep is not None else None
        while True:
            page = self._call(collection.get, where=where, include=[], limit=5000)["ids"]
            if not page:
                return removed
            self._call(collection.delete, ids=page)
            removed += len(page)

    def lexical_dir(self, generation: int) -> Path:
        """Where this home caches the lexical index of a loaded generation (by its commit token)."""
        commit = self.commits.get(generation, "none")
        return self.root / "cache" / f"lexical-{generation}-{commit[:12]}"

    def commit(
        self,
        stored: dict[str, StoredEntry],
        generation: int,
        manifest: dict[str, Any],
        lexical_from: int | None = None,
    ) -> None:
        """Write the generation's records under a new token, then the manifest record (the commit point),
        then delete older records. `lexical_from` is unused: replicas derive the lexical index themselves."""
        token = uuid.uuid4().hex
        collection = self.collection(ENTRIES)
        for start, batch in batches(list(stored.values()), WRITE_BATCH):
            self._call(
                collection.upsert,
                ids=[record_id(token, start + i) for i in range(len(batch))],
                documents=[json.dumps(record_of(item), ensure_ascii=False) for item in batch],
                embeddings=[ONE] * len(batch),
                metadatas=[{"commit": token, "generation": generation} for _ in batch],
            )
        if self.commit_pause:
            log.info(
                "Generation %d written (%d entries); committing in %.0f s", generation, len(stored), self.commit_pause
            )
            time.sleep(self.commit_pause)
        if self.before_commit is not None:
            self.before_commit()
        self.write(
            MANIFEST,
            {**manifest, "format": FORMAT_VERSION, "generation": generation, "commit": token},
            generation=generation,
            commit=token,
        )
        self.commits = {generation: token}
        self.sweep(generation)


def record_id(commit: str, position: int) -> str:
    return f"{commit}:{position:08d}"


def batches(items: list[StoredEntry], size: int) -> Iterator[tuple[int, list[StoredEntry]]]:
    for start in range(0, len(items), size):
        yield start, items[start : start + size]


def cached_lexical(directory: Path, texts: Callable[[], Iterable[str]]) -> Any:
    """The lexical index over `texts()` (row i = the i-th text) from this home's cache, read by `LexicalFiles`
    (mapped, not read: a search touches the columns of its words); built by bm25s and saved when missing.

    Saved to a temporary folder renamed into place, so a replica killed while saving leaves no half
    index; older generations' folders are removed. A home that cannot be written keeps it in memory.
    """
    try:
        return open_lexical(directory)
    except Exception:  # missing or damaged: built again from the committed records
        pass
    started = time.perf_counter()
    tokens = [lexical_tokens(text) for text in texts()]
    retriever = lexical_index(tokens)
    try:
        replace_folder(directory, lambda temporary: retriever.save(str(temporary)))
    except OSError as error:
        log.info("The lexical index stays in memory: %s cannot be written (%s)", directory.parent, error.strerror)
        return retriever
    log.info("Lexical index of %d chunks built in %.1f s", len(tokens), time.perf_counter() - started)
    return open_lexical(directory)  # searched as a home's saved index is (`lexical_files`), and mapped
