"""Pure rendering helpers: citation numbering, chat messages, API payload (the sources panel: `ui.sources`).

Everything here turns library values (`Answer`, `Citation`, `Source`) into strings; nothing
imports Gradio. Every piece of entry, model or user text is escaped on the way out:
the Chatbot renders Markdown (with a sanitizer), the panels are raw HTML, and neither may
ever interpret an entry's ``<img src=x onerror=...>`` as markup.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping
from typing import Any

from assistant import Answer, Block, Citation, find_markers, plain_math, segments

# characters that some component templates treat as code ("${...}", "{{...}}", backticks)
_TEMPLATE_CHARS = str.maketrans({"{": "&#123;", "}": "&#125;", "$": "&#36;", "`": "&#96;"})
# Markdown characters that could turn text into a link, image, emphasis or code span
_MD_ACTIVE = re.compile(r"([\\\[\]`*_~|#!])")

GENERIC_ERROR = "Something went wrong while answering - please try again. (The details are in the server log.)"
KIND_LABELS = {"concept": "concept", "abstract": "paper abstract", "document": "document section"}


def esc(text: Any) -> str:
    """Escape text for an HTML component: tags, quotes and template characters become entities."""
    return html.escape("" if text is None else str(text), quote=True).translate(_TEMPLATE_CHARS)


def md_text(text: Any) -> str:
    """Escape text for the Markdown Chatbot: no HTML, no links or images, no formatting."""
    escaped = html.escape("" if text is None else str(text), quote=False)
    return _MD_ACTIVE.sub(r"\\\1", escaped).translate(_TEMPLATE_CHARS)


# --- citation numbering ------------------------------------------------------------------


def number_citations(text: str, citations: Iterable[Citation] | None = None) -> dict[str, int]:
    """Citation number per entry id: order of first `[ID]` marker in the text, then uncited citations.

    With `citations` given (the final answer), markers of ids that are not citations are
    ignored; without (a partial stream), every marker gets the next number.
    """
    cited = [c.entry_id for c in citations] if citations is not None else None
    numbering: dict[str, int] = {}
    for _, _, ids in find_markers(text):
        for entry_id in ids:
            if entry_id not in numbering and (cited is None or entry_id in cited):
                numbering[entry_id] = len(numbering) + 1
    for entry_id in cited or []:
        numbering.setdefault(entry_id, len(numbering) + 1)
    return numbering


def cite_classes(entry_id: str, turn: int | None) -> str:
    """Class tokens naming the cited entry and the turn: the chat's sanitizer drops data-* attributes."""
    turn_class = "" if turn is None else f" cite-turn-{int(turn)}"
    return f"cite-id-{esc(entry_id)}{turn_class}"


def _ref(entry_id: str, numbering: Mapping[str, int], turn: int | None, unverified: frozenset[str]) -> str:
    number = numbering.get(entry_id)
    if number is None:
        return ""
    flag = " unverified" if entry_id in unverified else ""
    return f'<span class="cite-ref {cite_classes(entry_id, turn)}{flag}">[{number}]</span>'


def render_text(
    text: str, numbering: Mapping[str, int], turn: int | None = None, unverified: frozenset[str] = frozenset()
) -> str:
    """Answer text for the Chatbot: escaped, each `[ID]` marker replaced by its citation number; a quoted
    block (`assistant.blocks`) as Markdown's own: code in a fence, as written (the Chatbot's renderer
    escapes what a fence holds), a table's rows as a table with each cell escaped."""
    if not any(block for _, block in segments(text)):
        return render_prose(text, numbering, turn, unverified)
    out = [
        f"\n\n{markdown_block(block)}\n\n" if block is not None else render_prose(part, numbering, turn, unverified)
        for part, block in segments(text)
    ]
    return re.sub(r"\n{3,}", "\n\n", "".join(out)).strip("\n")


def markdown_block(block: Block) -> str:
    """A block as Markdown: code fenced with its language; a table as a table, its cells escaped."""
    if not block.is_table:
        return block.text
    rows = [[md_text(cell) for cell in row] for row in block.rows]
    width = max(map(len, rows))
    lines = ["| " + " | ".join(row + [""] * (width - len(row))) + " |" for row in rows]
    return "\n".join([lines[0], "|" + " --- |" * width, *lines[1:]])


