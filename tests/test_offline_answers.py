"""The offline answerer answers what is asked: one composition per intent, every sentence cited.

Pure tests on hand-made context (blocks as the chain renders them), so each intent's first
sentence is pinned exactly; the end-to-end path runs on the seed corpus at the bottom.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from assistant import Assistant
from assistant.answer.models.extractive import candidates_of, entry_views, extract_answer, named
from assistant.question.intents import compare_sides, described_sides, intent_of, subject_of, without_fillers
from assistant.question.reading import Reading
from assistant.tuning import OfflineAnswerSettings
from assistant.types import Entry
from assistant.verify.citations import verify
from tests.conftest import glossary_assistant_of
from tests.context_blocks import blocks_of

LR = Entry(
    "glossary:learning-rate",
    "concept",
    "learning rate",
    "A scalar used to train a model via gradient descent. During each iteration, the gradient descent "
    "algorithm multiplies the learning rate by the gradient.",
)
STEP = Entry("glossary:step-size", "concept", "step size", "Synonym for learning rate.")
DATA_PAR = Entry(
    "glossary:data-parallelism",
    "concept",
    "data parallelism",
    "A way of scaling training by replicating the whole model on several devices, each of which "
    "processes a different slice of every batch.",
)
TENSOR_PAR = Entry(
    "glossary:tensor-parallelism",
    "concept",
    "tensor parallelism",
    "A way of splitting a single layer's matrices across devices so each computes part of every product.",
)
KV_PAPER = Entry(
    "arxiv:2501.00001",
    "abstract",
    "PageKV: Paged Memory for the KV Cache",
    "Serving long prompts runs out of GPU memory because the KV cache grows with every token. "
    "In this paper, we propose PageKV, which stores the KV cache in fixed-size pages allocated on demand. "
    "PageKV avoids fragmentation by mapping logical blocks to physical pages through a block table. "
    "However, the block table adds a small lookup overhead to every attention kernel. "
    "PageKV raises throughput by 2.4x over contiguous allocation.",
)
KV_PAPER_2 = Entry(
    "arxiv:2501.00002",
    "abstract",
    "QuantKV: Four-bit Keys and Values",
    "We present QuantKV, which quantizes the KV cache to four bits per value to fit longer contexts. "
    "For example, a 70B model serves 128k-token prompts on one node.",
)
CONTEXT = [LR, STEP, DATA_PAR, TENSOR_PAR, KV_PAPER, KV_PAPER_2]


def answer(question: str, entries: list[Entry] = CONTEXT) -> str:
    return extract_answer(Reading(question), blocks_of(entries), OfflineAnswerSettings())


def first_line(text: str) -> str:
    return text.splitlines()[0]


def test_every_composed_sentence_verifies() -> None:
    entries = {e.id: e for e in CONTEXT}
    for question in (
        "the knob multiplied by the gradient at each step, what is it called?",
        "What is a learning rate?",
        "Which papers reduce KV cache memory?",
        "How does paged KV cache allocation work?",
        "difference between data and tensor parallelism",
        "what's the catch with paging the KV cache?",
        "give me an example of fitting longer contexts",
        "how much faster is paged KV allocation?",
        "our server runs out of memory on long prompts because of the KV cache, what helps?",
        "What is a block table?",
    ):
        text = answer(question)
        verified = verify(text, entries)
        assert verified.citations and all(c.supported for c in verified.citations), (question, text)
        assert not verified.dropped and not verified.unsupported, (question, text)


@pytest.mark.parametrize(
    ("question", "intent"),
    [
        ("what's the term for the knob multiplied by the gradient?", "name"),
        ("the knob multiplied by the gradient - what is it called?", "name"),
        ("difference between data and tensor parallelism", "compare"),
        ("Which papers reduce KV cache memory?", "papers"),
        ("is there research on paging the KV cache?", "papers"),
        ("How does ZeRO shard optimizer state?", "how"),
        ("what's the catch with paging?", "caveat"),
        ("give me an example of KV quantization", "example"),
        ("how much faster is it?", "number"),
        ("What is a learning rate?", "definition"),
        ("our server runs out of memory on long prompts, what helps?", "problem"),
        # the description before the question has cue words of its own; the asking sentence decides
        (
            "Vendor GEMM libs are used for prompt processing and for decoding. Anything that builds separate "
            "kernels for the two?",
            "problem",
        ),
        ("We serve e.g. Llama vs. Mistral on one node. What's the catch with paging?", "caveat"),
        ("give me an example of KV quantization. our cluster has 8 GPUs", "example"),  # no "?": all of it
        ("whats it called when you cap the gradient norm?", "name"),  # typed without the apostrophe
        ("a model approves the same share of every group: which fairness criterion is that?", "name"),
        ("which paper is that?", "papers"),  # not a concept's name
        ("and the version that keeps every value in a table, does it have a special name?", "name"),
        # "how much" inside a clause is part of what is asked how to do, not a number asked for
        ("How do people work out from traces how much time the stragglers cost?", "how"),
        ("it pages the cache. and how much faster is that?", "number"),
        # the name asked for without "called", or a thing described by what it does
        ("the optimizer that keeps a running mean of squared gradients, name?", "name"),
        ("I keep seeing two different names for that normalisation layer. what are they?", "name"),
        ("there's a term for a model that only memorised its training set. what is it?", "name"),
        ("what's the sampling trick where you keep only the most likely tokens up to a mass p?", "name"),
        ("in a transformer, which block mixes information across positions before the feed-forward part?", "name"),
        ("which gate in an LSTM cell decides what to drop from its memory?", "name"),
        ("the score a model must beat to count as a positive has a name. what is it?", "name"),
        ("what do statisticians call a sample that is far from all the others?", "name"),
        ("how do you call the part of a GAN that scores samples?", "name"),
        ("the phenomenon where gradients shrink layer after layer, what is it known as?", "name"),
        ("looking for the term: holding out each fold in turn", "name"),
        # a comparison that asks for a figure wants the figure
        ("liquid-cooled vs air-cooled racks, how many watts apart?", "number"),
    ],
)
def test_intents(question: str, intent: str) -> None:
    assert intent_of(question) == intent


@pytest.mark.parametrize(
    "question",
    [
        "what's the speedup that they report?",  # a figure
        "what's the throughput hit when a node dies?",
        "which company makes the gaudi accelerators?",  # a company: the refusal decides
        "which serving frameworks already integrate it?",  # systems: papers
        "which cuda env vars do I need for that?",  # a plural noun, not a verb
        "which foundry builds those chips?",
        "which paper introduced it?",
    ],
)
def test_a_described_figure_company_or_system_is_not_asked_by_name(question: str) -> None:
    assert intent_of(question) != "name"


def test_what_is_it_called_answers_with_the_name() -> None:
    text = answer("the scalar knob multiplied by the gradient on every update - what's it called?")
    assert first_line(text).startswith("learning rate: A scalar used to train a model via gradient descent")
    assert "[glossary:learning-rate]" in first_line(text)


def test_what_is_it_called_names_the_concept_the_search_put_first() -> None:
    """A description in the asker's words shares more words with a broad page than with the one it
    describes; the search (vectors and word-piece matches) ordered them, and its first concept is named."""
    dynamic = Entry("glossary:dynamic-model", "concept", "dynamic model", "A model that is frequently retrained.")
    broad = Entry(
        "glossary:machine-learning",
        "concept",
        "machine learning",
        "A program or system that builds (trains) a predictive model from input data.",
    )
    text = answer(
        "a model trained on input data that keeps getting retrained as new data streams in - what's that called?",
        [dynamic, broad],
    )
    assert first_line(text) == "dynamic model: A model that is frequently retrained [glossary:dynamic-model]."


def test_what_is_it_called_adds_a_neighbouring_concept_that_fits_about_as_well() -> None:
    """Neighbouring concepts (underfitting, overfitting) are what a description in the asker's words
    confuses; when the second fits the question about as well, it is named too, titled."""
    under = Entry(
        "glossary:underfitting",
        "concept",
        "underfitting",
        "Producing a model with poor predictive ability because the model hasn't fully captured the "
        "complexity of the training data.",
    )
    over = Entry(
        "glossary:overfitting",
        "concept",
        "overfitting",
        "Creating a model that matches the training data so closely that the model fails to make correct "
        "predictions on new data.",
    )
    question = "my model predicts badly even on its own training data, what's that called?"
    lines = answer(question, [over, under]).splitlines()
    assert lines[0].startswith("overfitting: Creating a model") and lines[-1].startswith("underfitting: ")
    assert "[glossary:learning-rate]" not in answer(question, [over, LR])  # a poor fit is left out


def test_a_pointer_to_the_named_concept_is_said_once_and_is_not_its_neighbour() -> None:
    """The pointer is the concept's other name; offered again as a "close alternative" it repeated itself."""
    lstm = Entry(
        "glossary:long-short-term-memory",
        "concept",
        "Long Short-Term Memory",
        "A type of cell in a recurrent neural network used to process sequences of data.",
    )
    short = Entry("glossary:lstm", "concept", "LSTM", "Abbreviation for Long Short-Term Memory.")
    lines = answer("that long short-term memory thing in recurrent nets, what is it called?", [short, lstm])
    lines = lines.splitlines()
    assert lines[0].startswith("Long Short-Term Memory: A type of cell")
    assert sum(line.startswith("LSTM: Abbreviation") for line in lines) == 1


