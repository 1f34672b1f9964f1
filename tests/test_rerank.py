"""Late interaction: MaxSim over word-piece vectors re-orders the best fused candidates."""

from __future__ import annotations

import numpy as np
import pytest

from assistant import Assistant, Settings
from assistant.errors import SettingsError
from assistant.index.embeddings import make_embedder
from assistant.retrieval.late_interaction import CACHE_TEXTS, LateInteraction


class LetterVectors:
    """Word-piece vectors by hand: one unit row per letter, so MaxSim is the share of the query's
    letters the text has (each letter its own axis)."""

    def __init__(self) -> None:
        self.encoded: list[str] = []

    def token_vectors(self, texts: list[str]) -> list[np.ndarray]:
        self.encoded.extend(texts)
        return [np.eye(26, dtype=np.float32)[[ord(c) - 97 for c in text if c.isalpha()]] for text in texts]


def test_maxsim_is_the_mean_of_each_query_pieces_best_match() -> None:
    late = LateInteraction(LetterVectors())
    assert late.scores("abcd", ["ab", "abcd", "xyz"]) == pytest.approx([0.5, 1.0, 0.0])


class Reversed(LetterVectors):
    """A question side that reads each letter as the next one ("a" as "b")."""

    def token_vectors(self, texts: list[str]) -> list[np.ndarray]:
        return super().token_vectors(["".join(chr(97 + (ord(c) - 96) % 26) for c in t if c.isalpha()) for t in texts])


def test_a_question_side_of_its_own_reads_the_question_and_only_the_question() -> None:
    candidates, question = LetterVectors(), Reversed()
    late = LateInteraction(candidates, question)
    assert late.scores("ab", ["bc", "ab"]) == pytest.approx([1.0, 0.5])  # "ab" read as "bc"
    assert candidates.encoded == ["bc", "ab"] and question.encoded == ["bc"]


def test_the_learned_order_reads_questions_by_the_fitted_side_and_maxsim_by_minilm(seed_assistant: Assistant) -> None:
    learned = Assistant(seed_assistant.settings.with_(rerank="learned"), auto_index=False).retriever.reranker
    plain = Assistant(seed_assistant.settings.with_(rerank="maxsim"), auto_index=False).retriever.reranker
    assert learned is not None and plain is not None
    assert learned.question_encoder is not learned.encoder and plain.question_encoder is plain.encoder


def test_candidate_texts_are_encoded_once_and_the_cache_is_bounded() -> None:
    letters = LetterVectors()
    late = LateInteraction(letters)
    late.scores("ab", ["ab", "ba"])
    late.scores("abc", ["ab", "ba", "ab"])
    assert letters.encoded == ["ab", "ab", "ba", "abc"]  # the query each time, each candidate once
    late.scores("a", [chr(97 + i % 26) * (1 + i // 26) for i in range(CACHE_TEXTS + 10)])
    assert len(late._cache) == CACHE_TEXTS


def test_the_onnx_encoder_gives_unit_word_piece_vectors_without_cls_and_sep() -> None:
    encoder = make_embedder("local")
    [rows] = encoder.token_vectors(["GPU kernels"])  # type: ignore[attr-defined]
    assert rows.shape[1] == 384 and len(rows) == len(encoder._tokenizer.encode("GPU kernels").ids) - 2  # type: ignore[attr-defined]
    assert np.allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-5)
    assert LateInteraction.supports(encoder) and not LateInteraction.supports(make_embedder("static"))


def test_hybrid_search_reranks_and_off_keeps_the_fused_order(seed_assistant: Assistant) -> None:
    """The same candidates either way; with the reranker on, ordered by MaxSim (names first). A re-ranking
    always has the dense-feedback leg, so the fused order it is compared with has it too."""
    question = "my GPU kernels stall on memory while the arithmetic units idle, what helps?"
    on = Assistant(seed_assistant.settings.with_(rerank="maxsim"), auto_index=False).retriever
    off = Assistant(seed_assistant.settings.with_(rerank="off", dense_feedback=True), auto_index=False).retriever
    assert on.reranker is not None and off.reranker is None
    reranked = [s.entry_id for s in on.retrieve(question, k=20).sources]
    fused = [s.entry_id for s in off.retrieve(question, k=20).sources]
    assert set(reranked) == set(fused) and reranked != fused
    assert on.retrieve("What is a GPU?", k=3).sources[0].entry_id == "MLD-0472"  # a name stays first


def test_an_unknown_reranker_is_one_line_naming_the_choices() -> None:
    message = "ASSISTANT_RERANK='colbert' is not known - use one of auto, learned, maxsim, off"
    with pytest.raises(SettingsError, match=message):
        Settings.from_env({"ASSISTANT_RERANK": "colbert"})
