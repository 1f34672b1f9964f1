"""A glossary page that is only another name ("IoU: Abbreviation for intersection over union") follows
the page it names in the search, and the other way round: both are the answer to a description."""

from __future__ import annotations

import pytest

from assistant import Assistant
from assistant.tuning import RetrievalSettings
from assistant.types import Chunk
from tests.conftest import glossary_assistant_of

SYNONYM_DEPTH = RetrievalSettings().synonym_depth
TERMS = {
    "intersection over union (IoU)",
    "IoU",
    "bounding box",
    "precision",
    "recall",
    "class-imbalanced dataset",
    "imbalanced dataset",
    "minority class",
    "learning rate",
    "step size",
    "gradient descent",
    "serving",
    "inference",
    "Deep Q-Network (DQN)",
    "DQN",
    "Q-function",
}


@pytest.fixture(scope="module")
def glossary_assistant(tmp_path_factory: pytest.TempPathFactory) -> Assistant:
    assistant = glossary_assistant_of(tmp_path_factory.mktemp("other-names"), TERMS)
    assert len(assistant.entries) == len(TERMS)
    return assistant


def test_each_pointer_page_is_paired_with_the_page_it_names_both_ways(glossary_assistant: Assistant) -> None:
    pairs = glossary_assistant.retriever.other_names
    expected = {
        "glossary:iou": "glossary:intersection-over-union-iou",  # by its related link
        "glossary:imbalanced-dataset": "glossary:class-imbalanced-dataset",  # no link: by the title it names
        "glossary:step-size": "glossary:learning-rate",
        "glossary:serving": "glossary:inference",  # "A synonym for inferring": the link, not the words
        "glossary:dqn": "glossary:deep-q-network-dqn",
    }
    for pointer, target in expected.items():
        assert pairs[pointer] == [target]
        assert pairs[target] == [pointer]
    assert set(pairs) == {*expected, *expected.values()}  # a page with a definition of its own points nowhere


@pytest.mark.parametrize(
    ("question", "first", "partner"),
    [
        (
            "detection metric: the overlap of the predicted and the true rectangles relative to their combined "
            "footprint, from 0 to 1 - what is it called?",
            "glossary:intersection-over-union-iou",
            "glossary:iou",
        ),
        (
            "what do you call a dataset for a yes/no problem where like 0.01% of rows are positive and "
            "everything else is negative?",
            "glossary:class-imbalanced-dataset",
            "glossary:imbalanced-dataset",
        ),
    ],
)
def test_a_described_concept_brings_its_other_name_next_to_it(
    glossary_assistant: Assistant, question: str, first: str, partner: str
) -> None:
    found = [s.entry_id for s in glossary_assistant.search(question, k=5)]
    assert first in found[:SYNONYM_DEPTH]
    assert partner in found[: SYNONYM_DEPTH + 1]  # right after the first two, whose places stay
    answer = glossary_assistant.ask(question)
    assert not answer.refused
    assert {first, partner} <= {c.entry_id for c in answer.citations}


def test_the_first_entries_keep_their_places_and_pull_only_their_own_other_names_up(
    glossary_assistant: Assistant,
) -> None:
    retriever = glossary_assistant.retriever
    chunks: dict[str, Chunk] = {}
    ordered = [
        ("glossary:learning-rate", 0.9),  # within the first two: "step size" comes after them
        ("glossary:precision", 0.8),  # keeps its second place
        ("glossary:intersection-over-union-iou", 0.7),  # third: "IoU" stays where the search put it
        ("glossary:recall", 0.6),
        ("glossary:step-size", 0.5),
        ("glossary:iou", 0.4),
    ]
    placed = retriever.with_other_names(ordered, chunks)
    assert [e for e, _ in placed] == [
        "glossary:learning-rate",
        "glossary:precision",
        "glossary:step-size",
        "glossary:intersection-over-union-iou",
        "glossary:recall",
        "glossary:iou",
    ]
    both = [("glossary:iou", 0.9), ("glossary:intersection-over-union-iou", 0.8), ("glossary:recall", 0.7)]
    assert retriever.with_other_names(both, chunks) == both  # a pair already first and second stays as it is
    assert dict(placed)["glossary:step-size"] == 0.5  # its own score when it had one, never above its page's
    assert set(chunks) == {"glossary:step-size"}  # a chunk to show for the page moved up
