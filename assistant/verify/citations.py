"""Citation markers in model output: parse them, drop unknown ids, check each claim's support.

A model may write `[ID]`, `[ID1, ID2]`, `[ID1][ID2]` or near-misses (`(MLD-0472)`,
`[mld-0472]`, `[2512.19606]`, a missing bracket). Markers are normalised to the ids that
were in the context; anything else is removed from the text. Each remaining citation gets
the sentence of the cited entry that best supports the claim (`quote`) and a support score
from `assistant.verify.support.judge`: names, numbers and polarity must agree with the quote and
every claim word must be said there, the embedding helping only with paraphrased words. A
citation that fails is kept but marked `supported=False` (with the reason in the notes),
and its marker leaves the text, so it is never shown as verified.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from assistant.text import split_sentences
from assistant.types import Citation, Entry
from assistant.verify.support import SUPPORTED, judge

ID_PATTERN = (
    r"(?:arxiv:\s*\d{4}\.\d{4,5}|glossary:[a-z0-9-]+|abs-[0-9a-f]{10}|doc:[a-z0-9._/-]+#[a-z0-9-]+|"
    r"[a-z][a-z0-9]{1,9}-\d{1,6}|\d{4}\.\d{4,5})"
)
MARKER = re.compile(
    rf"[\[(【]\s*(?P<ids>{ID_PATTERN}(?:\s*[,;]\s*{ID_PATTERN})*)\s*[\])】]?|(?<![\w:])(?P<bare>{ID_PATTERN})\]",
    re.IGNORECASE,
)


@dataclass
class Verified:
    text: str
    citations: list[Citation]
    dropped: list[str] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)


def find_markers(text: str) -> list[tuple[int, int, list[str]]]:
    """(start, end, raw ids) of every citation marker, near-misses included."""
    out = []
    for match in MARKER.finditer(text):
        raw = match.group("ids") or match.group("bare")
        out.append((match.start(), match.end(), [part.strip() for part in re.split(r"[,;]", raw)]))
    return out


def canonical(raw: str, known: dict[str, str]) -> str | None:
    """Map a raw marker id to a context id: case-insensitive, bare arXiv numbers allowed."""
    key = re.sub(r"\s+", "", raw).lower()
    if key in known:
        return known[key]
    if re.fullmatch(r"\d{4}\.\d{4,5}", key):
        return known.get(f"arxiv:{key}")
    return None


def claim_of(sentence: str) -> str:
    """The sentence without its markers (and without the space a marker leaves behind)."""
    text = re.sub(r"\s+([.,;:!?…])", r"\1", MARKER.sub("", sentence))
    return re.sub(r"\s{2,}", " ", text).strip()


def verify(
    text: str,
    context: dict[str, Entry],
    similarity: Callable[[str, list[str]], list[float]] | None = None,
) -> Verified:
    """Normalise markers to context ids, drop unknown ones, attach a quote and support to each."""
    known = {entry_id.lower(): entry_id for entry_id in context}
    dropped: list[str] = []
    pieces: list[str] = []
    last = 0
    for start, end, raw_ids in find_markers(text):
        ids = []
        for raw in raw_ids:
            entry_id = canonical(raw, known)
            if entry_id is None:
                dropped.append(raw)
            elif entry_id not in ids:
                ids.append(entry_id)
        pieces.append(text[last:start].rstrip(" ") if not ids else text[last:start])
        if ids:
            pieces.append("[" + ", ".join(ids) + "]")
        last = end
    pieces.append(text[last:])
    clean = re.sub(r"[ \t]{2,}", " ", "".join(pieces)).strip()

    best: dict[str, Citation] = {}
    titles = [entry.title for entry in context.values()]  # "A Title That Asks? Part Two: sentence" is one claim
    paragraphs: list[str] = []
    notes: list[str] = []
    for paragraph in clean.split("\n"):
        kept: list[str] = []
        for sentence in sentences_with_markers(paragraph, titles):
            claim = claim_of(sentence)
            verified_ids = []
            for _, _, ids in find_markers(sentence):
                for entry_id in ids:
                    entry = context[entry_id]
                    judgement = judge(claim, entry, similarity)
                    citation = Citation(
                        entry.id,
                        entry.title,
                        entry.kind,
                        entry.url,
                        judgement.quote,
                        judgement.support >= SUPPORTED,
                        judgement.support,
                    )
                    if citation.supported:
                        verified_ids.append(entry_id)
                    else:
                        why = f" ({judgement.reasons[0]})" if judgement.reasons else ""
                        notes.append(f"{entry_id} does not support: {claim[:80]}{why}")
                    rank = (citation.supported, citation.support)
                    if entry_id not in best or rank > (best[entry_id].supported, best[entry_id].support):
                        best[entry_id] = citation
            if verified_ids or not find_markers(sentence):
                marker = f" [{', '.join(dict.fromkeys(verified_ids))}]" if verified_ids else ""
                kept.append(claim_with_marker(claim, marker) if find_markers(sentence) else sentence)
            else:
                kept.append(claim)
        paragraphs.append(" ".join(kept))
    return Verified("\n".join(paragraphs).strip(), list(best.values()), dropped, notes)


def claim_with_marker(claim: str, marker: str) -> str:
    """`A claim.` + ` [ID]` -> `A claim [ID].` (the marker sits before the closing stop)."""
    match = re.match(r"^(.*?)([.!?…]?)$", claim, re.S)
    assert match is not None
    return f"{match.group(1)}{marker}{match.group(2)}"


def sentences_with_markers(text: str, titles: Iterable[str] = ()) -> list[str]:
    """Answer sentences, each keeping the markers that follow it (`claim. [ID]` stays together); a title
    in `titles` is never split, though it may ask a question."""
    out: list[str] = []
    for sentence in split_sentences(text, titles):
        if out and re.fullmatch(r"(\s*\[[^\]]*\])+[.,;]?", sentence):
            out[-1] = f"{out[-1]} {sentence}"
        else:
            out.append(sentence)
    return out