def test_a_pointer_entry_leads_to_the_entry_it_points_to() -> None:
    text = answer("what's another word for step size, the thing multiplied by the gradient?", [STEP, LR])
    assert first_line(text).startswith("learning rate: A scalar")


def test_what_is_x_gives_xs_definition_not_a_synonym_pointer() -> None:
    text = answer("What is a learning rate?", [STEP, LR, KV_PAPER])
    assert first_line(text) == "A scalar used to train a model via gradient descent [glossary:learning-rate]."
    assert "Synonym" not in text


def test_a_word_form_or_spelling_of_the_title_finds_the_entry_that_shares_no_other_word() -> None:
    """ "'overfit'" asks about `Overfitting`, "iid" about `i.i.d.`: found by name, not by shared words."""
    overfitting = Entry(
        "glossary:overfitting",
        "concept",
        "overfitting",
        "Creating a model that matches the training data so closely that the model fails to make correct "
        "predictions on new data.",
    )
    iid = Entry("glossary:i-i-d", "concept", "i.i.d.", "Abbreviation for independently and identically distributed.")
    performance = Entry("glossary:performance", "concept", "performance", "Overloaded term with several meanings.")
    context = [overfitting, iid, performance]
    said = answer("my teammate keeps saying our classifier is 'overfit'. in plain terms, what does that mean?", context)
    assert first_line(said).startswith("Creating a model that matches the training data")
    assert "[glossary:overfitting]" in said and "performance" not in said
    assert "[glossary:i-i-d]" in first_line(answer("what does 'iid' mean in practice?", context))


