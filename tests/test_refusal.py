"""The refusal decision: what kind of value a question asks for, and whether any best entry states it."""

from __future__ import annotations

from dataclasses import replace

import pytest

from assistant.answer.refusal import (
    Evidence,
    decide,
    gather,
    kind_supported,
    known_word,
    unknown_names,
)
from assistant.question.names import names_in
from assistant.question.reading import Reading
from assistant.question.value_kinds import asked_kind, pattern_kind
from assistant.tuning import RefusalSettings
from assistant.types import Entry


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("who first wrote Memcached?", "person"),  # an adverb between "who" and the verb
        ("who came up with the transformer?", "person"),
        ("Which is the better cloud for fine-tuning: Vast or Paperspace?", "opinion"),
        ("Slurm or Kubernetes for our lab - which would you pick?", "opinion"),
        ("how do I turn off swap on Ubuntu so it stays off?", "howto"),
        ("what are the steps to install ROCm 6 on a fresh box?", "howto"),
        ("how can we raise the open-files limit on Debian 12?", "howto"),
        ("how much HBM3E does one B200 have?", "spec"),
        ("what memory bandwidth does one Gaudi 3 have?", "spec"),
        ("How many GPUs does Tesla run in its training cluster?", "count"),
        ("ok. how many engineers work on PyTorch at Meta?", "count"),
        # commands and config files are instructions, which papers and glossary pages do not hold
        ("which nvidia-smi commands enable persistence mode on every card?", "howto"),
        ("what do I put in containerd's config.toml to expose the GPUs?", "howto"),
        ("which flags should we pass so NCCL uses the second NIC?", "howto"),
        ("install the CUDA toolkit on a fresh box, step by step", "howto"),
        # the assistant's own view or forecast
        ("is TensorRT worth the hassle for a small team? what would you do?", "opinion"),
        ("thinking of moving our cluster to Ray. what's your take?", "opinion"),
        ("do you think photonic interconnects will replace copper inside racks?", "opinion"),
        # everyday ways of asking the same kinds
        ("what would an 8-GPU Gaudi box set us back?", "price"),
        ("what's the going rate for a spot A100 these days?", "price"),
        ("since when does JAX ship with a sharding API?", "date"),
        ("is the GB300 out yet?", "date"),
        ("who's behind the Mojo language?", "person"),
        ("what company is behind the Dojo chip?", "company"),
        ("what's the number of SMs on an L40S?", "spec"),  # a datasheet figure of a named product
        ("what's the number of people on the PyTorch core team?", "count"),
        ("what's the FP8 throughput of an MI325X?", "spec"),
        ("how fast is PCIe 6 per lane?", "spec"),
        ("what flags do I pass to torchrun for two nodes?", "howto"),
        ("how do I get kubectl to list GPU allocations?", "howto"),
        ("vLLM or TGI: which do you prefer?", "opinion"),
        ("what's the best open-source LLM to self-host right now?", "opinion"),
    ],
)
def test_the_value_a_question_asks_for(question: str, kind: str) -> None:
    assert asked_kind(question) == kind


@pytest.mark.parametrize(
    "question",
    [
        # a count inside a description of a method is not a count asked for
        "Two schedulers: one buckets requests by size, the other re-estimates every round how many tokens "
        "each reply still needs. What's the trade-off?",
        "what's the catch? how many requests per second can one node actually handle?",  # a measured rate
        "roughly how many watt-hours does one long chat answer use on an H100?",  # a measurement
        "which is the better bet for million-token training: sparse attention or exact attention on more GPUs?",
        "how can we enable overlap of communication and compute in pipeline training?",
        "how many fewer machines would we need if the scheduler packed pods better?",
        # "step by step" inside a description of a method is not a request for instructions
        "one scheduler grows the GPUs given to each request, step by step, as its deadline nears: does it help?",
        "do you think about memory first when choosing a parallelism layout?",  # no forecast asked
        "Newton-Schulz gets pricey for huge matrices. How can you cut that cost?",  # compute, not money
        "the power draw swings every step. What options exist to smooth it out?",  # not command-line options
        "our docker containers take a minute to start on each GPU node; any research on that?",  # no command asked
        # a price as a figure of speech, and a gain a paper reports, not a product's spec
        "moving from the simple multi-GPU wrapper to the fully sharded one cuts the time, but is there a price in "
        "output quality?",
        "is the price we pay in accuracy for 4-bit weights worth it?",
        "how much more bandwidth per millimetre of chip edge, and how much less power, did that proposal claim?",
    ],
)
def test_technical_questions_ask_for_no_value_the_knowledge_cannot_hold(question: str) -> None:
    assert asked_kind(question) is None


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        # phrasings no pattern knows, read by the learned reader (value_kinds.py); none is a training question
        ("ballpark, what does a bluefield-3 card go for these days?", "price"),
        ("How much money would it be to rent one H100 on AWS for one hour? I need to plan the budget.", "price"),
        ("who's the lead maintainer of DeepSpeed these days?", "person"),
        ("which outfit makes the Trainium chips?", "company"),
        ("exact helm values to turn on mps gpu sharing via the nvidia gpu operator on our k8s cluster?", "howto"),
        ("could you walk me through enabling MIG on an A100 with nvidia-smi?", "howto"),
        ("How much RAM and how many logic cells does the AMD Kria KV260 board have?", "spec"),
        ("honestly, is it worth switching our team from Horovod to FSDP?", "opinion"),
    ],
)
def test_the_reader_finds_the_kind_in_phrasings_the_patterns_miss(question: str, kind: str) -> None:
    assert pattern_kind(question) is None
    assert asked_kind(question) == kind


