"""The index against a real Chroma server (`chroma run`) on 127.0.0.1, as with ASSISTANT_CHROMA_URL.

The server is the `chroma` executable installed in the venv, started per module on a free
port with its data in tmp_path, and always stopped (terminate, then kill) in teardown.
Embeddings are the fake hashed bag of words, so only Chroma's HTTP path is under test.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from assistant.errors import IndexUnavailableError
from assistant.index.chroma_index import Index
from assistant.settings import Settings
from tests.conftest import SEED
from tests.fakes import FakeEmbeddings
from tests.processes import chroma_run, free_port

pytestmark = pytest.mark.server


@pytest.fixture(scope="module")
def chroma_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    data = tmp_path_factory.mktemp("chroma-server")
    with chroma_run(data, data.parent / f"{data.name}.log") as (url, _proc):
        yield url


@pytest.fixture
def server_settings(chroma_url: str, tmp_path: Path) -> Settings:
    seed = tmp_path / "seed"
    shutil.copytree(SEED, seed)
    return Settings(home=tmp_path / "home", knowledge=(seed,), chroma_url=chroma_url)


def http_client(url: str):
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    host, port = url.removeprefix("http://").split(":")
    return chromadb.HttpClient(host=host, port=int(port), settings=ChromaSettings(anonymized_telemetry=False))


def test_sync_into_a_chroma_server(server_settings: Settings, chroma_url: str) -> None:
    fake = FakeEmbeddings()
    index = Index(server_settings, embedder=fake)
    report = index.sync(progress=False)
    assert (report.added, report.entries, report.chunks) == (60, 60, 63)
    assert report.embedded_chunks == fake.embedded == 63

    # the vectors live in the server, not on disk beside the manifest
    assert not (Path(server_settings.home) / "index" / "chroma").exists()
    name = index.store.manifest()["collection"]
    collection = http_client(chroma_url).get_collection(name)
    assert collection.count() == 63
    stored = collection.get(
        ids=[f"MLD-0472::core:0@{index.entries['MLD-0472'].hash[:12]}"], include=["metadatas", "documents"]
    )
    assert stored["metadatas"][0]["entry_id"] == "MLD-0472"
    # the chunk text is stored once, in the entry records, not again beside its vector
    assert stored["documents"] == [None]
    assert index.chunks_of("MLD-0472")[0].text.startswith(index.entries["MLD-0472"].chunks[0].text[:20])

    # search works through the server
    core = index.chunks_of("MLD-0472")[0]
    assert index.dense(core.text, 3)[0][0].id == core.id
    assert index.lexical("serverless", 3)[0][0].entry_id == "abs-fad87d80f4"

    # a second sync, and a fresh Index on the same home, embed nothing
    assert index.sync(progress=False).embedded_chunks == 0
    other = FakeEmbeddings()
    again = Index(server_settings, embedder=other).sync(progress=False)
    assert (again.unchanged, again.embedded_chunks, other.embedded) == (60, 0, 0)
    assert collection.count() == 63


def test_removed_entries_leave_the_server(server_settings: Settings, chroma_url: str) -> None:
    index = Index(server_settings, embedder=FakeEmbeddings())
    index.sync(progress=False)
    next(server_settings.knowledge[0].glob("004_*.txt")).unlink()
    report = index.sync(progress=False)
    assert report.removed == 19
    collection = http_client(chroma_url).get_collection(index.store.manifest()["collection"])
    assert collection.count() == 44
    assert set(collection.get(include=[])["ids"]) == {
        vid for item in index.entries.values() for vid in item.vector_ids()
    }


def test_rebuild_against_a_server_replaces_the_collection(server_settings: Settings, chroma_url: str) -> None:
    index = Index(server_settings, embedder=FakeEmbeddings())
    index.sync(progress=False)
    old = index.store.manifest()["collection"]
    report = index.sync(rebuild=True, progress=False)
    assert (report.added, report.embedded_chunks) == (60, 63)
    names = {c.name for c in http_client(chroma_url).list_collections()}
    new = index.store.manifest()["collection"]
    assert new != old
    assert new in names and old not in names


def test_unreachable_server_names_the_url_and_the_fix(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"  # nobody listens here
    settings = Settings(home=tmp_path / "home", knowledge=(SEED,), chroma_url=url)
    index = Index(settings, embedder=FakeEmbeddings())  # opening is lazy ...
    started = time.monotonic()
    with pytest.raises(IndexUnavailableError) as raised:
        index.sync(progress=False)  # ... the first use says what is wrong and how to fix it
    assert time.monotonic() - started < 60
    message = str(raised.value)
    assert url in message
    assert "chroma run" in message
    assert "ASSISTANT_CHROMA_URL" in message
