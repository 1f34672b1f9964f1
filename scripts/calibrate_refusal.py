"""Fit the refusal threshold on the question sets: answerable against unanswerable questions.

For every question it records the retrieval confidence (best dense cosine, or 1.0 on a name
match) and prints, for candidate thresholds, the share of unanswerable questions refused and
of answerable ones refused. Writes the table to results/calibration.json.

    python scripts/calibrate_refusal.py seed=.assistant:knowledge/questions/seed.jsonl \
        mlsys=.assistant-mlsys:knowledge/questions/mlsys.jsonl
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from assistant import Assistant, Settings
from assistant.chain import refers_back, rule_condense
from assistant.eval.questions import load_questions


def confidences(home: str, questions_path: str) -> list[tuple[bool, float, str]]:
    bot = Assistant(Settings.from_env().with_(home=Path(home)), auto_index=False)
    rows = []
    for q in load_questions(Path(questions_path)):
        history = [tuple(h) for h in q.history]
        query = rule_condense(q.question, history) if refers_back(q.question, history) else q.question
        retrieval = bot.chain.retriever.retrieve(query, k=10)
        rows.append((q.type == "refuse", retrieval.confidence, q.id))
    return rows


def main(argv: list[str]) -> int:
    rows: list[tuple[bool, float, str]] = []
    for spec in argv:
        _name, _, rest = spec.partition("=")
        home, _, questions = rest.partition(":")
        rows += confidences(home, questions)
    unanswerable = sorted(c for refuse, c, _ in rows if refuse)
    answerable = sorted(c for refuse, c, _ in rows if not refuse)
    table = []
    for step in range(20, 61):
        t = step / 100
        refused_bad = sum(c < t for c in unanswerable) / max(1, len(unanswerable))
        refused_good = sum(c < t for c in answerable) / max(1, len(answerable))
        table.append(
            {
                "threshold": t,
                "unanswerable_refused": round(refused_bad, 3),
                "answerable_refused": round(refused_good, 3),
            }
        )
        print(f"{t:.2f}  unanswerable refused {refused_bad:.3f}  answerable refused {refused_good:.3f}")
    print("unanswerable confidences:", [round(c, 3) for c in unanswerable])
    print("lowest answerable:", [(i, round(c, 3)) for r, c, i in sorted(rows, key=lambda x: x[1]) if not r][:12])
    out = Path("results")
    out.mkdir(exist_ok=True)
    (out / "calibration.json").write_text(json.dumps({"table": table, "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
