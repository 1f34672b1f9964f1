"""`assistant eval` on a team's own documents: gold written as file paths or `file#section` anchors.

A real Assistant over the Markdown / text / HTML / PDF wiki of `test_documents`, a real Chroma and
the offline model; the question file names files, not entry ids, as a user writing one would.
"""

from __future__ import annotations

import json
from pathlib import Path

from test_documents import write_wiki

from assistant.eval import runner as ev
from assistant.eval.gold import covers, resolve_all
from assistant.eval.questions import load_questions
from assistant.settings import Settings

QUESTIONS = [
    {
        "id": "wiki-1",
        "question": "How long do checkpoints stay on scratch before it is wiped?",
        "type": "single",
        "kind": "number",
        "voice": "new hire",
        "gold": ["handbook.md"],
        "facts": ["30 days"],
        "history": [],
    },
    {
        "id": "wiki-2",
        "question": "What command drains a node before maintenance?",
        "type": "single",
        "kind": "howto",
        "gold": ["runbooks/drain.txt"],
        "facts": ["state=drain"],
        "history": [],
    },
    {
        "id": "wiki-3",
        "question": "Which priority do research jobs run at?",
        "type": "single",
        "kind": "number",
        "gold": ["handbook.md#scheduling"],
        "facts": ["priority 10"],
        "history": [],
    },
    {
        "id": "wiki-4",
        "question": "What is the price of an A100 node?",
        "type": "refuse",
        "kind": "unanswerable",
        "gold": [],
        "facts": [],
        "history": [],
    },
]


def test_gold_names_a_file_or_a_section_and_its_subsections() -> None:
    assert covers("doc:handbook.md#storage", "handbook.md")
    assert covers("doc:handbook.md#scheduling-priorities", "handbook.md#scheduling")
    assert not covers("doc:handbook.md#storage", "handbook.md#scheduling")
    assert not covers("doc:handbook.md.bak#top", "handbook.md")
    assert covers("arxiv:2501.01005", "arxiv:2501.01005")
    ids = ["doc:handbook.md#top", "doc:status.html#top", "doc:handbook.md#storage"]
    assert resolve_all(ids, ["handbook.md"]) == ["handbook.md", "doc:status.html#top"]  # a file counts once


def test_eval_scores_files_on_a_wiki(tmp_path: Path) -> None:
    wiki = write_wiki(tmp_path / "wiki")
    qfile = tmp_path / "wiki-questions.jsonl"
    qfile.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS), encoding="utf-8")
    assert [q.kind for q in load_questions(qfile)] == ["number", "howto", "number", "unanswerable"]
    settings = Settings(home=tmp_path / "home", knowledge=(wiki,), model="extractive")

    code = ev.run(settings, qfile, tmp_path / "out", modes=("hybrid", "langchain", "recipe-bm25"))

    data = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert code == 0
    records = {r["id"]: r for r in data["questions"]}
    for qid in ("wiki-1", "wiki-2", "wiki-3"):
        record = records[qid]
        assert record["recall@5"] == 1.0, record["retrieved"]
        assert record["gold"][0] in record["cited"], record["cited"]
        assert record["answered_with_fact"] == 1.0, record["answer"]
        assert record["modes"]["langchain"]["recall@5"] == 1.0
        assert record["modes"]["recipe-bm25"]["recall@5"] == 1.0
    assert records["wiki-4"]["answered_with_fact"] is None
    by_kind = data["metrics"]["by_kind"]
    assert list(by_kind) == ["number", "howto", "unanswerable"] and by_kind["number"]["n"] == 2
    assert "By kind" in (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
