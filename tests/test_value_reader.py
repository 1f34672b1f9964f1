"""The learned value reader: the shipped weights are what the fit script makes of the committed questions."""

from __future__ import annotations

from types import ModuleType

import numpy as np
import pytest

from assistant.eval.questions import load_questions
from assistant.question import value_kinds
from tests.conftest import INT8_WITHOUT_VNNI, REPO, WITHOUT_VNNI_REASON
from tests.script_modules import load_script


def fit_script() -> ModuleType:
    return load_script("fit_value_reader")


@pytest.fixture(scope="module")
def refitted() -> tuple[ModuleType, list, tuple]:
    """The fit script, its training rows and what it fits on them: fitted once for both checks below."""
    script = fit_script()
    taught, calibration = script.examples()
    rows = taught + calibration
    return script, rows, script.fit(rows)


@pytest.mark.slow
@pytest.mark.skipif(INT8_WITHOUT_VNNI, reason=WITHOUT_VNNI_REASON)  # its features include the encoder's vectors
def test_the_shipped_weights_are_refitted_from_the_committed_questions(refitted: tuple) -> None:
    _, _, (vocabulary, weights, bias) = refitted
    shipped = value_kinds.ValueReader()
    assert list(shipped.vocabulary) == vocabulary
    np.testing.assert_allclose(shipped.weights, weights, atol=0.01)  # stored as float16
    np.testing.assert_allclose(shipped.bias, bias, atol=1e-5)


@pytest.mark.slow
def test_a_refit_reads_the_training_questions_as_the_shipped_reader_does(refitted: tuple) -> None:
    """Where the weights cannot match to the digit (another CPU's int8 vectors), the readings must."""
    script, rows, fitted = refitted
    refit = script.predict(fitted, [q for q, _ in rows])
    shipped = value_kinds.ValueReader()
    readings = [max(shipped.read(q).items(), key=lambda item: item[1])[0] for q, _ in rows]
    same = sum(value_kinds.KINDS[int(np.argmax(p))] == kind for p, kind in zip(refit, readings, strict=True))
    assert same / len(rows) >= 0.99, f"{len(rows) - same} of {len(rows)} training questions read differently"


def test_the_reader_gives_every_kind_a_probability_that_sums_to_one() -> None:
    scores = value_kinds.ValueReader().read("what does a DGX H100 cost?")
    assert set(scores) == set(value_kinds.KINDS)
    assert abs(sum(scores.values()) - 1.0) < 1e-5
    assert max(scores, key=scores.__getitem__) == "price"


def test_the_test_half_and_the_fresh_set_stay_out_of_training() -> None:
    taught, calibration = fit_script().examples()
    trained = {q for q, _ in taught + calibration}
    for name, split in (("realistic.jsonl", "test"), ("realistic-dev3.jsonl", None)):
        for q in load_questions(REPO / "knowledge" / "questions" / name, split):
            assert q.question not in trained, q.id
