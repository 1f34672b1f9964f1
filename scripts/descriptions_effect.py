#!/usr/bin/env python3
"""What the asked-as descriptions are worth: the same question sets with and without them.

    python scripts/descriptions_effect.py                                   # mlsys, realistic-dev5 and -dev7
    python scripts/descriptions_effect.py --knowledge K --questions A.jsonl B.jsonl --out results/descriptions
    OPENAI_BASE_URL=http://127.0.0.1:8080/v1 python scripts/descriptions_effect.py --glossary-subset 80 --generate

The knowledge is indexed in homes under --out: once as it is, once with every asked-as record left
out (a folder of links to its files, minus those holding `asked_as` records), which is what a user's
own knowledge has until `assistant describe` runs, and with --generate once more with descriptions
that `assistant describe` writes with the configured chat model. Each question set is evaluated on
each with the offline extractive model, and one table prints the rows side by side.

--glossary-subset N makes the knowledge a glossary of its own: the mlsys glossary terms that are gold
entries of the question sets, plus N others, with the shipped descriptions of those terms; only the
questions whose gold entries are all in it are asked (refusals too). Small enough to describe with a
small local model. Run from the repository root.
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


def glossary_subset(questions: list[Path], others: int, folder: Path) -> tuple[Path, list[Path]]:
    """A glossary folder (terms + their shipped descriptions) and the question files restricted to it."""
    from assistant.text import slugify

    pack = ROOT / "knowledge" / "mlsys" / "ml-glossary"
    rows = [json.loads(line) for line in (pack / "terms.jsonl").read_text(encoding="utf-8").splitlines() if line]
    ids = {f"glossary:{slugify(row['term'])}": row for row in rows}
    asked = [json.loads(line) for q in questions for line in q.read_text(encoding="utf-8").splitlines() if line]
    gold = {g for record in asked for g in record["gold"] if g in ids}
    rest = sorted(i for i in ids if i not in gold)
    keep = gold | set(rest[:: max(1, len(rest) // max(1, others))][:others])
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "terms.jsonl").write_text("".join(json.dumps(ids[i]) + "\n" for i in sorted(keep)), encoding="utf-8")
    described = [json.loads(line) for line in (pack / "asked-as.jsonl").read_text(encoding="utf-8").splitlines()]
    (folder / "asked-as.jsonl").write_text(
        "".join(json.dumps(d) + "\n" for d in described if d["id"] in keep), encoding="utf-8"
    )
    restricted = []
    for q in questions:
        lines = [json.dumps(r) for r in asked if r["id"].startswith(q.stem + "-") and set(r["gold"]) <= keep]
        path = folder.parent / f"{q.stem}-glossary.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        restricted.append(path)
    return folder, restricted


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--knowledge", type=Path, default=Path("knowledge/mlsys"))
    parser.add_argument("--questions", type=Path, nargs="+", default=[Path(s) for s in SETS])
    parser.add_argument("--out", type=Path, default=Path("results/descriptions"))
    parser.add_argument("--glossary-subset", type=int, metavar="N", help="a glossary of the gold terms and N others")
    parser.add_argument("--generate", action="store_true", help="add a row with descriptions by the chat model")
    args = parser.parse_args()
    base = Settings.from_env()
    questions = args.questions
    knowledge = args.knowledge
    if args.glossary_subset is not None:
        knowledge, questions = glossary_subset(args.questions, args.glossary_subset, args.out / "glossary")
    variants = {
        "with descriptions": knowledge,
        "without": without_descriptions(knowledge, args.out / "knowledge-without"),
    }
    if args.generate:
        from assistant.cli.describe import describe

        generated = without_descriptions(knowledge, args.out / "knowledge-generated")
        described = describe(base.with_(knowledge=(generated,), follows_home=False), generated / "asked-as.jsonl")
        print(described.summary(), file=sys.stderr)
        variants["generated"] = generated
    rows = []
    for name, knowledge in variants.items():
        settings = base.with_(
            home=args.out / f"home-{name.split()[0]}",
            knowledge=(knowledge,),
            follows_home=False,
            model="extractive",
        )
        Index(settings).sync(progress=False)
        for question_file in questions:
            out = args.out / f"{question_file.stem}-{name.split()[0]}"
            run(settings, question_file, out, modes=("hybrid",))
            metrics = json.loads((out / "results.json").read_text(encoding="utf-8"))["metrics"]["overall"]
            rows.append((question_file.stem, name, [metrics.get(c) for c in COLUMNS]))
    print("| set | descriptions | " + " | ".join(COLUMNS) + " |")
    print("|" + " --- |" * (len(COLUMNS) + 2))
    for stem, name, values in rows:
        cells = ["-" if v is None else f"{v:.3f}" for v in values]
        print(f"| {stem} | {name} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
