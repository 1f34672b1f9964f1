"""The committed state and the sync lease in a real Chroma server (`chroma run` on 127.0.0.1).

Each test gets a server of its own: the state collections are the server's, shared by every home.
Embeddings are the fake hashed bag of words, so only Chroma's HTTP path and our records are under test.
"""

from __future__ import annotations

import itertools
import logging
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from assistant import Assistant
from assistant.errors import AssistantError
from assistant.index.chroma_index import Index
from assistant.index.lease import Lease, LostLeaseError
from assistant.index.lock import IndexBusyError
from assistant.index.server_store import ENTRIES, ServerStore
from assistant.settings import Settings
from tests.conftest import SEED
from tests.fakes import FakeEmbeddings
from tests.processes import chroma_run

pytestmark = pytest.mark.server


@pytest.fixture
def chroma_url(tmp_path: Path) -> Iterator[str]:
    with chroma_run(tmp_path / "chroma", tmp_path / "chroma.log") as (url, _proc):
        yield url


@pytest.fixture
def knowledge(tmp_path: Path) -> Path:
    folder = tmp_path / "seed"
    shutil.copytree(SEED, folder)
    return folder


def settings_for(home: Path, knowledge: Path, url: str, **changes: object) -> Settings:
    return Settings(home=home, knowledge=(knowledge,), chroma_url=url, model="extractive", **changes)  # type: ignore[arg-type]


def server_store(index: Index) -> ServerStore:
    assert isinstance(index.store, ServerStore)
    return index.store


def commits(index: Index) -> dict[str, int]:
    """Entry records on the server, by commit token."""
    found = server_store(index).collection(ENTRIES).get(include=["metadatas"])
    counted: dict[str, int] = {}
    for metadata in found["metadatas"]:
        counted[metadata["commit"]] = counted.get(metadata["commit"], 0) + 1
    return counted


def add_page(knowledge: Path, entry_id: str, title: str, text: str) -> None:
    (knowledge / f"9_{entry_id}.txt").write_text(f"Systems · {entry_id}\n{title}\n{text}\n", encoding="utf-8")


# --- the state --------------------------------------------------------------------------------


def test_the_server_holds_the_whole_index_and_an_empty_home_reads_it(
    tmp_path: Path, knowledge: Path, chroma_url: str
) -> None:
    writer = Index(settings_for(tmp_path / "writer", knowledge, chroma_url), embedder=FakeEmbeddings())
    report = writer.sync(progress=False)
    assert (report.added, report.chunks) == (60, 63)
    manifest = writer.store.manifest()
    assert manifest is not None and manifest["generation"] == 1 and manifest["entries"] == 60
    assert manifest["knowledge"] == [knowledge.as_posix()] and manifest["embeddings"] == "fake:hashed-bow-64"
    assert commits(writer) == {manifest["commit"]: 60}
    assert not (tmp_path / "writer").exists()  # the writer kept nothing on its disk either

    replica_home = tmp_path / "replica"
    replica = Index(settings_for(replica_home, knowledge, chroma_url), embedder=FakeEmbeddings())
    assert replica.generation == 1 and replica.loaded == (1, manifest["commit"])
    assert list(replica.entries) == list(writer.entries)  # the store order too: row i of the lexical index
    assert [c.text for c in replica.chunks] == [c.text for c in writer.chunks]
    assert replica.lexical("serverless", 3)[0][0].entry_id == "abs-fad87d80f4"
    core = replica.chunks_of("MLD-0472")[0]
    assert replica.dense(core.text, 3)[0][0].id == core.id
    cached = sorted((replica_home / "index" / "cache").iterdir())
    assert [p.name for p in cached] == [f"lexical-1-{manifest['commit'][:12]}", f"records-1-{manifest['commit'][:12]}"]

    # an edit: a new commit token, the old records removed, the replica's cache moves to the new commit
    add_page(knowledge, "EXT-0900", "Zorbulator", "A zorbulator shards optimizer state across racks.")
    assert writer.sync(progress=False).added == 1
    newer = writer.store.manifest()
    assert newer is not None and newer["generation"] == 2 and newer["commit"] != manifest["commit"]
    assert commits(writer) == {newer["commit"]: 61}
    assert replica.committed() == (2, newer["commit"]) != replica.loaded
    fresh = replica.successor()
    assert fresh.loaded == (2, newer["commit"]) and "EXT-0900" in fresh.entries
    assert fresh.lexical("zorbulator", 1)[0][0].entry_id == "EXT-0900"
    assert sorted(p.name for p in (replica_home / "index" / "cache").iterdir()) == [
        f"lexical-2-{newer['commit'][:12]}",
        f"records-2-{newer['commit'][:12]}",
    ]
    assert replica.generation == 1 and "EXT-0900" not in replica.entries  # the old one answers until swapped


