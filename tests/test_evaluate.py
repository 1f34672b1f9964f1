"""The evaluation runner end to end, with a scripted fake assistant on a four-question set."""

from __future__ import annotations

import json
import math
import sys
import types
from pathlib import Path

import pytest

from assistant.errors import AssistantError, KnowledgeError
from assistant.eval import runner as ev
from assistant.eval.judge import judge_score
from assistant.eval.questions import Question, load_questions
from assistant.settings import Settings
from assistant.types import Answer, Citation, Source

QUESTIONS = [
    {"id": "q1", "question": "What is a GPU?", "type": "single", "gold": ["A"],
     "facts": ["graphics processing unit"], "history": []},
    {"id": "q2", "question": "Compare B and C", "type": "multi", "gold": ["B", "C"],
     "facts": ["fact b", "fact c"], "history": []},
    {"id": "q3", "question": "Best pizza in Rome?", "type": "refuse", "gold": [], "facts": [], "history": []},
    {"id": "q4", "question": "And how is it programmed?", "type": "followup", "gold": ["A"],
     "facts": ["kernels"], "history": [["user", "What is a GPU?"], ["assistant", "A GPU is ... [A]"]]},
]  # fmt: skip

TITLES = {i: f"Title {i}" for i in "ABCDEFX"}


def src(entry_id: str, rank: int) -> Source:
    return Source(entry_id, f"{entry_id}#{rank}", TITLES[entry_id], "concept", "text", 1.0 / rank, rank)


def cite(entry_id: str, supported: bool = True) -> Citation:
    return Citation(entry_id, TITLES[entry_id], "concept", None, "quote", supported)


# q1 perfect; q2 finds C only at rank 6 and cites an unsupported non-gold X; q3 correctly refused;
# q4 (answerable) wrongly refused.
ANSWERS = {
    "What is a GPU?": Answer(
        "What is a GPU?", "A GPU is a graphics processing unit [A].", [cite("A")], [src("A", 1), src("B", 2)],
        model="fake", timings={"retrieve": 10, "generate": 20, "total": 30},
    ),
    "Compare B and C": Answer(
        "Compare B and C", "B has fact B [B]; see also [X].", [cite("B"), cite("X", supported=False)],
        [src("X", 1), src("B", 2), src("X", 3), src("D", 4), src("E", 5), src("F", 6), src("C", 7)],
        model="fake", timings={"retrieve": 20, "generate": 40, "total": 60},
    ),
    "Best pizza in Rome?": Answer(
        "Best pizza in Rome?", "I don't know.", [], [src("D", 1)], refused=True,
        model="fake", timings={"retrieve": 30, "total": 30},
    ),
    "And how is it programmed?": Answer(
        "And how is it programmed?", "I could not find that.", [], [src("A", 1)], refused=True,
        model="fake", timings={"retrieve": 40, "total": 40},
    ),
}  # fmt: skip

SEARCH = {  # retrieval-only results per mode, by question
    "hybrid": {"What is a GPU?": ["A"], "Compare B and C": ["B", "C"], "And how is it programmed?": ["A"]},
    "dense": {"What is a GPU?": ["B", "A"], "Compare B and C": ["C", "C", "B"],
              "And how is it programmed?": ["A"]},
    "lexical": {},
}  # fmt: skip


class FakeAssistant:
    """Canned answers and per-mode search results; remembers what it was asked."""

    def __init__(self, settings: Settings, log: list[tuple]) -> None:
        self.mode, self.log = settings.retrieval_mode, log

    def ask(self, question: str, history: list[tuple[str, str]] | None = None) -> Answer:
        self.log.append(("ask", self.mode, question, history))
        return ANSWERS[question]

    def search(self, question: str, k: int = 8) -> list[Source]:
        self.log.append(("search", self.mode, question, k))
        return [src(i, n) for n, i in enumerate(SEARCH[self.mode].get(question, []), start=1)]


@pytest.fixture
def qfile(tmp_path: Path) -> Path:
    path = tmp_path / "questions.jsonl"
    path.write_text("\n".join(json.dumps(q) for q in QUESTIONS) + "\n\n", encoding="utf-8")
    return path


@pytest.fixture
def log() -> list[tuple]:
    return []


@pytest.fixture
def factory(log):
    built: list[str] = []

    def make(settings: Settings) -> FakeAssistant:
        built.append(settings.retrieval_mode)
        return FakeAssistant(settings, log)

    make.built = built
    return make


SETTINGS = Settings(home=Path("unused"), model="stub")


