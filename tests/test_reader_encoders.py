"""The sentence encoders the question is read with reach every reader: injected, nothing loads MiniLM.

The learned readers (value kind, intent, refusal) and the offline model's sentence choice encode the
question with `Reading.encoders`; `Assistant(encoders=...)` replaces them all. A readers' encoder whose
vectors are not MiniLM's width cannot feed weights fitted on MiniLM: the readers then abstain and the
patterns decide, rather than read noise.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from assistant import Assistant, SentenceEncoders, Settings
from assistant.answer import refusal_reader
from assistant.answer.refusal import Evidence
from assistant.index import embeddings
from assistant.index.chroma_index import Index
from assistant.question import intent_reader, value_kinds
from assistant.question.encoders import SHIPPED
from assistant.question.reading import Reading
from tests.conftest import write_glossary
from tests.fakes import FakeEmbeddings

RUNBOOK = """# GPU quota

The quota owner this quarter is Marcus Lindqvist. Ask him before you reserve more than 8 GPUs.

## Reserving GPUs

Reservations are made in the scheduler with the `--gres=gpu:N` flag and last at most 48 hours.
"""


def refuse_shipped_encoders(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any build of a shipped encoder by name fails the test."""

    def no_shipped(name: str, *args: object, **kwargs: object) -> embeddings.Embedder:
        raise AssertionError(f"the shipped encoder {name!r} was built although encoders were injected")

    monkeypatch.setattr(embeddings, "make_embedder", no_shipped)


def injected_assistant(
    knowledge: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Assistant, FakeEmbeddings, FakeEmbeddings]:
    """An extractive Assistant over `knowledge` indexed with a fake embedder, reading with injected readers'
    and closeness encoders (returned, to count what they encoded); a shipped encoder built fails the test."""
    settings = Settings(home=home, knowledge=(knowledge,), model="extractive")
    index_embedder, readers, closeness = FakeEmbeddings(), FakeEmbeddings(dims=32), FakeEmbeddings(dims=16)
    Index(settings, index_embedder).sync(progress=False)
    refuse_shipped_encoders(monkeypatch)
    bot = Assistant(settings, embedder=index_embedder, encoders=SentenceEncoders(readers, closeness), auto_index=False)
    return bot, readers, closeness


def test_injected_encoders_reach_every_reader(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    knowledge = tmp_path / "wiki"
    knowledge.mkdir()
    (knowledge / "gpu-quota.md").write_text(RUNBOOK, "utf-8")
    bot, readers, closeness = injected_assistant(knowledge, tmp_path / "home", monkeypatch)
    answer = bot.ask("Who owns the GPU quota this quarter?")

    assert "Marcus Lindqvist" in answer.text and not answer.refused
    assert readers.embedded >= 1  # the learned readers encoded the asking sentence with the injected encoder
    assert closeness.embedded == 0  # a section's sentences are chosen by their words (`section_meaning`)


def test_injected_closeness_weighs_a_concept_pages_sentences(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    knowledge = write_glossary(tmp_path / "glossary", {"overfitting", "learning rate", "batch size"})
    bot, _, closeness = injected_assistant(knowledge, tmp_path / "home", monkeypatch)
    answer = bot.ask("Why does my model do great on training data but badly on new data?")

    assert not answer.refused, answer.text
    assert closeness.embedded >= 1  # the offline model weighed a concept page's sentences with the injected one


def test_readers_abstain_on_vectors_of_another_width() -> None:
    foreign = SentenceEncoders(readers=FakeEmbeddings(dims=32), closeness=FakeEmbeddings(dims=16))
    question = "How much does an H100 cost per hour on the big clouds?"
    asking = Reading(question, encoders=foreign).asking

    assert value_kinds.read(asking, foreign) == ("", 0.0)
    assert intent_reader.read(asking, foreign) == ("", 0.0)
    assert refusal_reader.refuse_probability(asking, Evidence(confidence=0.5), foreign) is None
    # the patterns decide the value kind instead: a price is asked for
    assert value_kinds.asked_kind(question, encoders=foreign) == value_kinds.pattern_kind(question) == "price"


def test_a_reading_hands_its_encoders_to_the_words_typed() -> None:
    own = SentenceEncoders(readers=FakeEmbeddings(dims=32), closeness=FakeEmbeddings(dims=16))
    reading = Reading("What does its scheduler do? (about: Slurm)", typed="and its scheduler?", encoders=own)

    assert reading.as_asked.encoders is own
    assert Reading("What is a GPU?").encoders is SHIPPED