def test_another_name_is_not_the_name_the_asker_already_used() -> None:
    dqn_page = Entry(
        "glossary:deep-q-network-dqn",
        "concept",
        "Deep Q-Network (DQN)",
        "In Q-learning, a deep neural network that predicts Q-functions. Critic is a synonym for Deep Q-Network.",
    )
    dqn = Entry("glossary:dqn", "concept", "DQN", "Abbreviation for Deep Q-Network.")
    critic = Entry("glossary:critic", "concept", "critic", "Synonym for Deep Q-Network.")
    said = answer(
        "is there another name people use for a DQN, the network that estimates Q-values?", [dqn_page, dqn, critic]
    )
    assert first_line(said) == "critic: Synonym for Deep Q-Network [glossary:critic]."
    alone = answer("is there another name people use for a DQN?", [dqn_page, dqn])  # no pointer but the asker's own
    assert first_line(alone) == "Critic is a synonym for Deep Q-Network [glossary:deep-q-network-dqn]."


def test_which_papers_lists_titles_with_their_contribution() -> None:
    text = answer("Which papers reduce KV cache memory?")
    lines = text.splitlines()
    assert lines[0].startswith("PageKV: Paged Memory for the KV Cache: In this paper, we propose PageKV")
    assert any(line.startswith("QuantKV: Four-bit Keys and Values: We present QuantKV") for line in lines)


def test_how_does_it_work_leads_with_the_contribution_then_the_method() -> None:
    text = answer("How does paged KV cache allocation work?")
    lines = text.splitlines()
    assert lines[0].startswith("In this paper, we propose PageKV")
    assert any("through a block table" in line for line in lines[1:])


def test_how_adds_a_close_alternative_titled_and_leaves_out_one_that_fits_poorly() -> None:
    question = "How does the KV cache of long prompts fit in GPU memory?"
    lines = answer(question, [KV_PAPER_2, KV_PAPER]).splitlines()
    assert lines[0].startswith("We present QuantKV") and lines[0].endswith("[arxiv:2501.00002].")
    assert lines[-1].startswith("PageKV: Paged Memory for the KV Cache: In this paper, we propose PageKV")
    assert "[glossary:learning-rate]" not in answer(question, [KV_PAPER_2, LR])


def test_compare_gives_each_sides_definition() -> None:
    assert compare_sides("difference between data and tensor parallelism") == (
        "data parallelism",
        "tensor parallelism",
    )
    lines = answer("difference between data and tensor parallelism").splitlines()
    assert lines[0].startswith("data parallelism: A way of scaling training by replicating")
    assert lines[1].startswith("tensor parallelism: A way of splitting a single layer")


