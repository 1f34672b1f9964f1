#!/usr/bin/env python3
"""Fit the value reader (`assistant/question/value_kinds.py`) and write `assistant/question/value_reader.npz`.

Training questions: `knowledge/questions/value-kinds.jsonl` (written to teach it) and the
calibration questions (the calibration half of `realistic.jsonl`, `realistic-dev.jsonl`,
`realistic-dev2.jsonl`; a question to refuse is labelled with its intent, every other `none`).
The test half and `realistic-dev3.jsonl` stay out, so they measure it. Multinomial logistic
regression, classes weighted to balance, full-batch gradient descent from zeros: the same
files give the same weights. `--cross-validate` prints 5-fold figures on the calibration
questions for the thresholds in `value_kinds.py` (how KIND_TRUSTED_AT and NONE_TRUSTED_AT were chosen).

    python scripts/fit_value_reader.py [--cross-validate]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from assistant.eval.questions import load_questions  # noqa: E402
from assistant.offline import offline_environment  # noqa: E402
from assistant.question.encoders import SHIPPED  # noqa: E402
from assistant.question.intents import asking_part  # noqa: E402
from assistant.question.linear_reader import design, fit_classes, probabilities  # noqa: E402
from assistant.question.value_kinds import KINDS, WEIGHTS  # noqa: E402

QUESTIONS = ROOT / "knowledge" / "questions"
CALIBRATION = [("realistic.jsonl", "calibration"), ("realistic-dev.jsonl", None), ("realistic-dev2.jsonl", None)]


def examples() -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    taught = []
    for line in (QUESTIONS / "value-kinds.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            taught.append((row["question"], row["kind"]))
    calibration = []
    for name, split in CALIBRATION:
        for q in load_questions(QUESTIONS / name, split):
            kind = q.intent if q.should_refuse and q.intent in KINDS else "none"
            calibration.append((q.question, kind))
    return taught, calibration


def fit(rows: list[tuple[str, str]]) -> tuple[list[str], np.ndarray, np.ndarray]:
    return fit_classes([asking_part(q) for q, _ in rows], [kind for _, kind in rows], KINDS)


def predict(model: tuple[list[str], np.ndarray, np.ndarray], questions: list[str]) -> np.ndarray:
    vocabulary, weights, bias = model
    asking = [asking_part(q) for q in questions]
    inputs = design(asking, {f: i for i, f in enumerate(vocabulary)}, SHIPPED.reader_vectors(asking))
    return probabilities(inputs, weights, bias)


def cross_validate(taught: list[tuple[str, str]], calibration: list[tuple[str, str]]) -> None:
    from assistant.question.value_kinds import pattern_kind

    order = np.random.default_rng(0).permutation(len(calibration))
    scores = np.zeros((len(calibration), len(KINDS)))
    for fold in np.array_split(order, 5):
        held = set(fold.tolist())
        model = fit(taught + [calibration[i] for i in order if i not in held])
        scores[fold] = predict(model, [calibration[i][0] for i in fold])
    asked = np.array([k != "none" for _, k in calibration])
    patterns = [pattern_kind(q) for q, _ in calibration]
    for sure in (0.5, 0.6, 0.7, 0.8, 0.9, 1.01):
        for surely_none in (0.8, 0.9, 0.95, 1.01):
            read = []
            for p, pattern in zip(scores, patterns, strict=True):
                best = int(p.argmax())
                read.append((best > 0 and p[best] >= sure) or (pattern is not None and p[0] < surely_none))
            found = np.array(read)
            print(
                f"KIND_TRUSTED_AT {sure:.2f} NONE_TRUSTED_AT {surely_none:.2f}: value questions missed "
                f"{int((asked & ~found).sum())}/{int(asked.sum())}, kind read into others "
                f"{int((~asked & found).sum())}/{int((~asked).sum())}"
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cross-validate", action="store_true", help="5-fold figures on the calibration questions")
    args = parser.parse_args()
    offline_environment()
    taught, calibration = examples()
    if args.cross_validate:
        cross_validate(taught, calibration)
        return 0
    vocabulary, weights, bias = fit(taught + calibration)
    np.savez_compressed(
        WEIGHTS, vocabulary=np.array(vocabulary), weights=weights.astype(np.float16), bias=bias.astype(np.float32)
    )
    print(f"{len(taught) + len(calibration)} questions, {len(vocabulary)} words and pairs -> {WEIGHTS.name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
