"""The question-set schema: one `Question` per JSON Lines record, checked as it is read.

A record is {"id", "question", "type", "gold", "facts", "history"} plus optional fields:
`intent` (what the question asks for: a definition, the name of a concept, which papers, ...),
`split` (`calibration` or `test`: thresholds and weights are fitted on the first half and
reported on the second), and a set's own labels `kind` (e.g. `howto`, `troubleshooting`: the
report has a table per kind) and `voice` (who asks). Unanswerable questions have type `refuse` and
no gold. Gold is an entry id, or for documents a file path relative to the indexed folder, with
`#anchor` for one section (`assistant.eval.gold`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assistant.errors import AssistantError, KnowledgeError

QUESTION_TYPES = ("single", "multi", "followup", "refuse")
ANSWER_INTENTS = ("problem", "papers", "how", "compare", "definition", "name", "caveat", "example", "number")
REFUSE_INTENTS = ("price", "date", "count", "person", "company", "spec", "howto", "opinion", "other")
SPLITS = ("calibration", "test")


@dataclass(frozen=True)
class Question:
    """One line of a question set; `refuse` questions have no gold and should be refused."""

    id: str
    question: str
    type: str
    gold: tuple[str, ...] = ()
    facts: tuple[str, ...] = ()
    history: tuple[tuple[str, str], ...] = ()
    intent: str | None = None
    split: str | None = None
    kind: str | None = None
    voice: str | None = None

    @property
    def should_refuse(self) -> bool:
        return self.type == "refuse"


def _strings(obj: dict[str, Any], key: str) -> tuple[str, ...]:
    value = obj.get(key) or []
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ValueError(f'expected "{key}" to be a list of non-empty strings')
    return tuple(dict.fromkeys(v.strip() for v in value))


def _optional(obj: dict[str, Any], key: str, allowed: tuple[str, ...]) -> str | None:
    value = obj.get(key)
    if value is None:
        return None
    if value not in allowed:
        raise ValueError(f"{key} {value!r} is not one of {', '.join(allowed)}")
    return str(value)


def _label(obj: dict[str, Any], key: str) -> str | None:
    """A free label of the set's own (`kind`, `voice`): a non-empty string or absent."""
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f'expected "{key}" to be a non-empty string')
    return value.strip()


def parse_question(obj: Any) -> Question:
    """A `Question` from one decoded record; `ValueError` says what is wrong with it."""
    if not isinstance(obj, dict):
        raise ValueError("expected a JSON object with id, question, type, gold, facts, history")
    bad = [k for k in ("id", "question", "type") if not isinstance(obj.get(k), str) or not obj[k].strip()]
    if bad:
        raise ValueError(f"expected non-empty string field(s): {', '.join(bad)}")
    qtype, gold = obj["type"], _strings(obj, "gold")
    if qtype not in QUESTION_TYPES:
        raise ValueError(f"type {qtype!r} is not one of {', '.join(QUESTION_TYPES)}")
    history = obj.get("history") or []
    if not isinstance(history, list) or not all(
        isinstance(t, list) and len(t) == 2 and t[0] in ("user", "assistant") and isinstance(t[1], str) for t in history
    ):
        raise ValueError('expected "history" to be a list of ["user"|"assistant", text] pairs')
    if qtype == "refuse" and gold:
        raise ValueError("a refuse question must have an empty gold list")
    if qtype != "refuse" and not gold:
        raise ValueError(f"a {qtype} question needs at least one gold entry id")
    if qtype == "followup" and not history:
        raise ValueError("a followup question needs a history of earlier turns")
    intents = REFUSE_INTENTS if qtype == "refuse" else ANSWER_INTENTS
    return Question(
        obj["id"].strip(),
        obj["question"].strip(),
        qtype,
        gold,
        _strings(obj, "facts"),
        tuple((role, text) for role, text in history),
        _optional(obj, "intent", intents),
        _optional(obj, "split", SPLITS),
        _label(obj, "kind"),
        _label(obj, "voice"),
    )


def load_questions(path: str | Path, split: str | None = None) -> list[Question]:
    """Read a JSON Lines question set (only `split`'s half when given); a bad line names file and line."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise AssistantError(f"Cannot read question file {path} ({exc.strerror}) - pass --questions FILE") from None
    questions: list[Question] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            question = parse_question(json.loads(line))
        except json.JSONDecodeError as exc:
            raise KnowledgeError(str(path), number, f"expected one JSON object per line ({exc.msg})") from None
        except ValueError as exc:
            raise KnowledgeError(str(path), number, str(exc)) from None
        if question.id in seen:
            expected = f"a unique id, but {question.id!r} is already on line {seen[question.id]}"
            raise KnowledgeError(str(path), number, expected)
        seen[question.id] = number
        questions.append(question)
    if not questions:
        raise AssistantError(f"Question file {path} has no questions - add one JSON object per line")
    if split is not None:
        if split not in SPLITS:
            raise AssistantError(f"Unknown split {split!r} - use one of {', '.join(SPLITS)}")
        questions = [q for q in questions if q.split == split]
        if not questions:
            raise AssistantError(f"Question file {path} has no questions with split {split!r} - drop --split")
    return questions
