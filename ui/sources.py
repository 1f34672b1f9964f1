"""The retrieved-sources panel of one answer: rank, entry, kind, and which of them the answer cites.

It is labelled with what *that answer* searched (its own filter), not with the filter now set: a
filter changed afterwards applies to the next question, and the panel says so. Rows are click
(and Enter) targets that open the entry's card; like the chat's citation markers they carry the
turn and entry id as class tokens, forwarded by the page's bridge script (`ui.bridge`).
Scores are not shown: a fused, per-question normalised score (0.96 for an unrelated abstract)
reads as a probability and misleads; the rank says the same honestly.
"""

from __future__ import annotations

from collections.abc import Mapping

from assistant import Source, plain_math
from ui.render import cite_classes, esc

SCOPES = {None: "all the knowledge", "concept": "concepts only", "abstract": "paper abstracts only"}
KINDS = {"concept": "concept", "abstract": "paper", "document": "document"}
HINT = "Best match first. Tap a row to open the entry; [n] marks what the answer cites."


def scope_label(kind: str | None) -> str:
    return SCOPES.get(kind, SCOPES[None])


def sources_html(
    sources: list[Source],
    kind: str | None = None,
    *,
    numbering: Mapping[str, int] | None = None,
    turn: int | None = None,
    filter_kind: str | None = None,
    unverified: frozenset[str] = frozenset(),
) -> str:
    """The panel for one answer that searched `kind`; `filter_kind` is the filter set now."""
    title = '<div class="panel-title">Retrieved sources</div>'
    if not sources and turn is None:
        return f'<div class="sources">{title}<p class="muted">No sources yet - ask a question.</p></div>'
    panel = f'<div class="sources for-turn-{int(turn)}">' if turn is not None else '<div class="sources">'
    scope = f'<p class="scope">Searched: <b>{esc(scope_label(kind))}</b>'
    if filter_kind != kind:
        now = esc(scope_label(filter_kind))
        scope += f' <span class="muted">(the filter now set, {now}, applies to the next question)</span>'
    scope += "</p>"
    if not sources:
        return f'{panel}{title}{scope}<p class="muted">Nothing was retrieved.</p></div>'
    numbering = numbering or {}
    rows = []
    for s in sources:
        number = numbering.get(s.entry_id)
        cited = ""
        if number is not None:
            mark = " unverified" if s.entry_id in unverified else ""
            cited = f'<span class="cited{mark}">[{number}]</span>'
        name = plain_math(s.title)  # "${\\bf A} {\\bf x}$" reads "A x"
        rows.append(
            f'<tr class="src-row {cite_classes(s.entry_id, turn)}" tabindex="0" role="button" '
            f'aria-label="Open {esc(name or s.entry_id)}">'
            f'<td class="rank">{esc(s.rank)}</td>'
            f'<td class="title"><div class="stitle" title="{esc(name)}">{esc(name)}</div>'
            f'<div class="sid">{esc(s.entry_id)}</div></td>'
            f'<td><span class="kind kind-{esc(s.kind)}">{esc(KINDS.get(s.kind, s.kind))}</span></td>'
            f'<td class="cite-col">{cited}</td>'
            "</tr>"
        )
    return (
        f'{panel}{title}{scope}<p class="muted hint">{esc(HINT)}</p>'
        '<table><colgroup><col class="c-rank"><col><col class="c-kind"><col class="c-cited"></colgroup>'
        '<thead><tr><th title="rank: best match first">#</th><th>entry</th><th>kind</th><th>cited</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )
