"""A replica's cache of one commit (records, chunk rows, the retriever's tables) against a real `chroma run`.

A second start on the same home answers from the cache without reading the records again; a cache cut
short is read again from the server; the tables read back from the cache are the tables made in memory.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from assistant.index.chroma_index import Index
from assistant.index.record_file import RecordFile
from assistant.index.server_store import ServerStore
from assistant.retrieval.corpus_tables import CorpusTables
from assistant.retrieval.search import Retriever
from assistant.settings import Settings
from tests.conftest import SEED
from tests.fakes import FakeEmbeddings
from tests.processes import chroma_run

pytestmark = pytest.mark.server


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A server holding the seed knowledge's committed index, and that knowledge."""
    knowledge = tmp_path / "seed"
    shutil.copytree(SEED, knowledge)
    with chroma_run(tmp_path / "chroma", tmp_path / "chroma.log") as (url, _proc):
        Index(settings(tmp_path / "writer", knowledge, url), embedder=FakeEmbeddings()).sync(progress=False)
        yield url, knowledge


def settings(home: Path, knowledge: Path, url: str) -> Settings:
    return Settings(home=home, knowledge=(knowledge,), chroma_url=url, model="extractive")


def replica(home: Path, served: tuple[str, Path]) -> Index:
    url, knowledge = served
    return Index(settings(home, knowledge, url), embedder=FakeEmbeddings())


def test_a_second_start_reads_its_records_from_the_cache(
    tmp_path: Path, served: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    first = replica(tmp_path / "replica", served)
    assert isinstance(first.entries, RecordFile) and not first.entries.saved  # read from the server
    expected = first.lexical("serverless", 3)  # the first search caches records and lexical index
    assert first.entries.saved

    def no_records(*args: object) -> None:
        raise AssertionError("the records were read from the server again")

    monkeypatch.setattr(ServerStore, "_records", no_records)
    second = replica(tmp_path / "replica", served)
    assert isinstance(second.entries, RecordFile) and second.entries.saved
    assert list(second.entries) == list(first.entries)
    assert [c.text for c in second.chunks] == [c.text for c in first.chunks]
    assert second.lexical("serverless", 3) == expected
    core = second.chunks_of("MLD-0472")[0]
    assert second.dense(core.text, 3)[0][0] == core  # a vector id finds its chunk through the rows


def test_a_cache_cut_short_is_read_again_from_the_server(tmp_path: Path, served: tuple[str, Path]) -> None:
    first = replica(tmp_path / "replica", served)
    first.lexical("serverless", 1)
    [folder] = (tmp_path / "replica" / "index" / "cache").glob("records-*")
    records = folder / "records.jsonl"
    records.write_bytes(records.read_bytes()[:-100])  # a disk that lost the end of the file
    second = replica(tmp_path / "replica", served)
    assert isinstance(second.entries, RecordFile) and not second.entries.saved
    assert [c.text for c in second.chunks] == [c.text for c in first.chunks]


def test_the_tables_read_from_the_cache_are_the_tables_made_in_memory(tmp_path: Path, served: tuple[str, Path]) -> None:
    index = replica(tmp_path / "replica", served)
    made = CorpusTables.build(index.entries, index.entries_in_order())
    assert Retriever(index, index.settings).tables.entry_count == len(index.entries)  # made and cached on first use
    folder = index.tables_dir()
    assert folder is not None
    read = CorpusTables.open(folder)
    assert read is not None
    assert read.names == made.names and read.concept_names == made.concept_names
    assert read.other_names == made.other_names and read.document_frequency == made.document_frequency
    assert read.vocabulary == made.vocabulary and read.kinds == made.kinds
    for entry_id in index.entries:
        assert read.words_of(entry_id) == made.words_of(entry_id)
    assert read.said_anywhere("graphics processing unit") and not read.said_anywhere("zorbulator racks")
    assert read.words_of("no-such-entry") == frozenset()
