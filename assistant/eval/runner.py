"""Evaluation runner: question sets -> answers -> scores -> console table, JSON, Markdown, chart.

`assistant eval` calls `run`. Retrieval is scored on the entry ids of `Answer.sources` (and, per
retrieval mode, of `Assistant.search`); citations, refusals and facts on the answer. Everything
is ordered as the question file, the type list and the mode list are, so two runs on the same
data give identical files.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from assistant.errors import AssistantError
from assistant.eval.gold import resolve_all
from assistant.eval.judge import JUDGE_LABEL, make_judge
from assistant.eval.questions import ANSWER_INTENTS, QUESTION_TYPES, REFUSE_INTENTS, Question, load_questions
from assistant.eval.report import console, plot_recall, report_md
from assistant.eval.scoring import (
    HEADLINE,
    JudgeFn,
    QuestionResult,
    aggregate,
    by_mode,
    headline,
    retrieval_scores,
    score_question,
)
from assistant.settings import RETRIEVAL_MODES, Settings
from assistant.types import Answer, Source

AskFn = Callable[[str, list[tuple[str, str]]], Answer]
SearchFn = Callable[[str], list[str]]


class Answering(Protocol):
    """What the runner needs of an assistant (tests pass a fake)."""

    def ask(self, question: str, history: list[tuple[str, str]] | None = None) -> Answer: ...

    def search(self, query: str, k: int = 8) -> list[Source]: ...


@dataclass
class EvalResult:
    """Per-question results plus aggregates overall, per question type and per retrieval mode."""

    results: list[QuestionResult]
    overall: dict[str, Any]
    by_type: dict[str, dict[str, Any]]
    by_mode: dict[str, dict[str, Any]]
    by_intent: dict[str, dict[str, Any]] = field(default_factory=dict)
    by_kind: dict[str, dict[str, Any]] = field(default_factory=dict)  # the question set's own `kind` labels

    @property
    def records(self) -> list[dict[str, Any]]:
        return [r.to_dict() for r in self.results]


def evaluate(
    questions: Sequence[Question],
    ask_fn: AskFn,
    *,
    modes_search: dict[str, SearchFn] | None = None,
    judge_fn: JudgeFn | None = None,
) -> EvalResult:
    """Ask every question, score it, and score retrieval alone for each mode in `modes_search`."""
    results = [score_question(q, ask_fn(q.question, list(q.history)), judge_fn) for q in questions]
    for mode, search in (modes_search or {}).items():
        for r in results:
            if r.question.gold:
                ranked = resolve_all(search(r.question.question), r.question.gold)
                r.modes[mode] = {"retrieved": ranked[:10], **retrieval_scores(ranked, r.question.gold)}
    by_type = {t: aggregate(rs) for t in QUESTION_TYPES if (rs := [r for r in results if r.question.type == t])}
    intents = [*ANSWER_INTENTS, *REFUSE_INTENTS]
    by_intent = {i: aggregate(rs) for i in intents if (rs := [r for r in results if r.question.intent == i])}
    kinds = dict.fromkeys(q.kind for q in questions if q.kind)
    by_kind = {k: aggregate([r for r in results if r.question.kind == k]) for k in kinds}
    modes = list(modes_search or {})
    return EvalResult(results, aggregate(results), by_type, by_mode(results, modes), by_intent, by_kind)


def compare(baseline: dict[str, Any], current: dict[str, Any], max_drop: float) -> list[dict[str, Any]]:
    """Headline metrics side by side; `failed` when one fell by more than `max_drop`."""
    old, new = headline(baseline), headline(current)
    rows = []
    for key in HEADLINE:
        before, after = old[key], new[key]
        drop = None if before is None or after is None else before - after
        rows.append(
            {
                "metric": key,
                "baseline": before,
                "current": after,
                "drop": drop,
                "failed": drop is not None and drop > max_drop + 1e-9,
            }
        )
    return rows


def results_json(
    settings: Settings,
    questions_path: str | Path,
    result: EvalResult,
    *,
    judge_note: str,
    judge_enabled: bool,
    baseline: str | Path | None,
    comparison: list[dict[str, Any]],
    max_drop: float,
    split: str | None = None,
) -> dict[str, Any]:
    """The results.json document: settings, counts, metrics, baseline comparison, every question."""
    records = result.records
    return {
        "settings": {
            "model": settings.model,
            "resolved_model": settings.resolved_model,
            "answer_models": sorted({r["model"] for r in records if r["model"]}),
            "embeddings": settings.embeddings,
            "retrieval_mode": settings.retrieval_mode,
            "top_k": settings.top_k,
            "refusal_threshold": settings.refusal.clear_miss,
            "chunk_tokens": settings.chunk_tokens,
            "knowledge": [str(p) for p in settings.knowledge],
        },
        "questions_file": str(questions_path),
        "split": split,
        "counts": {
            "total": len(records),
            "answerable": result.overall["n_answerable"],
            "refuse": result.overall["n_refuse"],
            "by_type": {t: g["n"] for t, g in result.by_type.items()},
        },
        "judge": {"label": JUDGE_LABEL, "enabled": judge_enabled, "note": judge_note},
        "headline": headline(result.overall),
        "metrics": {
            "overall": result.overall,
            "by_type": result.by_type,
            "by_mode": result.by_mode,
            "by_intent": result.by_intent,
            "by_kind": result.by_kind,
        },
        "baseline": None
        if baseline is None
        else {"path": str(baseline), "max_drop": max_drop, "comparison": comparison},
        "questions": records,
    }


def entry_ids_of(bot: Answering) -> SearchFn:
    """A search function giving the entry ids of `bot.search`'s top ten."""

    def search(query: str) -> list[str]:
        return [s.entry_id for s in bot.search(query, k=10)]

    return search


