"""Every metric on small hand-made cases whose answers are worked out in the comments."""

from __future__ import annotations

import math

import pytest

from assistant.eval import metrics as m
from assistant.types import Citation

L3 = math.log2(3)  # discount at rank 2
L4 = 2.0  # discount at rank 3


def approx(expected: float | None):
    return None if expected is None else pytest.approx(expected)


@pytest.mark.parametrize(
    ("ranked", "gold", "k", "expected"),
    [
        (["a", "b", "c"], ["a"], 1, 1.0),
        (["b", "a"], ["a"], 1, 0.0),
        (["b", "a"], ["a"], 5, 1.0),
        (["a", "a", "b", "c"], ["b", "c"], 2, 0.5),  # duplicates collapse: top-2 is a, b
        (["a", "a", "a", "b"], ["b"], 2, 1.0),  # without dedupe b would be rank 4
        ([], ["a"], 5, 0.0),
        (["a", "b"], ["a", "b", "c", "d"], 10, 0.5),
        (["a"], ["a", "a"], 1, 1.0),  # gold is a set
        (["a"], [], 5, None),  # refuse questions: undefined
        ([], [], 5, None),
    ],
)
def test_recall_at_k(ranked, gold, k, expected):
    assert m.recall_at_k(ranked, gold, k) == approx(expected)


TEN_OTHERS = [f"x{i}" for i in range(10)]


@pytest.mark.parametrize(
    ("ranked", "gold", "k", "expected"),
    [
        (["a"], ["a"], 10, 1.0),
        (["x", "a"], ["a"], 10, 0.5),
        (["x", "x", "a"], ["a"], 10, 0.5),  # duplicate x counts once
        (["x", "y", "a"], ["a", "y"], 10, 0.5),  # the first gold hit decides
        (["x", "y"], ["a"], 10, 0.0),
        ([*TEN_OTHERS, "a"], ["a"], 10, 0.0),  # rank 11 is outside the cut-off
        ([*TEN_OTHERS, "a"], ["a"], 11, 1 / 11),
        ([], ["a"], 10, 0.0),
        (["a"], [], 10, None),
    ],
)
def test_mrr_at_k(ranked, gold, k, expected):
    assert m.mrr_at_k(ranked, gold, k) == approx(expected)


@pytest.mark.parametrize(
    ("ranked", "gold", "k", "expected"),
    [
        (["a"], ["a"], 10, 1.0),
        (["x", "a"], ["a"], 10, 1 / L3),
        (["a", "x", "b"], ["a", "b"], 10, (1 + 1 / L4) / (1 + 1 / L3)),
        (["b", "a"], ["a", "b"], 10, 1.0),  # tie: order among gold ids does not matter
        (["a", "a", "b"], ["a", "b"], 10, 1.0),  # duplicates collapse
        (["a", "b"], ["a", "b", "c"], 2, 1.0),  # ideal DCG over min(|gold|, k) hits
        (["a", "x"], ["a", "b"], 10, 1 / (1 + 1 / L3)),  # a missing gold id lowers the score
        (["x", "y"], ["a"], 10, 0.0),
        ([], ["a"], 10, 0.0),
        (["a"], [], 10, None),
    ],
)
def test_ndcg_at_k(ranked, gold, k, expected):
    assert m.ndcg_at_k(ranked, gold, k) == approx(expected)


@pytest.mark.parametrize("fn", [m.recall_at_k, m.mrr_at_k, m.ndcg_at_k])
def test_retrieval_metrics_reject_k_below_one(fn):
    with pytest.raises(ValueError, match="k must be"):
        fn(["a"], ["a"], 0)


@pytest.mark.parametrize(
    ("cited", "gold", "precision", "recall"),
    [
        ([], ["a"], None, 0.0),  # nothing cited: precision undefined, recall zero
        (["a", "a"], ["a"], 1.0, 1.0),  # duplicate citations count once
        (["a", "b"], ["a"], 0.5, 1.0),
        (["a"], ["a", "b"], 1.0, 0.5),
        (["b"], [], 0.0, None),  # cited on a question with no gold
        ([], [], None, None),
        (["x", "y"], ["a", "b"], 0.0, 0.0),
    ],
)
def test_citation_precision_and_recall(cited, gold, precision, recall):
    assert m.citation_precision(cited, gold) == approx(precision)
    assert m.citation_recall(cited, gold) == approx(recall)


def _citation(supported: bool) -> Citation:
    return Citation(entry_id="a", title="A", kind="concept", url=None, quote="q", supported=supported)


@pytest.mark.parametrize(
    ("citations", "expected"),
    [
        ([], None),
        ([_citation(True), _citation(False)], 0.5),
        ([_citation(True)], 1.0),
        ([True, True, False, True], 0.75),  # plain flags, as stored in results.json
        ([False], 0.0),
    ],
)
def test_supported_share(citations, expected):
    assert m.supported_share(citations) == approx(expected)


@pytest.mark.parametrize(
    ("text", "facts", "expected"),
    [
        ("anything", [], None),
        ("", ["x"], 0.0),
        ("The GPU has HBM-3 memory.", ["hbm 3", "GPU"], 1.0),
        ("Pipeline  parallelism\nsplits layers", ["pipeline parallelism", "tensor parallelism"], 0.5),
        ("ZeRO stage 3 shards optimizer state", ["zero, stage-3", "Optimizer State"], 1.0),
        ("all-reduce", ["all reduce", "all_reduce", "allreduce"], 2 / 3),  # spaces are kept, not removed
    ],
)
def test_fact_recall(text, facts, expected):
    assert m.fact_recall(text, facts) == approx(expected)


@pytest.mark.parametrize(
    ("pairs", "precision", "recall", "false_rate"),
    [
        ([], None, None, None),
        ([(True, True), (False, True), (False, True)], 1 / 3, 1.0, 1.0),  # everything refused
        ([(True, False), (False, False)], None, 0.0, 0.0),  # nothing refused
        ([(True, True), (True, False), (False, True), (False, False), (False, False)], 0.5, 0.5, 1 / 3),
        ([(False, False)], None, None, 0.0),  # no refuse questions: recall undefined
        ([(True, True), (True, True)], 1.0, 1.0, None),  # no answerable questions
    ],
)
def test_refusal_scores(pairs, precision, recall, false_rate):
    scores = m.refusal_scores(pairs)
    assert scores == {
        "precision": approx(precision),
        "recall": approx(recall),
        "false_refusal_rate": approx(false_rate),
    }


@pytest.mark.parametrize(
    ("rows", "expected"),
    [
        ([], None),
        ([(False, False, 1.0), (False, False, 0.5), (False, True, 0.0), (True, False, 0.0)], 0.75),
        ([(False, True, 1.0), (False, True, None)], None),  # all refused
        ([(False, False, None)], None),  # answered but nothing cited
        ([(False, False, None), (False, False, 0.25)], 0.25),
    ],
)
def test_answered_only_precision(rows, expected):
    assert m.answered_only_precision(rows) == approx(expected)


@pytest.mark.parametrize(
    ("values", "expected"),
    [([], None), ([None, None], None), ([1.0, None, 0.0], 0.5), ([0.0], 0.0), ((v for v in [1, 2]), 1.5)],
)
def test_mean_defined(values, expected):
    assert m.mean_defined(values) == approx(expected)


@pytest.mark.parametrize(
    ("ids", "expected"),
    [([], []), (["b", "a", "b", "c", "a"], ["b", "a", "c"])],
)
def test_dedupe_keeps_first_occurrence(ids, expected):
    assert m.dedupe(ids) == expected
