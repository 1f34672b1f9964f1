"""Entry-aware chunking, counted with tiktoken, sized so the encoder sees each chunk whole.

A concept page keeps its definition, example and caveat together with its title (that is
what answers "what is X?"); technology connections and references become their own
chunks; a long abstract splits on sentence boundaries with a sentence of overlap. Every
chunk starts with its entry's title, so a chunk retrieved alone still says what it is about.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from assistant.text import count_tokens, split_sentences, truncate_tokens
from assistant.types import Chunk, Entry

CHUNKING_VERSION = 1


@dataclass(frozen=True)
class Chunker:
    """Splits entries into chunks of at most `max_tokens` (cl100k) and `fits` (encoder) size."""

    max_tokens: int = 200
    overlap_sentences: int = 1
    fits: Callable[[str], bool] | None = None  # the encoder's own limit, e.g. 256 word pieces

    def settings(self) -> dict[str, int]:
        return {"version": CHUNKING_VERSION, "max_tokens": self.max_tokens, "overlap": self.overlap_sentences}

    def chunks(self, entry: Entry) -> list[Chunk]:
        joiner = " "
        if entry.kind == "concept" and "definition" in entry.fields and "section" in entry.fields:
            parts, joiner = concept_parts(entry), "\n"  # one statement per line, as in the entry text
        else:
            parts = [("concept" if entry.kind == "concept" else "abstract", "", split_sentences(entry.text))]
        out: list[Chunk] = []
        for field, label, sentences in parts:
            title = truncate_tokens(entry.title, self.max_tokens // 2)  # a huge title must not crowd out the text
            head = f"{title} — {label}" if label else title
            for number, body in enumerate(self.pack(head, sentences, joiner)):
                out.append(Chunk(f"{entry.id}::{field}:{number}", entry.id, entry.kind, entry.title, field, body))
        return out

    def pack(self, heading: str, sentences: list[str], joiner: str = " ") -> list[str]:
        """Greedy sentence packing with overlap; an over-long sentence is cut by words."""
        head = f"{heading}\n"
        budget = self.max_tokens - count_tokens(head)
        pieces = [p for s in sentences for p in self.cut(s, budget, head)]
        if not pieces:
            return [heading]
        bodies: list[list[str]] = []
        current: list[str] = []
        for piece in pieces:
            candidate = [*current, piece]
            if current and not self.within(head + joiner.join(candidate), budget + count_tokens(head)):
                bodies.append(current)
                keep = current[-self.overlap_sentences :] if self.overlap_sentences else []
                current = [*keep, piece]
                if not self.within(head + joiner.join(current), budget + count_tokens(head)):
                    current = [piece]
            else:
                current = candidate
        bodies.append(current)
        return [head + joiner.join(body) for body in bodies]

    def within(self, text: str, limit: int) -> bool:
        return count_tokens(text) <= limit and (self.fits is None or self.fits(text))

    def cut(self, sentence: str, budget: int, head: str) -> list[str]:
        """A sentence longer than the budget is split into word runs that fit (characters if need be)."""
        limit = budget + count_tokens(head)
        if self.within(head + sentence, limit):
            return [sentence]
        pieces: list[str] = []
        current: list[str] = []
        for word in sentence.split():
            if not self.within(head + word, limit):  # no spaces to split at: CJK text, a URL, a formula
                if current:
                    pieces.append(" ".join(current))
                    current = []
                pieces.extend(self.cut_characters(word, head, limit))
                continue
            if current and not self.within(head + " ".join([*current, word]), limit):
                pieces.append(" ".join(current))
                current = []
            current.append(word)
        if current:
            pieces.append(" ".join(current))
        return pieces

    def cut_characters(self, text: str, head: str, limit: int) -> list[str]:
        """The longest character prefixes that fit, found by binary search."""
        pieces = []
        while text:
            low, high = 1, len(text)
            while low < high:
                middle = (low + high + 1) // 2
                if self.within(head + text[:middle], limit):
                    low = middle
                else:
                    high = middle - 1
            pieces.append(text[:low])
            text = text[low:]
        return pieces


def concept_parts(entry: Entry) -> list[tuple[str, str, list[str]]]:
    """A concept page's fields as chunk families: (field, label repeated on each chunk, sentences)."""
    fields = entry.fields
    core = [fields["definition"]]
    if fields.get("example"):
        core.append(f"Example: {fields['example']}")
    if fields.get("caveat"):
        core.append(f"Caveat: {fields['caveat']}")
    if fields.get("aliases"):
        core.append(f"Also known as: {', '.join(fields['aliases'])}.")
    if fields.get("tags") or fields.get("stages"):
        core.append(f"Stages: {', '.join(fields.get('stages', []))}. Tags: {', '.join(fields.get('tags', []))}.")
    parts = [("core", "", core)]
    technology = [f"{t['name']}: {t['description']}" for t in fields.get("technology", [])]
    if technology:
        parts.append(("technology", "technology connections", technology))
    references = [r["title"] + (f" ({r['note']})" if r.get("note") else "") for r in fields.get("references", [])]
    if references:
        parts.append(("references", "references", [r + "." for r in references]))
    known = {
        "section",
        "definition",
        "example",
        "caveat",
        "aliases",
        "tags",
        "stages",
        "level",
        "technology",
        "references",
        "status",
        "sources",
        "anchors",
        "related_concepts",
        "linking_here",
    }
    for key, value in fields.items():
        if key not in known and value:
            items = [value] if isinstance(value, str) else [str(v) for v in value]
            parts.append((key, key.replace("_", " "), items))
    related = [*fields.get("related_concepts", []), *fields.get("linking_here", [])]
    if related:
        parts.append(("related", "related concepts", [f"{r}." for r in related]))
    return parts


def chunk_all(chunker: Chunker, entries: Iterable[Entry]) -> dict[str, list[Chunk]]:
    return {entry.id: chunker.chunks(entry) for entry in entries}
