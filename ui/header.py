"""The page header: which knowledge is loaded and which model answers, in two short lines.

It says what the index really holds (from `Assistant.status()`), so a corpus switch that did not
take, or an index that is empty, shows up here instead of in puzzling answers.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from assistant import KnowledgeStatus
from ui.render import esc

TITLE = "ML systems assistant"
TAGLINE = "Answers from {sources}, with verified citations."
OFFLINE_HINT = (
    "OPENAI_BASE_URL=http://127.0.0.1:8000/v1 OPENAI_API_KEY=... ASSISTANT_MODEL=openai:&lt;model&gt; make run"
)


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}" if n == 1 else f"{n:,} {word}s"


def when(stamp: str | None) -> str:
    """'2026-12-01T03:14:48+0000' -> '2026-12-01 03:14 UTC' (the raw text if it does not parse)."""
    if not stamp:
        return ""
    try:
        moment = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S%z")
    except ValueError:
        return stamp
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def same_paths(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    return sorted(Path(p).resolve().as_posix() for p in a) == sorted(Path(p).resolve().as_posix() for p in b)


def tagline(status: KnowledgeStatus | None) -> str:
    """What answers come from, in the loaded knowledge's own terms: a team's documents are never called
    concept pages or papers (the pack's words are used only when it holds such entries)."""
    if status is None or not status.entries:
        return TAGLINE.format(sources="the knowledge you index")
    kinds = [
        name
        for count, name in (
            (status.concepts, "concept pages"),
            (status.papers, "paper abstracts"),
            (status.documents, "your documents"),
        )
        if count
    ]
    sources = kinds[0] if len(kinds) == 1 else ", ".join(kinds[:-1]) + " and " + kinds[-1]
    return TAGLINE.format(sources=sources)


def knowledge_line(status: KnowledgeStatus) -> str:
    paths = " ".join(f"<code>{esc(p)}</code>" for p in status.knowledge) or "<i>none</i>"
    if not status.entries:
        command = "assistant index " + " ".join(status.knowledge)
        return f"Knowledge: {paths} · <b>not indexed yet</b> - run <code>{esc(command)}</code>"
    counts = ((status.concepts, "concept"), (status.papers, "paper"), (status.documents, "document section"))
    parts = [plural(n, word) for n, word in counts if n]  # only what the knowledge holds: no "0 papers"
    parts.append(plural(status.chunks, "chunk"))
    if status.indexed_at:
        parts.append(f"indexed {when(status.indexed_at)}")
    return f"Knowledge: {paths} · " + " · ".join(esc(p) for p in parts)


def mismatch_line(status: KnowledgeStatus) -> str:
    """A warning when the index was built from other knowledge than the settings name."""
    if not status.indexed_from or not status.entries or same_paths(status.indexed_from, status.knowledge):
        return ""
    built = ", ".join(status.indexed_from)
    command = "assistant index " + " ".join(status.knowledge)
    return (
        f'<p class="warn">⚠ The index holds {esc(built)}, not the configured knowledge - run '
        f"<code>{esc(command)}</code> and restart.</p>"
    )


def header_html(status: KnowledgeStatus | None, model: str) -> str:
    """Title, knowledge line, model line; an offline hint folded away. `status` None: unknown."""
    lines = [
        f'<div class="app-header"><div class="title-row"><h1>{esc(TITLE)}</h1>'
        f'<span class="muted tagline">{esc(tagline(status))}</span></div>'
    ]
    facts = [knowledge_line(status)] if status else ["Knowledge: <i>unknown</i> (see the server log)"]
    facts.append(f'<span class="model-line">Model: <b>{esc(model)}</b></span>')
    lines.append('<p class="status-line">' + ' <span class="sep">·</span> '.join(facts) + "</p>")
    if status:
        lines.append(mismatch_line(status))
    if model.startswith("extractive"):
        lines.append(
            '<details class="offline-hint"><summary>Offline mode: answers quote the knowledge. Use an LLM…</summary>'
            f"<p>Start with an OpenAI-compatible server: <code>{OFFLINE_HINT}</code></p></details>"
        )
    return "".join(lines) + "</div>"
