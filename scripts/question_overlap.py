#!/usr/bin/env python3
"""How much of each question's wording is already in its gold entry: the "too easy" check.

A question written by reading an entry reuses the entry's words, and any search finds it;
a user who has not read the entry describes the problem in words of their own. For every
answerable question this prints the share of its content words that occur in its gold
entries (title and text, the union over gold entries), and the median per file.

The measure is deliberately independent of the assistant's own text processing, so changing
the search stemmer does not move it: words are lower-cased `[a-z0-9]` runs (hyphens and dots
inside a word kept), a fixed English stop-word list and the question's own framing words
("what", "called", "paper", ...) are dropped, and a plural `s` and an `ing`/`ed` ending are
stripped (`GPUs` ~ `GPU`, `batching` ~ `batch`); nothing else is folded.

    python scripts/question_overlap.py knowledge/questions/realistic-*.jsonl
    python scripts/question_overlap.py FILE --max-median 0.45   # exit 1 when a file's median is higher
    python scripts/question_overlap.py FILE --each               # one line per question, highest first
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KNOWLEDGE = [ROOT / "knowledge" / "seed", ROOT / "knowledge" / "mlsys"]
WORD = re.compile(r"[a-z0-9]+(?:[.\-][a-z0-9]+)*")
STOP = frozenset(
    """a about above after again against all also am an and any are as at be because been before being below
    between both but by can could did do does doing down during each either else ever every few for from further
    get gets getting got had has have having he her here hers him his how i if in into is it its itself just
    let like me might more most much must my no nor not now of off on once one only or other our ours out over
    own per same she should so some such than that the their theirs them then there these they this those
    through to too under until up upon us very was we were what when where whether which while who whom whose
    why will with within without would you your yours yourself
    s t don isn aren doesn didn won wouldn shouldn can't i'm it's what's
    called call name term word phrase concept thing things idea someone something anything way ways
    paper papers work works research study studies approach approaches method methods technique techniques
    system systems anyone know known tell explain describe give please show find looking look want need
    difference differ between compare comparison vs versus pros cons kind kinds type types
    example examples e.g i.e etc really actually basically just still even already ok okay hey hi thanks
    """.split()  # noqa: SIM905 - a word list reads better as text
)


def tokens(text: str) -> list[str]:
    return WORD.findall(text.lower())


def key(word: str) -> str:
    """A crude, transparent stemmer: a plural `s`, then an `ing` or `ed` ending, stripped."""
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for ending in ("ing", "ed"):
        if len(word) > len(ending) + 3 and word.endswith(ending):
            return word[: -len(ending)]
    return word


def content(text: str) -> set[str]:
    return {key(w) for w in tokens(text) if w not in STOP and not (len(w) == 1 and w.isalpha())}


def overlap(question: str, gold_texts: list[str]) -> float | None:
    asked = content(question)
    if not asked:
        return None
    found: set[str] = set()
    for text in gold_texts:
        found |= content(text)
    return len(asked & found) / len(asked)


def load_entries() -> dict[str, str]:
    sys.path.insert(0, str(ROOT))
    from assistant.knowledge.corpus import load_corpus

    corpus = load_corpus([p for p in KNOWLEDGE if p.exists()])
    return {entry_id: f"{e.title}\n{e.text}" for entry_id, e in corpus.entries.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--max-median", type=float, help="exit 1 when a file's median overlap is above this")
    parser.add_argument("--each", action="store_true", help="print every question's overlap, highest first")
    args = parser.parse_args(argv)
    entries = load_entries()
    status = 0
    for path in args.files:
        rows = []
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            record = json.loads(line)
            gold = record.get("gold") or []
            if not gold:
                continue
            missing = [g for g in gold if g not in entries]
            if missing:
                print(f"{path}:{number}: unknown gold id(s) {', '.join(missing)}")
                status = 1
                continue
            share = overlap(record["question"], [entries[g] for g in gold])
            if share is not None:
                rows.append((share, record.get("id", f"line {number}"), record["question"]))
        if not rows:
            print(f"{path}: no answerable questions")
            continue
        median = statistics.median(share for share, _, _ in rows)
        if args.each:
            for share, qid, question in sorted(rows, reverse=True):
                print(f"{share:.2f}  {qid}  {question}")
        over = sum(share > 0.5 for share, _, _ in rows)
        print(f"{path}: {len(rows)} answerable questions, median overlap {median:.2f}, {over} above 0.50")
        if args.max_median is not None and median > args.max_median:
            print(f"{path}: median {median:.2f} is above {args.max_median}")
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
