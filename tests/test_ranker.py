"""The learned candidate order: its features, its weights, and its place in hybrid search."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from assistant import Assistant
from assistant.retrieval import learned_order as ranker
from assistant.retrieval.learned_order import FEATURES, Candidate, feature_rows, learned_order
from tests.conftest import REPO
from tests.script_modules import load_script


def fit_script() -> ModuleType:
    return load_script("fit_ranker")


def candidate(entry_id: str, **changes: object) -> Candidate:
    plain = Candidate(
        entry_id=entry_id,
        maxsim=0.5,
        matched_maxsim=0.5,
        fused=0.5,
        fused_rank=5,
        dense_rank=10,
        dense_score=0.4,
        lexical_rank=10,
        lexical_score=5.0,
        coverage=0.3,
        chunks=3,
    )
    return replace(plain, **changes)  # type: ignore[arg-type]


def test_the_shipped_weights_are_refitted_from_the_committed_candidates() -> None:
    script = fit_script()
    rows = script.load()
    sets = {r["set"] for r in rows}
    assert sets == {"realistic", "realistic-dev", "realistic-dev2", "realistic-dev3", "realistic-dev4"}
    weights = script.fit(rows)
    np.testing.assert_allclose(ranker.shipped_weights(), weights, atol=1e-5)


def test_the_test_half_and_the_held_out_set_are_not_among_the_training_questions() -> None:
    from assistant.eval.questions import load_questions

    questions = REPO / "knowledge" / "questions"
    test_ids = {q.id for q in load_questions(questions / "realistic.jsonl", "test")}
    held_out = {q.id for q in load_questions(questions / "realistic-dev5.jsonl", None)}
    trained = {r["id"] for r in fit_script().load()}
    assert test_ids and held_out and not (test_ids | held_out) & trained


def test_a_candidate_better_on_every_signal_comes_first_and_ties_keep_a_stable_order() -> None:
    weak = candidate("arxiv:weak")
    strong = candidate(
        "arxiv:strong", maxsim=0.7, matched_maxsim=0.7, dense_rank=1, dense_score=0.6, lexical_rank=1, lexical_score=9.0
    )
    assert learned_order([weak, strong]) == ["arxiv:strong", "arxiv:weak"]
    twins = [candidate("b"), candidate("a")]
    assert learned_order(twins) == ["a", "b"]


def test_features_are_relative_to_the_question_s_other_candidates() -> None:
    """A question whose every MaxSim is higher (a long, wordy one) gives the same rows."""
    found = [
        candidate("a", maxsim=0.6, matched_maxsim=0.55),
        candidate("b", maxsim=0.5, dense_rank=None, dense_score=None),
    ]
    lifted = [replace(c, maxsim=c.maxsim + 0.1, matched_maxsim=c.matched_maxsim + 0.1) for c in found]
    np.testing.assert_allclose(feature_rows(found), feature_rows(lifted))
    rows = feature_rows(found)
    assert len(rows[0]) == len(FEATURES)
    assert rows[1][FEATURES.index("dense_gap")] == ranker.MISSED_BY_DENSE  # the dense leg did not find it
    assert rows[1][FEATURES.index("dense_rank")] == 0.0


def test_weights_fitted_for_other_features_are_refused_with_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stale = tmp_path / "ranker.json"
    stale.write_text(json.dumps({"weights": {"maxsim_gap": 1.0}}), encoding="utf-8")
    monkeypatch.setattr(ranker, "WEIGHTS", stale)
    ranker.shipped_weights.cache_clear()
    try:
        with pytest.raises(ValueError, match=r"refit: python scripts/fit_ranker\.py"):
            ranker.shipped_weights()
    finally:
        ranker.shipped_weights.cache_clear()


def test_hybrid_search_orders_by_the_model_and_maxsim_alone_is_still_a_choice(seed_assistant: Assistant) -> None:
    question = "my GPU kernels stall on memory while the arithmetic units idle, what helps?"
    learned = Assistant(seed_assistant.settings.with_(rerank="learned"), auto_index=False).retriever
    assert learned.reranker is not None and seed_assistant.retriever.reranking == "off"  # opt-in on the pack
    maxsim = Assistant(seed_assistant.settings.with_(rerank="maxsim"), auto_index=False).retriever
    by_model = [s.entry_id for s in learned.retrieve(question, k=20).sources]
    by_maxsim = [s.entry_id for s in maxsim.retrieve(question, k=20).sources]
    assert set(by_model) == set(by_maxsim)
    assert learned.retrieve("What is a GPU?", k=3).sources[0].entry_id == "MLD-0472"  # a name stays first


def test_the_retriever_gives_the_model_what_the_fusion_knew(seed_assistant: Assistant) -> None:
    """The candidates the fit script records are the ones search orders: every one scored, none kept."""
    retriever = Assistant(seed_assistant.settings.with_(rerank="learned"), auto_index=False).retriever
    seen: list[list[Candidate]] = []
    own = retriever.candidates

    def recording(*args, **kwargs):  # type: ignore[no-untyped-def]
        found = own(*args, **kwargs)
        seen.append(found)
        return found

    retriever.candidates = recording  # type: ignore[method-assign]
    sources = retriever.retrieve("which papers run big models across many home computers?", k=20).sources
    [found] = seen
    assert found and {c.entry_id for c in found} <= {s.entry_id for s in sources}
    assert all(c.fused_rank >= 1 and c.chunks >= 1 and -1.0 <= c.maxsim <= 1.0 for c in found)
    assert any(c.dense_rank is not None for c in found) and any(c.lexical_rank is not None for c in found)
