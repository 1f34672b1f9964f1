"""The concept-page format: parsing a page into fields, and the statements built from them.

A page is `Section · ID`, the title, the definition, then headed blocks (example, caveat,
context and aliases, related concepts, technology connections, references; unknown headings
are kept as fields). Both the entry's text and its chunks are made of the statements defined
here, from one list of fields, so a sentence quoted from a chunk is a sentence of the entry.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from assistant.knowledge.asked_as import FIELD as ASKED_AS
from assistant.knowledge.asked_as import SOURCES as ASKED_AS_SOURCES
from assistant.text import clean, slugify
from assistant.types import Entry, Problem

CONCEPT_HEADER = re.compile(r"^(?P<section>.+?)\s+·\s+(?P<id>[A-Z][A-Z0-9]*-\d+)\s*$")
KNOWN_HEADINGS = {
    "Original example": "example",
    "Original caveat": "caveat",
    "Context and aliases": "context",
    "Related concepts": "related_concepts",
    "Concepts linking here": "linking_here",
    "Technology connections": "technology",
    "Original references": "references",
}
LIST_FIELDS = {"related_concepts", "linking_here", "technology", "references"}
CONTEXT_KEY = re.compile(r"(Level|Stages|Tags|Aliases|[A-Z][a-z]+):\s*")
STATUS_LINE = re.compile(r"^Original reference page\b|detailed expansion pending", re.I)

# every field the statements below render; any other field is an unknown heading, kept as its own family
CORE_FIELDS = ("definition", "example", "caveat", "aliases", "level", "stages", "tags")
RELATED_FIELDS = ("related_concepts", "linking_here")
META_FIELDS = ("section", "context", "status", "sources", "anchors", ASKED_AS, ASKED_AS_SOURCES)  # not page text
KNOWN_FIELDS = frozenset({*CORE_FIELDS, "technology", "references", *RELATED_FIELDS, *META_FIELDS})


@dataclass(frozen=True)
class Family:
    """Statements that travel together in chunks: `field` names the chunks, `label` heads each one."""

    field: str
    label: str
    statements: list[str]


# --- parsing --------------------------------------------------------------------------------


MAX_HEADER_CHARS = 300  # a longer first line is no `Section · ID` header (and the lazy match would be quadratic)


def is_concept_page(first_line: str) -> bool:
    line = first_line.strip()
    return len(line) <= MAX_HEADER_CHARS and "·" in line and CONCEPT_HEADER.match(line) is not None


def parse_concept_page(text: str, source: str) -> Entry | Problem:
    """Line 1 `Section · ID`, line 2 title, line 3 definition, then headed blocks."""
    lines = [line.rstrip() for line in text.splitlines()]
    header = CONCEPT_HEADER.match(lines[0].strip())
    assert header is not None
    if len(lines) < 2 or not lines[1].strip():
        return Problem(source, 2, "expected the title on line 2")
    definition = lines[2].strip() if len(lines) > 2 else ""
    if not definition or definition in KNOWN_HEADINGS or STATUS_LINE.search(definition):
        return Problem(source, 3, "expected the definition on line 3")
    fields: dict[str, Any] = {"section": header["section"], "definition": clean(lines[2])}
    status: list[str] = []
    current: str | None = None
    for line in (raw.strip() for raw in lines[3:]):
        if not line:
            continue
        if line in KNOWN_HEADINGS:
            current = KNOWN_HEADINGS[line]
            fields.setdefault(current, [] if current in LIST_FIELDS else "")
        elif current in ("example", "caveat") and not fields[current]:
            fields[current] = clean(line)  # the first line under a text heading is its content
        elif current is None and STATUS_LINE.search(line):
            status.append(line)
        elif looks_like_heading(line):
            current = slugify(line).replace("-", "_")
            fields.setdefault(current, [])
        elif current is None:
            fields["definition"] += " " + line
        elif current == "context":
            fields.update(parse_context_line(line))
        elif isinstance(fields.get(current), list):
            fields[current].append(parse_list_item(current, line))
        else:
            fields[current] = clean(f"{fields.get(current, '')} {line}")
    if status:
        fields["status"] = " ".join(status)
    entry_id, title = header["id"], clean(lines[1])
    return Entry(entry_id, "concept", title, entry_text(title, fields), fields, f"{source}:1", None)


def looks_like_heading(line: str) -> bool:
    """An unknown heading: a short line with no list marker, colon or closing punctuation."""
    return (
        not line.startswith(("-", "•", "*"))
        and ":" not in line
        and not line.endswith((".", "!", "?", "…", ";", ","))
        and len(line.split()) <= 5
        and line[0].isupper()
    )


def parse_context_line(line: str) -> dict[str, Any]:
    """`Level: Foundational. Stages: Training · Inference.` -> {level: ..., stages: [...]}."""
    parts = CONTEXT_KEY.split(line)
    out: dict[str, Any] = {}
    for key, value in zip(parts[1::2], parts[2::2], strict=False):
        value = value.strip().rstrip(".").strip()
        name = key.lower()
        if name == "level":
            out[name] = value
        else:
            out[name] = [v.strip() for v in re.split(r"(?<!\s)\s+·\s+|;\s*|,\s*", value) if v.strip()]
    return out


def parse_list_item(field_name: str, line: str) -> Any:
    item = line.lstrip("-•* ").strip()
    if field_name == "technology":
        name, _, description = item.partition(" — ")
        return {"name": name.strip(), "description": description.strip()}
    if field_name == "references":
        title, _, note = item.partition(" · ")
        return {"title": title.replace("↗", "").strip(), "note": note.strip()}
    return item


# --- statements -----------------------------------------------------------------------------


def core_statements(fields: dict[str, Any]) -> list[str]:
    """Definition, example, caveat, aliases, level and tags: one statement each."""
    lines = [fields["definition"]]
    if fields.get("example"):
        lines.append(f"Example: {fields['example']}")
    if fields.get("caveat"):
        lines.append(f"Caveat: {fields['caveat']}")
    if fields.get("aliases"):
        lines.append(f"Also known as: {', '.join(fields['aliases'])}.")
    if fields.get("level") or fields.get("stages"):
        stages = ", ".join(fields.get("stages", []))
        lines.append(f"Level: {fields.get('level', 'unspecified')}. Stages: {stages}.")
    if fields.get("tags"):
        lines.append(f"Tags: {', '.join(fields['tags'])}.")
    return lines


def technology_statements(fields: dict[str, Any]) -> list[str]:
    return [f"{t['name']}: {t['description']}" for t in fields.get("technology", [])]


def reference_statements(fields: dict[str, Any]) -> list[str]:
    return [r["title"] + (f" ({r['note']})" if r.get("note") else "") + "." for r in fields.get("references", [])]


def unknown_fields(fields: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """Fields under headings the format does not know, as (key, items), in page order."""
    return [
        (key, [value] if isinstance(value, str) else [str(v) for v in value])
        for key, value in fields.items()
        if key not in KNOWN_FIELDS and value
    ]


def families(fields: dict[str, Any]) -> list[Family]:
    """A page's statements grouped as its chunks hold them: core, technology, references, unknown, related."""
    out = [Family("core", "", core_statements(fields))]
    if technology := technology_statements(fields):
        out.append(Family("technology", "technology connections", technology))
    if references := reference_statements(fields):
        out.append(Family("references", "references", references))
    out += [Family(key, key.replace("_", " "), items) for key, items in unknown_fields(fields)]
    related = [f"{r}." for name in RELATED_FIELDS for r in fields.get(name, [])]
    if related:
        out.append(Family("related", "related concepts", related))
    return out


def entry_text(title: str, fields: dict[str, Any]) -> str:
    """The readable text of a concept page: one statement per line, boilerplate and links left out."""
    lines = [title, *core_statements(fields), *technology_statements(fields), *reference_statements(fields)]
    for key, items in unknown_fields(fields):
        lines.append(f"{key.replace('_', ' ').capitalize()}: " + "; ".join(items))
    return "\n".join(lines)


def is_page_entry(entry: Entry) -> bool:
    """Was this entry read from a concept page (not a glossary record, which has no sections)?"""
    return entry.kind == "concept" and "definition" in entry.fields and "section" in entry.fields
