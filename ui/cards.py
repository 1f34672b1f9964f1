"""The entry card: a cited (or retrieved) entry as escaped HTML, its supporting quote highlighted.

TeX in titles, abstracts and quotes is shown as plain text (`assistant.knowledge.math_text`); a
quote is converted as its entry is, so it is still found and highlighted."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from assistant import Block, Entry, plain_math, segments
from ui.render import KIND_LABELS, esc

PLACEHOLDER = (
    '<div class="entry-card empty"><div class="panel-title">Cited entry</div>'
    '<p class="muted">Tap a citation number such as <b>[1]</b> in an answer, or a retrieved source, '
    "to open its entry here.</p></div>"
)
# closes the card where it is an overlay (narrow screens); handled in the page by ui.bridge
CLOSE = '<button type="button" class="card-close" aria-label="Close the card">×</button>'
# "Caveat: ...", "Example: ...", "NCCL: ..." - how the entry text prefixes a field's sentence
_PREFIX = re.compile(r"^[^:]{1,60}:\s+")
_MIN_MATCH = 12


def _needles(quote: str) -> list[str]:
    """The quote, then shorter forms of it that may appear in a single field."""
    quote = " ".join(quote.split())
    forms = [quote, quote.rstrip(".…!? "), _PREFIX.sub("", quote), _PREFIX.sub("", quote).rstrip(".…!? ")]
    return [f for f in dict.fromkeys(forms) if f and (f == quote or len(f) >= _MIN_MATCH)]


def highlight(text: Any, quote: str | None) -> str:
    """Escaped `text` with the first occurrence of `quote` (or its core) wrapped in <mark>; TeX as plain text."""
    text = plain_math("" if text is None else str(text))
    quote = plain_math(quote) if quote else quote
    if quote:
        folded = text.casefold()
        for needle in _needles(quote):
            start = folded.find(needle.casefold())
            if start != -1:
                end = start + len(needle)
                return f"{esc(text[:start])}<mark>{esc(text[start:end])}</mark>{esc(text[end:])}"
    return esc(text)


def _section(label: str, body: str) -> str:
    return f'<div class="card-field"><div class="card-label">{esc(label)}</div><div>{body}</div></div>'


def _link(url: str | None, label: str) -> str:
    if not url or not re.match(r"^https?://", url):
        return ""
    return f'<a href="{esc(url)}" target="_blank" rel="noopener noreferrer nofollow">{esc(label)}</a>'


def _concept_body(entry: Entry, quote: str | None) -> list[str]:
    f = entry.fields
    parts = [_section("Definition", highlight(f.get("definition") or entry.text, quote))]
    # a page's "Original example" is a use ("Accelerate neural-network training."): labelled as one
    for key, label in (("example", "Example use"), ("caveat", "Caveat")):
        if f.get(key):
            parts.append(_section(label, highlight(f[key], quote)))
    aliases = [str(a) for a in f.get("aliases") or []]
    if aliases:
        parts.append(_section("Also known as", ", ".join(highlight(a, quote) for a in aliases)))
    tech = [t for t in f.get("technology") or [] if isinstance(t, Mapping)]
    if tech:
        items = "".join(
            f'<li><span class="tech-name">{highlight(t.get("name"), quote)}</span>'
            f"{' — ' + highlight(t.get('description'), quote) if t.get('description') else ''}</li>"
            for t in tech
        )
        parts.append(_section("Technology connections", f'<ul class="tech">{items}</ul>'))
    related = [str(r) for r in f.get("related") or []]
    if related:
        parts.append(_section("Related", ", ".join(f"<code>{esc(r)}</code>" for r in related)))
    refs = [r.get("title") if isinstance(r, Mapping) else r for r in f.get("references") or []]
    refs = [str(r) for r in refs if r]
    if refs:
        parts.append(_section("References", "<ul>" + "".join(f"<li>{esc(r)}</li>" for r in refs) + "</ul>"))
    link = _link(entry.url, "Open the source page ↗")
    if link:
        parts.append(f'<div class="card-links">{link}</div>')
    return parts


def _abstract_body(entry: Entry, quote: str | None) -> list[str]:
    f = entry.fields
    parts = [_section("Abstract", highlight(entry.text, quote))]
    authors = f.get("authors")
    if authors:
        names = authors if isinstance(authors, str) else ", ".join(map(str, authors))
        parts.append(_section("Authors", esc(names)))
    meta = [str(v) for v in (f.get("submit_date"),) if v]
    categories = f.get("categories")
    if categories:
        meta.append(categories if isinstance(categories, str) else ", ".join(map(str, categories)))
    if meta:
        parts.append(_section("Published", esc(" · ".join(meta))))
    anchors = [str(a) for a in f.get("anchors") or []]
    if anchors:
        parts.append(_section("Listed under", esc("; ".join(plain_math(a) for a in anchors))))
    link = _link(entry.url, "Read on arXiv ↗") if entry.url else ""
    parts.append(f'<div class="card-links">{link or "<span class=muted>No arXiv link for this abstract.</span>"}</div>')
    return parts


def section_html(text: str, quote: str | None) -> str:
    """A section's text: its lines as lines, the quote marked; each block (`assistant.blocks`) as code or a
    table, escaped, marked when it is what the answer quoted."""
    quoted = Block.of(quote) if quote else None
    out = []
    for part, block in segments(text) or [(text, None)]:
        if block is None:
            out.append(f'<div class="card-lines">{highlight(part.strip(), None if quoted else quote)}</div>')
        elif block.is_table:
            html_rows = "".join(
                "<tr>" + "".join(f"<td>{esc(cell)}</td>" for cell in row) + "</tr>" for row in block.rows
            )
            out.append(f'<table class="card-table">{html_rows}</table>')
        else:
            code = f"<pre><code>{esc(chr(10).join(block.lines))}</code></pre>"
            out.append(f"<mark>{code}</mark>" if quoted is not None and block.holds(quoted) else code)
    return "".join(out)


def quote_html(quote: str) -> str:
    """The supporting quote: a sentence as text, a quoted block as code."""
    block = Block.of(quote)
    if block is None:
        return f"<mark>{esc(plain_math(quote))}</mark>"
    return section_html(quote, None)


def _document_body(entry: Entry, quote: str | None) -> list[str]:
    """A section of a user's document: its text, then where it is (document, section, page, file)."""
    f = entry.fields
    parts = [_section("Section text", section_html(entry.text, quote))]
    where = [("Document", f.get("document")), ("Section", f.get("section")), ("Page", f.get("page"))]
    where.append(("File", f.get("path") or entry.source.rpartition(":")[0]))
    for label, value in where:
        if value not in (None, ""):
            parts.append(_section(label, esc(str(value))))
    return parts


