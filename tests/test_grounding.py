"""Grounding: what a question names must be in the knowledge, or the answer says so (and refuses when
nothing else was asked). Invented systems, configuration keys, prices and people, on knowledge written
here and indexed for real (MiniLM, Chroma)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assistant import Assistant, Settings
from assistant.answer.refusal import grounding, spelled_out
from assistant.index.chroma_index import Index
from assistant.question.names import named_things
from assistant.question.reading import Reading
from assistant.tuning import RefusalSettings

PAPERS = [
    {
        "arxiv_id": "2601.00001",
        "title": "Quillon: Topology-Aware Collective Scheduling for GPU Clusters",
        "abstract": "We present Quillon, a scheduler that places all-reduce rings along the NVL72 domain and "
        "the rail-optimized fabric. Quillon reads NCCL_ALGO and NCCL_PROTO per job and cuts collective "
        "time by 31% on 512 GPUs. The price of one run fell from $4,100 to $2,900.",
    },
    {
        "arxiv_id": "2601.00002",
        "title": "Marlowe: Paged Key-Value Memory for LLM Serving",
        "abstract": "Serving long prompts runs out of GPU memory as the key-value cache grows. Marlowe stores "
        "the cache in fixed-size pages and raises throughput by 2.4x. Set --kv-page-size to tune it.",
    },
    {
        "arxiv_id": "2601.00003",
        "title": "Tessaly: Straggler Mitigation for Data-Parallel Training",
        "abstract": "Slow workers stall synchronous data-parallel training. Tessaly, built by Ada Okonkwo's "
        "group, re-balances micro-batches across workers every step and recovers 18% of step time.",
    },
]


@pytest.fixture(scope="module")
def bot(tmp_path_factory: pytest.TempPathFactory) -> Assistant:
    folder = tmp_path_factory.mktemp("grounding")
    knowledge = folder / "papers"
    knowledge.mkdir()
    (knowledge / "papers.jsonl").write_text("\n".join(json.dumps(p) for p in PAPERS) + "\n", "utf-8")
    settings = Settings(home=folder / "home", knowledge=(knowledge,), model="extractive")
    Index(settings).sync(progress=False)
    return Assistant(settings)


@pytest.mark.parametrize(
    ("question", "names"),
    [
        ("What is the default value of NCCL_SOCKET_IFNAME?", ["NCCL_SOCKET_IFNAME"]),
        ("Does --tensor-parallel-size set spark.executor.memory?", ["--tensor-parallel-size", "spark.executor.memory"]),
        ('What speedup does the paper "Turbo Routing for Edge LLMs" report?', ["Turbo Routing for Edge LLMs"]),
        ("What did Microsoft spend on Fairwater in March 2024?", ["Microsoft", "Fairwater", "March 2024"]),
        ("Context: our fleet. Ask: who founded CoreWeave?", ["CoreWeave"]),
        ("Anything on 600B models on 8-GPU H100s boxes?", ["H100s"]),  # sizes are values, not names
        ("When is 26.05.3 out? We run 25.05 on 172.31.43.8", ["26.05.3"]),  # a release; a number, an address
    ],
)
def test_the_specific_things_a_question_names(question: str, names: list[str]) -> None:
    assert named_things(question) == names


@pytest.mark.parametrize(
    ("question", "missing"),
    [
        ("Is there a scheduler called Borgmax from a big vendor?", "Borgmax"),
        ("What is the default value of NCCL_SOCKET_IFNAME?", "NCCL_SOCKET_IFNAME"),
        ("Who is Priya Venkataraman and what did she build?", "Priya"),
        ('What speedup over Megatron does the paper "Sparse Rings for Edge Clusters" report?', "Sparse Rings"),
        ("What did a run of Quillon cost on Azure in March 2024?", "March 2024"),
        ("A colleague says NCCL_SOCKET_IFNAME defaults to eth0. Right?", "NCCL_SOCKET_IFNAME"),  # the claim is asked
        ("My lead says Quillon was built at Borgmax. Is that so?", "Borgmax"),
    ],
)
def test_a_question_about_something_no_entry_mentions_is_refused_and_says_so(
    bot: Assistant, question: str, missing: str
) -> None:
    answer = bot.ask(question)
    assert answer.refused, answer.text
    assert "no entry mentions what it names" in answer.text and missing not in answer.text  # never echoed
    assert any(note.startswith("No entry mentions") and missing in note for note in answer.notes)


@pytest.mark.parametrize(
    "question",
    [
        "What does Quillon do with NCCL_ALGO?",  # a key the knowledge has
        "Which flag tunes Marlowe, is it --kv-page-size?",
        "How much did a Quillon run cost, was it $2,900?",
        "Who built Tessaly, Ada Okonkwo's group?",
        "How do NVL72 domains change collective scheduling?",
    ],
)
def test_a_question_about_what_the_knowledge_names_is_answered(bot: Assistant, question: str) -> None:
    answer = bot.ask(question)
    assert not answer.refused, answer.text
    assert not any(note.startswith("No entry mentions") for note in answer.notes)


def test_an_unknown_name_in_passing_is_noted_and_the_rest_answered(bot: Assistant) -> None:
    question = (
        "Our training jobs run on Zephyrix boxes and synchronous data-parallel steps keep stalling "
        "behind one slow worker that drags every other rank along; how do we recover that lost step time?"
    )
    answer = bot.ask(question)
    assert not answer.refused, answer.text
    assert "No entry mentions Zephyrix." in answer.notes
    assert [c.entry_id for c in answer.citations][:1] == ["arxiv:2601.00003"]


def test_nothing_else_asked_is_counted_without_the_names() -> None:
    known = {"quillon"}
    short = grounding(Reading("Who founded Borgmax?"), lambda n: n.lower() in known)
    assert short == (("Borgmax",), 1)
    long = grounding(
        Reading(
            "On Borgmax hosts, how do we re-balance micro-batches across slow workers so that synchronous "
            "data-parallel steps stop waiting on the straggler every single step?"
        ),
        lambda n: n.lower() in known,
    )
    assert long[0] == ("Borgmax",) and long[1] > RefusalSettings().asked_besides


def test_an_acronym_the_question_spells_out_is_explained() -> None:
    assert spelled_out("GLM", Reading("what is a GLM, the generalized linear model thing?"))
    assert not spelled_out("CEO", Reading("who is the CEO of Cerebras?"))
    assert not spelled_out("Groq", Reading("who founded Groq?"))


def test_a_configuration_key_is_known_only_as_written(bot: Assistant) -> None:
    knows = bot.retriever.knows
    assert knows("NCCL_ALGO") and knows("--kv-page-size") and knows("NVL-72") and knows("NVL72s")
    assert not knows("NCCL_SOCKET_IFNAME") and not knows("--kv-page-count")


def test_refusals_name_what_is_missing_for_an_llm_too(tmp_path: Path) -> None:
    from assistant.answer.refusal import Evidence, decide

    evidence = Evidence(0.6, ungrounded=("Borgmax",), asked_besides=3)
    decision = decide(evidence, RefusalSettings(), model_judges=True)
    assert decision.refuse and decision.reason == "no entry mentions what it names"
    busy = Evidence(0.6, ungrounded=("Borgmax",), asked_besides=RefusalSettings().asked_besides + 1)
    assert not decide(busy, RefusalSettings(), model_judges=True).refuse


@pytest.mark.parametrize(
    "question",
    [
        "Dear Professor, how does Marlowe keep the key-value cache of long prompts in GPU memory?",
    ],
)
def test_a_salutation_does_not_refuse_what_the_knowledge_answers(bot: Assistant, question: str) -> None:
    # the rules alone refuse it (a name no entry mentions); the learned reader finds a refusal unlikely.
    # A ticket id ("EST-212: how does Quillon ...") is still refused on this knowledge: the reader is not sure enough
    answer = bot.ask(question)
    assert not answer.refused, answer.text
    assert any(note.startswith("No entry mentions") for note in answer.notes)  # still said