def test_compare_without_concept_pages_says_so_and_quotes_what_speaks_of_each_side() -> None:
    """No page for either side: the papers' sentences that name each side, not their contributions."""
    survey = Entry(
        "arxiv:2501.00003",
        "abstract",
        "Parallelism for Recommendation Models",
        "We present RecPar, a training system for recommendation models. "
        "For data parallelism, we replicate the model and compress gradients between replicas.",
    )
    comms = Entry(
        "arxiv:2501.00004",
        "abstract",
        "Communication in Distributed Inference",
        "We characterise the traffic of distributed LLM inference. "
        "Tensor parallelism splits each layer across GPUs and incurs heavy all-reduce traffic.",
    )
    said = answer("difference between data and tensor parallelism", [survey, comms, KV_PAPER])
    lines = said.splitlines()
    assert lines[0].startswith("The knowledge has no concept page for “data parallelism” or “tensor parallelism”")
    assert lines[1] == (
        "Parallelism for Recommendation Models: For data parallelism, we replicate the model and compress "
        "gradients between replicas [arxiv:2501.00003]."
    )
    assert lines[2].startswith("Communication in Distributed Inference: Tensor parallelism splits each layer")
    entries = {e.id: e for e in (survey, comms, KV_PAPER)}
    assert all(c.supported for c in verify(said, entries).citations)


@pytest.mark.parametrize(
    ("question", "sides"),
    [
        (
            "Option A: page the cache in fixed blocks. Option B: quantize keys and values to four bits. "
            "What's the trade-off?",
            ("page the cache in fixed blocks", "quantize keys and values to four bits"),
        ),
        (
            "one camp pages the cache in fixed blocks, another quantizes it to four bits. how do they differ?",
            ("pages the cache in fixed blocks", "quantizes it to four bits"),
        ),
        (
            "what's the difference between fixing idle time caused by slow links and fixing idle time caused "
            "by uneven layers?",
            ("fixing idle time caused by slow links", "fixing idle time caused by uneven layers"),
        ),
        (
            "two ways to fit long prompts: page the cache on demand, or squeeze every value into four bits. "
            "which wins when?",
            ("page the cache on demand", "squeeze every value into four bits"),
        ),
        (
            "serving long chats: paging the cache through a block table vs quantizing keys and values. "
            "how do these differ in practice?",
            ("paging the cache through a block table", "quantizing keys and values"),
        ),
    ],
)
def test_a_comparison_of_two_described_approaches_is_read_with_its_sides(question: str, sides: tuple) -> None:
    assert intent_of(question) == "compare"
    assert described_sides(question) == sides


@pytest.mark.parametrize(
    "question",
    [
        "on-phone chatbot that drives the gpu and npu at once — how much faster vs sticking to one of them?",
        "could you give me an example of a heuristic vs a learned model for autoscaling?",
        "what's the trade-off of paging the KV cache?",  # one approach: a caveat
        "What's the trade-off between these two, and is there literature on each?",  # points back, names nothing
    ],
)
def test_a_figure_an_example_or_one_approach_is_not_a_described_comparison(question: str) -> None:
    assert intent_of(question) != "compare"


def test_a_comparison_of_described_approaches_cites_an_entry_for_each_side() -> None:
    """The whole question's search finds one side first; the other side's entry comes from further down,
    though an entry about neither sits between them."""
    question = (
        "Two ways to fit 128k-token prompts: quantize the cached keys and values to four bits, or store the "
        "cache in pages allocated on demand through a block table. How do they differ?"
    )
    said = answer(question, [KV_PAPER_2, LR, KV_PAPER])
    lines = said.splitlines()
    assert lines[0] == (
        "QuantKV: Four-bit Keys and Values: We present QuantKV, which quantizes the KV cache to four bits per "
        "value to fit longer contexts [arxiv:2501.00002]."
    )
    assert lines[1].startswith("PageKV: Paged Memory for the KV Cache: In this paper, we propose PageKV")
    assert lines[1].endswith("[arxiv:2501.00001].")
    entries = {e.id: e for e in (KV_PAPER_2, LR, KV_PAPER)}
    assert all(c.supported for c in verify(said, entries).citations)
    # the search's first entry answers the side it fits, whichever the question names first
    swapped = question.replace(
        "quantize the cached keys and values to four bits, or store the cache in pages allocated on demand "
        "through a block table",
        "store the cache in pages allocated on demand through a block table, or quantize the cached keys and "
        "values to four bits",
    )
    assert [line[:6] for line in answer(swapped, [KV_PAPER_2, LR, KV_PAPER]).splitlines()] == ["PageKV", "QuantK"]


def test_a_comparison_searches_each_side(seed_assistant: Assistant) -> None:
    """Each side of "A vs B" is searched on its own: both follow the best match of the whole question."""
    question = "compare serverless inference and pipeline parallelism"
    found = [s.entry_id for s in seed_assistant.chain.retrieve(Reading(question)).sources]
    alone = [seed_assistant.search(side, k=1)[0].entry_id for side in ("serverless inference", "pipeline parallelism")]
    whole = seed_assistant.search(question, k=1)[0].entry_id
    expected = list(dict.fromkeys([whole, *alone]))
    assert found[: len(expected)] == expected


