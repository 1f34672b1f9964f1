"""How likely a question is one the knowledge cannot answer, read by a small learned model.

The refusal rules (`refusal.py`) were each fitted on the question sets they were read off, and on
sets written later they refused answerable questions for names the asker used in passing: a ticket
id ("EST-212:"), a salutation ("Dear Professor,"), the asker's own table or function name. This
reader is logistic regression over the asking sentences (their words and word pairs, and their
MiniLM vector, as the value reader sees them) and the refusal evidence (retrieval confidence, the
share of unknown words, the kind of value asked for and whether an entry states it, unknown and
ungrounded names, what else is asked). It is fitted on the labelled questions of the realistic
calibration sets (to realistic-dev8) and mlsys.jsonl, with the evidence the mlsys index gives them
(`scripts/fit_refusal_reader.py`); realistic-dev9 and the test half stay out and measure it.

`refusal.decide` lets it add a refusal the rules miss when it is sure (`REFUSES_AT`; not when an entry
states the kind of value asked for, nor when ASSISTANT_REFUSAL_THRESHOLD=0) and overrule one of the
rules' refusals, except a clear miss, when it finds a refusal unlikely (`UNLIKELY`); on a team's documents,
which it was not fitted on, it does neither.
Left out of the set it is measured on, it kept the rules' recall and cut their false refusals
(docs/retrieval-stages.md, "Refusal").
"""

from __future__ import annotations

import threading
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from assistant.question.encoders import SHIPPED, SentenceEncoders
from assistant.question.linear_reader import load_weights, read_one

if TYPE_CHECKING:
    from assistant.answer.refusal import Evidence

WEIGHTS = Path(__file__).resolve().parent / "refusal_reader.npz"
CLASSES = ("answer", "refuse")
KINDS = ("price", "date", "person", "company", "count", "spec", "howto", "opinion")
REFUSES_AT = 0.5  # a refusal the rules did not make is made at this probability
UNLIKELY = 0.15  # below this, a refusal the rules made (other than a clear miss) is overruled

_lock = threading.Lock()
_loaded: tuple[dict[str, int], np.ndarray, np.ndarray] | None = None


def evidence_row(evidence: Evidence) -> list[float]:
    """The evidence as numbers of about the same scale (counts capped)."""
    e = evidence
    return [
        e.confidence,
        e.unknown_share,
        float(e.kind is not None),
        float(e.kind_supported),
        min(len(e.unknown_names), 3) / 3,
        min(len(e.ungrounded), 3) / 3,
        min(e.asked_besides, 20) / 20,
        *(float(e.kind == kind) for kind in KINDS),
    ]


def _model() -> tuple[dict[str, int], np.ndarray, np.ndarray] | None:
    """The shipped weights, loaded once; None when the file is missing (the rules decide alone)."""
    global _loaded
    with _lock:
        if _loaded is None and WEIGHTS.exists():
            _loaded = load_weights(WEIGHTS)
        return _loaded


def refuse_probability(asking: str, evidence: Evidence, encoders: SentenceEncoders = SHIPPED) -> float | None:
    """The probability that the question should be refused; None when no weights are shipped or they
    cannot read the encoders' vectors (the rules decide alone)."""
    return _probability(asking, tuple(evidence_row(evidence)), encoders)


@lru_cache(maxsize=2048)
def _probability(asking: str, row: tuple[float, ...], encoders: SentenceEncoders) -> float | None:
    model = _model()
    probabilities = None if model is None else read_one(model, asking, encoders, row)
    return None if probabilities is None else float(probabilities[CLASSES.index("refuse")])
