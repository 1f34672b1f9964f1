"""Scoring: one `QuestionResult` per question, then aggregates over any group of results.

Metric definitions are in `assistant.eval.metrics`; this module decides which metric is
applied to what (entry ids of `Answer.sources` for retrieval, of `Answer.citations` for
citations) and why a question counts as failed in the report.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from assistant.eval import metrics as m
from assistant.eval.gold import resolve_all
from assistant.eval.questions import Question
from assistant.figures import percentile
from assistant.types import Answer

RETRIEVAL_KEYS = ("recall@1", "recall@5", "recall@10", "mrr@10", "ndcg@10")
ANSWER_KEYS = (
    "answered_with_gold",
    "answered_with_fact",
    "name_in_answer",
    "citation_precision",
    "citation_recall",
    "supported_share",
    "answered_only_precision",
    "fact_recall",
    "refusal_precision",
    "refusal_recall",
    "false_refusal_rate",
    "judged_llm",
)
# the metrics a baseline comparison guards; higher is better for each
HEADLINE = (
    "recall@5",
    "mrr@10",
    "citation_precision",
    "citation_recall",
    "supported_share",
    "fact_recall",
    "refusal_recall",
    "1-false_refusal_rate",
)
STAGES = ("retrieve", "generate", "verify", "total")

JudgeFn = Callable[[Question, Answer], float | None]


def retrieval_scores(ranked: list[str], gold: tuple[str, ...]) -> dict[str, float | None]:
    return {
        "recall@1": m.recall_at_k(ranked, gold, 1),
        "recall@5": m.recall_at_k(ranked, gold, 5),
        "recall@10": m.recall_at_k(ranked, gold, 10),
        "mrr@10": m.mrr_at_k(ranked, gold, 10),
        "ndcg@10": m.ndcg_at_k(ranked, gold, 10),
    }


@dataclass
class QuestionResult:
    """What one question got: the answer's entry ids and text, its scores, and why it failed."""

    question: Question
    refused: bool
    retrieved: list[str]
    cited: list[str]
    titles: dict[str, str]
    supported: list[bool]
    answer: str
    model: str
    timings_ms: dict[str, float]
    scores: dict[str, float | None]  # RETRIEVAL_KEYS and the citation/fact scores, by name
    judged_llm: float | None = None
    failures: list[str] = field(default_factory=list)
    modes: dict[str, dict[str, Any]] = field(default_factory=dict)  # retrieval alone, per mode

    def to_dict(self) -> dict[str, Any]:
        """The record as results.json stores it (flat, one key per score)."""
        q = self.question
        record: dict[str, Any] = {
            "id": q.id,
            "type": q.type,
            "intent": q.intent,
            "kind": q.kind,
            "split": q.split,
            "question": q.question,
            "history": [list(turn) for turn in q.history],
            "gold": list(q.gold),
            "facts": list(q.facts),
            "should_refuse": q.should_refuse,
            "refused": self.refused,
            "retrieved": self.retrieved,
            "cited": self.cited,
            "titles": self.titles,
            "supported": self.supported,
            "answer": self.answer,
            "model": self.model,
            "timings_ms": self.timings_ms,
            **self.scores,
            "judged_llm": self.judged_llm,
            "failures": self.failures,
        }
        if self.modes:
            record["modes"] = self.modes
        return record


def score_question(q: Question, answer: Answer, judge_fn: JudgeFn | None = None) -> QuestionResult:
    sources = sorted(answer.sources, key=lambda s: s.rank)
    titles: dict[str, str] = {}
    for source in sources:
        titles.setdefault(source.entry_id, source.title)
    for citation in answer.citations:
        titles.setdefault(citation.entry_id, citation.title)
    retrieved = resolve_all((s.entry_id for s in sources), q.gold)  # a file's sections count once as that file
    cited = resolve_all((c.entry_id for c in answer.citations), q.gold)
    judged = None
    if judge_fn is not None and q.gold:
        judged = 0.0 if answer.refused else judge_fn(q, answer)
    result = QuestionResult(
        question=q,
        refused=answer.refused,
        retrieved=retrieved,
        cited=cited,
        titles=titles,
        supported=[c.supported for c in answer.citations],
        answer=answer.text,
        model=answer.model,
        timings_ms={k: float(v) for k, v in answer.timings.items()},
        scores={
            **retrieval_scores(retrieved, q.gold),
            "citation_precision": m.citation_precision(cited, q.gold),
            "citation_recall": m.citation_recall(cited, q.gold),
            "supported_share": m.supported_share(answer.citations),
            "fact_recall": m.fact_recall(answer.text, q.facts),
            "answered_with_gold": m.answered_with_gold(answer.refused, cited, q.gold),
            "answered_with_fact": m.answered_with_fact(answer.refused, cited, q.gold, answer.text, q.facts),
            "name_in_answer": m.fact_recall(answer.text, q.facts) if q.intent == "name" else None,
        },
        judged_llm=judged,
    )
    result.failures = failures(result)
    return result


