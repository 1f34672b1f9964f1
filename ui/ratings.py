"""Thumbs up/down to `<home>/feedback.jsonl`, and the conversation as a Markdown file.

The export is opened in Markdown viewers that render inline HTML and follow links, and its
text comes from entries, the model and the user: every piece is escaped (no tags, no link or
image syntax of its own), and only http(s) and mailto links are written.
"""

from __future__ import annotations

import html
import json
import re
import tempfile
import threading
import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from assistant import find_markers
from ui.render import number_citations, ordered_citations
from ui.session import Turn

FEEDBACK_FILE = "feedback.jsonl"
_lock = threading.Lock()


def vote_of(liked: Any) -> str | None:
    """Gradio's LikeData.liked (True/False, "Like"/"Dislike", another option, None) -> a vote."""
    if liked is True or liked == "Like":
        return "up"
    if liked is False or liked == "Dislike":
        return "down"
    return str(liked)[:40] if isinstance(liked, str | int | float) and liked else None


def feedback_record(turn: Turn, vote: str, now: datetime | None = None) -> dict[str, Any]:
    answer = turn.answer
    return {
        "timestamp": (now or datetime.now(UTC)).isoformat(timespec="seconds"),
        "vote": vote,
        "question": turn.question,
        "answer": answer.text if answer else (turn.error or ""),
        "citations": [{"entry_id": c.entry_id, "quote": c.quote, "supported": c.supported} for c in answer.citations]
        if answer
        else [],
        "model": answer.model if answer else "",
        "refused": bool(answer and answer.refused),
    }


def record_feedback(home: Path, turn: Turn, vote: str) -> Path:
    """Append one JSON line for this vote; returns the file written."""
    path = Path(home) / FEEDBACK_FILE
    line = json.dumps(feedback_record(turn, vote), ensure_ascii=False)
    with _lock:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as handle:
            handle.write(line + "\n")
    return path


SAFE_SCHEMES = ("http://", "https://", "mailto:")
_MD_LINK_CHARS = re.compile(r"([\\\[\]`])")
_URL_UNSAFE = re.compile(r"[\x00-\x20\x7f-\x9f]")


def _one_line(text: Any) -> str:
    return " ".join(str(text or "").split())


def md_safe(text: Any) -> str:
    """Text for the export: HTML escaped, and no `[...]` link or image, backslash or code span of its own."""
    return _MD_LINK_CHARS.sub(r"\\\1", html.escape(str(text or ""), quote=False))


def safe_url(url: Any) -> str | None:
    """`url` when it is an http(s) or mailto link (made safe inside `(...)`); None otherwise
    (javascript:, data:, vbscript:, relative or malformed links are dropped)."""
    clean = _URL_UNSAFE.sub("", str(url or ""))
    if not clean.lower().startswith(SAFE_SCHEMES):
        return None
    return clean.replace("(", "%28").replace(")", "%29").replace("<", "%3C").replace(">", "%3E")


def _numbered_text(text: str, numbering: Mapping[str, int]) -> str:
    """The text escaped for the export (`md_safe`), each `[ID]` marker as its chip number `[n]`."""
    out, last = [], 0
    for start, end, ids in find_markers(text):
        out.append(md_safe(text[last:start]))
        out.append("".join(f"[{numbering[i]}]" for i in dict.fromkeys(ids) if i in numbering))
        last = end
    out.append(md_safe(text[last:]))
    return "".join(out)


def conversation_markdown(turns: Sequence[Turn], model: str = "", now: datetime | None = None) -> str:
    """Questions, answers (markers as chip numbers) and a numbered citation list per answer."""
    stamp = (now or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M UTC")
    byline = f"_Exported {stamp}" + (f" · model: {md_safe(_one_line(model))}_" if model else "_")
    lines = ["# Conversation with the ML systems assistant", "", byline, ""]
    for index, turn in enumerate(turns, start=1):
        lines += [f"## {index}. {md_safe(_one_line(turn.question))}", ""]
        answer = turn.answer
        if not answer:
            lines += [f"> Error: {md_safe(_one_line(turn.error))}", ""]
            continue
        numbering = turn.numbering or number_citations(answer.text, answer.citations)
        lines += [_numbered_text(answer.text, numbering).strip(), ""]
        cited = ordered_citations(answer.citations, numbering)
        if cited:
            lines += ["**Citations**", ""]
            for number, c in cited:
                title = md_safe(_one_line(c.title or c.entry_id))
                url = safe_url(c.url)
                head = f"[{title}]({url})" if url else title
                mark = " (unverified)" if not c.supported else ""
                lines.append(f"{number}. {head} — `{_one_line(c.entry_id).replace('`', '')}`{mark}")
                if c.quote:
                    lines.append(f"   > {md_safe(_one_line(c.quote))}")
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def write_export(turns: Sequence[Turn], model: str = "", folder: Path | None = None) -> Path:
    """Write the conversation to a new .md file (under the system temp folder by default);
    Gradio copies it into its own cache for the download."""
    folder = Path(folder) if folder else Path(tempfile.gettempdir()) / "assistant-exports"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"conversation-{datetime.now(UTC).strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}.md"
    path.write_text(conversation_markdown(turns, model), encoding="utf-8")
    return path
