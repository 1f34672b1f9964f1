#!/usr/bin/env python3
"""Fit the refusal reader (`assistant/answer/refusal_reader.py`) and write `assistant/answer/refusal_reader.npz`.

Training questions: the calibration half of `realistic.jsonl` and `realistic-dev.jsonl` to
`realistic-dev8.jsonl`, labelled `refuse` or `answer`, each with the refusal evidence the mlsys index
gives it (so run it against that index). The test half and `realistic-dev9.jsonl` stay out: they
measure it. `--leave-one-out` prints, for each training set in turn, what a reader fitted on the
others refuses there, beside the rules alone (how `REFUSES_AT` and `UNLIKELY` were chosen).

    ASSISTANT_HOME=.assistant-mlsys ASSISTANT_KNOWLEDGE=knowledge/mlsys \\
        python scripts/fit_refusal_reader.py [--leave-one-out]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from assistant import Assistant, Settings  # noqa: E402
from assistant.answer import refusal_reader  # noqa: E402
from assistant.answer.refusal import CLEAR_MISSES, decide_by_rules, stated  # noqa: E402
from assistant.eval.questions import load_questions  # noqa: E402
from assistant.offline import offline_environment  # noqa: E402
from assistant.question.encoders import SHIPPED  # noqa: E402
from assistant.question.intents import asking_part  # noqa: E402
from assistant.question.linear_reader import design, fit_classes, probabilities  # noqa: E402

QUESTIONS = ROOT / "knowledge" / "questions"
L2 = float(os.environ.get("REFUSAL_L2", "1e-4"))
TRAINING = (
    [("realistic.jsonl", "calibration")]
    + [(f"realistic-dev{n}.jsonl", None) for n in ("", 2, 3, 4, 5, 6, 7, 8)]
    + [("mlsys.jsonl", None)]
)


def collect() -> list[dict]:
    """Every training question with its asking text, evidence row, label and the rules' decision."""
    bot = Assistant(Settings.from_env())
    chain = bot.chain
    rows = []
    for name, split in TRAINING:
        for q in load_questions(QUESTIONS / name, split):
            evidence = chain.evidence(q.question, list(q.history))
            rules = decide_by_rules(evidence, chain.settings.refusal, model_judges=False)
            rows.append(
                {
                    "set": name,
                    "asking": asking_part(q.question),
                    "row": refusal_reader.evidence_row(evidence),
                    "label": "refuse" if q.type == "refuse" else "answer",
                    "rules": rules.refuse,
                    "clear_miss": rules.reason in CLEAR_MISSES,
                    "stated": stated(evidence),
                }
            )
    return rows


def fit(rows: list[dict]) -> tuple[list[str], np.ndarray, np.ndarray]:
    extra = np.asarray([r["row"] for r in rows], np.float32)
    return fit_classes([r["asking"] for r in rows], [r["label"] for r in rows], refusal_reader.CLASSES, extra, L2)


def refuse_probabilities(rows: list[dict], model: tuple[list[str], np.ndarray, np.ndarray]) -> np.ndarray:
    vocabulary, weights, bias = model
    index = {f: i for i, f in enumerate(vocabulary)}
    asking = [r["asking"] for r in rows]
    words_and_vectors = design(asking, index, SHIPPED.reader_vectors(asking))
    inputs = np.concatenate([words_and_vectors, np.asarray([r["row"] for r in rows])], axis=1)
    return probabilities(inputs.astype(np.float32), weights, bias)[:, refusal_reader.CLASSES.index("refuse")]


def refuses(rows: list[dict], p: np.ndarray, sure: float, unlikely: float) -> list[bool]:
    """The decision `refusal.decide` makes for the extractive model with these probabilities."""
    return [
        r["clear_miss"] or (bool(prob >= unlikely) if r["rules"] else bool(prob >= sure) and not r["stated"])
        for r, prob in zip(rows, p, strict=True)
    ]


THRESHOLDS = [(0.5, 0.15), (0.5, 0.25)]  # (REFUSES_AT, UNLIKELY) pairs compared


def leave_one_out(rows: list[dict]) -> None:
    """Refused / false refusals on each set left out, for the rules and for the reader at each threshold pair."""
    print("left out              | to refuse | rules  | " + " | ".join(f"{s:.2f}/{u:.2f}" for s, u in THRESHOLDS))
    totals = np.zeros((len(THRESHOLDS) + 1, 2), int)
    for name, _ in TRAINING:
        held = [r for r in rows if r["set"] == name]
        p = refuse_probabilities(held, fit([r for r in rows if r["set"] != name]))
        should = [r["label"] == "refuse" for r in held]
        decisions = [[r["rules"] for r in held], *(refuses(held, p, s, u) for s, u in THRESHOLDS)]
        cells = []
        for i, made in enumerate(decisions):
            right = sum(a and b for a, b in zip(made, should, strict=True))
            wrong = sum(a and not b for a, b in zip(made, should, strict=True))
            totals[i] += (right, wrong)
            cells.append(f"{right:3d} / {wrong:<2d}")
        print(f"{name:21s} | {sum(should):9d} | " + " | ".join(cells), flush=True)
    print(f"{'all':21s} | {'':9s} | " + " | ".join(f"{a:3d} / {b:<2d}" for a, b in totals))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--leave-one-out", action="store_true", help="print held-out figures instead of fitting")
    args = parser.parse_args()
    offline_environment()
    rows = collect()
    if args.leave_one_out:
        leave_one_out(rows)
        return 0
    vocabulary, weights, bias = fit(rows)
    np.savez_compressed(
        refusal_reader.WEIGHTS, vocabulary=np.array(vocabulary), weights=weights.astype(np.float16), bias=bias
    )
    print(f"{refusal_reader.WEIGHTS.name}: {len(rows)} questions, {len(vocabulary)} words and pairs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
