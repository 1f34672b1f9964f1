"""The word pieces a sync keeps for late interaction: read back at search time, never encoded there."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from assistant import Assistant, Settings
from assistant.index.piece_signs import FILE_NAME, PieceSigns, as_signs, from_signs
from assistant.retrieval.late_interaction import LateInteraction


class TextPieces:
    """Word-piece vectors by hand: each text's own random unit rows (seeded by the text), counting encodes."""

    def __init__(self) -> None:
        self.encoded: list[str] = []

    def token_vectors(self, texts: list[str]) -> list[np.ndarray]:
        self.encoded.extend(texts)
        return [self.rows(text) for text in texts]

    @staticmethod
    def rows(text: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little")
        rows = np.random.default_rng(seed).standard_normal((3 + len(text) % 5, 384)).astype(np.float32)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_signs_read_back_as_unit_vectors_with_the_same_signs() -> None:
    rows = TextPieces.rows("kernel fusion")
    back = from_signs(*as_signs(rows))
    assert back.shape == rows.shape and back.dtype == np.float32
    assert np.array_equal(back > 0, rows >= 0)
    assert np.allclose(np.linalg.norm(back.astype(np.float32), axis=1), 1.0, atol=1e-3)


def test_the_store_keeps_reads_back_and_forgets_by_text(tmp_path: Path) -> None:
    store = PieceSigns(tmp_path, "local")
    store.put([("first chunk", TextPieces.rows("first chunk")), ("second chunk", TextPieces.rows("second chunk"))])
    assert set(store.get(["first chunk", "never kept"])) == {"first chunk"}
    assert store.missing(["second chunk", "third chunk", "third chunk"]) == ["third chunk"]
    assert store.keep_only(["second chunk"]) == 1 and len(store) == 1
    store.close()
    again = PieceSigns(tmp_path, "local")
    assert set(again.get(["first chunk", "second chunk"])) == {"second chunk"}  # kept on disk
    assert PieceSigns(tmp_path, "another-encoder").get(["second chunk"]) == {}  # pieces are an encoder's own


def test_late_interaction_reads_kept_pieces_and_keeps_what_it_had_to_encode(tmp_path: Path) -> None:
    store = PieceSigns(tmp_path, "local")
    store.put([("kept chunk", TextPieces.rows("kept chunk"))])
    candidates, question = TextPieces(), TextPieces()
    late = LateInteraction(candidates, question, store)
    scores = late.scores("a question", ["kept chunk", "new chunk"])
    assert candidates.encoded == ["new chunk"] and question.encoded == ["a question"]
    assert set(store.get(["new chunk"])) == {"new chunk"}
    # both scored from their signs, whether read back or encoded just now
    asked = TextPieces.rows("a question")
    expected = [
        float((asked @ from_signs(*as_signs(TextPieces.rows(t))).T.astype(np.float32)).max(axis=1).mean())
        for t in ("kept chunk", "new chunk")
    ]
    assert scores == expected
    fresh = LateInteraction(TextPieces(), TextPieces(), store)
    assert fresh.scores("a question", ["kept chunk", "new chunk"]) == scores and fresh.encoder.encoded == []


def write_documents(folder: Path) -> None:
    folder.mkdir()
    (folder / "queues.md").write_text(
        "# Queues\n\n## Submitting to a queue\n\nSet the label `kueue.x-k8s.io/queue-name` on the Job to pick "
        "its LocalQueue.\n\n## Quotas\n\nA ClusterQueue holds the quota that its LocalQueues share.\n",
        encoding="utf-8",
    )
    (folder / "storage.md").write_text(
        "# Storage\n\n## Checkpoints\n\nWrite checkpoints under /scratch/ckpt at least every two hours.\n\n"
        "## Datasets\n\nShared datasets live read-only under /data/shared.\n",
        encoding="utf-8",
    )


def test_a_sync_of_documents_keeps_every_chunks_pieces_and_a_search_encodes_none(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    write_documents(folder)
    bot = Assistant(Settings(home=tmp_path / "home", knowledge=(folder,), model="extractive"))
    index, retriever = bot.chain.index, bot.retriever
    chunks = [chunk.text for chunk in index.rows]
    store = index.piece_signs()
    assert store is not None and len(store) == len(chunks) > 0 and store.missing(chunks) == []
    assert retriever.reranking == "learned" and retriever.reranker is not None  # `auto` on documents alone
    counted = TextPieces()
    retriever.reranker.encoder = counted  # anything a search had to encode would show here
    found = retriever.retrieve("which label picks the LocalQueue of a Job?", k=4).sources
    assert found[0].entry_id.startswith("doc:queues.md") and counted.encoded == []


def test_an_index_synced_before_pieces_were_kept_gets_them_on_its_next_sync(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    write_documents(folder)
    settings = Settings(home=tmp_path / "home", knowledge=(folder,), model="extractive")
    Assistant(settings).chain.index.piece_signs().close()  # type: ignore[union-attr]
    kept = tmp_path / "home" / "index" / "cache" / FILE_NAME
    for path in kept.parent.glob(f"{FILE_NAME}*"):
        path.unlink()
    bot = Assistant(settings, auto_index=False)
    report = bot.index(progress=False)
    assert report is not None and report.embedded_chunks == 0  # nothing changed, nothing embedded again
    assert bot.chain.index.piece_signs().missing(chunk.text for chunk in bot.chain.index.rows) == []  # type: ignore[union-attr]


def test_the_pack_keeps_its_fused_order_and_no_pieces(seed_assistant: Assistant) -> None:
    retriever = seed_assistant.retriever
    assert retriever.reranking == "off" and retriever.reranker is None
    assert not seed_assistant.chain.index.keeps_pieces({"concept", "abstract"})


def test_pieces_a_knowledge_no_longer_re_orders_by_are_dropped(tmp_path: Path) -> None:
    """Documents kept their pieces; with `ASSISTANT_RERANK=off` the next sync keeps none (the file stays, empty)."""
    folder = tmp_path / "docs"
    write_documents(folder)
    settings = Settings(home=tmp_path / "home", knowledge=(folder,), model="extractive")
    kept = Assistant(settings).chain.index.piece_signs()
    assert kept is not None and len(kept) > 0
    off = Assistant(settings.with_(rerank="off"), auto_index=False)
    off.index(progress=False)
    left = off.chain.index.piece_signs()
    assert off.retriever.reranker is None and left is not None and len(left) == 0


def test_a_damaged_store_is_started_again_not_left_broken(tmp_path: Path) -> None:
    (tmp_path / FILE_NAME).write_bytes(b"not a database, a torn write " * 100)
    store = PieceSigns.open(tmp_path, "local")
    assert store is not None and len(store) == 0
    store.put([("a chunk", TextPieces.rows("a chunk"))])
    assert set(store.get(["a chunk"])) == {"a chunk"}
