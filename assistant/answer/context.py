"""The context the chat model reads: labelled entry blocks, packed into a token budget.

This module owns the block format (`[N] Title (kind)` then the chunk text, N the entry's short
label, see `assistant.answer.labels`) and the `(about: ...)` suffix that offline condensing
appends to a follow-up. The chain writes both; the offline extractive model reads them back, so
writer and reader live together.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from assistant.text import content_words, count_tokens, rarity, split_sentences
from assistant.types import Entry, Source

if TYPE_CHECKING:
    from assistant.index.chroma_index import Index

BLOCK_HEADER = re.compile(r"^\[(?P<id>[^\]\s]+)\] (?P<title>.*) \((?P<kind>concept|abstract|document)\)$")
QUESTION_LINE = re.compile(r"^Question:", re.M)  # the label prompts/answer_user.txt puts before the question
ABOUT = re.compile(r"\s*\(about: .*\)\s*$", re.S)
SENTENCE_STOP = re.compile(r"[.!?…]+$")


@dataclass(frozen=True)
class Block:
    """One context block: a chunk of an entry, under a header naming the entry."""

    entry_id: str
    title: str
    kind: str
    lines: tuple[str, ...]  # the chunk's lines: its heading, then its statements


def render_block(entry: Entry, text: str, label: str | None = None) -> str:
    """`[label] Title (kind)`, the chunk's heading line, then its lines; with a label, every sentence
    after the heading ends with it (`... in host memory [1].`), the way an answer cites it: a model
    that copies a sentence copies its citation too."""
    if label is None:
        return f"[{entry.id}] {entry.title} ({entry.kind})\n{text}"
    heading, *rest = text.split("\n")
    lines = [" ".join(with_label(s, label) for s in split_sentences(line)) for line in rest if line.strip()]
    return "\n".join([f"[{label}] {entry.title} ({entry.kind})", heading, *lines])


def with_label(sentence: str, label: str) -> str:
    match = SENTENCE_STOP.search(sentence)
    stop = match.group() if match else ""
    return f"{sentence[: len(sentence) - len(stop)]} [{label}]{stop}"


def without_label(line: str, label: str) -> str:
    """A context line as the entry has it: its sentences' `[label]` markers removed (see render_block)."""
    return line.replace(f" [{label}]", "")


@dataclass
class Packed:
    """A packed context: its text, the entries it shows by id, and the id each short label stands for."""

    text: str
    entries: dict[str, Entry] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)  # "1" -> "MLD-0472"


def parse_blocks(context: str) -> list[Block]:
    """The blocks of a rendered context, in order (text before the first header is ignored)."""
    blocks: list[Block] = []
    header: re.Match[str] | None = None
    lines: list[str] = []
    for line in context.splitlines():
        match = BLOCK_HEADER.match(line.strip())
        if match:
            if header is not None:
                blocks.append(Block(header["id"], header["title"], header["kind"], tuple(lines)))
            header, lines = match, []
        elif header is not None and line.strip():
            lines.append(without_label(line.strip(), header["id"]) if header["id"].isdigit() else line.strip())
    if header is not None:
        blocks.append(Block(header["id"], header["title"], header["kind"], tuple(lines)))
    return blocks


def split_prompt(prompt: str) -> tuple[str, str]:
    """(context, question) of an answer prompt.

    The question is what follows the last `Question:` line: a context entry may have a line of
    its own that starts with "Question:" (an abstract, a page's unknown heading), and that must
    stay data.
    """
    starts = list(QUESTION_LINE.finditer(prompt))
    if not starts:
        return prompt, ""
    asked = prompt[starts[-1].end() :].strip()
    return prompt[: starts[-1].start()], asked.split("\n", 1)[0].strip()  # the question is one line


def pack_context(
    sources: list[Source],
    index: Index,
    budget: int,
    whole_entries: int = 3,
    question: str = "",
    sentences: int = 0,
) -> Packed:
    """Best chunks first, grouped by entry, until the token budget is spent; entries labelled 1, 2, ...

    The top `whole_entries` entries bring all their chunks (a concept page's technology
    list, an abstract's second half); the rest bring only their best-matching chunk. An abstract's
    best-matching chunk comes first; a concept page's chunks keep the page's order, so a long
    definition cut in two still opens with its first sentence ("What is a confusion matrix?" is
    answered by "An NxN table ...", not by the worked example of its second half).

    With `sentences` > 0 each entry brings, instead of whole chunks, its heading and the `sentences`
    sentences that share the most (rare) words with `question`, in the entry's order: a short
    context a small model can hold (`Settings.context_sentences`).
    """
    blocks: list[str] = []
    packed = Packed("")
    used = 0
    for rank, source in enumerate(sources):
        entry = index.entry(source.entry_id)
        if entry is None:
            continue
        texts = [source.text]
        if rank < whole_entries and entry.kind == "concept":
            texts = [c.text for c in index.chunks_of(entry.id)] or texts
        elif rank < whole_entries or sentences:
            texts += [c.text for c in index.chunks_of(entry.id) if c.id != source.chunk_id]
        if sentences:
            texts = [best_sentences(texts, question, sentences)]
        label = next((n for n, known in packed.labels.items() if known == entry.id), str(len(packed.labels) + 1))
        for text in texts:
            block = render_block(entry, text, label)
            cost = count_tokens(block)
            if used + cost > budget and blocks:
                break
            blocks.append(block)
            packed.entries[entry.id] = entry
            packed.labels[label] = entry.id
            used += cost
    packed.text = "\n\n".join(blocks)
    return packed


def best_sentences(texts: list[str], question: str, count: int) -> str:
    """The first chunk's heading, then the `count` sentences of `texts` that best cover the question's
    words (each word weighted by how few of these sentences have it), in their order."""
    heading, *first = texts[0].split("\n", 1)
    body = [*first, *texts[1:]]
    candidates = list(dict.fromkeys(s.strip() for text in body for s in split_sentences(text) if s.strip()))
    asked = content_words(question)
    said = [content_words(s) & asked for s in candidates]
    weight = {w: rarity(len(candidates), sum(w in words for words in said)) for w in asked}
    score = [sum(weight[w] for w in words) for words in said]
    chosen = sorted(sorted(range(len(candidates)), key=lambda i: (-score[i], i))[:count])
    return "\n".join([heading, " ".join(candidates[i] for i in chosen)])


def with_subjects(question: str, subjects: list[str]) -> str:
    """A follow-up with the earlier questions it leans on: `and its caveat? (about: What is a GPU?)`."""
    return f"{question} (about: {' / '.join(subjects)})" if subjects else question


def own_words(question: str) -> str:
    """The question without the `(about: ...)` subjects that condensing appended."""
    return ABOUT.sub("", question) or question