def test_caveat_example_and_number_lead_with_that_sentence() -> None:
    assert first_line(answer("what's the catch with paging the KV cache?")).startswith("However, the block table")
    assert first_line(answer("give me an example of fitting longer contexts")).startswith("For example, a 70B")
    assert first_line(answer("how much faster is paged KV allocation?")).startswith("PageKV raises throughput by 2.4x")


@pytest.mark.parametrize(
    "figure",
    [
        "up to 5.79$\\times$ lower tail latency",
        "26.6 percentage points fewer latency misses",
        "3.1× lower tail latency",
    ],
)
def test_a_number_question_finds_figures_as_abstracts_write_them(figure: str) -> None:
    """LaTeX's $\\times$, "percentage points" and a unicode × are figures; the first entry's figure leads,
    not a percentage of the second entry's."""
    mover = Entry(
        "arxiv:2501.00004", "abstract", "Mover", f"We present Mover, a planner for serving. It gives {figure}."
    )
    other = Entry("arxiv:2501.00005", "abstract", "Other", "We present Other. It cuts the first-token time by 11-52%.")
    text = answer("and how much did it cut the slowest-request latency?", [mover, other])
    assert first_line(text).startswith("It gives") and "[arxiv:2501.00004]" in first_line(text)


def test_a_cue_word_does_not_make_a_weaker_entry_the_answer() -> None:
    """The best entry has no caveat word; a paper that only shares "accelerators" and says "bottleneck"
    does not lead a caveat answer: the best entry's answer does."""
    study = Entry(
        "arxiv:2501.00006",
        "abstract",
        "Divergence Across Accelerators",
        "This paper presents a study of output divergence when models move between NVIDIA, Ascend and Apple "
        "accelerators. Converted models give different outputs on the new accelerators.",
    )
    other = Entry(
        "arxiv:2501.00007",
        "abstract",
        "Embedding Tables",
        "The bottleneck of recommender inference on accelerators is the embedding layer.",
    )
    text = answer(
        "pitfalls of moving models from NVIDIA to Ascend or Apple accelerators: same outputs?", [study, other]
    )
    assert "[arxiv:2501.00006]" in first_line(text) and "arxiv:2501.00007" not in text


def test_a_problem_is_answered_with_what_the_best_paper_does() -> None:
    text = answer("our server runs out of memory on long prompts because of the KV cache, what helps?")
    assert first_line(text).startswith("In this paper, we propose PageKV")


def test_a_problem_answered_by_a_concept_page_names_the_concept() -> None:
    """A glossary definition rarely says its own name ("A way of scaling training by replicating ..."),
    so an answer that quotes it says first what it is quoting; a sentence that names it stays as it is."""
    text = answer("how do I scale training by replicating the model on several devices?", [DATA_PAR, TENSOR_PAR])
    assert first_line(text).startswith("data parallelism: A way of scaling training by replicating")
    verified = verify(text, {e.id: e for e in (DATA_PAR, TENSOR_PAR)})
    assert verified.citations and all(c.supported for c in verified.citations), text
    named = answer("each step the algorithm multiplies something by the gradient, which knob helps?", [LR])
    assert "learning rate: " not in named and "learning rate" in named


def test_shop_talk_finds_the_sentence_that_says_it_in_the_literatures_words() -> None:
    """No word of the question is in the entry; "prompt processing", "token generation" and "cards"
    are what it calls prefill, decode and GPUs."""
    split = Entry(
        "arxiv:2501.00003",
        "abstract",
        "SplitServe: Phase-Split Serving",
        "We present SplitServe, a serving system for large language models. "
        "SplitServe places prefill and decode on separate GPU pools so that neither phase stalls the other.",
    )
    text = answer("can prompt processing and token generation happen on different cards?", [split])
    assert "places prefill and decode on separate GPU pools" in text and "[arxiv:2501.00003]" in text


def test_no_entry_but_papers_mention_it_is_said_plainly() -> None:
    assert subject_of("What is a block table?") == "block table"
    assert subject_of("what does one-vs-all actually mean if I've got three labels?") == "one-vs-all"
    lines = answer("What is a block table?").splitlines()
    assert lines[0] == "The knowledge has no concept page for “block table”, but these papers mention it:"
    assert lines[1].startswith("PageKV: Paged Memory for the KV Cache: PageKV avoids fragmentation")
    assert lines[1].endswith("[arxiv:2501.00001].")


@pytest.mark.parametrize(
    ("question", "bare"),
    [
        ("so what is a learning rate anyway?", "what is a learning rate?"),
        ("ok but what even is a learning rate?", "what is a learning rate?"),
        ("Sorry, dumb question: what exactly is a learning rate, in plain words?", "what is a learning rate?"),
        ("what's a learning rate, really?", "what's a learning rate?"),
        ("and what is it called?", "and what is it called?"),  # "and" leans back: a follow-up stays one
        ("When someone says 0.9 sparse, what exactly is being measured?", None),  # no filler at the start
        ("anyway?", None),  # fillers only: kept whole
    ],
)
def test_fillers_around_a_question_do_not_change_it(question: str, bare: str | None) -> None:
    assert without_fillers(question) == (bare or question)


