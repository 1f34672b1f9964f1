"""Dense feedback for the lexical leg: the rare words of the dense leg's best chunks, searched again."""

from __future__ import annotations

from assistant import Assistant
from assistant.retrieval.dense_feedback import feedback_terms
from assistant.text import lexical_tokens


def test_the_rare_words_of_the_found_chunks_are_added_and_the_question_s_own_are_not() -> None:
    texts = [
        "EdgeLoRA serves LoRA adapters on edge devices.",
        "A multi-tenant system for LoRA adapters on one edge device.",
    ]
    chunks_with = {"edgelora": 1, "serves": 400, "lora": 30, "adapters": 40, "edge": 60, "devices": 300}
    chunks_with |= {"multi-tenant": 2, "system": 500, "one": 600, "device": 300}
    frequency = {lexical_tokens(word)[0]: n for word, n in chunks_with.items()}
    asked = lexical_tokens("serving lora adapters")
    added = feedback_terms(asked, texts, frequency, total=1000, terms=3)
    assert added == ["edgelora", "edge", "multi-tenant"]  # as written there; the question's stems skipped
    assert feedback_terms(asked, texts, frequency, total=1000, terms=1) == ["edgelora"]


def test_stop_words_numbers_and_short_words_are_never_added() -> None:
    added = feedback_terms([], ["The 8 GPUs of it ran at 2.5 kW and so on."], {}, total=100, terms=10)
    assert set(added) == {"gpus", "ran"}


def test_nothing_found_adds_nothing() -> None:
    assert feedback_terms(["gpu"], [], {}, total=100) == []
    assert feedback_terms(["gpu"], ["GPU GPU"], {"gpu": 3}, total=100) == []


def test_the_index_counts_chunks_per_stem_from_its_lexical_columns(seed_assistant: Assistant) -> None:
    index = seed_assistant.retriever.index
    total, frequency = index.lexical_frequencies(["gpu", "petal", "zzzunknown"])
    chunks = [chunk for entry_id in index.entries for chunk in index.chunks_of(entry_id)]
    assert total == len(chunks) and frequency["zzzunknown"] == 0
    assert frequency["gpu"] == sum("gpu" in lexical_tokens(c.text) for c in chunks)
    assert 0 < frequency["petal"] < frequency["gpu"] <= total


def test_hybrid_search_runs_the_feedback_leg_and_the_order_sees_its_rank(seed_assistant: Assistant) -> None:
    """What the dense leg found supplies words for a second lexical search; the learned order gets its rank."""
    retriever = Assistant(seed_assistant.settings.with_(rerank="learned"), auto_index=False).retriever
    seen = []
    own = retriever.candidates

    def recording(fusion, *args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(fusion)
        return own(fusion, *args, **kwargs)

    retriever.candidates = recording  # type: ignore[method-assign]
    retriever.retrieve("which papers run big models across many home computers?", k=20)
    [fusion] = seen
    assert fusion.legs["feedback"], "the feedback leg found nothing"
    found = own(fusion, {e: [0.5] for e, _ in fusion.ordered}, set())
    assert any(c.feedback_rank for c in found)
    assert all(fusion.feedback_share(c.entry_id) > 0 for c in found if c.feedback_rank)


def test_a_search_of_concept_pages_alone_has_no_feedback_leg(seed_assistant: Assistant) -> None:
    """ "What is it called?" searches concept pages only: their rare words are their neighbours' names."""
    retriever = Assistant(seed_assistant.settings, auto_index=False).retriever
    question = "the chip that does many small sums at once for graphics and training, what is it called?"
    assert retriever.feedback("big models on home computers", retriever.index.dense("home computers", 5), None)
    assert retriever.feedback(question, retriever.index.dense(question, 5), "concept") == []
