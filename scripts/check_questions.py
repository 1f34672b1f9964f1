#!/usr/bin/env python3
"""Validate the evaluation question sets in knowledge/questions/ against the corpus.

Standard library only (Python 3.11+). The corpus is read from the repository's
``knowledge/`` folder and every entry id is recomputed here with the same rules the
assistant uses, so a question set that passes refers only to entries that exist.

Usage:
    python3 scripts/check_questions.py                 # checks seed, mlsys and the realistic sets
    python3 scripts/check_questions.py FILE [FILE ...]

Exit status 0 when every file is valid, 1 otherwise (one line per problem on stdout).

Entry ids:
- seed concept page (first line ``Section · ID``): the ID after the last ``·``, e.g. ``MLD-0472``;
  its text is the whole page.
- seed related-papers page (first line ``Related papers: ...``): one abstract per paragraph
  (paragraphs separated by a blank line); id ``abs-`` + sha256(normalised)[:10] where
  normalised = " ".join(NFKC(paragraph).split()).casefold(). An abstract found on several
  pages is one entry.
- arXiv record: ``arxiv:<arxiv_id>``; text = title + abstract.
- glossary term: ``glossary:<slug>``; text = term + definition (slug rules in ``slug``).
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import unicodedata
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KNOWLEDGE = ROOT / "knowledge"
SEED_DIR = KNOWLEDGE / "seed"
ARXIV_FILE = KNOWLEDGE / "mlsys" / "arxiv-mlsys" / "papers.jsonl"
GLOSSARY_FILE = KNOWLEDGE / "mlsys" / "ml-glossary" / "terms.jsonl"
DEFAULT_FILES = [
    KNOWLEDGE / "questions" / f"{name}.jsonl"
    for name in (
        "seed",
        "mlsys",
        "realistic",
        "realistic-dev",
        "realistic-dev2",
        "realistic-dev3",
        "realistic-dev4",
        "realistic-dev5",
        "realistic-dev6",
    )
]

TYPES = ("single", "multi", "refuse", "followup")
FIELDS = {"id": str, "question": str, "type": str, "gold": list, "facts": list, "history": list}
OPTIONAL = {"intent": str, "split": str}
ANSWER_INTENTS = ("problem", "papers", "how", "compare", "definition", "name", "caveat", "example", "number")
REFUSE_INTENTS = ("price", "date", "count", "person", "company", "spec", "howto", "opinion", "other")
SPLITS = ("calibration", "test")
ROLES = ("user", "assistant")
MIN_FACT_WORDS, MAX_FACT_WORDS = 2, 6
MAX_FACTS = 3


def normalise(text: str) -> str:
    """NFKC, collapse all whitespace to single spaces, casefold."""
    return " ".join(unicodedata.normalize("NFKC", text).split()).casefold()


def abstract_id(paragraph: str) -> str:
    return "abs-" + hashlib.sha256(normalise(paragraph).encode("utf-8")).hexdigest()[:10]


def slug(term: str) -> str:
    s = re.sub(r"<[^>]+>", "", term)
    s = unicodedata.normalize("NFKD", s).encode("ascii", "ignore").decode().lower()
    return re.sub(r"[^a-z0-9]+", "-", s).strip("-")


def load_corpus() -> dict[str, str]:
    """Return {entry id: entry text} for the seed pages, arXiv records and glossary terms."""
    entries: dict[str, str] = {}
    for page in sorted(SEED_DIR.glob("*.txt")):
        text = page.read_text(encoding="utf-8")
        first, _, rest = text.partition("\n")
        if first.startswith("Related papers:"):
            for para in re.split(r"\n\s*\n", rest):
                if para.strip():
                    entries.setdefault(abstract_id(para), para.strip())
        elif "·" in first:
            entries[first.rsplit("·", 1)[1].strip()] = text
    if ARXIV_FILE.exists():
        with ARXIV_FILE.open(encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    rec = json.loads(line)
                    entries["arxiv:" + rec["arxiv_id"]] = rec["title"] + "\n\n" + rec["abstract"]
    if GLOSSARY_FILE.exists():
        with GLOSSARY_FILE.open(encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    rec = json.loads(line)
                    entries["glossary:" + slug(rec["term"])] = rec["term"] + "\n\n" + rec["definition"]
    return entries


def check_record(rec: object, where: str, prefix: str, corpus: dict[str, str], norm_text: dict[str, str]) -> list[str]:
    """Return the problems found in one parsed record."""
    if not isinstance(rec, dict):
        return [f"{where}: not a JSON object"]
    problems = []
    for name, kind in FIELDS.items():
        if name not in rec:
            problems.append(f"{where}: missing field '{name}'")
        elif not isinstance(rec[name], kind):
            problems.append(f"{where}: field '{name}' must be {kind.__name__}")
    for name, kind in OPTIONAL.items():
        if name in rec and not isinstance(rec[name], kind):
            problems.append(f"{where}: field '{name}' must be {kind.__name__}")
    extra = sorted(set(rec) - set(FIELDS) - set(OPTIONAL))
    if extra:
        problems.append(f"{where}: unknown field(s) {extra}")
    if problems:
        return problems

    qid, qtype, gold, facts, history = rec["id"], rec["type"], rec["gold"], rec["facts"], rec["history"]
    if not re.fullmatch(re.escape(prefix) + r"-\d{3,}", qid):
        problems.append(f"{where}: id '{qid}' should look like '{prefix}-001'")
    intent = rec.get("intent")
    intents = REFUSE_INTENTS if qtype == "refuse" else ANSWER_INTENTS
    if intent is not None and intent not in intents:
        problems.append(f"{where}: intent '{intent}' not in {list(intents)}")
    if rec.get("split") is not None and rec["split"] not in SPLITS:
        problems.append(f"{where}: split '{rec['split']}' not in {list(SPLITS)}")
    if not rec["question"].strip():
        problems.append(f"{where}: empty question")
    if qtype not in TYPES:
        problems.append(f"{where}: type '{qtype}' not in {list(TYPES)}")
    if not all(isinstance(g, str) for g in gold):
        problems.append(f"{where}: gold must be a list of strings")
        gold = [g for g in gold if isinstance(g, str)]
    if not all(isinstance(x, str) for x in facts):
        problems.append(f"{where}: facts must be a list of strings")
        facts = [x for x in facts if isinstance(x, str)]
    if len(set(gold)) != len(gold):
        problems.append(f"{where}: duplicate gold ids")
    for g in gold:
        if g not in corpus:
            problems.append(f"{where}: gold id '{g}' not found in the corpus")

    if qtype == "refuse":
        if gold:
            problems.append(f"{where}: refuse question must have empty gold")
        if facts:
            problems.append(f"{where}: refuse question must have empty facts")
    elif qtype in TYPES:
        if qtype in ("single", "followup") and len(gold) != 1:
            problems.append(f"{where}: {qtype} question needs exactly 1 gold id (has {len(gold)})")
        if qtype == "multi" and not 2 <= len(gold) <= 3:
            problems.append(f"{where}: multi question needs 2-3 gold ids (has {len(gold)})")
        if not 1 <= len(facts) <= MAX_FACTS:
            problems.append(f"{where}: needs 1-{MAX_FACTS} facts (has {len(facts)})")
        texts = [norm_text[g] for g in gold if g in norm_text]
        for fact in facts:
            words = len(fact.split())
            shortest = 1 if intent == "name" else MIN_FACT_WORDS  # a name may be one word ("epoch")
            if not shortest <= words <= MAX_FACT_WORDS:
                problems.append(f"{where}: fact '{fact}' has {words} words (want {MIN_FACT_WORDS}-{MAX_FACT_WORDS})")
            if texts and not any(normalise(fact) in t for t in texts):
                problems.append(f"{where}: fact '{fact}' does not occur in any gold entry")

    if qtype == "followup":
        if not history:
            problems.append(f"{where}: followup question needs a non-empty history")
    elif qtype in TYPES and history:
        problems.append(f"{where}: history must be [] for {qtype} questions")
    for i, turn in enumerate(history):
        if not (
            isinstance(turn, list)
            and len(turn) == 2
            and turn[0] in ROLES
            and isinstance(turn[1], str)
            and turn[1].strip()
        ):
            problems.append(f'{where}: history[{i}] must be ["user"|"assistant", non-empty text]')
    if history and isinstance(history[-1], list) and history[-1][:1] == ["user"]:
        problems.append(f"{where}: history should end with an assistant turn")
    return problems


def check_file(
    path: Path, corpus: dict[str, str], norm_text: dict[str, str], seen_ids: dict[str, str]
) -> tuple[Counter, list[str]]:
    counts: Counter = Counter()
    problems: list[str] = []
    if not path.exists():
        return counts, [f"{path}: file not found"]
    prefix = path.stem
    questions: dict[str, str] = {}
    with path.open(encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            where = f"{path.name}:{lineno}"
            if not line.strip():
                problems.append(f"{where}: blank line")
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                problems.append(f"{where}: invalid JSON ({exc.msg})")
                continue
            if isinstance(rec, dict) and isinstance(rec.get("id"), str):
                where = f"{where} ({rec['id']})"
                if rec["id"] in seen_ids:
                    problems.append(f"{where}: duplicate id (first at {seen_ids[rec['id']]})")
                else:
                    seen_ids[rec["id"]] = f"{path.name}:{lineno}"
            if isinstance(rec, dict) and isinstance(rec.get("question"), str):
                key = normalise(rec["question"]) + "\x00" + json.dumps(rec.get("history"))
                if key in questions:
                    problems.append(f"{where}: same question as {questions[key]}")
                questions.setdefault(key, where)
            problems.extend(check_record(rec, where, prefix, corpus, norm_text))
            if isinstance(rec, dict):
                counts[rec.get("type") if rec.get("type") in TYPES else "?"] += 1
    return counts, problems


def resolve(arg: str) -> Path:
    """A path as given, or, failing that, relative to the repository root."""
    path = Path(arg)
    if not path.exists() and not path.is_absolute() and (ROOT / path).exists():
        return ROOT / path
    return path


def main(argv: list[str]) -> int:
    files = [resolve(a) for a in argv] or DEFAULT_FILES
    corpus = load_corpus()
    norm_text = {k: normalise(v) for k, v in corpus.items()}
    kinds = Counter(
        k.split(":", 1)[0] if ":" in k else ("abstract" if k.startswith("abs-") else "concept") for k in corpus
    )
    print(f"corpus: {len(corpus)} entries ({', '.join(f'{n} {k}' for k, n in sorted(kinds.items()))})")
    seen_ids: dict[str, str] = {}
    all_problems: list[str] = []
    total: Counter = Counter()
    for path in files:
        counts, problems = check_file(path, corpus, norm_text, seen_ids)
        total.update(counts)
        all_problems.extend(problems)
        summary = ", ".join(f"{t} {counts[t]}" for t in TYPES if counts[t])
        if counts["?"]:
            summary += f", unknown type {counts['?']}"
        print(f"{path.name}: {sum(counts.values())} questions ({summary or 'none'})")
    if len(files) > 1:
        print(f"total: {sum(total.values())} questions (" + ", ".join(f"{t} {total[t]}" for t in TYPES) + ")")
    for problem in all_problems:
        print("PROBLEM " + problem)
    if all_problems:
        print(f"{len(all_problems)} problem(s)")
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
