#!/usr/bin/env python3
"""How a generating model's answers fare, beside the extractive model's, on the same questions.

For each answerable question (gold entries, earlier turns passed as history) this streams an
answer through `Assistant.stream` and records: refused or not; at least one verified citation;
the share of the answer's sentences that keep a verified citation (an unverified marker is
removed from the text, so a sentence still carrying one is supported); the notes (token limit,
read cap, loop); the time to the first text delta and to the whole answer. It prints one table
and a benchmark line per model:

    ASSISTANT_HOME=.assistant-mlsys ASSISTANT_KNOWLEDGE=knowledge/mlsys \\
        python scripts/llm_answers.py --models extractive,local --limit 30

`local` starts the shipped model's server (assistant.answer.local_server, the `llm` extra) on a free
port for the run and stops it after; `openai:<name>` uses OPENAI_BASE_URL / OPENAI_API_KEY as set,
so a bigger model or another server is measured by changing the environment only. The index must
exist (`assistant index` with the same ASSISTANT_HOME and ASSISTANT_KNOWLEDGE).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from assistant import Answer, Assistant, Settings  # noqa: E402
from assistant.answer import local_server  # noqa: E402
from assistant.answer.chain import FALLBACK_NOTE  # noqa: E402
from assistant.errors import ModelError  # noqa: E402
from assistant.text import split_sentences  # noqa: E402
from assistant.verify.citations import find_markers  # noqa: E402

DEFAULT_QUESTIONS = ROOT / "knowledge" / "questions" / "realistic-dev5.jsonl"


@dataclass
class Row:
    id: str
    refused: bool = False
    error: str | None = None
    verified: bool = False  # at least one citation verified
    sentences: int = 0
    supported_sentences: int = 0
    gold_cited: bool = False
    first_token_s: float | None = None
    total_s: float = 0.0
    notes: list[str] = field(default_factory=list)
    fell_back: bool = False  # the extractive answer was shown in place of the reply
    text: str = ""  # the answer shown (its start)


def answerable(path: Path, limit: int, split: str | None) -> list[dict]:
    """`limit` answerable questions spread evenly over the file (singles, multi-entry and follow-ups)."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = [r for r in rows if r.get("gold") and (split is None or r.get("split") == split)]
    step = max(1, len(rows) // limit) if limit else 1
    return rows[::step][:limit] if limit else rows


def supported_sentences(answer: Answer) -> tuple[int, int]:
    """(sentences, sentences that keep a verified citation marker) of the final answer text."""
    sentences = [s for s in split_sentences(answer.text) if s.strip()]
    return len(sentences), sum(1 for s in sentences if find_markers(s))


def measure(bot: Assistant, question: dict) -> Row:
    row = Row(question["id"])
    history = [tuple(turn) for turn in question.get("history") or []]
    started = time.perf_counter()
    answer: Answer | None = None
    try:
        for part in bot.stream(question["question"], history):  # type: ignore[arg-type]
            if isinstance(part, Answer):
                answer = part
            elif part and row.first_token_s is None:
                row.first_token_s = time.perf_counter() - started
    except ModelError as error:
        row.error = str(error)
    row.total_s = time.perf_counter() - started
    if answer is None:
        return row
    row.refused = answer.refused
    row.verified = any(c.supported for c in answer.citations)
    row.gold_cited = bool({c.entry_id for c in answer.citations if c.supported} & set(question["gold"]))
    row.sentences, row.supported_sentences = supported_sentences(answer) if not answer.refused else (0, 0)
    row.notes = list(answer.notes)
    row.fell_back = FALLBACK_NOTE in answer.notes
    row.text = answer.text[:400]
    return row


def summary(name: str, rows: list[Row]) -> dict:
    answered = [r for r in rows if not r.refused and r.error is None]
    firsts = [r.first_token_s for r in rows if r.first_token_s is not None and not r.refused]
    totals = [r.total_s for r in answered]
    sentences = sum(r.sentences for r in answered)

    def share(count: int, of: int) -> float | None:
        return round(count / of, 3) if of else None

    def note(words: str) -> int:
        return sum(any(words in n for n in r.notes) for r in rows)

    return {
        "model": name,
        "questions": len(rows),
        "answered": len(answered),
        "errors": sum(r.error is not None for r in rows),
        "with_verified_citation": share(sum(r.verified for r in rows), len(rows)),
        "gold_cited_verified": share(sum(r.gold_cited for r in rows), len(rows)),
        "sentences_supported": share(sum(r.supported_sentences for r in answered), sentences),
        "first_token_median_s": round(statistics.median(firsts), 2) if firsts else None,
        "answer_median_s": round(statistics.median(totals), 2) if totals else None,
        "answer_max_s": round(max(totals), 2) if totals else None,
        "loops_stopped": note("began repeating itself"),
        "token_limit": note("-token limit"),
        "read_cap": note("characters; it was cut there"),
        "fell_back": sum(r.fell_back for r in rows),
    }


@contextlib.contextmanager
def model_settings(name: str, base: Settings, log_dir: Path) -> Iterator[Settings]:
    if name == "extractive":
        yield base.with_(model="extractive")
    elif name == "local":
        with local_server.running(log_dir / "llm-server.log") as (url, _):
            yield base.with_(model="openai:local", openai_base_url=url)
    elif name.startswith("openai:"):
        yield base.with_(model=name)
    else:
        raise SystemExit(f"Unknown model {name!r} - use extractive, local or openai:<model>")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--questions", type=Path, default=DEFAULT_QUESTIONS)
    parser.add_argument("--limit", type=int, default=30, help="answerable questions, spread over the file (0: all)")
    parser.add_argument("--split", help="only this split (calibration, test)")
    parser.add_argument("--models", default="extractive,local", help="comma-separated: extractive, local, openai:<m>")
    parser.add_argument("--context-tokens", type=int, help="context budget (default: Settings, 1,800)")
    parser.add_argument("--max-tokens", type=int, help="reply tokens asked (default: ASSISTANT_MAX_TOKENS, 800)")
    parser.add_argument(
        "--context-sentences", type=int, help="sentences of each entry in the context (default: Settings, 0: whole)"
    )
    parser.add_argument(
        "--fallback",
        action="store_true",
        help="the extractive answer where a reply keeps no verified citation (off: the figures are the model's own)",
    )
    parser.add_argument("--out", type=Path, help="write every row and the summaries as JSON")
    args = parser.parse_args(argv)

    questions = answerable(args.questions, args.limit, args.split)
    base = Settings.from_env().with_(extractive_fallback=args.fallback)
    if args.context_sentences is not None:
        base = base.with_(context_sentences=args.context_sentences)
    if args.context_tokens:
        base = base.with_(context_tokens=args.context_tokens)
    if args.max_tokens:
        base = base.with_(max_tokens=args.max_tokens)
    summaries, detail = [], {}
    with tempfile.TemporaryDirectory() as logs:
        for name in args.models.split(","):
            with model_settings(name.strip(), base, Path(logs)) as settings:
                bot = Assistant(settings)
                bot.search(questions[0]["question"])  # load the index and encoder before timing
                rows = []
                for number, question in enumerate(questions, 1):
                    rows.append(measure(bot, question))
                    r = rows[-1]
                    print(
                        f"{name} {number}/{len(questions)} {r.id}: refused={r.refused} verified={r.verified}"
                        f" sentences={r.supported_sentences}/{r.sentences} {r.total_s:.1f}s"
                        + (f" error={r.error}" if r.error else ""),
                        file=sys.stderr,
                    )
                summaries.append(summary(name, rows))
                detail[name] = [asdict(r) for r in rows]
    print(f"{args.questions.name}: {len(questions)} answerable questions")
    for s in summaries:
        print(
            f"bench llm-answers model={s['model']} answered={s['answered']}/{s['questions']}"
            f" verified_citation={s['with_verified_citation']} gold_verified={s['gold_cited_verified']}"
            f" sentences_supported={s['sentences_supported']} first_token_median={s['first_token_median_s']}s"
            f" answer_median={s['answer_median_s']}s answer_max={s['answer_max_s']}s loops={s['loops_stopped']}"
            f" token_limit={s['token_limit']} read_cap={s['read_cap']} fell_back={s['fell_back']} errors={s['errors']}"
        )
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"summaries": summaries, "rows": detail}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