def _default_factory(settings: Settings) -> Answering:
    from assistant.assistant import Assistant  # imported late: the runner must import without the full stack

    return Assistant(settings)


def load_baseline(path: str | Path) -> dict[str, Any]:
    """A previous run's results.json (or the folder holding it), to compare against."""
    path = Path(path)
    path = path / "results.json" if path.is_dir() else path
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        data["metrics"]["overall"]
    except (OSError, ValueError, KeyError, TypeError):
        raise AssistantError(
            f"Baseline {path} is not a results.json from assistant eval - pass the results.json of an earlier run"
        ) from None
    return dict(data)


def run(
    settings: Settings,
    questions_path: str | Path,
    out_dir: str | Path,
    *,
    modes: Sequence[str] = RETRIEVAL_MODES,
    baseline: str | Path | None = None,
    max_drop: float = 0.02,
    assistant_factory: Callable[[Settings], Answering] | None = None,
    judge: bool = False,
    split: str | None = None,
) -> int:
    """Evaluate, write results.json, report.md and recall.png to `out_dir`; 1 on a regression."""
    questions = load_questions(questions_path, split)
    base = load_baseline(baseline) if baseline is not None else None
    factory = assistant_factory or _default_factory
    main = factory(settings)
    searches: dict[str, SearchFn] = {}
    recipe = None  # the plain LangChain recipe's splits, read once for both peers
    for mode in modes:
        if mode in ("langchain", "recipe-bm25"):
            from assistant.eval.langchain_recipe import LangChainRecipe, RecipeBM25

            recipe = recipe or LangChainRecipe(settings)
            # the recipe's vector search as a yardstick; BM25 alone on its splits, the lexical peer
            searches[mode] = recipe.search_ids if mode == "langchain" else RecipeBM25(recipe).search_ids
            continue
        bot = main if mode == settings.retrieval_mode else factory(settings.with_(retrieval_mode=mode))
        searches[mode] = entry_ids_of(bot)
    judge_fn, judge_note = make_judge(settings) if judge else (None, "not requested")

    def ask(question: str, history: list[tuple[str, str]]) -> Answer:
        return main.ask(question, history=history)

    result = evaluate(questions, ask, modes_search=searches, judge_fn=judge_fn)
    comparison = compare(base["metrics"]["overall"], result.overall, max_drop) if base else []
    data = results_json(
        settings,
        questions_path,
        result,
        judge_note=judge_note,
        judge_enabled=judge_fn is not None,
        baseline=baseline,
        comparison=comparison,
        max_drop=max_drop,
        split=split,
    )
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    (out / "report.md").write_text(report_md(data), encoding="utf-8")
    plot_recall(data, base, out / "recall.png")
    print(console(data))
    failed = [c for c in comparison if c["failed"]]
    for c in failed:
        print(
            f"REGRESSION {c['metric']}: {c['baseline']:.3f} -> {c['current']:.3f} "
            f"(fell {c['drop']:.3f}, more than {max_drop})"
        )
    return 1 if failed else 0
