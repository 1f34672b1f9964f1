"""Pure rendering helpers: citation numbering, chat messages, sources panel, API payload.

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

from assistant.citations import find_markers
from assistant.types import Answer, Citation, Source

# characters that some component templates treat as code ("${...}", "{{...}}", backticks)
_TEMPLATE_CHARS = str.maketrans({"{": "&#123;", "}": "&#125;", "$": "&#36;", "`": "&#96;"})
# Markdown characters that could turn text into a link, image, emphasis or code span
_MD_ACTIVE = re.compile(r"([\\\[\]`*_~|#!])")

GENERIC_ERROR = "Something went wrong while answering - please try again. (The details are in the server log.)"
KIND_LABELS = {"concept": "concept", "abstract": "paper abstract"}


def esc(text: Any) -> str:
    """Escape text for an HTML component: tags, quotes and template characters become entities."""
    return html.escape("" if text is None else str(text), quote=True).translate(_TEMPLATE_CHARS)


def md_text(text: Any) -> str:
    """Escape text for the Markdown Chatbot: no HTML, no links or images, no formatting."""
    escaped = html.escape("" if text is None else str(text), quote=False)
    return _MD_ACTIVE.sub(r"\\\1", escaped).translate(_TEMPLATE_CHARS)


# --- citation numbering ------------------------------------------------------------------


def number_citations(text: str, citations: Iterable[Citation] | None = None) -> dict[str, int]:
    """Chip number per entry id: order of first `[ID]` marker in the text, then uncited citations.

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


def _cite_classes(entry_id: str, turn: int | None) -> str:
    """Class tokens naming the cited entry and the turn: the chat's sanitizer drops data-* attributes."""
    turn_class = "" if turn is None else f" cite-turn-{int(turn)}"
    return f"cite-id-{esc(entry_id)}{turn_class}"


def _ref(entry_id: str, numbering: Mapping[str, int], turn: int | None = None) -> str:
    number = numbering.get(entry_id)
    if number is None:
        return ""
    return f'<span class="cite-ref {_cite_classes(entry_id, turn)}">[{number}]</span>'


def render_text(text: str, numbering: Mapping[str, int], turn: int | None = None) -> str:
    """Answer text for the Chatbot: escaped, each `[ID]` marker replaced by its chip number."""
    out: list[str] = []
    last = 0
    for start, end, ids in find_markers(text):
        out.append(md_text(text[last:start]))
        out.append("".join(_ref(entry_id, numbering, turn) for entry_id in dict.fromkeys(ids)))
        last = end
    out.append(md_text(text[last:]))
    return "".join(out)


def strip_open_marker(text: str) -> str:
    """Hide a marker still being streamed (`... [MLD-04`) so it is not shown half-way."""
    start = text.rfind("[")
    return text[:start] if start != -1 and "]" not in text[start:] and len(text) - start <= 40 else text


def shorten(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


def chip_label(number: int, citation: Citation, width: int = 48) -> str:
    """`[1] GPU`, or `[2] Some long title… · unverified` (plain text, for a Radio choice)."""
    mark = " · unverified" if not citation.supported else ""
    return f"[{number}] {shorten(citation.title or citation.entry_id, width)}{mark}"


def ordered_citations(citations: list[Citation], numbering: Mapping[str, int]) -> list[tuple[int, Citation]]:
    """(number, citation) pairs in chip order."""
    pairs = [(numbering.get(c.entry_id, 0), c) for c in citations]
    return sorted(pairs, key=lambda pair: pair[0] or 10**6)


def chip_choices(answer: Answer | None, numbering: Mapping[str, int]) -> list[tuple[str, str]]:
    """Radio choices (label, entry id) for the citation chips of an answer."""
    if not answer:
        return []
    return [(chip_label(n, c), c.entry_id) for n, c in ordered_citations(answer.citations, numbering)]


def render_answer(answer: Answer, numbering: Mapping[str, int], turn: int | None = None) -> str:
    """The final assistant message: answer text with chip numbers, the chips, then any notes."""
    parts = [render_text(answer.text, numbering, turn)]
    chips = []
    for number, citation in ordered_citations(answer.citations, numbering):
        unverified = not citation.supported
        short = shorten(citation.title or citation.entry_id, 60)
        chips.append(
            f'<span class="cite-chip {_cite_classes(citation.entry_id, turn)}{" unverified" if unverified else ""}">'
            f"[{number}] {md_text(short)}{' · unverified' if unverified else ''}</span>"
        )
    if chips:
        parts.append('<span class="cite-chips">' + " ".join(chips) + "</span>")
    notes = [n for n in answer.notes if n]
    if notes:
        parts.append("<br>".join(f'<span class="answer-note">ⓘ {md_text(n)}</span>' for n in notes))
    return "\n\n".join(parts)


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
        out += f'\n\n<span class="answer-note">ⓘ {note}</span>'
    return out


def user_message(question: str) -> str:
    return md_text(question) if question.strip() else '<span class="answer-note">(empty question)</span>'


# --- sources panel ------------------------------------------------------------------------


def sources_html(sources: list[Source], kind: str | None = None, note: str = "") -> str:
    """A table of retrieved entries: rank, title, kind, id and score."""
    label = {"concept": " (concepts only)", "abstract": " (abstracts only)"}.get(kind or "", "")
    if not sources:
        body = '<p class="muted">No sources yet - ask a question.</p>' if not note else ""
        return f'<div class="sources"><div class="panel-title">Retrieved sources{esc(label)}</div>{body}{note}</div>'
    rows = "".join(
        "<tr>"
        f'<td class="rank">{esc(s.rank)}</td>'
        f'<td class="title"><div class="stitle" title="{esc(s.title)}">{esc(s.title)}</div>'
        f'<div class="sid">{esc(s.entry_id)}</div></td>'
        f'<td><span class="kind kind-{esc(s.kind)}">{esc(s.kind)}</span></td>'
        f'<td class="score">{float(s.score or 0):.2f}</td>'
        "</tr>"
        for s in sources
    )
    return (
        f'<div class="sources"><div class="panel-title">Retrieved sources{esc(label)}</div>'
        '<table><colgroup><col class="c-rank"><col><col class="c-kind"><col class="c-score"></colgroup>'
        "<thead><tr><th>#</th><th>entry</th><th>kind</th><th>score</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>{note}</div>"
    )


def source_choices(sources: list[Source]) -> list[tuple[str, str]]:
    """Dropdown choices (label, entry id) for opening a retrieved entry."""
    out: dict[str, str] = {}
    for s in sources:
        out.setdefault(s.entry_id, f"#{s.rank} {shorten(s.title or s.entry_id, 60)}")
    return [(label, entry_id) for entry_id, label in out.items()]


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
