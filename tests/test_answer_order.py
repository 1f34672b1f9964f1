"""Offline answers that list the work asked for, and lead with the sentence that answers.

Pure tests on context written here (blocks as the chain renders them), like test_offline_answers.py.
"""

from __future__ import annotations

import pytest

from assistant.answer.models.extractive import extract_answer
from assistant.question.intents import intent_of
from assistant.question.reading import Reading
from assistant.tuning import OfflineAnswerSettings
from assistant.types import Entry
from tests.context_blocks import blocks_of


def paper(number: int, title: str, text: str) -> Entry:
    return Entry(f"arxiv:2602.{number:05d}", "abstract", title, text)


SPILL = paper(
    1,
    "Ferrow: Spilling Expert Weights to Host Memory",
    "We present Ferrow, which keeps cold mixture-of-experts weights in host memory and prefetches the experts "
    "the router will pick next. Ferrow cuts GPU memory by 41% at equal decode throughput.",
)
SPILL_2 = paper(
    2,
    "Ondine: Expert Offloading over CXL",
    "We propose Ondine, which offloads mixture-of-experts weights to CXL-attached memory and streams each expert "
    "to the GPU just before its layer runs.",
)
SPILL_3 = paper(
    3,
    "Brisk: Predictive Expert Prefetching",
    "This paper introduces Brisk, a predictor of which experts the next layers will route to, so that offloaded "
    "mixture-of-experts weights arrive in GPU memory before they are needed.",
)
UNRELATED = paper(
    4,
    "Tallis: Checkpoint Compression for Pretraining",
    "We present Tallis, which compresses training checkpoints with delta encoding and cuts checkpoint storage by 6x.",
)
GENERIC_OPENER = paper(
    5,
    "Kestrel: Fast Prefill for Long Prompts on Edge GPUs",
    "Large language models have achieved remarkable progress on long prompts across many edge applications. "
    "In this paper, we present Kestrel, a serving runtime for edge devices. "
    "Kestrel splits each long prompt into chunks whose attention fits the GPU's shared memory, so prefill "
    "on a Jetson-class board stops spilling to DRAM and finishes 3.2x sooner.",
)


def answer(question: str, entries: list[Entry]) -> list[str]:
    return extract_answer(Reading(question), blocks_of(entries), OfflineAnswerSettings()).splitlines()


@pytest.mark.parametrize(
    "question",
    [
        "is there work which keeps mixture-of-experts weights off the GPU until the router needs them?",
        "what has been written about offloading mixture-of-experts weights from GPU memory?",
        "who has implemented offloading of mixture-of-experts expert weights?",
        "any approaches for prefetching offloaded mixture-of-experts weights into GPU memory?",
        "has anyone looked into moving mixture-of-experts weights out of GPU memory?",
    ],
)
def test_a_question_asking_for_work_lists_each_relevant_paper_with_its_contribution(question: str) -> None:
    assert intent_of(question) == "papers"
    lines = answer(question, [SPILL, SPILL_2, SPILL_3, UNRELATED])
    cited = [line.rsplit("[", 1)[1].split("]")[0] for line in lines]
    assert set(cited) == {SPILL.id, SPILL_2.id, SPILL_3.id}  # the three that fit, not the unrelated one
    assert all(line.startswith(("Ferrow:", "Ondine:", "Brisk:")) for line in lines)  # each titled
    assert any("We propose Ondine" in line for line in lines)  # with what it contributes


def test_the_list_stops_at_four_papers() -> None:
    more = [
        paper(
            10 + n,
            f"Expert Offload {n}",
            f"We present Offload{n}, which offloads mixture-of-experts weights from GPU memory.",
        )
        for n in range(6)
    ]
    lines = answer("is there work on offloading mixture-of-experts weights from GPU memory?", more)
    assert len(lines) == 4


def test_the_answering_sentence_leads_not_the_abstracts_opening_claim() -> None:
    question = "prefill of long prompts on our edge GPU board spills to DRAM. how can we stop that?"
    lines = answer(question, [GENERIC_OPENER, UNRELATED])
    assert lines[0].startswith("Kestrel splits each long prompt into chunks")
    assert not any(line.startswith("Large language models have achieved") for line in lines)
    assert lines[1].startswith("In this paper, we present Kestrel")  # then what the paper is


def test_a_contribution_that_answers_about_as_well_still_leads() -> None:
    lines = answer("a serving runtime for edge devices with long prompts?", [GENERIC_OPENER])
    assert lines[0].startswith("In this paper, we present Kestrel")


QUOKKA = paper(
    6,
    "Quokka: Memory-Aware Job Placement for GPU Clusters",
    "Large language models have achieved remarkable progress across many applications. "
    "We present Quokka, a scheduler for GPU clusters that places jobs by their predicted memory. "
    "Quokka predicts each job's peak memory from its first iterations. "
    "The scheduler is written in Rust, and its logs go to the Kubernetes event stream. "
    "It requires no historical usage logs and works from the first day of deployment.",
)


def test_an_answer_quotes_a_third_sentence_close_in_meaning_to_what_was_asked() -> None:
    # the contribution leads; whether it needs old logs is said by a sentence that shares one word with the
    # question ("logs"), as does the Rust sentence before it: the one closer in meaning is quoted, then the next
    lines = answer(
        "we want GPU cluster jobs placed by memory. does that need months of old logs first?", [QUOKKA, UNRELATED]
    )
    quokka = [line for line in lines if QUOKKA.id in line]
    assert len(quokka) == 3, lines
    assert quokka[0].startswith("We present Quokka")
    assert quokka[1].startswith("It requires no historical usage logs"), lines
    assert not any("Large language models have achieved" in line for line in lines)  # the setting answers nothing
    assert not any("written in Rust" in line for line in lines)
