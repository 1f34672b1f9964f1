"""Evaluation runner: question sets -> answers -> metrics -> console table, JSON, Markdown, chart.

``assistant eval`` calls :func:`run`. Retrieval is scored on the entry ids of ``Answer.sources``
(and, per retrieval mode, of ``Assistant.search``); citations, refusals and facts on the answer.
Metric definitions live in :mod:`assistant.metrics`. Everything is ordered as the question file,
the type list and the mode list are, so two runs on the same data give identical files.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assistant import metrics as m
from assistant.errors import AssistantError, KnowledgeError
from assistant.eval_report import (
    HEADLINE,
    JUDGE_LABEL,
    QUESTION_TYPES,
    RETRIEVAL_KEYS,
    STAGES,
    console,
    plot_recall,
    report_md,
)
from assistant.prompts import render
from assistant.settings import RETRIEVAL_MODES, Settings
from assistant.types import Answer

_JUDGE_WORDS = {"correct": 1.0, "partially": 0.5, "incorrect": 0.0}

AskFn = Callable[[str, list[tuple[str, str]]], Answer]
SearchFn = Callable[[str], list[str]]


@dataclass(frozen=True)
class Question:
    """One line of a question set; ``refuse`` questions have no gold and should be refused."""

    id: str
    question: str
    type: str
    gold: tuple[str, ...] = ()
    facts: tuple[str, ...] = ()
    history: tuple[tuple[str, str], ...] = ()

    @property
    def should_refuse(self) -> bool:
        return self.type == "refuse"


JudgeFn = Callable[[Question, Answer], "float | None"]


@dataclass
class EvalResult:
    """Per-question records plus aggregates overall, per question type and per retrieval mode."""

    records: list[dict[str, Any]]
    overall: dict[str, Any]
    by_type: dict[str, dict[str, Any]]
    by_mode: dict[str, dict[str, Any]]


def _strings(obj: dict[str, Any], key: str) -> tuple[str, ...]:
    value = obj.get(key) or []
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ValueError(f'expected "{key}" to be a list of non-empty strings')
    return tuple(dict.fromkeys(v.strip() for v in value))


def _parse_question(obj: Any) -> Question:
    if not isinstance(obj, dict):
        raise ValueError("expected a JSON object with id, question, type, gold, facts, history")
    bad = [k for k in ("id", "question", "type") if not isinstance(obj.get(k), str) or not obj[k].strip()]
    if bad:
        raise ValueError(f"expected non-empty string field(s): {', '.join(bad)}")
    qtype, gold = obj["type"], _strings(obj, "gold")
    if qtype not in QUESTION_TYPES:
        raise ValueError(f"type {qtype!r} is not one of {', '.join(QUESTION_TYPES)}")
    history = obj.get("history") or []
    if not isinstance(history, list) or not all(
        isinstance(t, list) and len(t) == 2 and t[0] in ("user", "assistant") and isinstance(t[1], str) for t in history
    ):
        raise ValueError('expected "history" to be a list of ["user"|"assistant", text] pairs')
    if qtype == "refuse" and gold:
        raise ValueError("a refuse question must have an empty gold list")
    if qtype != "refuse" and not gold:
        raise ValueError(f"a {qtype} question needs at least one gold entry id")
    if qtype == "followup" and not history:
        raise ValueError("a followup question needs a history of earlier turns")
    return Question(
        obj["id"].strip(),
        obj["question"].strip(),
        qtype,
        gold,
        _strings(obj, "facts"),
        tuple((role, text) for role, text in history),
    )


def load_questions(path: str | Path) -> list[Question]:
    """Read a JSON Lines question set; a bad line raises KnowledgeError naming file and line."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise AssistantError(f"Cannot read question file {path} ({exc.strerror}) - pass --questions FILE") from None
    questions: list[Question] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            question = _parse_question(json.loads(line))
        except json.JSONDecodeError as exc:
            expected = f"expected one JSON object per line ({exc.msg})"
            raise KnowledgeError(str(path), number, expected) from None
        except ValueError as exc:
            raise KnowledgeError(str(path), number, str(exc)) from None
        if question.id in seen:
            expected = f"a unique id, but {question.id!r} is already on line {seen[question.id]}"
            raise KnowledgeError(str(path), number, expected)
        seen[question.id] = number
        questions.append(question)
    if not questions:
        raise AssistantError(f"Question file {path} has no questions - add one JSON object per line")
    return questions


def _retrieval(ranked: Sequence[str], gold: Sequence[str]) -> dict[str, float | None]:
    return {
        "recall@1": m.recall_at_k(ranked, gold, 1),
        "recall@5": m.recall_at_k(ranked, gold, 5),
        "recall@10": m.recall_at_k(ranked, gold, 10),
        "mrr@10": m.mrr_at_k(ranked, gold, 10),
        "ndcg@10": m.ndcg_at_k(ranked, gold, 10),
    }