@pytest.mark.parametrize(
    "question",
    [
        "What is a learning rate?",
        "so what is a learning rate anyway?",
        "what even is a learning rate?",
        "ok but what is a learning rate really?",
        "what's a learning rate - the step size thing or something else?",
        "what is a learning rate, in simple terms?",
    ],
)
def test_what_is_x_is_read_the_same_whatever_is_said_around_it(question: str) -> None:
    assert intent_of(question) == "definition"
    assert subject_of(question) == "learning rate"
    text = answer(question, [STEP, LR, KV_PAPER])
    assert first_line(text) == "A scalar used to train a model via gradient descent [glossary:learning-rate]."


def test_a_subject_is_cut_at_a_dash_or_comma_only_after_a_name() -> None:
    assert subject_of("what is NCCL, a library or a protocol?") == "nccl"
    assert subject_of("what even is a TPU - just a GPU by another name?") == "tpu"
    # a described subject is kept whole: what follows the dash is part of the description
    described = "what's the failure it's guarding against - neurons leaning too hard on a few others?"
    assert subject_of(described).endswith("neurons leaning too hard on a few others")


def test_a_concept_page_that_only_mentions_the_name_asked_about_is_not_its_definition() -> None:
    """ "What's a GPU?" with no GPU page: the page of "device", which lists GPUs among other hardware, is
    not what a GPU is; the honest answer says there is no page and quotes the papers that mention it."""
    device = Entry(
        "glossary:device",
        "concept",
        "device",
        "A category of hardware that can run a TensorFlow session, including CPUs, GPUs, and TPUs.",
    )
    lines = answer("what's a GPU?", [device, KV_PAPER]).splitlines()
    assert lines[0] == "The knowledge has no concept page for “GPU”, but these papers mention it:"
    assert lines[1].startswith("PageKV: Paged Memory for the KV Cache: Serving long prompts runs out of GPU memory")
    assert "glossary:device" not in "\n".join(lines)
    # a description of several words may still be answered by the definition that shares them
    text = answer("what is TensorFlow session hardware?", [device, KV_PAPER])
    assert first_line(text).startswith("A category of hardware that can run a TensorFlow session")


def test_end_to_end_on_the_seed_corpus(seed_assistant: Assistant) -> None:
    called = seed_assistant.ask("what do you call the processor built for highly parallel tensor workloads?")
    assert called.text.startswith("GPU: ") and called.citations[0].entry_id == "MLD-0472"
    caveat = seed_assistant.ask("What caveat does a GPU have?")
    assert "memory" in caveat.text.splitlines()[0].lower() and caveat.citations[0].supported


def test_a_quoted_term_in_a_definition_question_leads_the_sources(seed_assistant: Assistant) -> None:
    answer = seed_assistant.ask(
        "my teammate keeps saying we should just use a 'GPU' - what does that mean in plain terms?"
    )
    assert answer.sources[0].entry_id == "MLD-0472" and answer.sources[0].rank == 1
    assert answer.citations[0].entry_id == "MLD-0472" and "parallel" in answer.text.lower()


GLOSSARY_TERMS = {
    "Long Short-Term Memory (LSTM)",
    "LSTM",
    "forget gate",
    "recurrent neural network",
    "vanishing gradient problem",
    "episode",
    "termination condition",
    "reinforcement learning (RL)",
    "agent",
    "hidden layer",
    "sequence model",
}


@pytest.fixture(scope="module")
def glossary_assistant(tmp_path_factory: pytest.TempPathFactory) -> Assistant:
    """A real index of a few real glossary terms: neighbours that a name question must tell apart."""
    return glossary_assistant_of(tmp_path_factory.mktemp("glossary"), GLOSSARY_TERMS)


@pytest.mark.parametrize(
    ("history", "question", "name", "not_name"),
    [
        (
            [
                ("user", "How do LSTMs keep context over long sequences?"),
                ("assistant", "They use gated cells [glossary:long-short-term-memory-lstm]."),
            ],
            "and what's the name for the part inside that cell that decides which old information gets dropped?",
            "forget gate",
            "Long Short-Term Memory",
        ),
        (
            [
                ("user", "In RL, what is an episode?"),
                ("assistant", "Each of the repeated attempts by the agent to learn an environment [glossary:episode]."),
            ],
            "and what do you call the rule that decides when one of those attempts is over?",
            "termination condition",
            "episode",
        ),
    ],
)
def test_a_name_follow_up_names_something_new_not_what_was_just_discussed(
    glossary_assistant: Assistant, history, question: str, name: str, not_name: str
) -> None:
    answer = glossary_assistant.ask(question, history)
    first = first_line(answer.text)
    assert first.lower().startswith(name) and not first.startswith(not_name), answer.text


