"""Definition questions in the asker's words: the concept page the question names leads the answer."""

from __future__ import annotations

import pytest

from assistant import Assistant
from assistant.question.intents import QUOTED
from tests.conftest import glossary_assistant_of

TERMS = {
    "recall",
    "precision",
    "model",
    "training",
    "confusion matrix",
    "true positive rate (TPR)",
    "cross-entropy",
    "perplexity",
    "Bellman equation",
    "overfitting",
    "underfitting",
    "performance",
    "Log Loss",
    "minimax loss",
    "classification model",
    "label",
    "rank (Tensor)",
    "shape (Tensor)",
    "Tensor",
    "TensorFlow",
    "TPU",
    "Tensor Processing Unit (TPU)",
    "convergence",
    "loss",
    "loss curve",
}


@pytest.fixture(scope="module")
def glossary_assistant(tmp_path_factory: pytest.TempPathFactory) -> Assistant:
    """An index of a few real glossary terms: the named one and the neighbours a description confuses."""
    assistant = glossary_assistant_of(tmp_path_factory.mktemp("definitions"), TERMS)
    assert len(assistant.entries) == len(TERMS)
    return assistant


@pytest.mark.parametrize(
    ("question", "entry_id"),
    [
        # the named term sits among everyday words and other terms ("model", "number")
        (
            "what does it mean when my teammate says our tumor detector has bad recall, like what is that number "
            "actually counting",
            "glossary:recall",
        ),
        # named inside a quote in the setup, asked about in the next sentence
        (
            "Our data scientist's weekly update says 'cross-entropy went down again'. In plain terms, what does "
            "that number mean?",
            "glossary:cross-entropy",
        ),
        ("people say it's 'overfit', what does that mean?", "glossary:overfitting"),
        # a quoted word form that is no page's title still decides, over a page the rest names ("loss")
        (
            "when someone says a training run has 'converged', what does that mean concretely? and can a long "
            "flat stretch of loss fool you?",
            "glossary:convergence",
        ),
        # "tensor" is an alias of "rank (Tensor)" too; the quoted term is what is asked about
        ("Arrays confuse me. What exactly does 'shape' mean for a tensor in TensorFlow?", "glossary:shape-tensor"),
        ("my notebook keeps printing tensor shapes, but what does a tensor actually mean?", "glossary:tensor"),
        ("what does it mean when a model is overfitting on the training data?", "glossary:overfitting"),
    ],
)
def test_a_definition_question_leads_with_the_most_specific_concept_it_names(
    glossary_assistant: Assistant, question: str, entry_id: str
) -> None:
    answer = glossary_assistant.ask(question)
    assert not answer.refused
    assert answer.sources[0].entry_id == entry_id
    assert answer.citations and answer.citations[0].entry_id == entry_id


@pytest.mark.parametrize(
    ("text", "quoted"),
    [
        ("people say it's 'overfit', what does that mean?", "overfit"),
        ("the scientist's update says 'loss went down'. what does that mean?", "loss went down"),
        ("what is “KV cache” exactly?", "KV cache"),
        ("don't know what it's for", None),  # apostrophes only
    ],
)
def test_an_apostrophe_is_not_a_quote(text: str, quoted: str | None) -> None:
    found = QUOTED.search(text)
    assert (found.group(1) if found else None) == quoted


@pytest.mark.parametrize(
    ("question", "entry_id"),
    [
        ("so what is perplexity anyway?", "glossary:perplexity"),
        ("ok but what even is a loss curve?", "glossary:loss-curve"),
        ("what is overfitting - just memorising the training set?", "glossary:overfitting"),
        ("what's TensorFlow, a library or a language?", "glossary:tensorflow"),
    ],
)
def test_a_name_asked_about_is_found_whatever_is_said_around_it(
    glossary_assistant: Assistant, question: str, entry_id: str
) -> None:
    """The name lookup reads the question without its fillers and up to the dash or comma after the name,
    so the page named leads as it does for the bare "what is X?"."""
    assert entry_id in glossary_assistant.retriever.name_lookup(question)
    answer = glossary_assistant.ask(question)
    assert answer.sources[0].entry_id == entry_id
    assert answer.citations and answer.citations[0].entry_id == entry_id


