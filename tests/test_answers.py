"""Cited answers end to end on the seed corpus: extractive (default), stub and openai paths."""

from __future__ import annotations

import pytest

from assistant import Answer, Assistant
from assistant.answer.models.text_reply import StubChatModel
from assistant.errors import AssistantError, ModelError
from assistant.text import split_sentences
from tests.fake_openai import CutOff, FakeOpenAI, Reply, Status

GPU_DEFINITION = "A processor designed for highly parallel workloads, widely used for tensor computation."
SERVERLESS = "abs-fad87d80f4"


def assert_quotes_are_entry_sentences(bot: Assistant, answer: Answer) -> None:
    for citation in answer.citations:
        entry = bot.entry(citation.entry_id)
        assert entry is not None
        assert citation.quote in split_sentences(entry.text), citation


def test_what_is_a_gpu_cites_the_concept_with_its_definition(seed_assistant: Assistant) -> None:
    answer = seed_assistant.ask("What is a GPU?")
    assert not answer.refused
    assert answer.citations[0].entry_id == "MLD-0472"
    assert answer.citations[0].quote == GPU_DEFINITION
    assert "[MLD-0472]" in answer.text
    assert answer.model == "extractive"
    assert {"retrieve", "generate", "verify", "total"} <= set(answer.timings)
    assert_quotes_are_entry_sentences(seed_assistant, answer)


def test_serverless_question_cites_the_serverlessllm_abstract(seed_assistant: Assistant) -> None:
    answer = seed_assistant.ask("How do I serve LLMs serverlessly with low latency?")
    assert not answer.refused
    assert SERVERLESS in [c.entry_id for c in answer.citations]
    assert_quotes_are_entry_sentences(seed_assistant, answer)


def test_off_topic_question_is_refused_without_citations(seed_assistant: Assistant) -> None:
    answer = seed_assistant.ask("What is the capital of France?")
    assert answer.refused
    assert answer.citations == []
    assert "cannot answer" in answer.text
    assert answer.sources, "the nearest entries are offered as suggestions"
    assert answer.sources[0].title in answer.text


def test_follow_up_is_answered_from_the_same_entry(seed_assistant: Assistant) -> None:
    first = seed_assistant.ask("What is a GPU?")
    history = [("user", "What is a GPU?"), ("assistant", first.text)]
    answer = seed_assistant.ask("and what caveat does it have?", history=history)
    assert not answer.refused
    assert [c.entry_id for c in answer.citations] == ["MLD-0472"]
    assert answer.citations[0].quote.startswith("Caveat: Available memory and supported operations")
    assert any("Searched for" in note for note in answer.notes)


def test_stream_yields_text_then_the_final_answer(seed_assistant: Assistant) -> None:
    parts = list(seed_assistant.stream("What is NCCL?"))
    assert isinstance(parts[-1], Answer)
    deltas = [p for p in parts[:-1] if isinstance(p, str)]
    assert len(deltas) > 1
    assert "NCCL" in "".join(deltas)
    assert parts[-1].citations[0].entry_id == "MLD-0472"


@pytest.mark.parametrize("question", ["", "   ", "\x00\x07"])
def test_empty_question_is_a_clear_error(seed_assistant: Assistant, question: str) -> None:
    with pytest.raises(AssistantError, match="empty"):
        seed_assistant.ask(question)


def test_long_question_is_trimmed_with_a_note(seed_assistant: Assistant) -> None:
    answer = seed_assistant.ask("What is a GPU? " + "padding " * 5000)
    assert any("longer than" in note for note in answer.notes)


def test_stub_model_broken_and_invented_citations_never_reach_the_user(seed_settings) -> None:
    stub = StubChatModel(
        replies=[
            "A GPU is a processor designed for highly parallel workloads [mld-0472]. "
            "It was invented on the moon [NOPE-1]. Paris is lovely [MLD-0472]."
        ]
    )
    bot = Assistant(seed_settings, model=stub)
    answer = bot.ask("What is a GPU?")
    assert "NOPE-1" not in answer.text
    # both flagged sentences are dropped: one cited an entry that does not exist, one an entry that does not say it
    assert answer.text == "A GPU is a processor designed for highly parallel workloads [MLD-0472]."
    assert "Unverified sentence removed - MLD-0472 does not support: Paris is lovely." in " ".join(answer.notes)
    assert [c.entry_id for c in answer.citations] == ["MLD-0472"]
    assert answer.citations[0].quote == GPU_DEFINITION
    prompt = stub.calls[0][-1].content
    assert "[1] GPU (concept)" in prompt and "Question: What is a GPU?" in prompt


def test_stub_reply_without_citations_is_noted(seed_settings) -> None:
    # with the extractive fallback off: the reply is shown as it is, noted (tests/test_answer_labels.py: on)
    bot = Assistant(seed_settings.with_(extractive_fallback=False), model=StubChatModel(replies=["GPUs are fast."]))
    answer = bot.ask("What is a GPU?")
    assert answer.citations == []
    assert any("No claim" in note for note in answer.notes)


def test_openai_path_streams_through_the_real_client(seed_settings) -> None:
    with FakeOpenAI() as server:
        server.script(Reply("A GPU is a processor designed for highly parallel workloads [MLD-0472]."))
        settings = seed_settings.with_(
            model="openai:test-model",
            openai_base_url=server.base_url,
            openai_api_key="sk-test-secret",
            max_retries=1,
            request_timeout=5,
        )
        bot = Assistant(settings)
        parts = list(bot.stream("What is a GPU?"))
        answer = parts[-1]
        assert isinstance(answer, Answer)
        assert answer.model == "openai:test-model"
        assert [c.entry_id for c in answer.citations] == ["MLD-0472"]
        assert len(parts) > 2, "the reply arrives as several deltas"
        path, headers, body = server.requests[-1]
        assert path.endswith("/chat/completions")
        assert headers["authorization"] == "Bearer sk-test-secret"
        assert body["stream"] is True and body["model"] == "test-model"
        assert "[1] GPU (concept)" in body["messages"][-1]["content"]  # the context labels entries by number


def test_openai_rate_limit_is_retried_and_a_cut_off_stream_is_a_clear_message(seed_settings) -> None:
    with FakeOpenAI() as server:
        settings = seed_settings.with_(
            model="openai:test-model",
            openai_base_url=server.base_url,
            openai_api_key="sk-test-secret",
            max_retries=1,
            request_timeout=5,
        )
        bot = Assistant(settings)
        server.script(Status(429, retry_after=0.05), Reply("A GPU is a processor [MLD-0472]."))
        assert bot.ask("What is a GPU?").citations[0].entry_id == "MLD-0472"
        server.script(CutOff("A GPU is a "))
        with pytest.raises(ModelError, match="cut off") as error:
            bot.ask("What is a GPU?")
        assert "sk-test-secret" not in str(error.value)
