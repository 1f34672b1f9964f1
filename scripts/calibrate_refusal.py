"""Fit the refusal decision on the calibration half of a question set; report both halves.

For every question it gathers the evidence the decision uses (retrieval confidence, the kind of
value asked for and whether a best entry states it, names the knowledge never mentions), then
prints, for a grid of clear-miss thresholds, the share of unanswerable questions refused and of
answerable ones refused, on the calibration split. The chosen threshold refuses the most
unanswerable questions while refusing at most --max-false of the answerable ones (the middle of
the thresholds that tie); it is then reported on the test split. Writes results/calibration.json.

    ASSISTANT_HOME=.assistant-mlsys ASSISTANT_KNOWLEDGE=knowledge/mlsys \\
        python scripts/calibrate_refusal.py knowledge/questions/realistic.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from assistant import Assistant, Settings  # noqa: E402
from assistant.answer.refusal import Evidence, decide  # noqa: E402
from assistant.eval.questions import load_questions  # noqa: E402
from assistant.tuning import RefusalSettings  # noqa: E402

GRID = [round(0.15 + 0.01 * i, 2) for i in range(31)]
UNKNOWN_GRID = [round(0.20 + 0.05 * i, 2) for i in range(9)] + [1.01]  # 1.01: the rule is off


def evidence_rows(bot: Assistant, path: Path, split: str) -> list[tuple[bool, Evidence, str]]:
    rows = []
    for q in load_questions(path, split):
        history = [tuple(turn) for turn in q.history]
        rows.append((q.should_refuse, bot.chain.evidence(q.question, history), q.id))
    return rows


def rates(rows: list[tuple[bool, Evidence, str]], thresholds: RefusalSettings) -> tuple[float, float]:
    refuse = [decide(e, thresholds, model_judges=False).refuse for _, e, _ in rows]
    unanswerable = [r for (should, _, _), r in zip(rows, refuse, strict=True) if should]
    answerable = [r for (should, _, _), r in zip(rows, refuse, strict=True) if not should]
    return sum(unanswerable) / max(1, len(unanswerable)), sum(answerable) / max(1, len(answerable))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("questions", type=Path)
    parser.add_argument("--max-false", type=float, default=0.03, help="most answerable questions refused")
    parser.add_argument("--out", type=Path, default=Path("results/calibration.json"))
    args = parser.parse_args(argv)
    bot = Assistant(Settings.from_env().with_(model="extractive"), auto_index=False)
    calibration = evidence_rows(bot, args.questions, "calibration")
    test = evidence_rows(bot, args.questions, "test")
    table = []
    for unknown in UNKNOWN_GRID:
        for clear in GRID:
            refused, false = rates(calibration, RefusalSettings(clear_miss=clear, unknown_words=unknown))
            table.append({"clear_miss": clear, "unknown_words": unknown, "refused": refused, "false": false})
    allowed = [row for row in table if row["false"] <= args.max_false + 1e-9]
    top = max(allowed, key=lambda row: (row["refused"], -row["false"]))
    tied = [row for row in allowed if (row["refused"], row["false"]) == (top["refused"], top["false"])]
    # confidence: the middle of the tied thresholds, the widest margin on both sides; unknown words:
    # the lowest share that refuses no more answerable questions (a calibration half holds few
    # off-topic questions, so refuse as many of them as it allows)
    clears = sorted({row["clear_miss"] for row in tied})
    clear = clears[len(clears) // 2]
    unknown = min(row["unknown_words"] for row in tied if row["clear_miss"] == clear)
    best = next(row for row in tied if row["clear_miss"] == clear and row["unknown_words"] == unknown)
    chosen = RefusalSettings(clear_miss=best["clear_miss"], unknown_words=best["unknown_words"])
    print(
        f"calibration: {len(calibration)} questions; chosen clear_miss={chosen.clear_miss}, "
        f"unknown_words={chosen.unknown_words}"
    )
    print("| split | unanswerable refused | answerable refused |")
    print("|---|---|---|")
    for name, rows in (("calibration", calibration), ("test", test)):
        refused, false = rates(rows, chosen)
        print(f"| {name} | {refused:.3f} | {false:.3f} |")
    print("\ncalibration, by clear-miss threshold:")
    print("| threshold | unanswerable refused | answerable refused |")
    print("|---|---|---|")
    for row in [r for r in table if r["unknown_words"] == best["unknown_words"]][::3]:
        print(f"| {row['clear_miss']:.2f} | {row['refused']:.3f} | {row['false']:.3f} |")
    print("\ncalibration, confidence alone (one threshold on one confidence, the decision this replaces):")
    print("| threshold | unanswerable refused | answerable refused |")
    print("|---|---|---|")
    for threshold in (0.30, 0.35, 0.40, 0.44, 0.48):
        refused = [e.confidence < threshold for _, e, _ in calibration]
        unanswerable = [r for (should, _, _), r in zip(calibration, refused, strict=True) if should]
        answerable = [r for (should, _, _), r in zip(calibration, refused, strict=True) if not should]
        shares = sum(unanswerable) / len(unanswerable), sum(answerable) / len(answerable)
        print(f"| {threshold:.2f} | {shares[0]:.3f} | {shares[1]:.3f} |")
    for label, rows in (("calibration", calibration),):
        for should, e, qid in rows:
            d = decide(e, chosen, model_judges=False)
            if d.refuse != should:
                print(f"  {label} {'missed refusal' if should else 'false refusal'}: {qid} {e} {d.reason}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"chosen": best, "grid": table}, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