@pytest.mark.parametrize(
    "question",
    [
        # a value mentioned in the setup, not asked for: the patterns read a price, the reader is sure it is none
        "When a regression dataset has a handful of wildly wrong targets, how do absolute-error and squared-error "
        "objectives behave differently? I'm choosing one for a noisy pricing task.",
        "Our monthly API invoice went from about $2k to $11k with the same number of sessions once every call "
        "shipped all tool schemas. Is there work on trimming that?",
    ],
)
def test_a_value_mentioned_in_passing_is_not_asked_for(question: str) -> None:
    assert pattern_kind(question) is not None
    assert asked_kind(question) is None


def entry(text: str) -> Entry:
    return Entry("arxiv:0000.00001", "abstract", "A study", text)


def test_a_value_counts_only_about_the_thing_asked() -> None:
    priced = entry("Renting one H100 costs $2.50 per hour on the spot market.")
    assert kind_supported("price", Reading("what does an H100 cost per hour?"), [priced])
    assert not kind_supported(
        "price", Reading("what does an MI300X cost per hour?"), [priced]
    )  # another product's price


def test_the_offline_model_refuses_an_unsupported_value_an_llm_judges_unless_the_name_is_unknown() -> None:
    thresholds = RefusalSettings()
    about_known = Evidence(confidence=0.6, kind="person", kind_supported=False)
    assert decide(about_known, thresholds, model_judges=False).refuse
    assert not decide(about_known, thresholds, model_judges=True).refuse
    about_unknown = Evidence(confidence=0.6, kind="spec", kind_supported=False, unknown_names=("MI355X",))
    decision = decide(about_unknown, thresholds, model_judges=True)
    assert decision.refuse and "MI355X" in decision.reason


def test_a_count_is_stated_only_by_a_number_next_to_the_thing_counted() -> None:
    fleet = entry("We run the study on a cluster of 4,096 GPUs connected by InfiniBand.")
    assert kind_supported("count", Reading("how many GPUs were in the study's cluster?"), [fleet])
    assert not kind_supported("count", Reading("how many InfiniBand switches were in the study's cluster?"), [fleet])


def test_a_market_count_needs_the_sentence_to_say_sold_or_shipped() -> None:
    boards = entry("We benchmark 25 models on three Jetson boards and two Raspberry Pi boards.")
    assert kind_supported("count", Reading("how many Jetson boards did the benchmark use?"), [boards])
    assert not kind_supported("count", Reading("how many Jetson boards has NVIDIA sold so far?"), [boards])


def test_a_count_of_the_thing_as_the_literature_names_it() -> None:
    run = entry("When training a 352B MoE model on 1,440 NVIDIA Hopper GPUs, the system reaches 1.41M tokens/s.")
    asked = "How many graphics cards did it take?"
    assert kind_supported("count", Reading(f"It trained a 352-billion-parameter model. {asked}"), [run])
    assert not kind_supported("count", Reading(f"It trained a 175-billion-parameter model. {asked}"), [run])
    served = entry(
        "Small models serve 128 concurrent requests, while larger models saturate with two concurrent users."
    )
    assert kind_supported("count", Reading("How many people at once can the larger models serve?"), [served])


def test_a_spelt_out_size_is_the_name_an_abstract_abbreviates() -> None:
    vocabulary = frozenset({"352b", "moe", "70b"})
    assert unknown_names(Reading("Someone trained a 352-billion-parameter MoE. How big?").names, vocabulary) == ()
    assert unknown_names(Reading("How fast is the 70-billion one?").names, vocabulary) == ()
    assert unknown_names(Reading("How fast is the 13-billion one?").names, vocabulary) == ("13-billion",)


