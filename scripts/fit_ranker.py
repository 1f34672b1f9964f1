#!/usr/bin/env python3
"""Fit the learned candidate order (`assistant/retrieval/learned_order.py`); writes its `learned_order.json`.

Training questions: the answerable calibration questions (the calibration half of
`realistic.jsonl`, `realistic-dev.jsonl`, `realistic-dev2.jsonl`, `realistic-dev3.jsonl`,
`realistic-dev4.jsonl`); the test half and `realistic-dev5.jsonl` stay out, so they measure the
model (a refit that added `realistic-dev6.jsonl` was measured and left out: see the README). Each
question's search is run as the chain runs it and what retrieval knew of its best fused candidates
is kept in `scripts/ranker_candidates.jsonl.gz` (`--collect`; needs the mlsys index, about eleven
minutes on 2 cores). Fitting reads only that file: pairwise logistic regression (each
gold candidate against each other candidate of its question, both ways), L2 with C = 10, Newton's
method from zeros, so the same file gives the same weights. `--cross-validate` fits on four sets
and measures the fifth, for each (how C was chosen).

    ASSISTANT_HOME=.assistant-mlsys ASSISTANT_KNOWLEDGE=knowledge/mlsys python scripts/fit_ranker.py --collect \
        --question-pieces folds/      # one scripts/train_question_pieces.py --hold-out model per set
    python scripts/fit_ranker.py [--cross-validate]
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from dataclasses import asdict, fields
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from assistant.offline import offline_environment  # noqa: E402
from assistant.retrieval.learned_order import FEATURES, WEIGHTS, Candidate, feature_rows, learned_order  # noqa: E402

QUESTIONS = ROOT / "knowledge" / "questions"
CANDIDATES = ROOT / "scripts" / "ranker_candidates.jsonl.gz"
CALIBRATION = [
    ("realistic.jsonl", "calibration"),
    ("realistic-dev.jsonl", None),
    ("realistic-dev2.jsonl", None),
    ("realistic-dev3.jsonl", None),
    ("realistic-dev4.jsonl", None),
]
C = 10.0  # leave-one-set-out (`--cross-validate`): the best mean held-out recall@1, recall@5 and MRR@10


def collect(question_pieces: Path | None = None) -> None:
    """Run every answerable calibration question's search and keep its candidates.

    With `question_pieces` (a folder of `<set>.onnx`, `scripts/train_question_pieces.py --hold-out`),
    each set's questions are read by the question side fitted without them, as a new question is."""
    offline_environment()
    from assistant import Assistant, Settings
    from assistant.eval.questions import load_questions
    from assistant.index.onnx_encoder import OnnxEncoder

    bot = Assistant(Settings.from_env())
    chain, retriever = bot.chain, bot.retriever
    seen: dict[str, object] = {}
    own_retrieve, own_candidates = retriever.retrieve, retriever.candidates

    def retrieve(query, k=10, **options):  # type: ignore[no-untyped-def]
        seen["main"] = k > 1 and "candidates" not in seen  # the chain's own search, not a side's or a term's
        try:
            return own_retrieve(query, k=k, **options)
        finally:
            seen["main"] = False

    def candidates(fusion, maxsim, kept):  # type: ignore[no-untyped-def]
        found = own_candidates(fusion, maxsim, kept)
        if seen.get("main"):
            seen["candidates"] = found
        return found

    retriever.retrieve, retriever.candidates = retrieve, candidates  # type: ignore[method-assign]
    rows = []
    for name, split in CALIBRATION:
        if question_pieces is not None:
            assert retriever.reranker is not None, "the learned order needs the shipped local encoder"
            retriever.reranker.question_encoder = OnnxEncoder(graph=question_pieces / name.replace(".jsonl", ".onnx"))
        for question in load_questions(QUESTIONS / name, split):
            if question.should_refuse:
                continue
            seen.clear()
            chain.evidence(question.question, list(question.history))
            found = seen.get("candidates") or []
            rows.append(
                {
                    "set": name.removesuffix(".jsonl"),
                    "id": question.id,
                    "gold": list(question.gold),
                    "candidates": [rounded(asdict(c)) for c in found],  # type: ignore[arg-type]
                }
            )
    with gzip.open(CANDIDATES, "wt", encoding="utf-8", compresslevel=9) as out:
        for row in rows:
            out.write(json.dumps(row, sort_keys=True) + "\n")
    print(f"{len(rows)} questions -> {CANDIDATES.relative_to(ROOT)}")