def test_a_sync_killed_before_its_commit_leaves_the_previous_generation_and_the_next_sync_sweeps(
    tmp_path: Path, knowledge: Path, chroma_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = settings_for(tmp_path / "writer", knowledge, chroma_url)
    Index(settings, embedder=FakeEmbeddings()).sync(progress=False)
    add_page(knowledge, "EXT-0900", "Zorbulator", "A zorbulator shards optimizer state across racks.")
    dying = Index(settings, embedder=FakeEmbeddings())

    class Killed(BaseException):
        """Stands for SIGKILL at the commit point: nothing after it runs (not even the lease's release)."""

    def killed() -> None:
        raise Killed

    monkeypatch.setattr(Lease, "confirm", lambda self: killed())
    monkeypatch.setattr(Lease, "__exit__", lambda self, *exc: self._stop.set())
    with pytest.raises(Killed):
        dying.sync(progress=False)
    monkeypatch.undo()

    reader = Index(settings, embedder=FakeEmbeddings())
    assert reader.generation == 1 and "EXT-0900" not in reader.entries and len(reader.entries) == 60
    assert sorted(commits(reader).values()) == [60, 61]  # the orphans of the killed sync

    takeover = Index(settings.with_(lease_seconds=2.0), embedder=FakeEmbeddings())
    takeover.lock_wait = 120  # the killed sync's lease (60 s) expires first
    server_store(takeover).write(  # its lease as it would be two seconds before expiring
        "lease", {"owner": "killed", "token": "t", "expires": time.time() + 2}, token="t", expires=time.time() + 2
    )
    report = takeover.sync(progress=False)
    assert report.added == 1 and takeover.generation == 2
    manifest = takeover.store.manifest()
    assert manifest is not None and commits(takeover) == {manifest["commit"]: 61}


# --- the lease ---------------------------------------------------------------------------------


def test_a_second_writer_waits_for_the_lease_then_gets_it(tmp_path: Path, knowledge: Path, chroma_url: str) -> None:
    store = server_store(Index(settings_for(tmp_path / "a", knowledge, chroma_url), embedder=FakeEmbeddings()))
    with Lease(store, seconds=30, wait=5, settle=0.2) as first:
        second = Lease(store, seconds=30, wait=1, settle=0.2)
        with pytest.raises(IndexBusyError) as busy:
            second.__enter__()
        assert first.owner in str(busy.value) and "let it finish, then run: assistant index" in str(busy.value)
        first.confirm()  # still ours
    with Lease(store, seconds=30, wait=1, settle=0.2) as third:
        third.confirm()
    assert store.read("lease") is None  # released


def test_an_expired_lease_is_taken_over_and_its_holder_cannot_commit(
    tmp_path: Path, knowledge: Path, chroma_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    store = server_store(Index(settings_for(tmp_path / "a", knowledge, chroma_url), embedder=FakeEmbeddings()))
    stalled = Lease(store, seconds=2, wait=1, settle=0.2)
    stalled.__enter__()
    stalled._stop.set()  # a writer that stopped renewing (paused, cut off)
    time.sleep(0.1)
    with caplog.at_level(logging.INFO, logger="assistant"):
        started = time.monotonic()
        with Lease(store, seconds=30, wait=10, settle=0.2) as taker:
            waited = time.monotonic() - started
            assert 1.0 < waited < 6.0  # it waited for the expiry, not for its whole `wait`
            assert any("Taking over the sync lease" in r.getMessage() for r in caplog.records)
            with pytest.raises(LostLeaseError) as lost:
                stalled.confirm()
            assert taker.owner in str(lost.value) and "committed nothing" in str(lost.value)
            taker.confirm()
    stalled.__exit__(None, None, None)  # not ours any more: it leaves the record alone


def test_two_writers_racing_for_the_lease_never_hold_it_together(
    tmp_path: Path, knowledge: Path, chroma_url: str
) -> None:
    store = server_store(Index(settings_for(tmp_path / "a", knowledge, chroma_url), embedder=FakeEmbeddings()))
    held: list[tuple[float, float]] = []
    failures: list[BaseException] = []
    barrier = threading.Barrier(3)

    def writer() -> None:
        try:
            barrier.wait()
            with Lease(store, seconds=30, wait=30):  # the default settle, 1 s
                start = time.monotonic()
                time.sleep(0.5)
                held.append((start, time.monotonic()))
        except BaseException as error:  # pragma: no cover - reported below
            failures.append(error)

    threads = [threading.Thread(target=writer) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not failures and len(held) == 3
    spans = sorted(held)
    assert all(later[0] >= earlier[1] for earlier, later in itertools.pairwise(spans)), spans


def test_a_sync_that_loses_its_lease_commits_nothing(tmp_path: Path, knowledge: Path, chroma_url: str) -> None:
    settings = settings_for(tmp_path / "writer", knowledge, chroma_url)
    Index(settings, embedder=FakeEmbeddings()).sync(progress=False)
    add_page(knowledge, "EXT-0900", "Zorbulator", "A zorbulator shards optimizer state across racks.")
    slow = Index(settings.with_(commit_pause=3.0), embedder=FakeEmbeddings())
    store = server_store(slow)

    def steal() -> None:  # another writer overwrites the lease while the sync waits before its commit
        time.sleep(1.5)
        store.write("lease", {"owner": "thief", "token": "x", "expires": time.time() + 60}, token="x")

    thief = threading.Thread(target=steal)
    thief.start()
    with pytest.raises(LostLeaseError) as lost:
        slow.sync(progress=False)
    thief.join()
    assert "thief" in str(lost.value)
    assert Index(settings, embedder=FakeEmbeddings()).generation == 1
    assert store.read("lease") is not None and store.read("lease")["owner"] == "thief"  # left alone


# --- replicas ----------------------------------------------------------------------------------


def test_a_replica_without_sync_switches_to_a_new_commit_and_keeps_answering(
    tmp_path: Path, knowledge: Path, chroma_url: str
) -> None:
    writer = Index(settings_for(tmp_path / "writer", knowledge, chroma_url), embedder=FakeEmbeddings())
    writer.sync(progress=False)
    replica_settings = Settings(  # as ASSISTANT_SYNC=off with ASSISTANT_KNOWLEDGE unset gives
        home=tmp_path / "replica", chroma_url=chroma_url, model="extractive", sync_at_start=False, follows_home=True
    )
    bot = Assistant(replica_settings, embedder=FakeEmbeddings())
    assert bot.settings.knowledge == (knowledge,)  # it follows the knowledge the server's manifest names
    assert bot.refresh() is False  # nothing newer
    before = bot.ask("What is a GPU?")
    assert before.citations[0].entry_id == "MLD-0472"
    old_chain = bot.chain

    add_page(knowledge, "EXT-0900", "Zorbulator", "A zorbulator shards optimizer state across racks.")
    writer.sync(progress=False)
    assert bot.refresh() is True
    assert bot.entry("EXT-0900") is not None
    assert bot.search("zorbulator")[0].entry_id == "EXT-0900"
    # a question that started on the old generation finishes on it
    assert old_chain.index.generation == 1 and old_chain.index.entry("EXT-0900") is None
    assert bot.ask("What is a GPU?").citations[0].entry_id == "MLD-0472"

    follower = bot.follow_commits(0.2)
    add_page(knowledge, "EXT-0901", "Quillotron", "A quillotron batches quill requests.")
    writer.sync(progress=False)
    deadline = time.monotonic() + 20
    while bot.entry("EXT-0901") is None and time.monotonic() < deadline:
        time.sleep(0.1)
    bot.stop_following()
    assert bot.entry("EXT-0901") is not None and follower.switches == 1


def test_the_sync_settings_are_read_and_checked() -> None:
    settings = Settings.from_env(
        {"ASSISTANT_SYNC": "off", "ASSISTANT_REFRESH_SECONDS": "2.5", "ASSISTANT_LEASE_SECONDS": "30"}
    )
    assert (settings.sync_at_start, settings.refresh_seconds, settings.lease_seconds) == (False, 2.5, 30.0)
    assert Settings.from_env({}).sync_at_start is True
    for name, value in (("ASSISTANT_REFRESH_SECONDS", "0"), ("ASSISTANT_LEASE_SECONDS", "1"), ("ASSISTANT_SYNC", "x")):
        with pytest.raises(AssistantError) as bad:
            Settings.from_env({name: value})
        assert name in str(bad.value)


def test_a_rebuild_leaves_replicas_answering_until_it_commits(tmp_path: Path, knowledge: Path, chroma_url: str) -> None:
    settings = settings_for(tmp_path / "writer", knowledge, chroma_url)
    Index(settings, embedder=FakeEmbeddings()).sync(progress=False)
    replica = Index(settings_for(tmp_path / "replica", knowledge, chroma_url), embedder=FakeEmbeddings())
    old = (replica.store.manifest() or {})["collection"]
    core = replica.chunks_of("MLD-0472")[0]
    rebuilding = Index(settings.with_(commit_pause=4.0), embedder=FakeEmbeddings())
    done: list[object] = []
    thread = threading.Thread(target=lambda: done.append(rebuilding.sync(rebuild=True, progress=False)))
    thread.start()
    try:
        time.sleep(2.0)  # the rebuild has written its vectors and records, and waits before its commit
        assert replica.committed() == replica.loaded  # nothing committed yet ...
        assert replica.dense(core.text, 1)[0][0].id == core.id  # ... and the old vectors still answer
    finally:
        thread.join(timeout=60)
    assert done and rebuilding.generation == 2
    new = (rebuilding.store.manifest() or {})["collection"]
    assert new != old and old not in {c.name for c in server_store(rebuilding)._client().list_collections()}
    fresh = replica.successor()
    assert fresh.generation == 2 and fresh.dense(core.text, 1)[0][0].id == core.id


def test_doctor_checks_an_index_on_a_server(tmp_path: Path, knowledge: Path, chroma_url: str) -> None:
    from assistant.cli.doctor import diagnose, the_fix

    settings = settings_for(tmp_path / "writer", knowledge, chroma_url, embeddings="static")
    assert [str(c) for c in diagnose(settings)] == ["problem: manifest: no index on the Chroma server yet"]
    Index(settings).sync(progress=False)
    checks = diagnose(settings.with_(home=tmp_path / "empty"))  # from a home that holds nothing
    assert all(check.ok for check in checks), [str(c) for c in checks]
    assert [c.name for c in checks] == ["committed generation", "chroma"] and the_fix(checks) is None


def test_a_replica_keeps_its_generation_when_the_new_one_needs_other_settings(
    tmp_path: Path, knowledge: Path, chroma_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    settings = settings_for(tmp_path / "writer", knowledge, chroma_url)
    Index(settings, embedder=FakeEmbeddings()).sync(progress=False)
    bot = Assistant(
        settings_for(tmp_path / "replica", knowledge, chroma_url, sync_at_start=False), embedder=FakeEmbeddings()
    )
    Index(settings, embedder=FakeEmbeddings(name="fake:other")).sync(rebuild=True, progress=False)
    with caplog.at_level(logging.WARNING, logger="assistant"):
        assert bot.refresh() is False and bot.refresh() is False
    said = [r.getMessage() for r in caplog.records if "cannot be used" in r.getMessage()]
    assert len(said) == 1 and "fake:other" in said[0] and "answering from generation 1" in said[0]
    assert bot.retriever.index.generation == 1  # its entries and lexical index are its own
    assert bot.retriever.index.lexical("serverless", 1)[0][0].entry_id == "abs-fad87d80f4"
