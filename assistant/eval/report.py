"""How an evaluation is shown: console tables, the Markdown report and the recall chart.

Pure functions of the results dict that `assistant.eval.runner.results_json` builds, so a
saved results.json can be re-rendered without re-running the questions.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from assistant.eval.judge import JUDGE_LABEL
from assistant.eval.scoring import ANSWER_KEYS, RETRIEVAL_KEYS
from assistant.figures import markdown_table


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "-"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def _tables(data: dict[str, Any]) -> list[tuple[str, list[str], list[list[str]]]]:
    """(title, header, rows) for the headline, per-type and per-mode tables, shared by console and report."""
    metrics, base = data["metrics"], data["baseline"]
    lead = ["answered_with_gold", _fmt(metrics["overall"].get("answered_with_gold"))]
    if base:
        head_rows = [
            [
                c["metric"],
                _fmt(c["current"]),
                _fmt(c["baseline"]),
                _fmt(c["drop"]),
                "FELL" if c["failed"] else "ok",
            ]
            for c in base["comparison"]
        ]
        tables = [
            (
                f"Headline (overall, vs baseline, max drop {base['max_drop']}; answered_with_gold shown, not guarded)",
                ["metric", "current", "baseline", "drop", "status"],
                [[*lead, "-", "-", ""], *head_rows],
            )
        ]
    else:
        head_rows = [[k, _fmt(v)] for k, v in data["headline"].items()]
        tables = [("Headline (overall)", ["metric", "value"], [lead, *head_rows])]
    groups = {**metrics["by_type"], "overall": metrics["overall"]}
    keys = ["n", "n_answerable", *RETRIEVAL_KEYS, *ANSWER_KEYS]
    if not data["judge"]["enabled"]:
        keys.remove("judged_llm")
    rows = [[JUDGE_LABEL if k == "judged_llm" else k, *(_fmt(g[k]) for g in groups.values())] for k in keys]
    for stage in metrics["overall"]["latency_ms"]:
        rows += [
            [f"{stage} {p} (ms)", *(_fmt(g["latency_ms"].get(stage, {}).get(p), 1) for g in groups.values())]
            for p in ("p50", "p95")
        ]
    # retrieval rows here are what the answer drew on (the follow-up condensed, concept pages preferred
    # for "what is X"); the by-mode table below searches the question as asked, so its figures differ
    tables.append(("By question type (retrieval: what the answer drew on)", ["metric", *groups], rows))
    if metrics.get("by_intent"):
        header = ["intent", "n", "answered_with_gold", "name_in_answer", "recall@5", "refused"]
        rows = [
            [
                intent,
                str(g["n"]),
                _fmt(g["answered_with_gold"]),
                _fmt(g["name_in_answer"]),
                _fmt(g["recall@5"]),
                _fmt(g["false_refusal_rate"] if g["n_answerable"] else g["refusal_recall"]),
            ]
            for intent, g in metrics["by_intent"].items()
        ]
        tables.append(("By intent (refused: false refusals, or refusal recall for unanswerable kinds)", header, rows))
    if metrics.get("by_kind"):
        header = ["kind", "n", "answered_with_fact", "answered_with_gold", "citation_recall", "recall@5", "refused"]
        rows = [
            [
                kind,
                str(g["n"]),
                _fmt(g["answered_with_fact"]),
                _fmt(g["answered_with_gold"]),
                _fmt(g["citation_recall"]),
                _fmt(g["recall@5"]),
                _fmt(g["false_refusal_rate"] if g["n_answerable"] else g["refusal_recall"]),
            ]
            for kind, g in metrics["by_kind"].items()
        ]
        tables.append(("By kind (the set's own labels; refused as by intent)", header, rows))
    if metrics["by_mode"]:
        header = ["mode", "n", *RETRIEVAL_KEYS]
        rows = [[mode, *(_fmt(v[k]) for k in header[1:])] for mode, v in metrics["by_mode"].items()]
        tables.append(
            (
                "Retrieval by mode (search only: the question as asked, no follow-up condensing or concept "
                "preference, answerable questions)",
                header,
                rows,
            )
        )
    return tables


def _text_table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows, strict=True)]

    def line(cells: list[str]) -> str:
        return "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        )

    return "\n".join([line(header), line(["-" * w for w in widths]), *(line(r) for r in rows)])


def _summary(data: dict[str, Any]) -> str:
    s, c = data["settings"], data["counts"]
    split = f" ({data['split']} split)" if data.get("split") else ""
    return (
        f"{c['total']} questions ({c['answerable']} answerable, {c['refuse']} to refuse) from "
        f"{data['questions_file']}{split} · model {s['resolved_model']} · retrieval {s['retrieval_mode']} · "
        f"{JUDGE_LABEL}: {data['judge']['note']}"
    )


# what a failed question is, since "25 of 51 failed" beside averages near 1.0 otherwise reads as a contradiction
FAILURE_RULE = (
    "a question fails on any one miss - refused when it should answer or answered when it should refuse, "
    "a gold entry not in the top 5 or not cited, a non-gold citation, or an expected fact missing from the "
    "answer text - so questions fail while the averages below stay high"
)


def _lead(data: dict[str, Any]) -> list[str]:
    """The two lines that come first: answered with gold, and how many failed and what failing means."""
    overall, questions = data["metrics"]["overall"], data["questions"]
    answerable = [r for r in questions if r["gold"]]
    with_gold = sum(1 for r in answerable if r.get("answered_with_gold"))
    failed = sum(1 for r in questions if r["failures"])
    reasons = Counter(reason.split(":")[0] for r in questions for reason in r["failures"])
    why = "; ".join(f"{reason} {n}" for reason, n in reasons.most_common())
    return [
        f"Answered with gold: {_fmt(overall.get('answered_with_gold'))} ({with_gold} of {len(answerable)} "
        "answerable questions answered, citing a gold entry)",
        f"Failed: {failed} of {len(questions)} questions{f' ({why})' if why else ''}, each listed in report.md: "
        f"{FAILURE_RULE}.",
    ]


def console(data: dict[str, Any]) -> str:
    """Plain aligned text tables for the terminal, led by answered-with-gold and the failure count."""
    parts = [_summary(data), *_lead(data)]
    for title, header, rows in _tables(data):
        parts += ["", title, _text_table(header, rows)]
    return "\n".join(parts)


def report_md(data: dict[str, Any]) -> str:
    """Markdown report: the tables, then every failed question with what was retrieved and cited."""
    lines = ["# Evaluation report", "", _summary(data), ""]
    for title, header, rows in _tables(data):
        lines += [f"## {title}", "", markdown_table(header, rows), ""]
    failed = [r for r in data["questions"] if r["failures"]]
    lines += [
        f"## Failed questions ({len(failed)} of {len(data['questions'])})",
        "",
        f"{FAILURE_RULE[0].upper()}{FAILURE_RULE[1:]}.",
        "",
    ]
    for r in failed:

        def named(i: str, r: dict[str, Any] = r) -> str:
            return f"`{i}` {r['titles'].get(i, '')}".rstrip() + (" (gold)" if i in r["gold"] else "")

        lines += [f"### {r['id']} ({r['type']}): {r['question']}", ""]
        if r["history"]:
            lines.append("- history: " + " / ".join(f"{role}: {text}" for role, text in r["history"]))
        lines += [
            f"- failed: {'; '.join(r['failures'])}",
            f"- gold: {', '.join(r['gold']) or 'none (should refuse)'}",
            f"- refused: {'yes' if r['refused'] else 'no'}",
            "- retrieved:",
        ]
        lines += [f"  {n}. {named(i)}" for n, i in enumerate(r["retrieved"][:10], start=1)] or ["  nothing"]
        lines += [f"- cited: {', '.join(named(i) for i in r['cited']) or 'nothing'}", "- answer:", ""]
        lines += [f"> {line}" for line in (r["answer"] or "(empty)").splitlines()] + [""]
    return "\n".join(lines)


def plot_recall(data: dict[str, Any], base: dict[str, Any] | None, path: Path) -> None:
    """Grouped bars of recall@1/5/10 per retrieval mode, plus the baseline run as one more group."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    keys = ("recall@1", "recall@5", "recall@10")
    groups = list(data["metrics"]["by_mode"].items())
    if not groups:
        groups = [(f"{data['settings']['retrieval_mode']} (answers)", data["metrics"]["overall"])]
    if base:
        mode = base.get("settings", {}).get("retrieval_mode", "")
        groups.append(
            (
                f"baseline {mode}".strip(),
                base["metrics"].get("by_mode", {}).get(mode) or base["metrics"]["overall"],
            )
        )
    fig = Figure(figsize=(max(5.0, 1.7 * len(groups) + 1.5), 3.6))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    width = 0.26
    for j, key in enumerate(keys):
        bars = ax.bar(
            [i + (j - 1) * width for i in range(len(groups))],
            [g.get(key) or 0.0 for _, g in groups],
            width,
            label=key,
        )
        ax.bar_label(bars, fmt="%.2f", fontsize=7)
    ax.set_xticks(range(len(groups)), [name for name, _ in groups])
    ax.set_ylim(0, 1.25)  # headroom above 1.0 for the value labels and the legend
    ax.set_yticks([0.0, 0.2, 0.4, 0.6, 0.8, 1.0])
    ax.set_ylabel("recall (answerable)")
    ax.set_title(f"Retrieval recall by mode ({data['counts']['answerable']} answerable questions)")
    ax.legend(loc="upper center", fontsize=7, ncols=3, frameon=False)
    fig.tight_layout()
    fig.savefig(path, dpi=120, metadata={"Software": None})
