"""Context blocks for tests: entries as the offline model reads them, and a rendered prompt read back.

The product never reads a rendered prompt back (the offline model gets `Packed.blocks`); tests read
it back to check that what an LLM sees is what the offline model reads, and that a question cannot
lay out blocks of its own in the prompt.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from assistant.answer.context import Block, render_block
from assistant.types import Entry

BLOCK_HEADER = re.compile(r"^\[(?P<id>[^\]\s]+)\] (?P<title>.*) \((?P<kind>concept|abstract|document)\)$")
QUESTION_LINE = re.compile(r"^Question:", re.M)  # the label prompts/answer_user.txt puts before the question


def blocks_of(entries: Iterable[Entry]) -> list[Block]:
    """Each entry's whole text as one block, labelled by its id (so an answer cites the id)."""
    return [render_block(e, f"{e.title}\n{e.text}", e.id)[1] for e in entries]


def parse_blocks(context: str) -> list[Block]:
    """The blocks of a rendered context, in order, their lines without the labels."""
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
            lines.append(line.strip().replace(f" [{header['id']}]", ""))
    if header is not None:
        blocks.append(Block(header["id"], header["title"], header["kind"], tuple(lines)))
    return blocks


def split_prompt(prompt: str) -> tuple[str, str]:
    """(context, question) of a rendered answer prompt: the question is the line after the last
    `Question:` label (a context line of its own that starts so stays in the context)."""
    starts = list(QUESTION_LINE.finditer(prompt))
    if not starts:
        return prompt, ""
    asked = prompt[starts[-1].end() :].strip()
    return prompt[: starts[-1].start()], asked.split("\n", 1)[0].strip()