def _failures(r: dict[str, Any]) -> list[str]:
    """Why a question counts as failed in the report; empty when it passed."""
    if r["should_refuse"]:
        return [] if r["refused"] else ["answered a question it should have refused"]
    out = ["refused an answerable question"] if r["refused"] else []
    checks = (
        ("gold not retrieved in top 5", [g for g in r["gold"] if g not in r["retrieved"][:5]]),
        ("cited non-gold", [c for c in r["cited"] if c not in r["gold"]]),
        ("gold not cited", [g for g in r["gold"] if g not in r["cited"]]),
        ("missed facts", [f for f in r["facts"] if m.normalise(f) not in m.normalise(r["answer"])]),
    )
    return out + [f"{label}: {', '.join(items)}" for label, items in checks if items]


def _record(q: Question, answer: Answer, judge_fn: JudgeFn | None) -> dict[str, Any]:
    sources = sorted(answer.sources, key=lambda s: s.rank)
    titles: dict[str, str] = {}
    for item in [*sources, *answer.citations]:
        titles.setdefault(item.entry_id, item.title)
    retrieved = m.dedupe(s.entry_id for s in sources)
    cited = m.dedupe(c.entry_id for c in answer.citations)
    judged = None
    if judge_fn is not None and q.gold:
        judged = 0.0 if answer.refused else judge_fn(q, answer)
    record: dict[str, Any] = {
        "id": q.id,
        "type": q.type,
        "question": q.question,
        "history": [list(t) for t in q.history],
        "gold": list(q.gold),
        "facts": list(q.facts),
        "should_refuse": q.should_refuse,
        "refused": answer.refused,
        "retrieved": retrieved,
        "cited": cited,
        "titles": titles,
        "supported": [c.supported for c in answer.citations],
        "answer": answer.text,
        "model": answer.model,
        "timings_ms": {k: float(v) for k, v in answer.timings.items()},
        **_retrieval(retrieved, q.gold),
        "citation_precision": m.citation_precision(cited, q.gold),
        "citation_recall": m.citation_recall(cited, q.gold),
        "supported_share": m.supported_share(answer.citations),
        "fact_recall": m.fact_recall(answer.text, q.facts),
        "judged_llm": judged,
    }
    record["failures"] = _failures(record)
    return record


def _latency(records: list[dict[str, Any]]) -> dict[str, dict[str, float | None]]:
    stages = {s for r in records for s in r["timings_ms"]}
    ordered = [s for s in STAGES if s in stages] + sorted(stages - set(STAGES))
    out = {}
    for stage in ordered:
        values = [r["timings_ms"][stage] for r in records if stage in r["timings_ms"]]
        out[stage] = {"p50": m.percentile(values, 50), "p95": m.percentile(values, 95)}
    return out


def _aggregate(records: list[dict[str, Any]]) -> dict[str, Any]:
    refusal = m.refusal_scores((r["should_refuse"], r["refused"]) for r in records)
    mean = {
        k: m.mean_defined(r[k] for r in records)
        for k in (*RETRIEVAL_KEYS, "citation_precision", "citation_recall", "fact_recall", "judged_llm")
    }
    out: dict[str, Any] = {
        "n": len(records),
        "n_answerable": sum(not r["should_refuse"] for r in records),
        "n_refuse": sum(r["should_refuse"] for r in records),
    }
    out.update({k: mean[k] for k in RETRIEVAL_KEYS})
    out.update(
        {
            "citation_precision": mean["citation_precision"],
            "citation_recall": mean["citation_recall"],
            "supported_share": m.supported_share(f for r in records for f in r["supported"]),
            "answered_only_precision": m.answered_only_precision(
                (r["should_refuse"], r["refused"], r["citation_precision"]) for r in records
            ),
            "fact_recall": mean["fact_recall"],
            "refusal_precision": refusal["precision"],
            "refusal_recall": refusal["recall"],
            "false_refusal_rate": refusal["false_refusal_rate"],
            "judged_llm": mean["judged_llm"],
            "latency_ms": _latency(records),
        }
    )
    return out


def evaluate(
    questions: Sequence[Question],
    ask_fn: AskFn,
    *,
    modes_search: dict[str, SearchFn] | None = None,
    judge_fn: JudgeFn | None = None,
) -> EvalResult:
    """Ask every question, score it, and score retrieval alone for each mode in ``modes_search``."""
    records = [_record(q, ask_fn(q.question, list(q.history)), judge_fn) for q in questions]
    by_mode: dict[str, dict[str, Any]] = {}
    answerable = [(q, r) for q, r in zip(questions, records, strict=True) if q.gold]
    for mode, search in (modes_search or {}).items():
        for q, r in answerable:
            ranked = m.dedupe(search(q.question))
            r.setdefault("modes", {})[mode] = {"retrieved": ranked[:10], **_retrieval(ranked, q.gold)}
        by_mode[mode] = {
            "n": len(answerable),
            **{k: m.mean_defined(r["modes"][mode][k] for _, r in answerable) for k in RETRIEVAL_KEYS},
        }
    by_type = {t: _aggregate(rs) for t in QUESTION_TYPES if (rs := [r for r in records if r["type"] == t])}
    return EvalResult(records, _aggregate(records), by_type, by_mode)