def failures(r: QuestionResult) -> list[str]:
    """Why a question counts as failed in the report; empty when it passed."""
    q = r.question
    if q.should_refuse:
        return [] if r.refused else ["answered a question it should have refused"]
    out = ["refused an answerable question"] if r.refused else []
    checks = (
        ("gold not retrieved in top 5", [g for g in q.gold if g not in r.retrieved[:5]]),
        ("cited non-gold", [c for c in r.cited if c not in q.gold]),
        ("gold not cited", [g for g in q.gold if g not in r.cited]),
        ("missed facts", [f for f in q.facts if m.normalise(f) not in m.normalise(r.answer)]),
    )
    return out + [f"{label}: {', '.join(items)}" for label, items in checks if items]


def latency(results: list[QuestionResult]) -> dict[str, dict[str, float | None]]:
    stages = {s for r in results for s in r.timings_ms}
    ordered = [s for s in STAGES if s in stages] + sorted(stages - set(STAGES))
    out = {}
    for stage in ordered:
        values = [r.timings_ms[stage] for r in results if stage in r.timings_ms]
        out[stage] = {"p50": percentile(values, 50), "p95": percentile(values, 95)}
    return out


def aggregate(results: list[QuestionResult]) -> dict[str, Any]:
    """The metrics of a group of questions (overall, one type, one intent)."""
    refusal = m.refusal_scores((r.question.should_refuse, r.refused) for r in results)

    def mean(key: str) -> float | None:
        return m.mean_defined(r.scores[key] for r in results)

    out: dict[str, Any] = {
        "n": len(results),
        "n_answerable": sum(not r.question.should_refuse for r in results),
        "n_refuse": sum(r.question.should_refuse for r in results),
    }
    out.update({k: mean(k) for k in RETRIEVAL_KEYS})
    out.update(
        {
            "citation_precision": mean("citation_precision"),
            "citation_recall": mean("citation_recall"),
            "supported_share": m.supported_share(flag for r in results for flag in r.supported),
            "answered_only_precision": m.answered_only_precision(
                (r.question.should_refuse, r.refused, r.scores["citation_precision"]) for r in results
            ),
            "fact_recall": mean("fact_recall"),
            "answered_with_gold": mean("answered_with_gold"),
            "answered_with_fact": mean("answered_with_fact"),
            "name_in_answer": mean("name_in_answer"),
            "refusal_precision": refusal["precision"],
            "refusal_recall": refusal["recall"],
            "false_refusal_rate": refusal["false_refusal_rate"],
            "judged_llm": m.mean_defined(r.judged_llm for r in results),
            "latency_ms": latency(results),
        }
    )
    return out


def headline(overall: dict[str, Any]) -> dict[str, float | None]:
    """The values of the HEADLINE metrics in an overall aggregate."""
    values = {k: overall.get(k) for k in HEADLINE[:-1]}
    frr = overall.get("false_refusal_rate")
    values["1-false_refusal_rate"] = None if frr is None else 1.0 - frr
    return values


def by_mode(results: Iterable[QuestionResult], modes: list[str]) -> dict[str, dict[str, Any]]:
    """Mean retrieval scores per mode over the answerable questions scored in `modes`."""
    answerable = [r for r in results if r.question.gold]
    return {
        mode: {
            "n": len(answerable),
            **{k: m.mean_defined(r.modes[mode][k] for r in answerable) for k in RETRIEVAL_KEYS},
        }
        for mode in modes
    }
