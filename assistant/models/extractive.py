"""The offline default chat model: answers by quoting the context sentences that fit best.

It reads the same prompt an LLM would get (question plus labelled context blocks), so it
sees only what retrieval packed, and answers with whole sentences from those entries,
each followed by its `[ID]`. Deterministic, no network; a sentence it picks is by
construction a sentence of the cited entry, so every citation verifies.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from langchain_core.messages import BaseMessage

from assistant.context import own_words, parse_blocks, split_prompt
from assistant.models.text_reply import TextReplyModel
from assistant.prompts import load_prompt
from assistant.text import content_words, rarity, split_sentences

INTENTS = (
    (
        re.compile(r"\b(caveat|limitation|drawback|downside|pitfall|watch out|careful|catch)\b"),
        "Caveat:",
        0.8,
    ),
    (re.compile(r"\b(example|use case|used for|what for|use it)\b"), "Example:", 0.6),
    (
        re.compile(
            r"\b(also called|alias|another name|other name|abbreviat|stand for|short for|known as|full name)"
            r"\w*"
        ),
        "Also known as:",
        0.8,
    ),
)
DEFINITION_QUESTION = re.compile(r"^\s*(what\s+(is|are|does)|define|definition|meaning|what's)\b|\bmean\b", re.I)
MAX_SENTENCES = 3
KEEP_RATIO = 0.7


@dataclass(frozen=True)
class Candidate:
    entry_id: str
    rank: int
    position: int  # 0 = the first sentence after the block's title line
    kind: str
    text: str
    title: str = ""


def parse_prompt(prompt: str) -> tuple[str, list[Candidate]]:
    """The question and the candidate sentences of every context block, in block order."""
    context, question = split_prompt(prompt)
    candidates: list[Candidate] = []
    for rank, block in enumerate(parse_blocks(context)):
        if not block.lines:
            continue
        heading, *body = block.lines
        core = heading == block.title  # the title alone heads an entry's main chunk
        position = 0  # 0 = the first sentence of the main chunk
        for line in body:
            for sentence in split_sentences(line):
                candidates.append(
                    Candidate(
                        block.entry_id, rank, position if core else position + 1, block.kind, sentence, block.title
                    )
                )
                position += 1
    return question, candidates


def score_candidates(question: str, candidates: list[Candidate]) -> list[tuple[float, Candidate]]:
    """Question-word coverage weighted by rarity, plus intent and rank priors."""
    asked = content_words(question)
    documents = [content_words(c.text) for c in candidates]
    titles = [content_words(c.title) for c in candidates]  # a sentence is also about its entry's title
    total = len(candidates) or 1
    frequency: dict[str, int] = {}
    for words in documents:
        for word in words & asked:
            frequency[word] = frequency.get(word, 0) + 1
    weight = {w: rarity(total, frequency.get(w, 0)) for w in asked}
    norm = sum(weight.values()) or 1.0
    lowered = own_words(question).lower()
    scored = []
    for candidate, words, title in zip(candidates, documents, titles, strict=True):
        coverage = (
            sum(weight[w] for w in asked & words) + 0.5 * sum(weight[w] for w in (asked & title) - words)
        ) / norm
        if coverage == 0:
            continue
        score = coverage + 0.15 / (1 + candidate.rank)
        for pattern, prefix, bonus in INTENTS:
            if pattern.search(lowered) and candidate.text.startswith(prefix):
                score += bonus
        if DEFINITION_QUESTION.search(own_words(question)) and candidate.kind == "concept" and candidate.position == 0:
            score += 0.5
        scored.append((score, candidate))
    return sorted(scored, key=lambda item: (-item[0], item[1].rank, item[1].position))


def extract_answer(prompt: str) -> str:
    """A short answer of the best sentences, each followed by its [ID]; or the refusal line."""
    question, candidates = parse_prompt(prompt)
    scored = score_candidates(question, candidates)
    if not scored:
        return load_prompt("refusal")
    best, top = scored[0]
    if DEFINITION_QUESTION.search(own_words(question)) and top.kind == "concept" and top.position == 0:
        return definition_answer(top, candidates)
    chosen: list[Candidate] = []
    per_entry: dict[str, int] = {}
    for score, candidate in scored:
        if len(chosen) == MAX_SENTENCES or score < KEEP_RATIO * best:
            break
        if per_entry.get(candidate.entry_id, 0) >= 2 or any(c.text == candidate.text for c in chosen):
            continue
        chosen.append(candidate)
        per_entry[candidate.entry_id] = per_entry.get(candidate.entry_id, 0) + 1
    return " ".join(cite(c.text, c.entry_id) for c in chosen)


def definition_answer(definition: Candidate, candidates: list[Candidate]) -> str:
    """ "What is X?" with X a concept: its definition, and its example when the page has one."""
    example = next((c for c in candidates if c.entry_id == definition.entry_id and c.text.startswith("Example:")), None)
    parts = [cite(definition.text, definition.entry_id)]
    if example is not None:
        parts.append(cite(example.text, example.entry_id))
    return " ".join(parts)


def cite(sentence: str, entry_id: str) -> str:
    match = re.match(r"^(.*?)([.!?…]*)$", sentence.strip(), re.S)
    assert match is not None
    return f"{match.group(1)} [{entry_id}]{match.group(2) or '.'}"


class ExtractiveChatModel(TextReplyModel):
    """A LangChain chat model with no network: quotes the context (see module docstring)."""

    @property
    def _llm_type(self) -> str:
        return "extractive"

    def _reply(self, messages: list[BaseMessage]) -> str:
        prompt = next((str(m.content) for m in reversed(messages) if m.type == "human"), "")
        return extract_answer(prompt)
