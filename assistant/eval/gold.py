"""Gold as a user writes it: an entry id, a file path, or a `file#section` anchor.

People evaluating the assistant on their own documents know which file answers a question, not
the entry ids the index gives its sections. So a gold string is matched as an entry id first and
otherwise read as a path relative to the indexed folder (`runbooks/drain.md`), optionally with the
GitHub-style anchor of a section (`runbooks/drain.md#before-you-start`; the section's subsections,
whose anchors extend it, count as it). Every retrieved or cited entry id is mapped to the gold it
satisfies before scoring, so recall, MRR and citation scores count files (or sections), and several
sections of one file count once.
"""

from __future__ import annotations

from collections.abc import Iterable

from assistant.knowledge.documents import document_id


def _document_prefixes(gold: str) -> tuple[str, ...]:
    """Entry-id prefixes a file (`doc:<path>#`) or a section (`doc:<path>#<anchor>`, `...-`) covers."""
    path, _, anchor = gold.partition("#")
    base = document_id(path, "")
    return (base,) if not anchor else (f"{base}{anchor}", f"{base}{anchor}-")


def covers(entry_id: str, gold: str) -> bool:
    """Whether `entry_id` is `gold` itself or a section of the file or section `gold` names."""
    if entry_id == gold:
        return True
    whole, *extended = _document_prefixes(gold)
    if not extended:
        return entry_id.startswith(whole)
    return entry_id == whole or entry_id.startswith(extended[0])


def resolve_all(entry_ids: Iterable[str], gold: Iterable[str]) -> list[str]:
    """`entry_ids` mapped to the gold string each satisfies (else kept), first occurrence kept, in order."""
    golds = list(gold)
    return list(dict.fromkeys(next((g for g in golds if covers(e, g)), e) for e in entry_ids))
