"""Citation markers in model output: parse them, drop unknown ids, check each claim's support.

The reply is first read as a person sees it (`assistant.verify.unicode.plain`: NFKC, invisible
characters and overlays removed, look-alike letters folded), so `[МLD-0472]` with a Cyrillic М,
`［MLD-0472］` and an id with a zero-width space inside are the marker they look like, and "nоt"
is "not"; the answer shown is that text. A model may write `[ID]`, `[ID1, ID2]`, `[ID1][ID2]` or
near-misses (`(MLD-0472)`, `[mld-0472]`, `[2512.19606]`, a missing bracket, a dash for the
hyphen). Markers are normalised to the ids that were in the context; anything else is removed
from the text and noted, and so is any other bracketed token of letters and digits that names no
entry of the context (`[MLD-O472]` with a letter O: a marker in disguise). Each remaining citation
gets the sentence of the cited entry that best supports the claim (`quote`) and a support score from
`assistant.verify.support.judge`: names, numbers, polarity and who does what must agree with the
quote and every claim word must be said there, the embedding helping only with paraphrased words.

Unverified sentences are dropped: a sentence whose every citation fails is removed from the
answer text (the citation stays in the list with `supported=False`, and a note gives the sentence
and the reason), so a flagged claim is never read as part of the answer, in the CLI, the API or
the UI alike. A sentence that cites nothing is kept as written; when no sentence of the answer is
backed by a verified citation, the answer says so in its notes.

A quoted block (code, a command, a config, a table's rows: `assistant.blocks`) is one claim, never
split into sentences, and cited by a marker on the line after it; it is supported when the cited
entry holds it verbatim (code as consecutive lines of one of its blocks, a table's header and rows as
rows of one of its tables), and it is kept line for line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from assistant.blocks import Block, as_block, block_spans, quoted_in
from assistant.text import split_sentences
from assistant.tuning import SupportSettings
from assistant.types import Citation, Entry
from assistant.verify.support import judge
from assistant.verify.unicode import plain

DASH = "[-\u2010-\u2015\u2212]"  # a hyphen, or a dash a model or a keyboard put in its place
ID_PATTERN = (
    rf"(?:arxiv:\s*\d{{4}}\.\d{{4,5}}|glossary:[a-z0-9-]+|abs{DASH}[0-9a-f]{{10}}|doc:[a-z0-9._/-]+#[a-z0-9-]+|"
    rf"[a-z][a-z0-9]{{1,9}}{DASH}\d{{1,6}}|\d{{4}}\.\d{{4,5}})"
)
MARKER = re.compile(
    rf"[\[(【]\s*(?P<ids>{ID_PATTERN}(?:\s*[,;]\s*{ID_PATTERN})*)\s*[\])】]?|(?<![\w:])(?P<bare>{ID_PATTERN})\]",
    re.IGNORECASE,
)
INVENTED = "\ue000"  # stands where a marker of unknown ids was, until its sentence is dropped
# a bracketed token that still looks like a marker after the markers are parsed: no spaces, a letter,
# a digit ("[MLD-O472]" with a letter O, "[MLD-0472ǃ]"); unless it is one of the markers just written
MARKER_LIKE = re.compile(r"\[(?=[^\]\s]*\d)(?=[^\]\s]*[^\W\d_])[^\[\]\s]{2,40}\]")


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
    key = re.sub(DASH, "-", re.sub(r"\s+", "", raw).lower())
    if key in known:
        return known[key]
    if re.fullmatch(r"\d{4}\.\d{4,5}", key):
        return known.get(f"arxiv:{key}")
    return None


def claim_of(sentence: str) -> str:
    """The sentence without its markers (and without the space a marker leaves behind before a closing
    stop; a dot that opens a word, `the .spec.queueName field`, keeps its space)."""
    text = re.sub(r"\s+([.,;:!?…])(?!\w)", r"\1", MARKER.sub("", sentence).replace(INVENTED, ""))
    return re.sub(r"\s{2,}", " ", text).strip()


def verify(
    text: str,
    context: dict[str, Entry],
    similarity: Callable[[str, list[str]], list[float]] | None = None,
    settings: SupportSettings | None = None,
) -> Verified:
    """Normalise markers to context ids, drop unknown ones, attach a quote and support to each.

    `settings`: the support thresholds (`Settings.support`); their defaults when not given."""
    settings = settings or SupportSettings()
    known = {entry_id.lower(): entry_id for entry_id in context}
    text, blocks = held_blocks(plain(text))
    dropped: list[str] = []
    pieces: list[str] = []
    written = PageBrackets(context)
    last = 0
    for start, end, raw_ids in find_markers(text):
        if not any(canonical(raw, known) for raw in raw_ids) and written.holds(text[start:end]):
            pieces += [text[last:start], written.hold(text[start:end])]  # "[KEP-4639]" quoted from a page
            last = end
            continue
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
        else:
            pieces.append(INVENTED)  # the sentence cited only entries that do not exist: it goes too
        last = end
    pieces.append(text[last:])
    clean = "".join(pieces)

    def unknown(match: re.Match[str]) -> str:
        if all(part.strip() in context for part in match.group()[1:-1].split(",")):
            return match.group()
        if written.holds(match.group()):
            return written.hold(match.group())
        dropped.append(match.group()[1:-1])
        return INVENTED

    clean = MARKER_LIKE.sub(unknown, clean)
    clean = re.sub(rf"([.!?…])([ \t]*){INVENTED}", rf"{INVENTED}\1\2", clean)  # "claim. [NOPE-1]" is that claim's
    clean = re.sub(r"[ \t]{2,}", " ", clean).strip()

    best: dict[str, Citation] = {}
    titles = [entry.title for entry in context.values()]  # "A Title That Asks? Part Two: sentence" is one claim
    paragraphs: list[str] = []
    notes: list[str] = []
    lines = clean.split("\n")
    for number, paragraph in enumerate(lines):
        held = HELD.fullmatch(paragraph.strip())
        if held:  # a quoted block: the marker line after it says what it cites
            after = lines[number + 1] if number + 1 < len(lines) else ""
            cites = [i for _, _, ids in find_markers(after) for i in ids] if is_marker_line(after) else []
            block = blocks[int(held.group(1))]
            kept_ids = check_block(block, cites, context, best, notes)
            if after.strip() == INVENTED:  # it cited only an id that was not in the context: it goes too
                lines[number + 1] = ""
            elif kept_ids or not cites:
                paragraphs.append(held.group())
            elif paragraphs and paragraphs[-1].endswith(":") and not find_markers(paragraphs[-1]):
                paragraphs.pop()  # the `Title:` that introduced the block goes with it
            if cites:
                lines[number + 1] = f"[{', '.join(kept_ids)}]" if kept_ids else ""
            continue
        if is_marker_line(paragraph) and number and HELD.fullmatch(lines[number - 1].strip()):
            paragraphs.append(paragraph)  # a block's marker, already checked
            continue
        kept: list[str] = []
        for sentence in sentences_with_markers(paragraph, titles):
            claim = written.restored(claim_of(sentence))
            verified_ids = []
            for _, _, ids in find_markers(sentence):
                for entry_id in ids:
                    entry = context[entry_id]
                    judgement = judge(claim, entry, similarity, settings)
                    citation = Citation(
                        entry.id,
                        entry.title,
                        entry.kind,
                        entry.url,
                        judgement.quote,
                        judgement.support >= settings.supported,
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
            if verified_ids:
                kept.append(claim_with_marker(claim, f" [{', '.join(dict.fromkeys(verified_ids))}]"))
            elif not find_markers(sentence) and INVENTED not in sentence:
                kept.append(sentence)
            elif INVENTED in sentence and not find_markers(sentence):
                notes.append(f"no entry of the context was cited for: {claim[:80]}")
            # a sentence whose every citation failed is dropped: its notes say what it claimed and why
        paragraphs.append(" ".join(kept))
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(paragraphs)).strip()
    text = written.restored(HELD.sub(lambda held: blocks[int(held.group(1))].text, text))
    return Verified(text, list(best.values()), dropped, notes)


class PageBrackets:
    """A page's own bracketed words that read like a marker ("[KEP-4639]", "(ZeRO-3)", "[INC-2291]"): an
    answer that quotes them names no entry by them, so they are neither dropped as invented ids nor read as
    citations. They are told by the context: an entry's text writes them, brackets and all. While the
    markers are read each is held as a placeholder (`hold`), and put back in the text shown (`restored`)."""

    def __init__(self, context: dict[str, Entry]) -> None:
        self.context = context
        self.texts: list[str] | None = None  # the entries' texts as the answer is read, made when first asked
        self.held: list[str] = []

    def holds(self, marker: str) -> bool:
        if self.texts is None:
            self.texts = [plain(entry.text) for entry in self.context.values()]
        return any(marker in text for text in self.texts)

    def hold(self, marker: str) -> str:
        self.held.append(marker)
        return f"{PAGE_HOLDER}{len(self.held) - 1}{PAGE_HOLDER}"

    def restored(self, text: str) -> str:
        return PAGE_HELD.sub(lambda held: self.held[int(held.group(1))], text) if self.held else text


HOLDER = "\ue001"  # stands where a quoted block was while markers are parsed (`held_blocks`)
HELD = re.compile(f"{HOLDER}(\\d+){HOLDER}")
PAGE_HOLDER = "\ue002"  # stands where a page's own bracketed words were while markers are parsed
PAGE_HELD = re.compile(f"{PAGE_HOLDER}(\\d+){PAGE_HOLDER}")


def held_blocks(text: str) -> tuple[str, list[Block]]:
    """The text with each quoted block (`assistant.blocks`) replaced by a placeholder line, and the blocks:
    what a block says is code or a table, where `x[0]` is no marker and no sentence ends."""
    spans = block_spans(text)
    if not spans:
        return text, []
    out: list[str] = []
    blocks: list[Block] = []
    last = 0
    for start, end in spans:
        block = as_block(text[start:end].strip())
        if block is None:
            continue
        out += [text[last:start], f"{HOLDER}{len(blocks)}{HOLDER}"]
        blocks.append(block)
        last = end
    out.append(text[last:])
    return "".join(out), blocks


def is_marker_line(line: str) -> bool:
    """A line that is only citation markers: how a quoted block is cited, on the line after it."""
    return bool(line.strip()) and not MARKER.sub("", line).strip(" .,;")


def check_block(
    block: Block, cites: list[str], context: dict[str, Entry], best: dict[str, Citation], notes: list[str]
) -> list[str]:
    """The cited ids whose entry holds the quoted block (`blocks.quoted_in`: code line for line, a table's
    header and rows as its rows); each citation is recorded in `best` (a sentence's quote is kept over a
    block's) and each that does not hold it gets a note."""
    kept = []
    for entry_id in cites:
        entry = context.get(entry_id)
        if entry is None:
            continue
        supported = quoted_in(block, plain(entry.text))
        if supported:
            kept.append(entry_id)
        else:
            notes.append(f"{entry_id} does not hold the quoted {'table' if block.is_table else 'block'}")
        if entry_id not in best or (supported and not best[entry_id].supported):
            best[entry_id] = Citation(
                entry.id, entry.title, entry.kind, entry.url, block.text, supported, 1.0 if supported else 0.0
            )
    return list(dict.fromkeys(kept))


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