def headline(overall: dict[str, Any]) -> dict[str, float | None]:
    """The metrics a baseline comparison guards; higher is better for each."""
    values = {k: overall.get(k) for k in HEADLINE[:-1]}
    frr = overall.get("false_refusal_rate")
    values["1-false_refusal_rate"] = None if frr is None else 1.0 - frr
    return values


def compare(baseline: dict[str, Any], current: dict[str, Any], max_drop: float) -> list[dict[str, Any]]:
    """Headline metrics side by side; ``failed`` when one fell by more than ``max_drop``."""
    old, new = headline(baseline), headline(current)
    rows = []
    for key in HEADLINE:
        drop = None if old[key] is None or new[key] is None else old[key] - new[key]
        rows.append(
            {
                "metric": key,
                "baseline": old[key],
                "current": new[key],
                "drop": drop,
                "failed": drop is not None and drop > max_drop + 1e-9,
            }
        )
    return rows


def _judge_score(reply: str) -> float | None:
    found = re.search(r"\b(incorrect|partially|correct)\b", reply.lower())
    return _JUDGE_WORDS[found.group(1)] if found else None


def make_judge(settings: Settings) -> tuple[JudgeFn | None, str]:
    """An LLM judge for openai: models (offline models cannot grade themselves), and a note why not."""
    name = settings.resolved_model
    if not name.startswith("openai:"):
        return None, f"skipped: needs an openai: model, not {name}"
    from assistant.models import make_chat_model

    chat = make_chat_model(settings)

    def judge_fn(q: Question, answer: Answer) -> float | None:
        prompt = render("judge", question=q.question, facts="; ".join(q.facts) or "(none listed)", answer=answer.text)
        try:
            reply = chat.invoke(prompt)
        except Exception:  # an optional score must not sink the run; None marks it
            return None
        return _judge_score(str(getattr(reply, "content", reply)))

    return judge_fn, f"graded by {name}"


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
            "refusal_threshold": settings.refusal_threshold,
            "chunk_tokens": settings.chunk_tokens,
            "knowledge": [str(p) for p in settings.knowledge],
        },
        "questions_file": str(questions_path),
        "counts": {
            "total": len(records),
            "answerable": result.overall["n_answerable"],
            "refuse": result.overall["n_refuse"],
            "by_type": {t: g["n"] for t, g in result.by_type.items()},
        },
        "judge": {"label": JUDGE_LABEL, "enabled": judge_enabled, "note": judge_note},
        "headline": headline(result.overall),
        "metrics": {"overall": result.overall, "by_type": result.by_type, "by_mode": result.by_mode},
        "baseline": None
        if baseline is None
        else {"path": str(baseline), "max_drop": max_drop, "comparison": comparison},
        "questions": records,
    }


def _default_factory(settings: Settings) -> Any:
    from assistant import Assistant  # imported late: evaluate must import without the full stack

    return Assistant(settings)


def _load_baseline(path: str | Path) -> dict[str, Any]:
    path = Path(path)
    path = path / "results.json" if path.is_dir() else path
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        data["metrics"]["overall"]
    except (OSError, ValueError, KeyError, TypeError):
        raise AssistantError(
            f"Baseline {path} is not a results.json from assistant eval - pass the results.json of an earlier run"
        ) from None
    return data


def run(
    settings: Settings,
    questions_path: str | Path,
    out_dir: str | Path,
    *,
    modes: Sequence[str] = RETRIEVAL_MODES,
    baseline: str | Path | None = None,
    max_drop: float = 0.02,
    assistant_factory: Callable[[Settings], Any] | None = None,
    judge: bool = False,
) -> int:
    """Evaluate, write results.json, report.md and recall.png to ``out_dir``; 1 on a regression."""
    questions = load_questions(questions_path)
    base = _load_baseline(baseline) if baseline is not None else None
    factory = assistant_factory or _default_factory
    main = factory(settings)
    searches: dict[str, SearchFn] = {}
    for mode in modes:
        if mode == "langchain":  # the plain LangChain recipe on the same knowledge, as a yardstick
            from assistant.baseline import LangChainRecipe

            searches[mode] = LangChainRecipe(settings).search_ids
            continue
        bot = main if mode == settings.retrieval_mode else factory(settings.with_(retrieval_mode=mode))
        searches[mode] = lambda q, bot=bot: [s.entry_id for s in bot.search(q, k=10)]
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
