"""A learned order for the best fused candidates: late interaction weighed with the fusion's own evidence.

MaxSim (`late_interaction.py`) alone throws away what the fusion knew: that the lexical leg found an entry
first, that the dense leg missed it or found it first, how much of the question's rarer words the
entry has. This is a linear model over those signals, each taken relative to the question's other
candidates, fitted pairwise (a gold entry against each other candidate of the same question) on the
calibration questions by `scripts/fit_ranker.py`; its weights are `learned_order.json`. Entries the question
names and what a leaning-back follow-up is about stay first, as with MaxSim alone.

Only what holds for any question and corpus is a feature. Whether the question uses the entry's
title words, names a concept page, or wants a concept were tried and left out: the realistic sets'
writers were told not to use the entry's own words, so those features learnt to push a named entry
down (the seed set's "GPU stands for graphics processing unit, right?" lost its GPU page), and
leave-one-set-out figures were no better with them.

Leave-one-set-out on the calibration sets (fit on all but one, measure on the one left out; `python
scripts/fit_ranker.py --cross-validate`) raised search recall@5 and MRR@10 over MaxSim alone on
every held-out set when MaxSim read the question by MiniLM itself. Since it reads it by the question
side fitted for it (`late_interaction.py`), MaxSim alone is stronger and the order adds less: on the five sets,
mean R@1 / R@5 / MRR@10 +0.013 / +0.004 / +0.014 at the shipped C = 10, MRR up on all five. The
README's Evaluation section has the figures.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

WEIGHTS = Path(__file__).with_name("learned_order.json")
MISSED_BY_DENSE = -0.3  # the dense gap of a candidate the dense leg did not return (below any seen)

FEATURES = (
    "maxsim_gap",  # best MaxSim among the entry's chunks, less the best candidate's
    "maxsim_rank",  # 1 / rank by MaxSim
    "matched_chunk_gap",  # MaxSim of the chunk the fusion matched, less the best candidate's best
    "fused",  # fused score as a share of a first place everywhere
    "fused_rank",  # 1 / rank in the fusion
    "dense_gap",  # best chunk cosine less the best candidate's (MISSED_BY_DENSE when not found)
    "dense_rank",  # 1 / rank in the dense leg (0 when not found)
    "lexical_share",  # BM25 score as a share of the best candidate's
    "lexical_rank",  # 1 / rank in the lexical leg (0 when not found)
    "coverage",  # rarity-weighted share of the question's words the entry has
    "log_chunks",  # log of the entry's chunk count: long abstracts offer MaxSim more chances
    "feedback_rank",  # 1 / rank in the dense-feedback lexical leg (`dense_feedback.py`; 0 when not found)
)


@dataclass(frozen=True)
class Candidate:
    """What retrieval knows of one fused candidate; ranks start at 1, None where a leg did not find it."""

    entry_id: str
    maxsim: float  # best over the chunks scored
    matched_maxsim: float  # of the chunk the fusion matched
    fused: float
    fused_rank: int
    dense_rank: int | None
    dense_score: float | None
    lexical_rank: int | None
    lexical_score: float | None
    coverage: float
    chunks: int
    feedback_rank: int | None = None


def feature_rows(candidates: Sequence[Candidate]) -> list[list[float]]:
    """One row of FEATURES per candidate, each relative to the question's other candidates."""
    if not candidates:
        return []
    top_maxsim = max(c.maxsim for c in candidates)
    by_maxsim = sorted((c.maxsim for c in candidates), reverse=True)
    top_dense = max([c.dense_score or 0.0 for c in candidates] + [1e-9])
    top_lexical = max([c.lexical_score or 0.0 for c in candidates] + [1e-9])
    rows = []
    for c in candidates:
        rows.append(
            [
                c.maxsim - top_maxsim,
                1 / (by_maxsim.index(c.maxsim) + 1),
                c.matched_maxsim - top_maxsim,
                c.fused,
                1 / c.fused_rank,
                c.dense_score - top_dense if c.dense_score else MISSED_BY_DENSE,
                1 / c.dense_rank if c.dense_rank else 0.0,
                (c.lexical_score or 0.0) / top_lexical,
                1 / c.lexical_rank if c.lexical_rank else 0.0,
                c.coverage,
                math.log(max(c.chunks, 1)),
                1 / c.feedback_rank if c.feedback_rank else 0.0,
            ]
        )
    return rows


@lru_cache(maxsize=1)
def shipped_weights() -> tuple[float, ...]:
    """The fitted weights, in FEATURES order (read once; the file names its features to catch drift)."""
    data = json.loads(WEIGHTS.read_text(encoding="utf-8"))
    weights = data["weights"]
    if list(weights) != list(FEATURES):
        raise ValueError(f"{WEIGHTS.name} was fitted for other features - refit: python scripts/fit_ranker.py")
    return tuple(float(weights[name]) for name in FEATURES)


def learned_order(candidates: Sequence[Candidate], weights: Sequence[float] | None = None) -> list[str]:
    """Entry ids of `candidates`, best first by the model (ties by entry id, so the order is stable)."""
    w = shipped_weights() if weights is None else tuple(weights)
    rows = feature_rows(candidates)
    scored = [
        (sum(a * b for a, b in zip(w, row, strict=True)), c.entry_id) for c, row in zip(candidates, rows, strict=True)
    ]
    return [entry_id for _, entry_id in sorted(scored, key=lambda item: (-item[0], item[1]))]
