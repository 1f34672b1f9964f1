"""Citation markers in model output: table-driven parsing, normalisation and support checks."""

from __future__ import annotations

import pytest

from assistant.citations import canonical, find_markers, verify
from assistant.text import split_sentences
from assistant.types import Entry

GPU = Entry(
    "MLD-0472",
    "concept",
    "GPU",
    "GPU\nA processor designed for highly parallel workloads, widely used for tensor computation.\n"
    "Example: Accelerate neural-network training.\n"
    "Caveat: Available memory and supported operations matter alongside compute speed.",
    {},
)
PAPER = Entry(
    "arxiv:2512.19606",
    "abstract",
    "RAPID-LLM",
    "RAPID-LLM is a unified performance modeling framework for LLM training and inference on GPU clusters. "
    "It predicts Llama inference step latency within 10.4% of published measurements.",
    {},
    url="https://arxiv.org/abs/2512.19606",
)
CONTEXT = {GPU.id: GPU, PAPER.id: PAPER}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("A claim [MLD-0472].", [["MLD-0472"]]),
        ("Two [MLD-0472, arxiv:2512.19606].", [["MLD-0472", "arxiv:2512.19606"]]),
        ("Adjacent [MLD-0472][arxiv:2512.19606].", [["MLD-0472"], ["arxiv:2512.19606"]]),
        ("Semicolon [MLD-0472; arxiv:2512.19606].", [["MLD-0472", "arxiv:2512.19606"]]),
        ("Round (MLD-0472).", [["MLD-0472"]]),
        ("Lower case [mld-0472].", [["mld-0472"]]),
        ("Bare arXiv number [2512.19606].", [["2512.19606"]]),
        ("Missing opening MLD-0472].", [["MLD-0472"]]),
        ("Missing closing [MLD-0472 and more.", [["MLD-0472"]]),
        ("Full-width 【MLD-0472】.", [["MLD-0472"]]),
        ("Unknown [NOPE-1].", [["NOPE-1"]]),
        ("No marker at all.", []),
        ("A list [1] is not a citation.", []),
    ],
)
def test_markers_are_found(text: str, expected: list[list[str]]) -> None:
    assert [ids for _, _, ids in find_markers(text)] == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("MLD-0472", "MLD-0472"),
        ("mld-0472", "MLD-0472"),
        ("2512.19606", "arxiv:2512.19606"),
        ("ARXIV:2512.19606", "arxiv:2512.19606"),
        ("NOPE-1", None),
        ("arxiv:9999.99999", None),
    ],
)
def test_canonical_ids(raw: str, expected: str | None) -> None:
    known = {key.lower(): key for key in CONTEXT}
    assert canonical(raw, known) == expected


def test_unknown_ids_are_dropped_from_text() -> None:
    result = verify("A GPU is a processor designed for highly parallel workloads [MLD-0472][NOPE-1].", CONTEXT)
    assert "NOPE-1" not in result.text
    assert result.dropped == ["NOPE-1"]
    assert [c.entry_id for c in result.citations] == ["MLD-0472"]


def test_quote_is_the_supporting_sentence_of_the_entry() -> None:
    result = verify("Available memory and supported operations matter, not only speed [MLD-0472].", CONTEXT)
    (citation,) = result.citations
    assert citation.quote == "Caveat: Available memory and supported operations matter alongside compute speed."
    assert citation.quote in split_sentences(GPU.text)
    assert citation.supported


def test_unsupported_claim_is_flagged_and_its_marker_removed() -> None:
    result = verify("Paris is the capital of France [MLD-0472].", CONTEXT)
    (citation,) = result.citations
    assert not citation.supported
    assert "[MLD-0472]" not in result.text
    assert result.text == "Paris is the capital of France."
    assert result.unsupported


def test_near_miss_markers_are_normalised() -> None:
    result = verify("It predicts Llama inference step latency within 10.4% (2512.19606).", CONTEXT)
    assert result.text.endswith("[arxiv:2512.19606].")
    assert result.citations[0].url == "https://arxiv.org/abs/2512.19606"


def test_paragraphs_survive_verification() -> None:
    text = "A GPU is a processor for parallel workloads [MLD-0472].\n\nRAPID-LLM models GPU clusters [2512.19606]."
    result = verify(text, CONTEXT)
    assert result.text.count("\n") == 2
    assert [c.entry_id for c in result.citations] == ["MLD-0472", "arxiv:2512.19606"]


def test_embedding_similarity_can_lift_a_paraphrase() -> None:
    calls: list[tuple[str, list[str]]] = []

    def similarity(claim: str, sentences: list[str]) -> list[float]:
        calls.append((claim, sentences))
        return [0.95 if "memory" in s else 0.1 for s in sentences]

    result = verify("Memory capacity is a practical limit too [MLD-0472].", CONTEXT, similarity)
    assert calls, "the in-between lexical score should ask for an embedding check"
    assert result.citations[0].quote.startswith("Caveat:")
    assert result.citations[0].supported