def test_concepts_named_anywhere_in_a_question(glossary_assistant: Assistant) -> None:
    named = glossary_assistant.retriever.concepts_named_in("How do LSTMs compare with a recurrent neural network?")
    assert {"glossary:lstm", "glossary:recurrent-neural-network"} <= set(named)
    assert "glossary:episode" not in named


def test_a_name_question_searches_concepts_unless_it_asks_for_a_system(seed_assistant: Assistant) -> None:
    """ "What is it called?" wants a concept's name: papers that mention the idea are not candidates; a
    system's, a paper's or a technique's name may be a paper's, so those search everything."""
    concept = seed_assistant.ask("what do you call the chip that large models are trained and served on?")
    assert concept.sources and {s.kind for s in concept.sources} == {"concept"}
    system = seed_assistant.ask("what's the system called that serves LLMs without keeping servers running?")
    assert "abstract" in {s.kind for s in system.sources}


def test_a_technology_a_page_explains_does_not_name_the_page(seed_assistant: Assistant) -> None:
    retriever = seed_assistant.retriever
    assert retriever.name_lookup("NCCL") == ["MLD-0472"]  # found by the technology it explains
    assert retriever.concepts_named_in("how fast is NCCL on one node?") == []  # but the asker named NCCL, not GPU
    assert retriever.concepts_named_in("what do GPUs do?") == ["MLD-0472"]


SOFTMAX = Entry(
    "glossary:softmax",
    "concept",
    "softmax",
    "A function that determines probabilities for each possible class in a multi-class classification model.",
)
SIGMOID = Entry(
    "glossary:sigmoid-function",
    "concept",
    "sigmoid function",
    "A function that squishes an input or output value into a constrained range, usually 0 to 1 or -1 to +1.",
)
DROPOUT = Entry(
    "glossary:dropout-regularization",
    "concept",
    "dropout regularization",
    "A form of regularization useful in training neural networks. It removes a random selection of units.",
)
CO_ADAPTATION = Entry(
    "glossary:co-adaptation",
    "concept",
    "co-adaptation",
    "When neurons predict patterns by relying almost exclusively on specific other neurons. Dropout reduces it.",
)


@pytest.mark.parametrize(
    ("question", "sides"),
    [
        ("is softmax the same as sigmoid?", ("softmax", "sigmoid")),
        ("Are epochs any different from iterations?", ("epochs", "iterations")),
        ("is a tensor the same thing as an array?", ("tensor", "array")),
    ],
)
def test_is_a_the_same_as_b_is_a_comparison(question: str, sides: tuple[str, str]) -> None:
    assert intent_of(question) == "compare"
    assert compare_sides(question.lower()) == sides


def test_a_side_named_by_the_head_of_a_title_is_answered_by_that_page() -> None:
    """ "sigmoid" is no page's title, but "sigmoid function" is the only page it heads: its definition,
    not the sentence of another page that mentions sigmoids."""
    logits = Entry(
        "glossary:logits",
        "concept",
        "logits",
        "The vector of raw predictions that a classification model generates, passed to a sigmoid or a softmax.",
    )
    lines = answer("is softmax the same as sigmoid?", [SOFTMAX, logits, SIGMOID]).splitlines()
    assert lines[0].startswith("softmax: A function that determines probabilities")
    assert lines[1].startswith("sigmoid function: A function that squishes an input")


@pytest.mark.parametrize(
    "question",
    ["explain dropout to me like I'm five", "eli5: dropout", "describe dropout briefly", "what is dropout?"],
)
def test_explain_x_asks_what_x_is(question: str) -> None:
    assert intent_of(question) == "definition"
    assert subject_of(question) == "dropout"
    text = answer(question, [CO_ADAPTATION, DROPOUT])
    definition = "A form of regularization useful in training neural networks [glossary:dropout-regularization]."
    assert first_line(text) == definition


def test_explain_how_asks_how_and_explain_how_we_describes_a_problem() -> None:
    assert intent_of("explain how ZeRO shards optimizer state") == "how"
    assert intent_of("Explain how we should size our inference cluster") == "problem"
    assert intent_of("explain the difference between data and tensor parallelism") == "compare"


def test_a_subject_heading_two_titles_names_neither() -> None:
    """ "batch" heads "batch size" and "batch normalization": the subject does not say which page it is,
    while "sigmoid" heads one title only."""
    size = Entry("glossary:batch-size", "concept", "batch size", "The number of examples in a batch.")
    norm = Entry("glossary:batch-normalization", "concept", "batch normalization", "Normalizing a layer's inputs.")
    views = entry_views(candidates_of(blocks_of([norm, size, SIGMOID])), OfflineAnswerSettings())
    assert named(views, "batch") is None
    found = named(views, "sigmoid")
    assert found is not None and found.entry_id == "glossary:sigmoid-function"


