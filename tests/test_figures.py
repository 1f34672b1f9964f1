"""The shared figure helpers: percentiles (as numpy), timing summaries, ratios, Markdown tables."""

from __future__ import annotations

import random

import numpy as np
import pytest

from assistant.figures import cell, markdown_table, percentile, ratio, summarise


@pytest.mark.parametrize(
    ("values", "q", "expected"),
    [
        ([], 50, None),
        ([5.0], 95, 5.0),
        ([7.0], 95, 7.0),
        ([1, 2, 3, 4], 50, 2.5),
        ([1, 2, 3, 4], 95, 3.85),
        ([4, 1, 3, 2], 0, 1.0),  # unsorted input
        ([4, 1, 3, 2], 100, 4.0),
        ([2, 2, 2, 10], 50, 2.0),  # ties
        ([2, 2, 10, 10], 50, 6.0),
        (list(range(1, 101)), 50, 50.5),
    ],
)
def test_percentile(values, q, expected) -> None:
    assert percentile(values, q) == pytest.approx(expected)


def test_percentile_matches_numpy_linear() -> None:
    rng = random.Random(7)
    for size in (1, 2, 5, 17):
        values = [rng.uniform(0, 100) for _ in range(size)]
        for q in (0, 5, 50, 90, 95, 99, 100):
            assert percentile(values, q) == pytest.approx(float(np.percentile(values, q)))


@pytest.mark.parametrize("q", [-1, 101])
def test_percentile_rejects_q_out_of_range(q) -> None:
    with pytest.raises(ValueError, match=r"0\.\.100"):
        percentile([1.0], q)
    with pytest.raises(ValueError, match=r"0\.\.100"):
        percentile([], q)


def test_summarise_and_ratio() -> None:
    assert summarise([10.0, 20.0, 30.0, 40.0]) == {
        "n": 4,
        "p50": 25.0,
        "p95": 38.5,
        "mean": 25.0,
        "min": 10.0,
        "max": 40.0,
    }
    assert summarise([]) == {"n": 0}
    assert ratio(3, 4) == 0.75
    assert ratio(1, 0) is None and ratio(None, 2) is None


def test_markdown_table_aligns_numbers_and_escapes_pipes() -> None:
    text = markdown_table(
        ["name", "chunks", "p50 ms", "met"], [["mlsys", 3818, 12.345, True], ["seed|x", None, 1.0, False]]
    )
    lines = text.splitlines()
    assert lines[0] == "| name | chunks | p50 ms | met |"
    assert lines[1] == "| --- | ---: | ---: | --- |"
    assert lines[2] == "| mlsys | 3,818 | 12.3 | yes |"
    assert lines[3] == "| seed\\|x | – | 1.0 | no |"
    assert cell(0.123456, 3) == "0.123"
