"""Shop talk in a question also searches the words papers use: "cards" finds GPU, "Lambda-style" serverless."""

from __future__ import annotations

import re

import pytest

from assistant import Assistant
from assistant.question.user_terms import USER_TERMS, literature_terms, with_literature_terms
from assistant.text import any_phrase


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("we split prompt processing and token generation onto separate cards", {"prefill", "decode", "gpu"}),
        ("can we downclock each pool to cut the power bill?", {"dvfs", "frequency", "energy"}),
        ("serving on pay-per-invocation Lambda-style platforms", {"serverless"}),
        ("each phone trains on its own typing", {"mobile", "edge"}),
        ("the 4-bit build costs quality", {"quantization"}),
        ("we zeroed out half the weights, scattered rather than in blocks", {"pruning", "sparsity", "unstructured"}),
        ("the new hire's GPU boxes keep OOMing", {"node", "oom"}),
        ("a 2M-token prompt over 32 GPUs", {"long", "context"}),
        ("a tool that mimics the whole fleet in software", {"simulator", "cluster"}),
        ("a classifier that learns from one labeled photo", {"one-shot"}),
        # chat shorthand, written out as abstracts write it
        ("fn that turns raw scores into per-class probs", {"function", "probabilities"}),
        ("one schedule for attn/gate/experts/comm so grad sync hides", {"attention", "communication", "gradient"}),
        ("our python svc shares a proc with libtorch and perf tanks", {"service", "process", "performance"}),
        ("squeeze more tok/s out of offline jobs", {"throughput", "tokens"}),
    ],
)
def test_shop_talk_implies_the_literature_terms(question: str, expected: set[str]) -> None:
    assert expected <= set(literature_terms(question))


@pytest.mark.parametrize(
    "question",
    [
        "what is the peak GPU memory of this run?",  # peak memory, not a traffic peak
        "how long is the wall clock time per step?",
        "CLOCK thinks the block is cold",  # a cache replacement policy
        "what drives the cost of serving?",
    ],
)
def test_words_with_another_everyday_sense_imply_nothing_there(question: str) -> None:
    assert not {"bursty", "dvfs", "ssd"} & set(literature_terms(question))


def test_shorthand_is_matched_as_a_whole_word_only() -> None:
    assert not {"memory", "operators", "process", "library"} & set(
        literature_terms("keep a memo of the shops, the procedure and a liberal format")
    )
    assert "memory" in literature_terms("the KV mem blows up")


def test_terms_the_question_already_uses_are_not_repeated_and_plain_questions_are_unchanged() -> None:
    assert with_literature_terms("our GPU cards idle") == "our GPU cards idle gpus bubbles utilization"
    assert with_literature_terms("What is FlashAttention?") == "What is FlashAttention?"


def test_every_phrase_compiles_and_every_rule_adds_lower_case_words() -> None:
    for terms, phrases in USER_TERMS:
        assert terms == terms.lower() and terms.split() and phrases, terms
        for phrase in phrases:
            assert phrase == phrase.lower(), phrase
            re.compile(phrase)


def test_the_lexical_leg_finds_an_entry_through_a_word_the_question_never_says(seed_assistant: Assistant) -> None:
    """No word of the question is in the seed knowledge; "Lambda-style" implies "serverless", which is."""
    retriever = seed_assistant.retriever
    question = "pay-per-invocation Lambda"
    assert seed_assistant.retriever.index.lexical(question, 5) == []
    lexical = type(retriever)(retriever.index, seed_assistant.settings, mode="lexical")
    found = lexical.retrieve(question, k=3).sources
    assert found and "serverless" in found[0].text.lower()


def test_a_phrase_table_matches_whole_words_as_written() -> None:
    """`any_phrase`: phrases are words, not regular-expression syntax, and match only as whole words."""
    caveat = any_phrase("trade-off | watch out | cost of")
    assert caveat.search("what's the trade-off here?") and caveat.search("what should I watch out for")
    assert not caveat.search("a tradeoff") and not caveat.search("the cost-of-living index")
    assert any_phrase("e.g").search("see e.g. this") and not any_phrase("e.g").search("an eXg")  # escaped
    assert not any_phrase("risk").search("brisket") and not any_phrase("risk").search("risks")
    assert any_phrase("risk", ending="s?").search("the risks") and any_phrase("abbreviat", ending=r"\w*").search(
        "an abbreviation of"
    )
    assert any_phrase("whats", re.I).search("WHATS up") and not any_phrase("whats").search("WHATS up")
