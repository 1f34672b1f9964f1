"""A small base model's echo of its own prompt, told apart from an answer.

Asked a question, a 270M base model continues its prompt rather than answering it: most replies
start with the system text and "Context entries:", and asked to rewrite a follow-up it repeats the
rewrite instruction. The chain drops such lines from a reply and refuses such a rewrite; nothing a
capable model writes is a word-for-word line of its instructions.
"""

from __future__ import annotations

from collections.abc import Iterable

from assistant.answer.prompts import load_prompt
from assistant.blocks import fenced_ranges
from assistant.text import content_words
from assistant.verify.unicode import plain

ECHO_NOTE = "The model repeated lines of its instructions; they are not shown."


def instruction_lines(messages: Iterable[tuple[str, str]], context: str) -> set[str]:
    """The prompt's own lines, context aside: the rules, the question line, the answer cue.

    `messages` are the rendered prompt's (role, text) pairs."""
    lines: set[str] = set()
    for _role, content in messages:
        text = content.replace(context, "") if context else content
        lines.update(plain(line).strip() for line in text.splitlines() if line.strip())
    return lines


def without_echo(reply: str, instructions: set[str]) -> tuple[str, bool]:
    """The reply without the lines that repeat the prompt's own lines word for word; whether any did.

    A small base model continues its prompt instead of answering it (the 270M model starts most
    replies with the system text and "Context entries:"). Those lines are not claims and say
    nothing the user asked, so they are not shown; an entry's sentences it copies stay, to be verified.
    A quoted block is left as written: its blank lines are code, and the block is verified line for line.
    """
    lines = reply.split("\n")
    coded = {n for first, end in fenced_ranges(lines) for n in range(first, end + 1)}
    kept: list[str] = []
    echoed = False
    for n, line in enumerate(lines):
        if n not in coded:
            if line.strip() in instructions:
                echoed = True
                continue
            if not line.strip() and kept and not kept[-1].strip():
                continue  # blank lines between prose, where an echo was, are one
        kept.append(line)
    return "\n".join(kept).strip(), echoed


def echoes_instructions(rewritten: str) -> bool:
    """Is a follow-up's rewrite the condense prompt's own instruction, repeated or paraphrased?

    A small base model continues its prompt rather than following it: asked to rewrite "and its
    caveat?", the 270M model answered "Rewrite the following question so that it can be understood
    without the conversation.", which was then searched for. Most of such a line's words are the
    instruction's; the rule-based rewrite is used instead.
    """
    said = content_words(rewritten)
    instruction = content_words(load_prompt("condense").split("\n", 1)[0])
    return not said or len(said & instruction) * 2 > len(said)
