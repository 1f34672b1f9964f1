"""Follow-ups stay follow-ups, and a standalone question is never merged into the previous one."""

from __future__ import annotations

import pytest

from assistant import Assistant
from assistant.answer.followups import discussed, leans_back, refers_back

HISTORY_KV = [("user", "Which papers reduce KV cache memory?"), ("assistant", "Several do [abs-0123456789].")]
HISTORY_GPU = [("user", "What is a GPU?"), ("assistant", "A processor designed for parallel workloads [MLD-0472].")]


@pytest.mark.parametrize(
    ("question", "leans"),
    [
        ("and what caveat does it have?", True),
        ("does it also work for training?", True),
        ("and the downside?", True),
        ("how much faster was that?", True),
        ("so which one should I pick?", True),
        ("what about its memory?", True),
        ("Unrelated: what's the regularization trick where you stop training early?", False),
        ("different question - what is a learning rate?", False),
        ("What is that technique where you stop training early called?", False),  # 'that' describes, not refers
        ("what's the catch? how much throughput do you give up?", True),  # "the catch" of what was just said
        ("but doesn't switching between jobs mean reloading giant models every time?", True),
        ("is there a setup where that buys you nothing?", True),  # "that" pointing back, after "where"
        ("how much faster is that than the usual offloading?", True),
        ("is there a distributed system meant to bring that cost down?", True),
        ("what's the name for the part that decides what to forget?", False),  # a relative clause
        ("separate thing: is there a hash table for GPUs that can grow while threads insert?", False),
        ("by the way, how does that eviction trick work where hits move an item up a few slots?", False),
        # a thing of the last answer by its place or role, or a request for more
        ("how does the second one work?", True),
        ("is the first paper open source?", True),
        ("which of those is cheapest to run?", True),
        ("what did the authors measure?", True),
        ("elaborate on the memory part", True),
        ("any numbers on how much faster?", True),
        ("which is the paper that introduced paged attention for serving?", False),  # says which paper
        ("anything that spreads the offload over all of those storage tiers at once?", False),
        # an acknowledgement first: what follows it is read as the opening
        ("oh nice. and how big was the speedup over the usual setup?", True),
        ("ok, and the downside?", True),
        ("That sounds promising, but what's the catch?", True),
        ("thanks! unrelated: what is a learning rate?", False),
    ],
)
def test_pronouns_and_ellipsis_lean_back_topic_switches_do_not(question: str, leans: bool) -> None:
    assert leans_back(question) is leans


@pytest.mark.parametrize(
    ("history", "question"),
    [
        (HISTORY_KV, "What does FlashAttention do?"),  # one content word, but a name the knowledge knows
        (HISTORY_KV, "GPU"),
        (HISTORY_GPU, "What is NCCL?"),
        (HISTORY_KV, "CUDA"),
    ],
)
def test_a_question_that_names_something_known_is_standalone(seed_assistant: Assistant, history, question) -> None:
    known = seed_assistant.retriever.names_known
    assert known(question)
    assert not refers_back(question, history, known)
    answer = seed_assistant.ask(question, history=history)
    assert not any(note.startswith("Searched for") for note in answer.notes), answer.notes
    assert "about:" not in " ".join(answer.notes)


def test_the_flashattention_sequence_answers_about_flashattention(seed_assistant: Assistant) -> None:
    answer = seed_assistant.ask("What does FlashAttention do?", history=HISTORY_KV)
    assert not answer.refused and answer.citations[0].entry_id == "MLD-0472"
    assert "attention" in answer.text.lower() and "kv cache" not in answer.text.lower()


def test_gpu_after_flashattention_answers_about_gpus(seed_assistant: Assistant) -> None:
    history = [("user", "What does FlashAttention do?"), ("assistant", "Memory-aware exact attention [MLD-0472].")]
    answer = seed_assistant.ask("GPU", history=history)
    assert not answer.refused and answer.citations[0].entry_id == "MLD-0472"
    assert "parallel" in answer.text.lower()


def test_a_real_follow_up_still_gets_its_subject(seed_assistant: Assistant) -> None:
    answer = seed_assistant.ask("and what caveat does it have?", history=HISTORY_GPU)
    assert any(note.startswith("Searched for") and "What is a GPU?" in note for note in answer.notes)
    assert answer.citations[0].entry_id == "MLD-0472" and "memory" in answer.text.lower()


def test_no_history_means_no_follow_up(seed_assistant: Assistant) -> None:
    assert not refers_back("and what caveat does it have?", [], seed_assistant.retriever.names_known)


def test_a_continuation_leans_back_unless_it_names_a_thing() -> None:
    def known(question: str) -> str:
        return "name" if "FlashAttention" in question else "rare" if "giant" in question else ""

    assert leans_back("but doesn't switching jobs reload giant models?", known)  # rare words are not a subject
    assert not leans_back("and what does FlashAttention do?", known)
    assert not leans_back("reloading giant models between jobs", known)  # no continuation: rare words stand alone


def test_a_capitalised_word_that_opens_a_later_sentence_is_not_a_name(seed_assistant: Assistant) -> None:
    """ "Does" after "what's the catch?" is grammar: the follow-up still leans back."""
    question = "Sounds useful, but what's the catch? Does the rewrite always pay for itself?"
    assert seed_assistant.retriever.names_known(question) != "name"
    assert refers_back(question, HISTORY_GPU, seed_assistant.retriever.names_known)


def test_discussed_is_what_the_last_answer_cited() -> None:
    history = [
        ("user", "What is a GPU?"),
        ("assistant", "A processor [MLD-0472]."),
        ("user", "papers on KV cache?"),
        ("assistant", "PageKV [arxiv:2501.00001] and QuantKV [arxiv: 2501.00002, arxiv:2501.00001]."),
    ]
    assert discussed(history) == ["arxiv:2501.00001", "arxiv: 2501.00002"]
    assert discussed(history[:2]) == ["MLD-0472"]
    assert discussed([("user", "hi")]) == []


def test_a_subjectless_follow_up_is_about_what_the_last_answer_cited(seed_assistant: Assistant) -> None:
    """ "What's the catch?" after an answer that cited a paper searches that paper first."""
    serverless = "abs-fad87d80f4"  # ServerlessLLM
    history = [("user", "Any paper on my problem?"), ("assistant", f"Yes, one approach [{serverless}].")]
    answer = seed_assistant.ask("what's the catch?", history=history)
    assert answer.sources[0].entry_id == serverless
    alone = seed_assistant.search("what's the catch?", k=3)  # without the conversation nothing points there
    assert serverless not in [s.entry_id for s in alone]