def entry_card(
    entry: Entry | None,
    quote: str | None = None,
    *,
    number: int | None = None,
    supported: bool = True,
    entry_id: str = "",
) -> str:
    """HTML of one entry: title, kind, id, the supporting quote, then its fields."""
    if entry is None:
        return (
            f'<div class="entry-card">{CLOSE}<div class="panel-title">Cited entry</div>'
            f'<p class="muted">Entry {esc(entry_id)} is no longer in the index.</p></div>'
        )
    num = f'<span class="card-num">[{number}]</span> ' if number else ""
    head = (
        f'{CLOSE}<div class="card-head">{num}<h3 class="card-title">{esc(plain_math(entry.title))}</h3></div>'
        f'<div class="card-meta"><span class="kind kind-{esc(entry.kind)}">'
        f"{esc(KIND_LABELS.get(entry.kind, entry.kind))}</span>"
        f' <code class="card-id">{esc(entry.id)}</code></div>'
    )
    parts = [head]
    if quote:
        badge = "" if supported else ' <span class="badge-unverified">unverified</span>'
        parts.append(
            f'<div class="card-quote"><div class="card-label">Supporting quote{badge}</div>{quote_html(quote)}</div>'
        )
    body = {"concept": _concept_body, "document": _document_body}.get(entry.kind, _abstract_body)
    parts += body(entry, quote)
    return '<div class="entry-card">' + "".join(parts) + "</div>"
