"""Thumbs up/down to `<home>/feedback.jsonl`, and the conversation as a Markdown file."""

from __future__ import annotations

import json
import tempfile
import threading
import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ui.render import number_citations, ordered_citations

FEEDBACK_FILE = "feedback.jsonl"
_lock = threading.Lock()


def vote_of(liked: Any) -> str | None:
    """Gradio's LikeData.liked (True/False, "Like"/"Dislike", another option, None) -> a vote."""
    if liked is True or liked == "Like":
        return "up"
    if liked is False or liked == "Dislike":
        return "down"
    return str(liked) if liked else None


def feedback_record(turn: Mapping[str, Any], vote: str, now: datetime | None = None) -> dict[str, Any]:
    answer = turn.get("answer") or {}
    return {
        "timestamp": (now or datetime.now(UTC)).isoformat(timespec="seconds"),
        "vote": vote,
        "question": turn.get("question", ""),
        "answer": answer.get("text", turn.get("error") or ""),
        "citations": [
            {"entry_id": c["entry_id"], "quote": c.get("quote", ""), "supported": c.get("supported", True)}
            for c in answer.get("citations") or []
        ],
        "model": answer.get("model", ""),
        "refused": bool(answer.get("refused", False)),
    }


def record_feedback(home: Path, turn: Mapping[str, Any], vote: str) -> Path:
    """Append one JSON line for this vote; returns the file written."""
    path = Path(home) / FEEDBACK_FILE
    line = json.dumps(feedback_record(turn, vote), ensure_ascii=False)
    with _lock:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as handle:
            handle.write(line + "\n")
    return path


def _one_line(text: Any) -> str:
    return " ".join(str(text or "").split())


def _numbered_text(text: str, numbering: Mapping[str, int]) -> str:
    from assistant.citations import find_markers

    out, last = [], 0
    for start, end, ids in find_markers(text):
        out.append(text[last:start])
        out.append("".join(f"[{numbering[i]}]" for i in dict.fromkeys(ids) if i in numbering))
        last = end
    out.append(text[last:])
    return "".join(out)


def conversation_markdown(turns: Sequence[Mapping[str, Any]], model: str = "", now: datetime | None = None) -> str:
    """Questions, answers (markers as chip numbers) and a numbered citation list per answer."""
    stamp = (now or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M UTC")
    byline = f"_Exported {stamp}" + (f" · model: {model}_" if model else "_")
    lines = ["# Conversation with the ML systems assistant", "", byline, ""]
    for index, turn in enumerate(turns, start=1):
        lines += [f"## {index}. {_one_line(turn.get('question'))}", ""]
        answer = turn.get("answer")
        if not answer:
            lines += [f"> Error: {_one_line(turn.get('error'))}", ""]
            continue
        numbering = turn.get("numbering") or number_citations(answer.get("text", ""), answer.get("citations"))
        lines += [_numbered_text(answer.get("text", ""), numbering).strip(), ""]
        cited = ordered_citations(answer, numbering)
        if cited:
            lines += ["**Citations**", ""]
            for number, c in cited:
                title = _one_line(c.get("title") or c["entry_id"])
                head = f"[{title}]({c['url']})" if c.get("url") else title
                mark = " (unverified)" if not c.get("supported", True) else ""
                lines.append(f"{number}. {head} — `{c['entry_id']}`{mark}")
                if c.get("quote"):
                    lines.append(f"   > {_one_line(c['quote'])}")
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def write_export(turns: Sequence[Mapping[str, Any]], model: str = "", folder: Path | None = None) -> Path:
    """Write the conversation to a new .md file (under the system temp folder by default);
    Gradio copies it into its own cache for the download."""
    folder = Path(folder) if folder else Path(tempfile.gettempdir()) / "assistant-exports"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"conversation-{datetime.now(UTC).strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}.md"
    path.write_text(conversation_markdown(turns, model), encoding="utf-8")
    return path
