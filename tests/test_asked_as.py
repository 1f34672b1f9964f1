"""Asked-as descriptions: read from any knowledge file, searched like chunks, never quoted.

The fake-embedding tests use a hashed bag of words (tests/fakes.py), so a description that shares
the question's words and none of the definition's is what decides whether the entry is found; the
last test asks the real offline assistant (real MiniLM, real Chroma) over real glossary terms.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from assistant import Assistant, Settings
from assistant.index.chroma_index import Index
from assistant.index.chunking import Chunker
from assistant.knowledge.asked_as import MAX_DESCRIPTIONS
from assistant.knowledge.corpus import load_corpus
from assistant.retrieval.search import Retriever
from assistant.text import without_parenthesis
from assistant.tuning import RetrievalSettings
from tests.conftest import REPO, write_glossary
from tests.fakes import FakeEmbeddings

TERMS = {"overfitting", "underfitting", "learning rate", "regularization", "loss curve", "batch normalization"}
DESCRIBED = "my network nails every example it has seen yet flops on fresh ones"
ASKED = "what do you call it when my net nails every example it has seen but flops on fresh ones?"


def glossary(folder: Path, described: dict[str, list[str]] | None, terms: set[str] | None = TERMS) -> Path:
    """A knowledge folder of the real glossary records in `terms` (None: all 412), with an asked-as
    file when `described`."""
    write_glossary(folder, terms)
    if described is not None:  # attached once every file is read, whichever is read first
        records = [json.dumps({"id": entry_id, "asked_as": texts}) for entry_id, texts in described.items()]
        (folder / "asked-as.jsonl").write_text("\n".join(records) + "\n", "utf-8")
    return folder


def test_descriptions_attach_to_the_entry_they_name_and_a_wrong_id_names_the_fix(tmp_path: Path) -> None:
    folder = glossary(tmp_path / "k", {"glossary:overfitting": [DESCRIBED, "  ", DESCRIBED, "aces train, fails test"]})
    with (folder / "asked-as.jsonl").open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"id": "glossary:overfiting", "asked_as": ["typo in the id"]}) + "\n")
        handle.write(json.dumps({"id": "glossary:underfitting", "asked_as": "one string, not a list"}) + "\n")
    corpus = load_corpus([folder])
    # blank and repeated descriptions dropped, order kept
    assert corpus.entries["glossary:overfitting"].fields["asked_as"] == [DESCRIBED, "aces train, fails test"]
    assert "asked_as" not in corpus.entries["glossary:underfitting"].fields
    messages = {problem.line: (problem.message, problem.damaged) for problem in corpus.problems}
    assert messages[2] == (
        "asked-as descriptions of glossary:overfiting, which no entry has - check the id",
        False,
    )
    assert messages[3][0] == "expected 'asked_as' as a list of strings"
    assert len(corpus.entries) == len(TERMS)  # a description file adds no entry of its own


def test_each_description_is_a_search_only_chunk_in_the_askers_words(tmp_path: Path) -> None:
    folder = glossary(tmp_path / "k", {"glossary:overfitting": [DESCRIBED, "aces train, fails test"]})
    entry = load_corpus([folder]).entries["glossary:overfitting"]
    chunks = Chunker().chunks(entry)
    described = [c for c in chunks if c.field == "asked_as"]
    assert [c.text for c in described] == [DESCRIBED, "aces train, fails test"]  # no title: the asker lacks it
    assert [c.id for c in described] == ["glossary:overfitting::asked_as:0", "glossary:overfitting::asked_as:1"]
    index = Index(Settings(home=tmp_path / "home", knowledge=(folder,)), embedder=FakeEmbeddings())
    index.sync(progress=False)
    own = index.chunks_of("glossary:overfitting")
    assert own and all(c.field != "asked_as" for c in own)  # what context and citations may quote
    assert len(index.chunks) == len(TERMS) + 2 + sum(len(index.chunks_of(e)) - 1 for e in index.entries)


@pytest.mark.parametrize("mode", ["hybrid", "dense", "lexical"])
def test_a_description_finds_its_entry_and_the_source_is_the_entrys_own_text(tmp_path: Path, mode: str) -> None:
    def first(described: dict[str, list[str]] | None) -> tuple[str, str]:
        folder = glossary(tmp_path / f"k-{described is None}-{mode}", described, terms=None)
        home = tmp_path / f"home-{described is None}-{mode}"
        index = Index(Settings(home=home, knowledge=(folder,)), embedder=FakeEmbeddings(dims=512))
        index.sync(progress=False)
        top = Retriever(index, index.settings, mode).retrieve(ASKED, k=3).sources[0]
        return top.entry_id, top.text

    without, _ = first(None)
    assert without != "glossary:overfitting"  # the question shares no word with the definition
    found, text = first({"glossary:overfitting": [DESCRIBED]})
    assert found == "glossary:overfitting"
    assert text.startswith("overfitting\n") or text.startswith("overfitting ")  # its definition chunk
    assert "nails" not in text


def test_the_offline_answer_names_the_described_concept_and_quotes_only_the_knowledge(tmp_path: Path) -> None:
    folder = glossary(tmp_path / "k", {"glossary:overfitting": [DESCRIBED, "aces train, fails test"]})
    # under the learned order: in this knowledge of a dozen terms the fused search alone ranks "loss curve"
    # and "learning rate" above the described page (docs/retrieval-stages.md has the sets where it does not)
    settings = Settings(home=tmp_path / "home", knowledge=(folder,), model="extractive", rerank="learned")
    Index(settings).sync(progress=False)
    answer = Assistant(settings).ask(ASKED)
    assert not answer.refused
    assert "overfitting" in answer.text.lower()
    assert "nails" not in answer.text and "flops" not in answer.text  # a description is never quoted
    assert [c.entry_id for c in answer.citations][:1] == ["glossary:overfitting"]
    assert all(c.supported for c in answer.citations)


def test_the_shipped_descriptions_name_real_entries_and_never_the_name_they_describe() -> None:
    """The mlsys pack's asked-as files: every entry is described, every id is an entry of the pack,
    and no description contains the glossary term or the paper's own name (the words before the
    colon of "RAPID-LLM: ..."): an asker who knew the name would not describe it."""
    corpus = load_corpus([REPO / "knowledge" / "mlsys"])
    assert corpus.problems == []
    assert {entry_id for entry_id, _, _ in corpus.asked_as} == set(corpus.entries)
    for entry_id, entry in corpus.entries.items():
        if entry_id.startswith("glossary:"):
            name = without_parenthesis(entry.title)
        else:
            name = entry.title.split(":")[0] if ":" in entry.title and len(entry.title.split(":")[0]) <= 30 else ""
        texts = entry.fields["asked_as"]
        assert 3 <= len(texts) <= MAX_DESCRIPTIONS, entry_id
        if name:
            pattern = rf"(?<![\w-]){re.escape(name.lower())}(?![\w-])"
            assert not [t for t in texts if re.search(pattern, t.lower())], entry_id


def test_a_damaged_description_file_keeps_the_descriptions_indexed_from_it(tmp_path: Path) -> None:
    folder = glossary(tmp_path / "k", {"glossary:overfitting": [DESCRIBED], "glossary:underfitting": ["too simple"]})
    index = Index(Settings(home=tmp_path / "home", knowledge=(folder,)), embedder=FakeEmbeddings())
    index.sync(progress=False)
    described = folder / "asked-as.jsonl"
    described.write_text(described.read_text("utf-8").splitlines()[0][:40] + "\n", "utf-8")  # cut mid-record
    report = index.sync(progress=False)
    assert any(p.path.endswith("asked-as.jsonl") and p.line == 1 for p in report.skipped)
    for entry_id, text in (("glossary:overfitting", DESCRIBED), ("glossary:underfitting", "too simple")):
        assert text in [c.text for c in index.chunks if c.entry_id == entry_id and c.field == "asked_as"]
    described.write_text(json.dumps({"id": "glossary:overfitting", "asked_as": ["aces train"]}) + "\n", "utf-8")
    index.sync(progress=False)  # read cleanly again: what the file says now is what is indexed
    texts = {c.entry_id: c.text for c in index.chunks if c.field == "asked_as"}
    assert texts == {"glossary:overfitting": "aces train"}


def test_a_description_counts_for_refusal_confidence_only_past_a_discount(tmp_path: Path) -> None:
    """A description is short and casual, so an off-topic casual question can sit close to one: how
    close the knowledge is (what the refusal threshold reads) comes from the entries' own chunks, and
    from a description only by what its cosine exceeds its discount (`RetrievalSettings.description_discount`)."""
    question = "summarise the plot of hamlet for me"
    discount = RetrievalSettings().description_discount

    def confidence(name: str, described: dict[str, list[str]] | None) -> tuple[float, float, float]:
        folder = glossary(tmp_path / f"k-{name}", described)
        index = Index(Settings(home=tmp_path / f"home-{name}", knowledge=(folder,)), FakeEmbeddings())
        index.sync(progress=False)
        vector = index.embedder.embed_query(question)
        own = index.nearest(vector, 1, described=False)[0][1]
        best = index.nearest(vector, 1)[0][1]
        return Retriever(index, index.settings, "hybrid").retrieve(question, k=5).confidence, own, best

    plain, own, _ = confidence("plain", None)
    assert plain < 0.3
    # a description sharing a few casual words: not closer, after the discount, than the entries' text
    near, own_near, best = confidence("near", {"glossary:overfitting": ["the plot of my training run looks odd"]})
    assert own_near == own and own < best < own + discount
    assert near == pytest.approx(plain)
    # the question word for word: the pack says its entry is asked for this way
    same, _, best = confidence("same", {"glossary:overfitting": [question + " please"]})
    assert best - discount > own and same > plain + 0.2