def run(qfile: Path, out: Path, factory, **kwargs) -> tuple[int, dict]:
    code = ev.run(SETTINGS, qfile, out, assistant_factory=factory, **kwargs)
    return code, json.loads((out / "results.json").read_text(encoding="utf-8"))


def test_results_json_numbers(qfile, tmp_path, factory, log):
    code, data = run(qfile, tmp_path / "out", factory)
    assert code == 0
    assert factory.built == ["hybrid", "dense", "lexical"]  # the main one is reused for its own mode
    asks = [entry for entry in log if entry[0] == "ask"]
    assert [a[1] for a in asks] == ["hybrid"] * 4
    assert asks[3][3] == [("user", "What is a GPU?"), ("assistant", "A GPU is ... [A]")]
    searches = [entry for entry in log if entry[0] == "search"]
    assert {s[3] for s in searches} == {10}
    assert "Best pizza in Rome?" not in {s[2] for s in searches}  # refuse questions skip retrieval

    assert data["counts"] == {"total": 4, "answerable": 3, "refuse": 1,
                              "by_type": {"single": 1, "multi": 1, "followup": 1, "refuse": 1}}  # fmt: skip
    assert data["settings"]["model"] == "stub" and data["settings"]["answer_models"] == ["fake"]
    assert data["questions_file"] == str(qfile)
    o = data["metrics"]["overall"]
    ndcg_q2 = (1 / math.log2(3) + 1 / math.log2(7)) / (1 + 1 / math.log2(3))
    expected = {
        "n": 4, "n_answerable": 3, "n_refuse": 1,
        "recall@1": 2 / 3, "recall@5": 2.5 / 3, "recall@10": 1.0, "mrr@10": 2.5 / 3,
        "ndcg@10": (2 + ndcg_q2) / 3,
        "citation_precision": 0.75, "citation_recall": 0.5, "supported_share": 2 / 3,
        "answered_only_precision": 0.75, "fact_recall": 0.5,
        "refusal_precision": 0.5, "refusal_recall": 1.0, "false_refusal_rate": 1 / 3, "judged_llm": None,
    }  # fmt: skip
    assert {k: o[k] for k in expected} == pytest.approx(expected)
    assert list(o["latency_ms"]) == ["retrieve", "generate", "total"]
    assert o["latency_ms"]["total"] == pytest.approx({"p50": 35.0, "p95": 57.0})
    assert o["latency_ms"]["generate"] == pytest.approx({"p50": 30.0, "p95": 39.0})

    by_type = data["metrics"]["by_type"]
    assert list(by_type) == ["single", "multi", "followup", "refuse"]
    assert by_type["multi"]["recall@5"] == 0.5 and by_type["multi"]["citation_precision"] == 0.5
    assert by_type["refuse"]["recall@5"] is None and by_type["refuse"]["refusal_recall"] == 1.0
    assert by_type["followup"]["false_refusal_rate"] == 1.0

    modes = data["metrics"]["by_mode"]
    assert list(modes) == ["hybrid", "dense", "lexical"]
    assert modes["hybrid"]["recall@1"] == pytest.approx(2.5 / 3) and modes["hybrid"]["recall@5"] == 1.0
    assert modes["dense"]["recall@1"] == pytest.approx(0.5)
    assert modes["dense"]["mrr@10"] == pytest.approx(2.5 / 3)
    assert modes["lexical"] == {"n": 3, "recall@1": 0.0, "recall@5": 0.0, "recall@10": 0.0,
                                "mrr@10": 0.0, "ndcg@10": 0.0}  # fmt: skip

    q2 = data["questions"][1]
    assert q2["retrieved"] == ["X", "B", "D", "E", "F", "C"]  # chunks of X collapse to one entry
    assert q2["cited"] == ["B", "X"] and q2["supported"] == [True, False]
    assert q2["modes"]["dense"]["retrieved"] == ["C", "B"]
    assert q2["failures"] == [
        "gold not retrieved in top 5: C", "cited non-gold: X", "gold not cited: C", "missed facts: fact c",
    ]  # fmt: skip
    assert data["questions"][0]["failures"] == [] and data["questions"][2]["failures"] == []
    assert data["questions"][3]["failures"][0] == "refused an answerable question"
    assert data["headline"]["1-false_refusal_rate"] == pytest.approx(2 / 3)
    assert data["baseline"] is None and data["judge"]["enabled"] is False


