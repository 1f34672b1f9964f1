#!/usr/bin/env python3
"""What the asked-as descriptions are worth: the same question sets with and without them.

    python scripts/descriptions_effect.py                                   # mlsys, realistic-dev5 and -dev7
    python scripts/descriptions_effect.py --knowledge K --questions A.jsonl B.jsonl --out results/descriptions

The knowledge is indexed twice in homes under --out: once as it is, once with every asked-as record
left out (a folder of links to its files, minus those holding `asked_as` records), which is what a
user's own knowledge has until `assistant describe` runs. Each question set is evaluated on both with
the configured model (offline: extractive), and one table prints both rows side by side: the figure a
corpus without descriptions gets is the second row. Run from the repository root.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from assistant.eval.runner import run  # noqa: E402
from assistant.index.chroma_index import Index  # noqa: E402
from assistant.settings import Settings  # noqa: E402

SETS = ("knowledge/questions/realistic-dev5.jsonl", "knowledge/questions/realistic-dev7.jsonl")
COLUMNS = (
    "answered_with_gold",
    "recall@5",
    "mrr@10",
    "fact_recall",
    "citation_precision",
    "refusal_recall",
    "false_refusal_rate",
)


def holds_descriptions(path: Path) -> bool:
    if path.suffix != ".jsonl":
        return False
    with path.open(encoding="utf-8") as handle:
        first = handle.readline()
    try:
        return "asked_as" in json.loads(first)
    except (json.JSONDecodeError, TypeError):
        return False


def without_descriptions(knowledge: Path, folder: Path) -> Path:
    """A folder of links to every knowledge file but the asked-as ones (and the ignore files, copied)."""
    folder.mkdir(parents=True, exist_ok=True)
    for path in sorted(knowledge.rglob("*")):
        if not path.is_file() or holds_descriptions(path):
            continue
        target = folder / path.relative_to(knowledge)
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists():
            target.symlink_to(path.resolve())
    return folder


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--knowledge", type=Path, default=Path("knowledge/mlsys"))
    parser.add_argument("--questions", type=Path, nargs="+", default=[Path(s) for s in SETS])
    parser.add_argument("--out", type=Path, default=Path("results/descriptions"))
    args = parser.parse_args()
    base = Settings.from_env()
    variants = {
        "with descriptions": args.knowledge,
        "without": without_descriptions(args.knowledge, args.out / "knowledge-without"),
    }
    rows = []
    for name, knowledge in variants.items():
        settings = base.with_(home=args.out / f"home-{name.split()[0]}", knowledge=(knowledge,), follows_home=False)
        Index(settings).sync(progress=False)
        for questions in args.questions:
            out = args.out / f"{questions.stem}-{name.split()[0]}"
            run(settings, questions, out, modes=("hybrid",))
            metrics = json.loads((out / "results.json").read_text(encoding="utf-8"))["metrics"]["overall"]
            rows.append((questions.stem, name, [metrics.get(c) for c in COLUMNS]))
    print("| set | descriptions | " + " | ".join(COLUMNS) + " |")
    print("|" + " --- |" * (len(COLUMNS) + 2))
    for stem, name, values in rows:
        cells = ["-" if v is None else f"{v:.3f}" for v in values]
        print(f"| {stem} | {name} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
