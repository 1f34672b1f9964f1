"""Citation markers in model output: table-driven parsing, normalisation and support checks.

The support tables use real entries of knowledge/seed and knowledge/mlsys, one row per kind of
claim in knowledge/questions/claims.jsonl; false claims are also tried with an embedding that
finds everything alike, to show that the embedding never verifies a claim by itself.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assistant.knowledge.corpus import load_corpus
from assistant.text import split_sentences
from assistant.types import Entry
from assistant.verify.citations import canonical, claim_with_marker, find_markers, verify

GPU = Entry(
    "MLD-0472",
    "concept",
    "GPU",
    "GPU\nA processor designed for highly parallel workloads, widely used for tensor computation.\n"
    "Example: Accelerate neural-network training.\n"
    "Caveat: Available memory and supported operations matter alongside compute speed.",
    {},
)
PAPER = Entry(
    "arxiv:2512.19606",
    "abstract",
    "RAPID-LLM",
    "RAPID-LLM is a unified performance modeling framework for LLM training and inference on GPU clusters. "
    "It predicts Llama inference step latency within 10.4% of published measurements.",
    {},
    url="https://arxiv.org/abs/2512.19606",
)
CONTEXT = {GPU.id: GPU, PAPER.id: PAPER}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("A claim [MLD-0472].", [["MLD-0472"]]),
        ("Two [MLD-0472, arxiv:2512.19606].", [["MLD-0472", "arxiv:2512.19606"]]),
        ("Adjacent [MLD-0472][arxiv:2512.19606].", [["MLD-0472"], ["arxiv:2512.19606"]]),
        ("Semicolon [MLD-0472; arxiv:2512.19606].", [["MLD-0472", "arxiv:2512.19606"]]),
        ("Round (MLD-0472).", [["MLD-0472"]]),
        ("Lower case [mld-0472].", [["mld-0472"]]),
        ("Bare arXiv number [2512.19606].", [["2512.19606"]]),
        ("Missing opening MLD-0472].", [["MLD-0472"]]),
        ("Missing closing [MLD-0472 and more.", [["MLD-0472"]]),
        ("Full-width 【MLD-0472】.", [["MLD-0472"]]),
        ("Unknown [NOPE-1].", [["NOPE-1"]]),
        ("No marker at all.", []),
        ("A list [1] is not a citation.", []),
    ],
)
def test_markers_are_found(text: str, expected: list[list[str]]) -> None:
    assert [ids for _, _, ids in find_markers(text)] == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("MLD-0472", "MLD-0472"),
        ("mld-0472", "MLD-0472"),
        ("2512.19606", "arxiv:2512.19606"),
        ("ARXIV:2512.19606", "arxiv:2512.19606"),
        ("NOPE-1", None),
        ("arxiv:9999.99999", None),
    ],
)
def test_canonical_ids(raw: str, expected: str | None) -> None:
    known = {key.lower(): key for key in CONTEXT}
    assert canonical(raw, known) == expected


def test_unknown_ids_are_dropped_from_text() -> None:
    result = verify("A GPU is a processor designed for highly parallel workloads [MLD-0472][NOPE-1].", CONTEXT)
    assert "NOPE-1" not in result.text
    assert result.dropped == ["NOPE-1"]
    assert [c.entry_id for c in result.citations] == ["MLD-0472"]


def test_quote_is_the_supporting_sentence_of_the_entry() -> None:
    result = verify("Available memory and supported operations matter, not only speed [MLD-0472].", CONTEXT)
    (citation,) = result.citations
    assert citation.quote == "Caveat: Available memory and supported operations matter alongside compute speed."
    assert citation.quote in split_sentences(GPU.text)
    assert citation.supported


def test_unsupported_claim_is_flagged_and_its_sentence_dropped() -> None:
    result = verify("Paris is the capital of France [MLD-0472]. Bridges are made of GPUs.", CONTEXT)
    (citation,) = result.citations
    assert not citation.supported
    assert "[MLD-0472]" not in result.text and "Paris" not in result.text
    assert result.text == "Bridges are made of GPUs."  # a sentence that cites nothing is not flagged
    assert result.unsupported == [
        "MLD-0472 does not support: Paris is the capital of France. (names France, which the quote does not)"
    ]


def test_a_quoted_sentence_titled_with_a_title_that_asks_is_one_supported_claim() -> None:
    """An answer names a paper before quoting it; a title with a question mark in it must not split the
    claim, or the part after it is judged alone and its marker is removed from a true quote."""
    title = "Do MPI Derived Datatypes Actually Help? A Single-Node Study on Shared-Memory Communication"
    quoted = "We present a cross-implementation assessment using three 2D applications: a Jacobi CFD solver."
    entry = Entry("arxiv:2511.13804", "abstract", title, f"{title}\nMPI datatypes promise easier code. {quoted}")
    verified = verify(f"{title}: {quoted[:-1]} [arxiv:2511.13804].", {entry.id: entry})
    assert [(c.entry_id, c.supported) for c in verified.citations] == [("arxiv:2511.13804", True)]
    assert verified.text.endswith("[arxiv:2511.13804].")
    assert split_sentences(f"{title}: {quoted}") == [title.split("? ")[0] + "?", title.split("? ")[1] + f": {quoted}"]
    assert split_sentences(f"{title}: {quoted}", [title]) == [f"{title}: {quoted}"]


def test_near_miss_markers_are_normalised() -> None:
    result = verify("It predicts Llama inference step latency within 10.4% (2512.19606).", CONTEXT)
    assert result.text.endswith("[arxiv:2512.19606].")
    assert result.citations[0].url == "https://arxiv.org/abs/2512.19606"


def test_paragraphs_survive_verification() -> None:
    text = "A GPU is a processor for parallel workloads [MLD-0472].\n\nRAPID-LLM models GPU clusters [2512.19606]."
    result = verify(text, CONTEXT)
    assert result.text.count("\n") == 2
    assert [c.entry_id for c in result.citations] == ["MLD-0472", "arxiv:2512.19606"]


def test_embedding_similarity_can_lift_a_paraphrase() -> None:
    calls: list[tuple[str, list[str]]] = []

    def similarity(claim: str, sentences: list[str]) -> list[float]:
        calls.append((claim, sentences))
        return [0.95 if "memory" in s else 0.1 for s in sentences]

    claim = "Besides compute speed, available memory and supported operations also count [MLD-0472]."
    assert not verify(claim, CONTEXT).citations[0].supported, "lexically, 'count' is not in the entry"
    result = verify(claim, CONTEXT, similarity)
    assert calls, "the word the entry lacks should ask for an embedding check"
    assert result.citations[0].quote.startswith("Caveat:")
    assert result.citations[0].supported


def test_embedding_similarity_does_not_lift_a_claim_the_entry_barely_says() -> None:
    def similarity(claim: str, sentences: list[str]) -> list[float]:
        return [0.95 for _ in sentences]

    # only "memory" of it is in the entry: capacity, practical and limit would rest on the embedding alone
    result = verify("Memory capacity is a practical limit too [MLD-0472].", CONTEXT, similarity)
    assert not result.citations[0].supported


# --- support: does the cited entry really say it? (real entries, lexical evidence unless stated) ---

REPO = Path(__file__).resolve().parent.parent
CLAIMS = REPO / "knowledge" / "questions" / "claims.jsonl"
KINDS = {
    "faithful",
    "verbatim",
    "negation",
    "swapped-entity",
    "changed-number",
    "unrelated",
    "invented-detail",
    "antonym",
}
ISSUE_CLAIMS = [
    "GPUs are cheese.",
    "A GPU is not designed for parallel workloads.",
    "CUDA is a GPU programming platform by AMD.",
    "GPUs are slow.",
]


@pytest.fixture(scope="module")
def entries() -> dict[str, Entry]:
    return load_corpus([REPO / "knowledge" / "seed", REPO / "knowledge" / "mlsys"]).entries


def cite(claim: str, entry: Entry, similarity=None):
    """The citation of `entry` after verifying "claim [ID]." with that entry as the context."""
    result = verify(claim_with_marker(claim, f" [{entry.id}]"), {entry.id: entry}, similarity)
    (citation,) = result.citations
    return citation, result


def always_close(claim: str, sentences: list[str]) -> list[float]:
    """An embedding that finds everything alike: support must not rest on it."""
    return [0.99 for _ in sentences]


@pytest.mark.parametrize("claim", ISSUE_CLAIMS)
@pytest.mark.parametrize("similarity", [None, always_close], ids=["lexical", "embedding-says-yes"])
def test_the_issue_claims_are_not_verified(entries, claim: str, similarity) -> None:
    citation, result = cite(claim, entries["MLD-0472"], similarity)
    assert not citation.supported
    assert citation.support < 0.5
    assert "[MLD-0472]" not in result.text
    assert result.unsupported and "(" in result.unsupported[0], "the note says why"


@pytest.mark.parametrize(
    ("entry_id", "claim", "kind"),
    [
        # quoted or nearly quoted
        (
            "MLD-0472",
            "A GPU is a processor designed for highly parallel workloads, widely used for tensor computation.",
            "verbatim",
        ),
        ("glossary:checkpoint", "The graph itself is not included in a checkpoint.", "verbatim"),
        (
            "arxiv:2511.21431",
            "MemFine reduces activation memory by 48.03% and improves throughput by 4.42%.",
            "verbatim",
        ),
        # paraphrases: shortened, reordered, synonyms, other word forms, framing
        ("MLD-0472", "GPUs are processors built for highly parallel workloads.", "faithful"),
        ("MLD-0472", "CUDA is NVIDIA's GPU programming platform.", "faithful"),
        ("MLD-0472", "GPU stands for graphics processing unit.", "faithful"),
        ("glossary:learning-rate", "This is called the learning rate.", "faithful"),
        ("glossary:learning-rate", "The learning rate is a key hyperparameter.", "faithful"),
        (
            "glossary:overfitting",
            "An overfit model matches the training data so closely that it fails to make correct predictions.",
            "faithful",
        ),
        ("arxiv:2512.19179", "L4 reduces end-to-end latency by up to 67% and tail latency by up to 69%.", "faithful"),
        (
            "arxiv:2512.19606",
            "RAPID-LLM matches ns-3 packet-level results within 8% on communication workloads.",
            "faithful",
        ),
        (
            "arxiv:2512.19606",
            "RAPID-LLM predicts inference step latency within 10.4 percent of published measurements.",
            "faithful",
        ),
        ("arxiv:2511.22880", "LoRAServe achieves up to 2x higher throughput and up to 9x lower TTFT.", "faithful"),
        (
            "arxiv:2512.07350",
            "Latent Parallelism cuts communication overhead by up to 97% compared with baseline methods.",
            "faithful",
        ),
        (
            "abs-50e2db2486",
            "Online LLM inference is limited by GPU memory because the KV cache grows during autoregressive decoding.",
            "faithful",
        ),
        (
            "abs-eb18b51aef",
            "Dynamic parallelism helps applications whose nested parallelism is irregular and cannot be predicted.",
            "faithful",
        ),
        ("glossary:bigram", "A bigram is an N-gram in which N is two.", "faithful"),
        # related words and phrases (lexicon.RELATED_GROUPS, PHRASES), "the framework", a short title name
        (
            "arxiv:2512.16473",
            "Traditional offloading methods that move model weights between CPU and GPU add latency.",
            "faithful",
        ),
        (
            "abs-fad87d80f4",
            "ServerlessLLM takes advantage of the large near-GPU storage and memory of inference servers.",
            "faithful",
        ),
        ("arxiv:2510.18300", "The framework achieved a 67% improvement in scalability.", "faithful"),
        ("arxiv:2508.17311", "Bine trees reach speedups of up to 5x.", "faithful"),
        ("MLD-0472", "GPUs are built for massively parallel workloads.", "faithful"),
    ],
)
def test_quotes_and_faithful_paraphrases_are_verified(entries, entry_id: str, claim: str, kind: str) -> None:
    citation, result = cite(claim, entries[entry_id])
    assert citation.supported, result.unsupported
    assert f"[{entry_id}]" in result.text
    assert citation.quote in split_sentences(entries[entry_id].text)


@pytest.mark.parametrize(
    ("entry_id", "claim", "kind"),
    [
        ("abs-fad87d80f4", "ServerlessLLM is not designed for serverless inference.", "negation"),
        ("glossary:checkpoint", "A checkpoint includes the graph itself.", "negation"),
        ("glossary:overfitting", "An overfitted model makes correct predictions on new data.", "negation"),
        (
            "arxiv:2512.19342",
            "BLS offers notable advantages even for well balanced, homogeneous-access DLRM runs.",
            "negation",
        ),
        (
            "glossary:federated-learning",
            "In federated learning, devices upload their training examples to a central server.",
            "negation",
        ),
        ("abs-84ab60177a", "GPUs have become one of the cheapest IT resources.", "antonym"),
        (
            "glossary:early-stopping",
            "Early stopping ends training when the validation loss starts to decrease.",
            "antonym",
        ),
        ("abs-4d31b239cc", "XPipe is a synchronous pipeline parallelism approach.", "antonym"),
        ("glossary:inference", "Inference means applying a trained model to labeled examples.", "antonym"),
        ("abs-17e64a37d2", "The computation workload grows linearly with the layer width.", "antonym"),
        ("MLD-0472", "ROCm is NVIDIA's GPU computing software stack.", "swapped-entity"),
        ("MLD-0472", "Slurm is a workload manager for Kubernetes clusters.", "swapped-entity"),
        ("abs-17e64a37d2", "Most of LLMs' parameters come from the attention layers.", "swapped-entity"),
        (
            "arxiv:2512.19606",
            "RAPID-LLM couples an Astra-Sim frontend with a DeepFlow-based backend.",
            "swapped-entity",
        ),
        (
            "glossary:eager-execution",
            "In eager execution, operations don't run until they are explicitly evaluated.",
            "swapped-entity",
        ),
        (
            "arxiv:2512.19606",
            "RAPID-LLM predicts inference step latency within 14% of published measurements.",
            "changed-number",
        ),
        (
            "arxiv:2511.21431",
            "MemFine reduces activation memory by 4.42% and improves throughput by 48.03%.",
            "changed-number",
        ),
        ("arxiv:2511.22880", "LoRAServe achieves up to 2% higher throughput.", "changed-number"),
        ("arxiv:2512.19606", "RAPID-LLM matches ns-3 packet-level results within 3%.", "changed-number"),
        ("glossary:epoch", "In an epoch each example is seen twice.", "changed-number"),
        ("abs-7a545d3a5c", "Hundreds or thousands of these adapters can be served on two GPUs.", "changed-number"),
        ("abs-90177d93cb", "ZeRO was introduced by Microsoft as part of DeepSpeed.", "invented-detail"),
        (
            "MLD-0472",
            "GPUs are widely used for tensor computation, and most of them are made by NVIDIA.",
            "invented-detail",
        ),
        ("arxiv:2510.18300", "The framework is built on Apache Spark.", "invented-detail"),
        # a number the quote gives to something else in the same sentence (neural compilation's is 10-100x)
        ("arxiv:2512.11200", "Neural compilation achieves 2-5x speedups via massive parallelism.", "changed-number"),
        # a related word is still a word of the quote: "move" does not stand in for "reuse"
        ("arxiv:2512.01357", "Tangram moves model parameters to the CPU to cut cold-start latency.", "invented-detail"),
        (
            "arxiv:2512.16473",
            "Traditional offloading methods that move model weights between CPU and GPU remove latency.",
            "antonym",
        ),
        ("glossary:checkpoint", "The capital of Australia is Canberra.", "unrelated"),
        ("arxiv:2512.19179", "MemFine reduces activation memory for MoE training.", "unrelated"),
    ],
)
@pytest.mark.parametrize("similarity", [None, always_close], ids=["lexical", "embedding-says-yes"])
def test_false_claims_are_not_verified(entries, entry_id: str, claim: str, kind: str, similarity) -> None:
    citation, result = cite(claim, entries[entry_id], similarity)
    assert not citation.supported, (kind, citation)
    assert f"[{entry_id}]" not in result.text


def test_an_embedding_vouches_for_a_paraphrased_word_only_when_dropping_it_does_not_help(entries) -> None:
    entry = entries["arxiv:2509.21221"]
    claim = "GWTF contends with node churn and network instabilities."  # no word list relates it to "addresses"

    def carries_meaning(text: str, sentences: list[str]) -> list[float]:
        return [0.9 if "contends" in text else 0.85 for _ in sentences]  # leaving "contends" out moves away

    def foreign(text: str, sentences: list[str]) -> list[float]:
        return [0.9 if "contends" not in text else 0.85 for _ in sentences]  # leaving it out comes closer

    assert not cite(claim, entry)[0].supported, "without an embedding the new word is not vouched for"
    assert cite(claim, entry, carries_meaning)[0].supported
    assert not cite(claim, entry, foreign)[0].supported


def test_the_verified_citation_of_an_entry_wins_over_an_unverified_one(entries) -> None:
    gpu = entries["MLD-0472"]
    text = "GPUs are slow [MLD-0472]. GPUs are widely used for tensor computation [MLD-0472]."
    result = verify(text, {gpu.id: gpu})
    (citation,) = result.citations
    assert citation.supported
    assert result.text == "GPUs are widely used for tensor computation [MLD-0472]."


def test_the_labelled_claim_set_is_well_formed(entries) -> None:
    rows = [json.loads(line) for line in CLAIMS.read_text(encoding="utf-8").splitlines()]
    assert len(rows) >= 240
    assert len({r["id"] for r in rows}) == len(rows)
    for row in rows:
        assert set(row) == {"id", "entry", "claim", "label", "kind", "split"}, row
        assert row["entry"] in entries, row
        assert row["kind"] in KINDS and row["split"] in ("calibration", "test"), row
        assert (row["label"] == "supported") == (row["kind"] in ("faithful", "verbatim")), row
    assert set(ISSUE_CLAIMS) <= {r["claim"] for r in rows if r["entry"] == "MLD-0472"}
    assert 0.4 <= sum(r["label"] == "supported" for r in rows) / len(rows) <= 0.5
    assert {e.split(":")[0] for e in {r["entry"] for r in rows}} >= {"MLD-0472", "glossary", "arxiv"}
    for kind in KINDS:
        splits = [r["split"] for r in rows if r["kind"] == kind]
        assert abs(splits.count("calibration") - splits.count("test")) <= 1, kind


@pytest.mark.slow
def test_verified_means_supported_on_the_labelled_claims(entries) -> None:
    """The whole claim set with the real MiniLM cosine, as scripts/claim_support.py runs it.

    Floors sit a little under the measured figures (README): a drop means the checks got weaker.
    """
    from assistant.index.embeddings import make_embedder

    embedder = make_embedder("local")

    def similarity(claim: str, sentences: list[str]) -> list[float]:
        head, *rest = embedder.embed_documents([claim, *sentences])
        return [sum(a * b for a, b in zip(head, vector, strict=True)) for vector in rest]

    rows = [json.loads(line) for line in CLAIMS.read_text(encoding="utf-8").splitlines()]
    for split in ("calibration", "test"):
        judged = [
            (r["label"] == "supported", cite(r["claim"], entries[r["entry"]], similarity)[0].supported)
            for r in rows
            if r["split"] == split
        ]
        verified = [label for label, ok in judged if ok]
        precision = sum(verified) / len(verified)
        recall = len([1 for label, ok in judged if label and ok]) / sum(label for label, _ in judged)
        assert precision >= 0.95, (split, precision)
        assert recall >= 0.85, (split, recall)


def test_a_listed_word_keeps_its_own_synonym_group() -> None:
    from assistant.verify.support import key_of

    assert key_of("massively") == key_of("highly")  # its stem is also the stem of "massive"
    assert key_of("massive") == key_of("large")
    assert key_of("massively") != key_of("large")