def test_report_lists_failed_questions_with_retrieved(qfile, tmp_path, factory, capsys):
    run(qfile, tmp_path / "out", factory)
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "## Failed questions (2 of 4)" in report
    assert "### q2 (multi): Compare B and C" in report and "### q4 (followup)" in report
    assert "### q1 " not in report and "### q3 " not in report
    section = report.split("### q2", 1)[1].split("###", 1)[0]
    assert "1. `X` Title X" in section and "6. `C` Title C (gold)" in section
    assert "- cited: `B` Title B (gold), `X` Title X" in section
    assert "> B has fact B [B]; see also [X]." in section
    assert "gold not retrieved in top 5: C" in section
    assert "| recall@5 |" in report and "| dense |" in report
    out = capsys.readouterr().out
    assert "By question type" in out and "Retrieval by mode" in out
    assert "judged (LLM)" not in out.split("\n", 1)[1]  # only the summary line mentions the judge


def test_recall_png_is_written(qfile, tmp_path, factory):
    run(qfile, tmp_path / "out", factory)
    png = (tmp_path / "out" / "recall.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 1000


def test_runs_are_deterministic(qfile, tmp_path, factory):
    _, first = run(qfile, tmp_path / "a", factory)
    _, second = run(qfile, tmp_path / "b", factory)
    assert first == second
    assert (tmp_path / "a" / "report.md").read_text() == (tmp_path / "b" / "report.md").read_text()


def _baseline(tmp_path: Path, source: dict, **overall) -> Path:
    data = json.loads(json.dumps(source))
    data["metrics"]["overall"].update(overall)
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("change", "code", "fell"),
    [
        ({}, 0, None),  # same numbers
        ({"recall@5": 2.5 / 3 + 0.01}, 0, None),  # within max_drop
        ({"recall@5": 2.5 / 3 + 0.02}, 0, None),  # exactly max_drop is allowed
        ({"recall@5": 2.5 / 3 + 0.05}, 1, "recall@5"),
        ({"citation_precision": 0.9}, 1, "citation_precision"),
        ({"false_refusal_rate": 0.2}, 1, "1-false_refusal_rate"),  # fewer false refusals before
        ({"recall@5": 0.1, "fact_recall": 0.0}, 0, None),  # improvements never fail
        ({"supported_share": None}, 0, None),  # undefined in the baseline: not compared
    ],
)
def test_baseline_comparison(qfile, tmp_path, factory, capsys, change, code, fell):
    _, current = run(qfile, tmp_path / "first", factory)
    baseline = _baseline(tmp_path, current, **change)
    capsys.readouterr()
    got, data = run(qfile, tmp_path / "second", factory, baseline=baseline, max_drop=0.02)
    assert got == code
    failed = [c["metric"] for c in data["baseline"]["comparison"] if c["failed"]]
    assert failed == ([fell] if fell else [])
    out = capsys.readouterr().out
    assert ("REGRESSION" in out) == bool(fell)
    if fell:
        assert f"REGRESSION {fell}:" in out
        assert "FELL" in (tmp_path / "second" / "report.md").read_text(encoding="utf-8")


def test_baseline_may_be_a_results_folder(qfile, tmp_path, factory):
    run(qfile, tmp_path / "first", factory)
    assert run(qfile, tmp_path / "second", factory, baseline=tmp_path / "first")[0] == 0


def test_bad_baseline_names_the_fix(qfile, tmp_path, factory):
    (tmp_path / "junk.json").write_text("[]", encoding="utf-8")
    with pytest.raises(AssistantError, match=r"not a results\.json"):
        ev.run(SETTINGS, qfile, tmp_path / "out", assistant_factory=factory, baseline=tmp_path / "junk.json")