def test_a_measurement_or_a_compound_of_known_words_is_no_unknown_name() -> None:
    """ "64-GPU" is a value and "CPU-offload" the pages' "CPU offload"; an id with a number ("us-east-1") or a
    word no page has ("ZenFlux-offload") stays unknown."""
    vocabulary = frozenset({"cpu", "offload", "us", "east", "1", "zero", "gpu"})
    asked = "How do I resume a 64-GPU ZeRO run with CPU-offload on 32 GPUs in us-east-1 or with ZenFlux-offload?"
    assert unknown_names(Reading(asked).names, vocabulary) == ("us-east-1", "ZenFlux-offload")


def test_names_that_set_the_scene_need_only_be_in_the_entry_names_asked_about_in_the_sentence() -> None:
    forecast = entry(
        "It is built into the query engine of BigQuery in Google Cloud with a simple SQL interface. "
        "It can forecast 100 million time series using only 1.5 hours."
    )
    setup = "I read about a forecasting model built into Google's warehouse, usable with SQL. "
    assert kind_supported("count", Reading(setup + "How many separate series could it handle in one go?"), [forecast])
    fleet = entry("ByteDance trains its LLMs in production. Our cluster has 12,288 GPUs.")
    assert not kind_supported("count", Reading("how many GPUs are in ByteDance's LLM training cluster?"), [fleet])


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("what's the price in euros of an H100?", "price"),
        ("what price did they set for the B200?", "price"),
        ("how much HBM does an H200 have?", "spec"),
    ],
)
def test_a_price_or_spec_asked_plainly_is_still_asked(question: str, kind: str) -> None:
    assert pattern_kind(question) == kind


def test_words_typed_without_their_apostrophe_are_not_unknown_topic_words() -> None:
    """ "whats" and "tho" are in no entry, but they are the asker's typing, not an off-topic subject: in the
    follow-up "why bother tho, whats wrong with pasting the raw readings into the prompt?" every other word
    is known, so no word of it is unknown."""
    frequency = {"bother": 2, "wrong": 40, "paste": 3, "raw": 30, "read": 50, "prompt": 90}
    question = "why bother tho, whats wrong with pasting the raw readings into the prompt?"
    assert (
        gather(Reading(question), 0.25, [], frozenset(), frequency, 2000, settings=RefusalSettings()).unknown_share
        == 0.0
    )
    off_topic = gather(
        Reading("whats the best sourdough hydration tho?"),
        0.25,
        [],
        frozenset(),
        frequency,
        2000,
        settings=RefusalSettings(),
    )
    assert off_topic.unknown_share == 1.0  # the topic words still count


def test_a_hyphenated_compound_is_known_when_its_parts_are() -> None:
    frequency = {"shape": 3, "curv": 5, "score": 9}
    read = Reading("an S-shape curve, sourdough-ish").topic_words  # each word with its parts' stems
    assert known_word("s-shape", read["s-shape"], frequency)
    assert not known_word("sourdough-ish", read["sourdough-ish"], frequency)
    evidence = gather(
        Reading("an S-shaped curve for the score"), 0.25, [], frozenset(), frequency, 2000, settings=RefusalSettings()
    )
    assert evidence.unknown_share == 0.0


def test_the_pack_fitted_reader_decides_nothing_on_documents() -> None:
    """The reader refused "SSO fails only for members of loads of AD groups. Any idea?" on Argo's docs (an
    answerable question, p 0.74) where the rules answered; on the pack it still adds and overrules."""
    thresholds = RefusalSettings()
    sure = Evidence(confidence=0.6, refuse_probability=0.9)
    assert decide(sure, thresholds, model_judges=False).refuse
    assert not decide(replace(sure, documents=True), thresholds, model_judges=False).refuse
    unlikely = Evidence(confidence=0.6, ungrounded=("Terraform",), refuse_probability=0.05)
    assert not decide(unlikely, thresholds, model_judges=False).refuse
    assert decide(replace(unlikely, documents=True), thresholds, model_judges=False).refuse


def test_unknown_words_refuse_only_when_retrieval_is_weak_too() -> None:
    thresholds = RefusalSettings()
    off_topic = Evidence(confidence=0.15, unknown_share=0.6)  # sourdough hydration
    slang = Evidence(confidence=0.35, unknown_share=0.4)  # "junk creeps in and muddies the data"
    assert decide(off_topic, thresholds, model_judges=False).refuse
    assert not decide(slang, thresholds, model_judges=False).refuse


@pytest.mark.parametrize(
    ("question", "names"),
    [
        ("What does the H100 cost? Nvidia says so.", ["H100", "Nvidia"]),  # a proper noun opening a sentence
        ("that sounds good. Does it run on Gaudi 3?", ["Gaudi"]),  # "Does" opens a sentence: grammar
        ("Which one? How fast is the MI300X?", ["MI300X"]),
    ],
)
def test_names_are_not_the_capitals_grammar_puts_on_a_sentence(question: str, names: list[str]) -> None:
    assert names_in(question) == names
