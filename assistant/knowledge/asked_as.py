"""Asked-as descriptions: how someone who lacks an entry's name describes it, for search only.

A user who has forgotten a term describes it in their own words ("the model aces the training set
and flops on new data"), and those words are rarely the definition's. A knowledge pack can say, for
any entry, how it tends to be asked for: JSON Lines records `{"id": "glossary:overfitting",
"asked_as": ["...", ...]}` in any `.jsonl` file beside the entries. Each description becomes a chunk
of its own (field `asked_as`) that the dense and lexical legs search like any other, so a described
concept is matched against descriptions like the asker's; no answer ever quotes one, because it is
not what the knowledge says: the index hands out an entry's own chunks for context and citations.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from assistant.text import clean
from assistant.types import Entry, Problem

FIELD = "asked_as"
SOURCES = "asked_as_sources"  # where each entry's descriptions were read (path:line), volatile like `sources`
MAX_DESCRIPTIONS = 12  # per entry: a search aid, not a second corpus


def is_asked_as_record(record: dict[str, Any]) -> bool:
    return FIELD in record


def read_record(record: dict[str, Any], shown: str, number: int) -> tuple[str, list[str]] | Problem:
    """(entry id, descriptions) of one record, or the problem that names its fix."""
    entry_id, descriptions = record.get("id"), record.get(FIELD)
    if not isinstance(entry_id, str) or not entry_id.strip():
        return Problem(shown, number, "expected an asked-as record with the 'id' of the entry it describes")
    if not isinstance(descriptions, list) or not all(isinstance(d, str) for d in descriptions):
        return Problem(shown, number, f"expected '{FIELD}' as a list of strings")
    texts = [clean(d) for d in descriptions if d.strip()]
    return entry_id.strip(), list(dict.fromkeys(texts))


def with_descriptions(entry: Entry, descriptions: list[str], sources: list[str]) -> Entry:
    """The entry with `descriptions` added to any it has (first ones kept, at most MAX_DESCRIPTIONS),
    and `sources` to the places they were read."""
    merged = list(dict.fromkeys([*descriptions_of(entry), *descriptions]))[:MAX_DESCRIPTIONS]
    read_at = list(dict.fromkeys([*sources_of(entry), *sources]))
    return replace(entry, fields={**entry.fields, FIELD: merged, SOURCES: read_at})


def descriptions_of(entry: Entry) -> list[str]:
    return list(entry.fields.get(FIELD, []))


def sources_of(entry: Entry) -> list[str]:
    return list(entry.fields.get(SOURCES, []))