GOOD = json.dumps(QUESTIONS[0])


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ('{"id": "x", "question": ', "expected one JSON object per line"),
        ("[1, 2]", "expected a JSON object"),
        ('{"id": "x", "type": "single", "gold": ["A"]}', "question"),
        ('{"id": "x", "question": "?", "type": "essay", "gold": ["A"]}', "is not one of"),
        ('{"id": "x", "question": "?", "type": "refuse", "gold": ["A"]}', "empty gold"),
        ('{"id": "x", "question": "?", "type": "single", "gold": []}', "at least one gold"),
        ('{"id": "x", "question": "?", "type": "single", "gold": "A"}', '"gold" to be a list'),
        ('{"id": "x", "question": "?", "type": "followup", "gold": ["A"], "history": [["bot", "hi"]]}',
         '"history"'),
        ('{"id": "x", "question": "?", "type": "followup", "gold": ["A"]}', "needs a history"),
        (GOOD, "already on line 1"),
    ],
)  # fmt: skip
def test_malformed_line_names_file_and_line(tmp_path, bad, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(f"{GOOD}\n\n{bad}\n", encoding="utf-8")
    with pytest.raises(KnowledgeError) as caught:
        load_questions(path)
    assert (caught.value.path, caught.value.line) == (str(path), 3)
    assert str(caught.value).startswith(f"{path}:3: ") and message in str(caught.value)


def test_missing_or_empty_question_file(tmp_path):
    with pytest.raises(AssistantError, match="--questions"):
        load_questions(tmp_path / "nope.jsonl")
    (tmp_path / "empty.jsonl").write_text("\n", encoding="utf-8")
    with pytest.raises(AssistantError, match="no questions"):
        load_questions(tmp_path / "empty.jsonl")


def test_load_questions_parses_fields(qfile):
    questions = load_questions(qfile)
    assert [q.id for q in questions] == ["q1", "q2", "q3", "q4"]
    assert questions[3].history == (("user", "What is a GPU?"), ("assistant", "A GPU is ... [A]"))
    assert questions[2].should_refuse and questions[2].gold == ()


def test_evaluate_with_judge_fn(qfile):
    seen = []

    def judge(q: Question, answer: Answer) -> float:
        seen.append(q.id)
        return 1.0

    result = ev.evaluate(load_questions(qfile), lambda q, h: ANSWERS[q], judge_fn=judge)
    assert seen == ["q1", "q2"]  # refused answerable q4 scores 0 without a call; q3 is not judged
    assert result.overall["judged_llm"] == pytest.approx(2 / 3)
    assert result.by_mode == {}


@pytest.mark.parametrize(
    ("reply", "score"),
    [("Correct", 1.0), ("Partially correct.", 0.5), ("INCORRECT", 0.0), ("no idea", None)],
)
def test_judge_reply_parsing(reply, score):
    assert judge_score(reply) == score


def test_judge_needs_an_openai_model(qfile, tmp_path, factory):
    _, data = run(qfile, tmp_path / "out", factory, judge=True)
    assert data["judge"]["enabled"] is False and "skipped" in data["judge"]["note"]
    assert data["metrics"]["overall"]["judged_llm"] is None


def test_judge_with_openai_model(qfile, tmp_path, factory, monkeypatch, capsys):
    prompts: list[str] = []

    class FakeChat:
        def invoke(self, prompt: str) -> types.SimpleNamespace:
            prompts.append(prompt)
            return types.SimpleNamespace(content="partially")

    fake_models = types.ModuleType("assistant.answer.models")
    fake_models.make_chat_model = lambda settings: types.SimpleNamespace(llm=FakeChat())
    monkeypatch.setitem(sys.modules, "assistant.answer.models", fake_models)
    settings = SETTINGS.with_(model="openai:gpt-4o-mini")
    ev.run(settings, qfile, tmp_path / "out", assistant_factory=factory, judge=True, modes=())
    data = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert len(prompts) == 2 and "What is a GPU?" in prompts[0] and "graphics processing unit" in prompts[0]
    assert data["judge"]["enabled"] is True
    assert data["metrics"]["overall"]["judged_llm"] == pytest.approx((0.5 + 0.5 + 0.0) / 3)
    assert "judged (LLM)" in capsys.readouterr().out.split("\n", 1)[1]
    assert "| judged (LLM) |" in (tmp_path / "out" / "report.md").read_text(encoding="utf-8")


def test_console_leads_with_answered_with_gold_and_says_what_fails(qfile, tmp_path, factory, capsys):
    _, data = run(qfile, tmp_path / "out", factory)
    lines = capsys.readouterr().out.splitlines()
    with_gold = [r for r in data["questions"] if r["answered_with_gold"]]
    assert lines[1] == (
        f"Answered with gold: {data['metrics']['overall']['answered_with_gold']:.3f} "
        f"({len(with_gold)} of 3 answerable questions answered, citing a gold entry)"
    )
    assert lines[2].startswith("Failed: 2 of 4 questions (") and "expected fact missing" in lines[2]
    assert lines[2].startswith(  # how often each kind of miss occurred (one question can have several)
        "Failed: 2 of 4 questions (gold not cited 2; missed facts 2; gold not retrieved in top 5 1; "
        "cited non-gold 1; refused an answerable question 1), each listed in report.md"
    )
    headline = lines[lines.index("Headline (overall)") + 3]  # title, header, rule, then the first row
    assert headline.split() == ["answered_with_gold", f"{data['metrics']['overall']['answered_with_gold']:.3f}"]
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "| answered_with_gold |" in report and "A question fails on any one miss" in report