def rounded(fields: dict[str, object]) -> dict[str, object]:
    """Floats to six places: the file stays small and diffs stay readable."""
    return {k: round(v, 6) if isinstance(v, float) else v for k, v in fields.items()}


def load() -> list[dict]:
    names = {f.name for f in fields(Candidate)}
    rows = []
    with gzip.open(CANDIDATES, "rt", encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            row["candidates"] = [Candidate(**{k: v for k, v in c.items() if k in names}) for c in row["candidates"]]
            rows.append(row)
    return rows


def pairs(rows: list[dict]) -> tuple[np.ndarray, np.ndarray]:
    """Feature differences, gold minus other (label 1) and other minus gold (label 0)."""
    diffs, labels = [], []
    for row in rows:
        found = row["candidates"]
        gold = set(row["gold"])
        x = np.array(feature_rows(found), dtype=np.float64)
        good = [i for i, c in enumerate(found) if c.entry_id in gold]
        bad = [i for i, c in enumerate(found) if c.entry_id not in gold]
        for g in good:
            for b in bad:
                diffs += [x[g] - x[b], x[b] - x[g]]
                labels += [1.0, 0.0]
    return np.array(diffs).reshape(-1, len(FEATURES)), np.array(labels)


def fit(rows: list[dict], c: float = C) -> np.ndarray:
    """Minimise c * sum(log loss) + |w|^2 / 2 by Newton's method (the objective of sklearn's C)."""
    x, y = pairs(rows)
    w = np.zeros(len(FEATURES))
    for _ in range(50):
        p = 1 / (1 + np.exp(-(x @ w)))
        gradient = c * x.T @ (p - y) + w
        hessian = c * (x * (p * (1 - p))[:, None]).T @ x + np.eye(len(w))
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-10:
            break
    return w


def measure(rows: list[dict], weights: np.ndarray | None) -> tuple[float, float, float]:
    """Recall@1, recall@5 and MRR@10 of the re-ordered candidates (None: by MaxSim alone)."""
    r1 = r5 = mrr = 0.0
    for row in rows:
        found, gold = row["candidates"], set(row["gold"])
        if weights is None:
            order = [c.entry_id for c in sorted(found, key=lambda c: (-c.maxsim, c.entry_id))]
        else:
            order = learned_order(found, list(weights))
        r1 += len(gold & set(order[:1])) / len(gold)
        r5 += len(gold & set(order[:5])) / len(gold)
        mrr += next((1 / n for n, e in enumerate(order[:10], start=1) if e in gold), 0.0)
    return r1 / len(rows), r5 / len(rows), mrr / len(rows)


def cross_validate(rows: list[dict]) -> None:
    """Fit on three sets, measure on the fourth (candidates only: names and follow-ups' entries lead anyway)."""
    sets = list(dict.fromkeys(r["set"] for r in rows))
    print("held-out set          questions  MaxSim alone R@1 / R@5 / MRR   learned R@1 / R@5 / MRR")
    for c in (0.01, 0.1, 1.0, 10.0):
        print(f"C = {c}")
        gains = []
        for held in sets:
            test = [r for r in rows if r["set"] == held and r["candidates"]]
            weights = fit([r for r in rows if r["set"] != held], c)
            base, learned = measure(test, None), measure(test, weights)
            gains.append(np.subtract(learned, base))
            figures = " / ".join(f"{v:.3f}" for v in base) + " " * 10 + " / ".join(f"{v:.3f}" for v in learned)
            print(f"  {held:20s} {len(test):5d}     {figures}")
        print("  mean gain" + " " * 51 + " / ".join(f"{v:+.3f}" for v in np.mean(gains, axis=0)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--collect", action="store_true", help="rerun the calibration searches first (needs the mlsys index)"
    )
    parser.add_argument(
        "--question-pieces",
        type=Path,
        help="with --collect: a folder of <set>.onnx, each set's question side fitted without it",
    )
    parser.add_argument("--cross-validate", action="store_true", help="leave-one-set-out figures instead of writing")
    args = parser.parse_args()
    if args.collect:
        collect(args.question_pieces)
    rows = load()
    if args.cross_validate:
        cross_validate(rows)
        return
    weights = fit(rows)
    data = {
        "about": "assistant/retrieval/learned_order.py; refit with python scripts/fit_ranker.py",
        "fitted_on": [name for name, _ in CALIBRATION],
        "questions": len(rows),
        "C": C,
        "weights": {name: round(float(v), 6) for name, v in zip(FEATURES, weights, strict=True)},
    }
    WEIGHTS.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    print(f"{len(rows)} questions -> {WEIGHTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
