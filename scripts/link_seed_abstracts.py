"""Build `assistant/knowledge/paper_links.json`: seed abstracts that are arXiv records of the mlsys pack.

    python scripts/link_seed_abstracts.py [--check]

The seed's related-papers pages hold abstracts cut short ("…") with no title or link. Five of
them are, word for word, the start of an arXiv record in knowledge/mlsys/arxiv-mlsys/papers.jsonl.
This writes, for each such seed entry id (a hash of its text), the record's arXiv id and title;
`assistant.knowledge.corpus` reads the table when it parses a related-papers page. A shipped table
rather than reading the mlsys pack at parse time: the pack is 2.7 MB that every seed sync would
read (and a path relative to the repository that an installed wheel or another working folder
does not have); the table is a few hundred bytes inside the package. `--check` exits 1 when the
table is out of date (run it after editing either corpus).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from assistant.knowledge.corpus import load_corpus, normalise
from assistant.knowledge.paper_links import LINKS_PATH

REPO = Path(__file__).resolve().parent.parent
SEED = REPO / "knowledge" / "seed"
PAPERS = REPO / "knowledge" / "mlsys" / "arxiv-mlsys" / "papers.jsonl"


def seed_prefix(text: str) -> str:
    """The normalised words a cut-short abstract surely has: its last word may be cut too."""
    words = normalise(text.rstrip().rstrip("…")).split()
    return " ".join(words[:-1]) if text.rstrip().endswith("…") else " ".join(words)


def links() -> dict[str, dict[str, str]]:
    records = [json.loads(line) for line in PAPERS.read_text(encoding="utf-8").splitlines() if line.strip()]
    full = [(normalise(record["abstract"]), record) for record in records if record.get("arxiv_id")]
    table: dict[str, dict[str, str]] = {}
    for entry in load_corpus([SEED]).entries.values():
        if entry.kind != "abstract":
            continue
        prefix = seed_prefix(entry.text)
        matches = [record for abstract, record in full if abstract.startswith(prefix)]
        if len(matches) == 1 and len(prefix.split()) >= 12:  # one record, and enough words to be sure
            record = matches[0]
            table[entry.id] = {"arxiv_id": str(record["arxiv_id"]), "title": " ".join(str(record["title"]).split())}
    return dict(sorted(table.items()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the shipped table differs")
    args = parser.parse_args(argv)
    table = links()
    text = json.dumps(table, indent=2, ensure_ascii=False) + "\n"
    if args.check:
        current = LINKS_PATH.read_text(encoding="utf-8") if LINKS_PATH.exists() else ""
        if current != text:
            print(f"{LINKS_PATH} is out of date - run: python scripts/link_seed_abstracts.py", file=sys.stderr)
            return 1
        print(f"{LINKS_PATH}: {len(table)} links, up to date")
        return 0
    LINKS_PATH.write_text(text, encoding="utf-8")
    print(f"wrote {len(table)} links to {LINKS_PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
