"""The context the chat model reads: labelled entry blocks, packed into a token budget.

This module owns the block format (`[ID] Title (kind)` then the chunk text) and the
`(about: ...)` suffix that offline condensing appends to a follow-up. The chain writes
both; the offline extractive model reads them back, so writer and reader live together.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from assistant.text import count_tokens
from assistant.types import Entry, Source

if TYPE_CHECKING:
    from assistant.index.chroma_index import Index

BLOCK_HEADER = re.compile(r"^\[(?P<id>[^\]\s]+)\] (?P<title>.*) \((?P<kind>concept|abstract|document)\)$")
QUESTION_LINE = re.compile(r"^Question:", re.M)  # the label prompts/answer_user.txt puts before the question
ABOUT = re.compile(r"\s*\(about: .*\)\s*$", re.S)


@dataclass(frozen=True)
class Block:
    """One context block: a chunk of an entry, under a header naming the entry."""

    entry_id: str
    title: str
    kind: str
    lines: tuple[str, ...]  # the chunk's lines: its heading, then its statements


def render_block(entry: Entry, text: str) -> str:
    return f"[{entry.id}] {entry.title} ({entry.kind})\n{text}"


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
            lines.append(line.strip())
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
    return prompt[: starts[-1].start()], prompt[starts[-1].end() :].strip()


def pack_context(
    sources: list[Source], index: Index, budget: int, whole_entries: int = 3
) -> tuple[str, dict[str, Entry]]:
    """Best chunks first, grouped by entry, until the token budget is spent.

    The top `whole_entries` entries bring all their chunks (a concept page's technology
    list, an abstract's second half); the rest bring only their best-matching chunk. An abstract's
    best-matching chunk comes first; a concept page's chunks keep the page's order, so a long
    definition cut in two still opens with its first sentence ("What is a confusion matrix?" is
    answered by "An NxN table ...", not by the worked example of its second half).
    """
    blocks: list[str] = []
    entries: dict[str, Entry] = {}
    used = 0
    for rank, source in enumerate(sources):
        entry = index.entry(source.entry_id)
        if entry is None:
            continue
        texts = [source.text]
        if rank < whole_entries and entry.kind == "concept":
            texts = [c.text for c in index.chunks_of(entry.id)] or texts
        elif rank < whole_entries:
            texts += [c.text for c in index.chunks_of(entry.id) if c.id != source.chunk_id]
        for text in texts:
            block = render_block(entry, text)
            cost = count_tokens(block)
            if used + cost > budget and blocks:
                break
            blocks.append(block)
            entries[entry.id] = entry
            used += cost
    return "\n\n".join(blocks), entries


def with_subjects(question: str, subjects: list[str]) -> str:
    """A follow-up with the earlier questions it leans on: `and its caveat? (about: What is a GPU?)`."""
    return f"{question} (about: {' / '.join(subjects)})" if subjects else question


def own_words(question: str) -> str:
    """The question without the `(about: ...)` subjects that condensing appended."""
    return ABOUT.sub("", question) or question
