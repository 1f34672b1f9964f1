"""The UI on a team's own documents: it speaks of documents, and its example questions are answered.

Three knowledges: the shipped seed pack, the wiki of `test_documents` (Markdown, text, HTML, PDF) and
a runbook folder written here whose headings say how to do things. Real readers, a real Chroma and
the offline model; each example button's question is asked and must be answered from the knowledge.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_documents import write_wiki

from assistant import Assistant, Settings
from ui.examples import example_questions, heading_question
from ui.handlers import ChatHandlers

RUNBOOKS = {
    "agent.md": """# Metrics agent

The metrics agent ships node metrics to the central store every 15 seconds.

## Install the agent

Install the agent with `apt install metrics-agent` on every GPU node, then enable the service with
`systemctl enable --now metrics-agent`. The agent needs port 9100 open to the scraper.

## Rotating the logs

The agent writes to /var/log/metrics-agent. Logs are rotated daily by logrotate and kept for 14 days.
""",
    "queues.md": """# Job queues

## What is a queue?

A queue is a named list of jobs waiting for GPUs; the scheduler takes jobs from the queue in priority order.
To drain a queue, stop new submissions first.

## How to drain a queue

Run `qctl drain research` to stop new submissions to the research queue; running jobs finish normally.
To resume the queue, run `qctl resume research`.
""",
}


def write_runbooks(folder: Path) -> Path:
    folder.mkdir(parents=True)
    for name, text in RUNBOOKS.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def indexed(knowledge: Path, home: Path) -> Assistant:
    bot = Assistant(Settings(home=home, knowledge=(knowledge,), model="extractive"), auto_index=False)
    bot.index(progress=False)
    return bot


@pytest.mark.parametrize("corpus", ["seed", "wiki", "runbooks"])
def test_example_questions_are_answered_from_the_knowledge(corpus: str, tmp_path: Path, seed_settings) -> None:
    if corpus == "seed":
        bot = Assistant(seed_settings)
    elif corpus == "wiki":
        bot = indexed(write_wiki(tmp_path / "wiki"), tmp_path / "home")
    else:
        bot = indexed(write_runbooks(tmp_path / "runbooks"), tmp_path / "home")
    questions = example_questions(bot.entries.values())
    assert len(questions) >= 2, questions
    for question in questions:
        answer = bot.ask(question)
        assert not answer.refused, (question, answer.text)
        assert any(c.supported for c in answer.citations), (question, answer.text)


def test_headings_become_the_questions_a_reader_would_ask() -> None:
    written = " to install the agent to rotate logs to drain a queue the queue to use "
    assert heading_question("Install the agent", written) == "How do I install the agent?"
    assert heading_question("Rotating the logs", written) == "How do I rotate the logs?"
    assert heading_question("How to drain a queue", written) == "How do I drain a queue?"
    assert heading_question("What is a queue?", written) == "What is a queue?"
    assert heading_question("Queue Overview", written) is None  # a name, not a task
    assert heading_question("What Feast is not?", written) is None


def test_header_and_filter_speak_of_documents(tmp_path: Path) -> None:
    bot = indexed(write_runbooks(tmp_path / "runbooks"), tmp_path / "home")
    handlers = ChatHandlers(bot)
    header = handlers.header()
    assert "Answers from your documents" in header
    assert "concept" not in header.lower() and "paper" not in header.lower()
    assert not handlers.offers_filter()  # Concepts / Abstracts would filter out everything


def test_header_on_the_pack_names_its_kinds(seed_settings) -> None:
    handlers = ChatHandlers(Assistant(seed_settings))
    assert "Answers from concept pages and paper abstracts" in handlers.header()
    assert handlers.offers_filter()
