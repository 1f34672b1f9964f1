"""What retrieval knows of the whole knowledge, made in one walk of the entries and kept compactly.

The name tables (titles, aliases and acronyms of concept pages, the technologies they explain, the pages
that are only another name), the content-word stems of every entry with their document frequencies, the
name-like words of the knowledge and its lower-cased text. An entry's stems are ids into one flat array
(not a set of strings per entry), and the text is one bytes block, so at a million chunks they cost what
they weigh on disk. A replica of a Chroma server saves them beside its cached records
(`<home>/index/cache/tables-<generation>-<commit>/`) and reads them at its next start instead of walking
every entry again; an index on disk makes them in memory on first use, as before.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import logging
import re
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from assistant.index.cache_folder import replace_folder
from assistant.index.record_file import FileSlices
from assistant.index.store import StoredEntry
from assistant.question.names import NAME_TOKEN
from assistant.text import POINTER_PHRASES, content_words, without_parenthesis, words

# a glossary page that is only another name, and the name it points to: "IoU: Abbreviation for intersection over union."
POINTS_TO = re.compile(rf"^(?:an?\s+)?(?:{POINTER_PHRASES})\s+(.+?)\s*\.?$", re.I)
WORDS_KEPT = 2048  # entries whose stem sets are kept made (a search weighs ~80 candidates)

log = logging.getLogger("assistant")


def normalise_name(text: str) -> str:
    return " ".join(words(text.replace("_", " ")))


class CorpusTables:
    """The tables of one generation; `position` names an entry's place in the store order."""

    def __init__(self, state: dict[str, Any], stems_at: np.ndarray, stem_ids: Any, text: Any) -> None:
        self.concept_names: dict[str, list[str]] = state["concept_names"]
        self.names: dict[str, list[str]] = state["names"]
        self.other_names: dict[str, list[str]] = state["other_names"]
        self.document_frequency: dict[str, int] = state["document_frequency"]
        self.vocabulary: frozenset[str] = frozenset(state["vocabulary"])
        self.entry_count: int = state["entry_count"]
        self.kinds: dict[str, int] = state["kinds"]  # entries of each kind
        self._ids: list[str] = state["ids"]
        self._stems = list(self.document_frequency)  # stem id -> stem
        self._stems_at = stems_at
        self._stem_ids = stem_ids
        self._text = text
        self._positions: dict[str, int] | None = None
        self.words_of: Callable[[str], frozenset[str]] = lru_cache(maxsize=WORDS_KEPT)(self._words_of)
        self._names_by_length: dict[int, list[str]] | None = None

    def closest_name(self, word: str, cutoff: float) -> str | None:
        """The name `difflib.get_close_matches(word, names, n=1, cutoff=cutoff)` returns, or None.

        difflib's first test of a name is a bound from the two lengths alone (`real_quick_ratio`); the names
        of a length that fails it are skipped here without a matcher each, which made this the slowest part
        of a search at 100,000 chunks (31 ms a call). The names that remain go through difflib in full."""
        if self._names_by_length is None:
            by_length: dict[int, list[str]] = {}
            for name in self.names:
                by_length.setdefault(len(name), []).append(name)
            self._names_by_length = by_length
        size = len(word)
        near = [
            name
            for length, group in self._names_by_length.items()
            if length + size == 0 or 2.0 * min(length, size) / (length + size) >= cutoff  # real_quick_ratio
            for name in group
        ]
        found = difflib.get_close_matches(word, near, n=1, cutoff=cutoff)
        return found[0] if found else None

    def _words_of(self, entry_id: str) -> frozenset[str]:
        """The entry's stemmed content words (title and text); empty for an entry not in the index."""
        if self._positions is None:
            self._positions = {e: n for n, e in enumerate(self._ids)}
        position = self._positions.get(entry_id)
        if position is None:
            return frozenset()
        start, end = int(self._stems_at[position]), int(self._stems_at[position + 1])
        if isinstance(self._stem_ids, FileSlices):  # 4 bytes a stem id, read by range
            ids = np.frombuffer(self._stem_ids.read(4 * start, 4 * end), dtype=np.uint32)
        else:
            ids = self._stem_ids[start:end]
        return frozenset(map(self._stems.__getitem__, ids.tolist()))

    def said_anywhere(self, phrase: str) -> bool:
        """Is the lower-cased phrase part of some entry's lower-cased title and text (or spans two)?"""
        wanted = phrase.encode("utf-8")
        if isinstance(self._text, FileSlices):  # read in blocks, not held: a replica's text may be gigabytes
            return any(block.find(wanted) >= 0 for block in self._text.blocks(overlap=max(0, len(wanted) - 1)))
        return self._text.find(wanted) >= 0

    @classmethod
    def build(cls, entries: Mapping[str, StoredEntry], walk: Iterable[StoredEntry]) -> CorpusTables:
        """The tables of `entries`, walking them once in store order (`walk`, one entry at a time)."""
        concept_names: dict[str, list[str]] = {}
        technologies: list[tuple[str, str]] = []
        pointers: list[tuple[str, str, list[str]]] = []
        frequency: dict[str, int] = {}
        stem_id: dict[str, int] = {}
        stem_ids: list[int] = []
        stems_at = [0]
        vocabulary: set[str] = set()
        texts: list[bytes] = []
        ids: list[str] = []
        kinds: dict[str, int] = {}
        for item in walk:
            entry = item.entry
            ids.append(entry.id)
            kinds[entry.kind] = kinds.get(entry.kind, 0) + 1
            found = content_words(f"{entry.title} {entry.text}")
            for word in found:
                frequency[word] = frequency.get(word, 0) + 1
                stem_ids.append(stem_id.setdefault(word, len(stem_id)))
            stems_at.append(len(stem_ids))
            lowered = f"{entry.title} {entry.text}".lower()
            vocabulary.update(NAME_TOKEN.findall(lowered))
            texts.append(lowered.encode("utf-8"))
            technologies.extend((entry.id, t.get("name", "")) for t in entry.fields.get("technology", []))
            if entry.kind != "concept":
                continue
            for key in {entry.title, without_parenthesis(entry.title), *entry.fields.get("aliases", [])}:
                norm = normalise_name(key)
                if norm and entry.id not in concept_names.get(norm, []):
                    concept_names.setdefault(norm, []).append(entry.id)
            pointer = POINTS_TO.match(entry.text.strip())
            if pointer is not None:
                pointers.append((entry.id, pointer.group(1), entry.fields.get("related", [])))
        names = {name: list(found_ids) for name, found_ids in concept_names.items()}
        for entry_id, technology in technologies:  # technologies a concept page explains
            norm = normalise_name(technology)
            if norm and norm not in names:
                names[norm] = [entry_id]
        state = {
            "concept_names": concept_names,
            "names": names,
            "other_names": other_names(entries, concept_names, pointers),
            "document_frequency": frequency,
            "vocabulary": sorted(vocabulary),
            "entry_count": len(ids),
            "kinds": kinds,
            "ids": ids,
        }
        return cls(
            state, np.asarray(stems_at, dtype=np.int64), np.asarray(stem_ids, dtype=np.uint32), b"\n".join(texts)
        )

    def save(self, folder: Path) -> None:
        """Write the tables to `folder` (a temporary name renamed: whole or absent), removing other generations'."""
        state = {
            "concept_names": self.concept_names,
            "names": self.names,
            "other_names": self.other_names,
            "document_frequency": self.document_frequency,
            "vocabulary": sorted(self.vocabulary),
            "entry_count": self.entry_count,
            "kinds": self.kinds,
            "ids": self._ids,
        }

        def write(temporary: Path) -> None:
            (temporary / "tables.json").write_text(json.dumps(state, ensure_ascii=False), encoding="utf-8")
            np.save(temporary / "stems_at.npy", self._stems_at)
            (temporary / "stem_ids.u32").write_bytes(np.asarray(self._stem_ids, dtype="<u4").tobytes())
            (temporary / "text.txt").write_bytes(self._text)

        try:
            replace_folder(folder, write)
        except OSError as error:
            log.info("The name tables are not cached: %s cannot be written (%s)", folder.parent, error.strerror)

    @classmethod
    def open(cls, folder: Path) -> CorpusTables | None:
        """Tables saved by `save` (the entries' stems and the text read by range when needed); None when missing
        or damaged."""
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            state = json.loads((folder / "tables.json").read_bytes())
            text = FileSlices((folder / "text.txt").open("rb"))
            stems_at = np.load(folder / "stems_at.npy")
            stem_ids = FileSlices((folder / "stem_ids.u32").open("rb"))
            if len(stems_at) != state["entry_count"] + 1 or stem_ids.size != 4 * int(stems_at[-1]):
                return None
            return cls(state, stems_at, stem_ids, text)
        return None


def other_names(
    entries: Mapping[str, StoredEntry], concept_names: dict[str, list[str]], pointers: list[tuple[str, str, list[str]]]
) -> dict[str, list[str]]:
    """Concept page -> the pages that are only another name for it, and back (`Retriever.other_names`)."""
    pairs: dict[str, list[str]] = {}
    for entry_id, pointed, linked in pointers:
        related = [e for e in linked if e in entries]
        named = concept_names.get(normalise_name(pointed), [])
        target = next((e for e in [*related[:1], *named] if e != entry_id), None)
        if target is None or entries[target].entry.kind != "concept":
            continue
        for one, other in ((entry_id, target), (target, entry_id)):
            if other not in pairs.setdefault(one, []):
                pairs[one].append(other)
    return pairs