class _Closeness:
    """Closeness in meaning as a table: the sentences that sit close to any question about their topic."""

    def __init__(self, close: dict[str, float]) -> None:
        self.close = close

    def of(self, texts: list[str]) -> list[float]:
        return [self.close.get(text, 0.0) for text in texts]


@pytest.mark.parametrize(("kind", "expected"), [("document", "fact"), ("concept", "close")])
def test_a_documents_sentence_is_chosen_by_its_words_an_entrys_with_its_meaning_too(kind: str, expected: str) -> None:
    """A section's sentences all sit close to a question about its topic; closeness in meaning ranked the one
    stating the fact lower than its words do on six documentation sets (docs/evaluation.md), so a section's
    sentence is chosen by its words. A concept page's or an abstract's still weighs its meaning."""
    from assistant.answer.models.extractive import Candidate, best_sentence

    close = Candidate("doc:a.md#s", 0, 0, kind, "Backfill lets small jobs start early.")
    fact = Candidate("doc:a.md#s", 0, 1, kind, "bf_interval: seconds between backfill runs, default 30.")
    views = entry_views([close, fact], OfflineAnswerSettings(), _Closeness({close.text: 0.9}))  # type: ignore[arg-type]
    chosen = best_sentence(views[0], {id(close): 0.3, id(fact): 0.5})
    assert chosen is (fact if expected == "fact" else close)


def document(entry_id: str, title: str, text: str) -> Entry:
    return Entry(entry_id, "document", title, text)


def test_a_documents_answer_is_led_by_the_section_whose_sentence_fits_clearly_better() -> None:
    """The search put the page's fourth step first; the fifth says the answer in the question's words."""
    terminating = document(
        "doc:recovery.md#observe-terminating",
        "Failure recovery › Observe the pod terminating",
        "Without the recovery policy the pod stays Terminating until its node comes back.\n"
        "After the grace period the pod is marked for termination.",
    )
    failed = document(
        "doc:recovery.md#observe-failed",
        "Failure recovery › Observe the pod fail",
        "In total the pod on a dead node turns Failed 90 seconds after it was marked for termination.",
    )
    text = answer(
        "How long after a pod on a dead node is marked for termination does it end up Failed?", [terminating, failed]
    )
    assert first_line(text).startswith("In total the pod on a dead node turns Failed 90 seconds"), text
    # by less than `sentence_lead` better, the search's order stands
    question = "How long after a pod on a dead node is marked for termination does it end up Failed?"
    strict = replace(OfflineAnswerSettings(), sentence_lead=10.0)
    text = extract_answer(Reading(question), blocks_of([terminating, failed]), strict)
    assert first_line(text).endswith("[doc:recovery.md#observe-terminating]."), text
    # the search's first section leads when its own sentence fits the question best
    text = answer("What happens to the pod after the grace period?", [terminating, failed])
    assert first_line(text).endswith("[doc:recovery.md#observe-terminating]."), text


def test_each_of_the_next_two_sections_that_fits_as_well_is_quoted_titled() -> None:
    """Of a team's documents the section that says it was third about as often as second: both close
    alternatives are quoted (the pack's answers quote one)."""
    sections = [
        document(
            "doc:retention.md#history", "Retention › History", "Completed workflows are archived to the database."
        ),
        document(
            "doc:archive.md#archive", "Archive › Setup", "The workflow archive keeps completed workflows in Postgres."
        ),
        document(
            "doc:gc.md#ttl", "Garbage collection › TTL", "Completed workflows are deleted after the TTL of 7 days."
        ),
    ]
    lines = answer("Where do completed workflows go?", sections).splitlines()
    assert any(line.startswith("Archive › Setup: ") for line in lines), lines
    assert any(line.startswith("Garbage collection › TTL: ") for line in lines), lines


def test_a_how_question_on_documents_is_answered_by_the_best_sections_sentences() -> None:
    """ "How does X work?" is answered from a paper by its contribution and method sentences; a section of a
    team's documents has neither, and says how in plain sentences (the best section's best ones)."""
    batcher = document(
        "doc:batcher.md#how-it-works",
        "Request batcher › How it works",
        "The batcher sits in the agent sidecar in front of the model server.\n"
        "It collects requests until maxBatchSize requests are waiting or maxLatency milliseconds pass.\n"
        "Then it sends one combined prediction call to the model.",
    )
    question = "How does the request batcher work?"
    assert Reading(question).intent == "how"
    text = answer(question, [batcher])
    assert "maxBatchSize" in text and "one combined prediction call" in text, text
