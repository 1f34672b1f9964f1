"""The token bounds that spare loading the tokenizer decide exactly as counting every token does."""

from __future__ import annotations

import random

import pytest

from assistant.text import TokenBudget, count_tokens, more_tokens_than

WORDS = ["GPU", "tensor", "parallelism", "über", "量子", "🙂", "{x}", "<|endoftext|>", " ", "\n", "a" * 40]


def texts(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(WORDS) for _ in range(rng.randint(1, 60))) for _ in range(count)]


def packed_by_counting(blocks: list[str], budget: int) -> list[str]:
    """What `pack_context` took before the bound: every block counted."""
    taken, used = [], 0
    for block in blocks:
        cost = count_tokens(block)
        if used + cost > budget and taken:
            break
        taken.append(block)
        used += cost
    return taken


@pytest.mark.parametrize("seed", range(40))
def test_the_budget_takes_what_exact_counting_takes(seed: int) -> None:
    blocks = texts(seed, 12)
    budget = random.Random(seed).choice([5, 50, 200, 400, 800, 1800, 10_000])
    spent = TokenBudget(budget)
    taken = []
    for block in blocks:
        if not spent.take(block, always=not taken):
            break
        taken.append(block)
    assert taken == packed_by_counting(blocks, budget)


@pytest.mark.parametrize("seed", range(20))
def test_more_tokens_than_agrees_with_counting(seed: int) -> None:
    for text in texts(seed, 10):
        for limit in (1, 10, 50, 200):
            assert more_tokens_than(text, limit) == (count_tokens(text) > limit), (text, limit)