def test_a_long_definition_cut_in_two_opens_with_its_first_sentence(glossary_assistant: Assistant) -> None:
    """ "confusion matrix" is indexed as two chunks and the search matches the second, its worked example;
    the context keeps a concept page's chunks in the page's order, so the answer is the definition."""
    retrieval = glossary_assistant.retriever.retrieve("What is a confusion matrix?", k=3)
    assert retrieval.sources[0].entry_id == "glossary:confusion-matrix"
    chunks = glossary_assistant.retriever.index.chunks_of("glossary:confusion-matrix")
    assert len(chunks) == 2 and retrieval.sources[0].chunk_id == chunks[1].id  # the premise: the second matched
    answer = glossary_assistant.ask("What is a confusion matrix?")
    assert answer.text.startswith("An NxN table that summarizes how successful a classification model's predictions")
    assert answer.citations[0].entry_id == "glossary:confusion-matrix"


@pytest.mark.parametrize(
    "question", ["what is a tensor?", "what is a Tensor - just an array?", "what's a tensor, really?"]
)
def test_a_name_several_pages_share_leads_with_the_page_it_is_the_title_of(
    glossary_assistant: Assistant, question: str
) -> None:
    """ "tensor" is also reached by the qualifier of "rank (Tensor)" and "shape (Tensor)", which the glossary's
    titles share with aliases; the page titled "Tensor" is the one asked about."""
    assert glossary_assistant.retriever.name_lookup(question)[0] == "glossary:tensor"
    answer = glossary_assistant.ask(question)
    assert answer.sources[0].entry_id == "glossary:tensor"
    assert answer.citations[0].entry_id == "glossary:tensor"


def test_a_name_whose_own_page_is_only_another_name_leaves_the_order_to_the_search(
    glossary_assistant: Assistant,
) -> None:
    """ "TPU" is the title of a page that only says "Abbreviation for Tensor Processing Unit": the page it
    points to, which the search ranks first, answers."""
    retriever = glossary_assistant.retriever
    assert set(retriever.name_lookup("what is a TPU?")) == {"glossary:tpu", "glossary:tensor-processing-unit-tpu"}
    assert retriever.named_pages("what is a TPU?")[1] is None
    answer = glossary_assistant.ask("what is a TPU?")
    assert answer.citations[0].entry_id == "glossary:tensor-processing-unit-tpu"


def test_a_misspelt_name_finds_the_name_difflib_finds(glossary_assistant: Assistant) -> None:
    """The close-name lookup skips names whose length alone rules them out; what it finds is difflib's,
    on the glossary's names and on 3,000 more of every length."""
    import copy
    import difflib
    import random

    from assistant.retrieval.corpus_tables import CorpusTables

    tables = glossary_assistant.retriever.tables
    assert tables.closest_name("tensor procesing unit", cutoff=0.9) == "tensor processing unit"
    rng = random.Random(7)
    words = [w for name in tables.names for w in name.split()] + ["gpu", "cache", "tensor", "kernel", "shard"]
    many = {" ".join(rng.choice(words) for _ in range(rng.randint(1, 4))) for _ in range(3000)}
    tables = copy.copy(tables)  # the module's assistant keeps its own tables
    tables.names = {**tables.names, **{name: ["x"] for name in many}}
    tables._names_by_length = None
    names = list(tables.names)
    asked = found = 0
    for name in rng.sample(names, 300):
        for word in (name, name[:-1], name + "s", name.replace("e", "a", 1), name[1:], "x" + name[2:]):
            if len(word) < 5:
                continue
            expected = difflib.get_close_matches(word, names, n=1, cutoff=0.9)
            assert tables.closest_name(word, cutoff=0.9) == (expected[0] if expected else None), word
            asked, found = asked + 1, found + bool(expected)
    assert asked > 1000 and 0 < found < asked
    assert isinstance(tables, CorpusTables)
