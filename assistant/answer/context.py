"""The context the chat model reads: labelled entry blocks, packed into a token budget.

This module owns the block format (`[N] Title (kind)` then the chunk text, N the entry's short
label, see `assistant.answer.labels`). An LLM reads the rendered text; the offline extractive
model reads the same blocks as data (`Packed.blocks`: each block's label, title, kind and lines
without the labels), so a change to the prompt's wording cannot change what it reads.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from assistant.answer.labels import as_page_brackets
from assistant.blocks import has_blocks, is_block, joined, units
from assistant.text import TokenBudget, content_words, rarity, split_sentences
from assistant.types import Entry, Source

if TYPE_CHECKING:
    from assistant.index.chroma_index import Index


@dataclass(frozen=True)
class Block:
    """One context block: a chunk of an entry, under a header naming the entry (by its label)."""

    entry_id: str
    title: str
    kind: str
    lines: tuple[str, ...]  # the chunk's lines: its heading, then its statements


def render_block(entry: Entry, text: str, label: str) -> tuple[str, Block]:
    """`[label] Title (kind)`, the chunk's heading line, then its lines, every sentence after the heading
    ending with the label (`... in host memory [1].`), the way an answer cites it: a model that copies a
    sentence copies its citation too; a page's own footnote (`[3]`) is shown in full-width brackets, apart
    from the labels (`labels.as_page_brackets`). With the text, the block as data: its heading and lines as
    the page writes them, without the labels, blank lines left out."""
    heading, _, body = text.partition("\n")
    if has_blocks(body):
        said = [[unit] if is_block(unit) else split_sentences(unit) for unit in units(body)]
    else:
        said = [split_sentences(line) for line in body.split("\n") if line.strip()]
    lines = [" ".join(with_label(s, label) for s in sentences) for sentences in said]
    shown = [line for line in (heading.strip(), *(" ".join(sentences).strip() for sentences in said)) if line]
    rendered = "\n".join([f"[{label}] {entry.title} ({entry.kind})", heading, *lines])
    return rendered, Block(label, entry.title, entry.kind, tuple(shown))


def with_label(sentence: str, label: str) -> str:
    if is_block(sentence):  # a block's label on the line after it: the fence closes its line
        return f"{sentence}\n[{label}]"
    sentence = as_page_brackets(sentence)
    body = sentence.rstrip(".!?…")  # the label goes before the sentence's closing stops
    return f"{body} [{label}]{sentence[len(body) :]}"


@dataclass
class Packed:
    """A packed context: its text, its blocks as data, the entries it shows by id, and the id each short
    label stands for."""

    text: str
    entries: dict[str, Entry] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)  # "1" -> "MLD-0472"
    blocks: list[Block] = field(default_factory=list)  # in the text's order


def pack_context(
    sources: list[Source],
    index: Index,
    budget: int,
    whole_entries: int = 3,
    question: str = "",
    sentences: int = 0,
    first_chunks: int = 0,
) -> Packed:
    """Best chunks first, grouped by entry, until the token budget is spent; entries labelled 1, 2, ...

    The top `whole_entries` entries bring all their chunks (a concept page's technology
    list, an abstract's second half); the rest bring only their best-matching chunk. An abstract's
    best-matching chunk comes first; a concept page's chunks keep the page's order, so a long
    definition cut in two still opens with its first sentence ("What is a confusion matrix?" is
    answered by "An NxN table ...", not by the worked example of its second half).

    The first `first_chunks` sources' best chunks are taken before any entry's further chunks (each still
    shown with its entry, in the sources' order): a question in two parts leads with each part's best
    sections, and a long first section's further chunks would otherwise spend the budget before them.

    With `sentences` > 0 each entry brings, instead of whole chunks, its heading and the `sentences`
    sentences that share the most (rare) words with `question`, in the entry's order: a short
    context a small model can hold (`Settings.context_sentences`).
    """
    planned: list[tuple[Entry, list[str]]] = []
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
        planned.append((entry, texts))
    # the order the budget is spent in: the first sources' first texts, then every source's texts in turn
    order = [(n, 0) for n in range(min(first_chunks, len(planned)))]
    early = set(order)
    order += [(n, t) for n, (_, texts) in enumerate(planned) for t in range(len(texts)) if (n, t) not in early]
    rendered: dict[tuple[int, int, str], tuple[str, Block]] = {}  # a block is rendered once for each label
    spent = TokenBudget(budget)
    given: dict[str, str] = {}  # entry id -> its label, numbered as entries are taken
    taken: set[tuple[int, int]] = set()
    stopped: set[int] = set()  # sources whose next text did not fit: their later texts stay out
    for n, t in order:
        entry, texts = planned[n]
        if n in stopped:
            continue
        label = given.get(entry.id, str(len(given) + 1))
        block, _ = rendered.setdefault((n, t, label), render_block(entry, texts[t], label))
        if spent.take(block, always=not taken):  # the first block goes in whatever its size
            taken.add((n, t))
            given[entry.id] = label
        else:
            stopped.add(n)
    packed = Packed("")
    blocks: list[str] = []
    numbered: dict[str, str] = {}  # labels again, in the order the blocks are shown
    for n, (entry, texts) in enumerate(planned):
        for t, text in enumerate(texts):
            if (n, t) not in taken:
                continue
            label = numbered.setdefault(entry.id, str(len(numbered) + 1))
            block, data = rendered.get((n, t, label)) or render_block(entry, text, label)
            blocks.append(block)
            packed.blocks.append(data)
            packed.entries[entry.id] = entry
            packed.labels[label] = entry.id
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
    score = [math.fsum(weight[w] for w in words) for words in said]  # in any set order, the same sum
    chosen = sorted(sorted(range(len(candidates)), key=lambda i: (-score[i], i))[:count])
    return "\n".join([heading, joined([candidates[i] for i in chosen])])