def render_prose(
    text: str, numbering: Mapping[str, int], turn: int | None = None, unverified: frozenset[str] = frozenset()
) -> str:
    """Prose for the Chatbot: escaped, each `[ID]` marker replaced by its citation number."""
    out: list[str] = []
    last = 0
    for start, end, ids in find_markers(text):
        out.append(md_text(text[last:start]))
        out.append("".join(_ref(entry_id, numbering, turn, unverified) for entry_id in dict.fromkeys(ids)))
        last = end
    out.append(md_text(text[last:]))
    return "".join(out)


def strip_open_marker(text: str) -> str:
    """Hide a marker still being streamed (`... [MLD-04`) so it is not shown half-way."""
    start = text.rfind("[")
    return text[:start] if start != -1 and "]" not in text[start:] and len(text) - start <= 40 else text


def shorten(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


def ordered_citations(citations: list[Citation], numbering: Mapping[str, int]) -> list[tuple[int, Citation]]:
    """(number, citation) pairs in citation-number order."""
    pairs = [(numbering.get(c.entry_id, 0), c) for c in citations]
    return sorted(pairs, key=lambda pair: pair[0] or 10**6)


def unverified_ids(answer: Answer | None) -> frozenset[str]:
    return frozenset(c.entry_id for c in answer.citations if not c.supported) if answer else frozenset()


def render_answer(
    answer: Answer, numbering: Mapping[str, int], turn: int | None = None, kind: str | None = None
) -> str:
    """The final assistant message: the text with numbered citation markers, then any notes.

    The markers are the one citation display: tapping one opens its card (no chip rows repeating
    them). TeX quoted from an abstract (`$4\\times$`) is shown as plain text (`4×`); a message still
    streaming keeps it until this final one, so each streamed render stays an append. A refusal
    under a filter (`kind`) says what was searched; the page offers to search all.
    """
    parts = [render_text(prose_math(answer.text), numbering, turn, unverified_ids(answer))]
    notes = [n for n in answer.notes if n]
    if answer.refused and kind:
        scope = {"concept": "concepts", "abstract": "paper abstracts"}.get(kind, kind)
        notes.insert(
            0,
            f"Only {scope} were searched (the Search in filter). Use Search everything for this question to ask again.",
        )
    if notes:
        parts.append("<br>".join(f'<span class="answer-note">Note: {md_text(n)}</span>' for n in notes))
    return "\n\n".join(parts)


def prose_math(text: str) -> str:
    """TeX in the prose as plain text (`plain_math`); a quoted block left as written."""
    if not any(block for _, block in segments(text)):
        return plain_math(text)
    return "".join(part if block is not None else plain_math(part) for part, block in segments(text))


def partial_visible(text: str) -> str:
    """The part of a streaming reply that is shown: without a marker still being streamed."""
    return strip_open_marker(text)


def render_partial(text: str) -> str:
    """A message still streaming: the text so far, markers numbered in order of appearance.

    Each render of a longer text starts with the render of the shorter one (no cursor at the
    end, numbers that never change), so a streamed update is an append of the new part.
    """
    visible = partial_visible(text)
    return render_text(visible, number_citations(visible))


def render_error(message: str, sources: int = 0) -> str:
    """An error in the chat; with `sources`, a note that what retrieval found is still in the panel."""
    out = f'<span class="answer-error">⚠ {md_text(message)}</span>'
    if sources:
        plural = "entry was" if sources == 1 else "entries were"
        note = f"{sources} {plural} retrieved for this question - see Retrieved sources."
        out += f'\n\n<span class="answer-note">Note: {note}</span>'
    return out


def user_message(question: str) -> str:
    return md_text(question) if question.strip() else '<span class="answer-note">(empty question)</span>'


# --- /chat API -----------------------------------------------------------------------------


def api_payload(answer: Answer) -> dict[str, Any]:
    """What the `/chat` endpoint returns: the Answer as JSON (`Answer.to_dict`)."""
    return answer.to_dict()


def parse_history(history: Any) -> list[tuple[str, str]]:
    """`[[role, text], ...]` (or `{"role", "content"}` dicts) from the API into library history."""
    if history in (None, "", []):
        return []
    if not isinstance(history, list):
        raise ValueError("history must be a list of [role, text] pairs")
    pairs: list[tuple[str, str]] = []
    for item in history:
        if isinstance(item, Mapping):
            role, text = item.get("role"), item.get("content", item.get("text"))
        elif isinstance(item, list | tuple) and len(item) == 2:
            role, text = item
        else:
            raise ValueError("history must be a list of [role, text] pairs")
        if role not in ("user", "assistant") or not isinstance(text, str):
            raise ValueError('each history item must be ["user" or "assistant", text]')
        pairs.append((role, text))
    return pairs
