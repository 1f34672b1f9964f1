"""Entry-aware chunking, counted with tiktoken, sized so the encoder sees each chunk whole.

A concept page keeps its definition, example and caveat together with its title (that is
what answers "what is X?"); technology connections and references become their own
chunks; a long abstract splits on sentence boundaries with a sentence of overlap. A block (code, a
table: `assistant.blocks`) is one sentence on lines of its own, cut only when it alone is over a
chunk, and then at line boundaries, each piece fenced again (a table's with its header). Every
chunk starts with its entry's title, so a chunk retrieved alone still says what it is about,
except an asked-as description (`assistant.knowledge.asked_as`): one chunk each, in the asker's words alone,
since it stands for someone who does not know the title.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from assistant.blocks import Block, as_block, fenced, is_block, joined
from assistant.knowledge.asked_as import FIELD as ASKED_AS
from assistant.knowledge.asked_as import descriptions_of
from assistant.knowledge.concept_page import families, is_page_entry
from assistant.text import count_tokens, split_sentences, truncate_tokens
from assistant.types import Chunk, Entry

CHUNKING_VERSION = 2


class EncoderLimit(Protocol):
    """The encoder's own size limit (see `embeddings.PieceLimit`): its word pieces, countable per text."""

    limit: int  # word pieces the encoder sees, specials included
    special: int  # pieces every text gets on top ([CLS], [SEP])

    def __call__(self, text: str) -> bool: ...  # does this whole text fit?

    def pieces(self, texts: list[str]) -> list[int]: ...  # word pieces of each text, specials excluded


@dataclass(frozen=True)
class Chunker:
    """Splits entries into chunks of at most `max_tokens` (cl100k) and `fits` (encoder) size."""

    max_tokens: int = 200
    overlap_sentences: int = 1
    fits: EncoderLimit | None = None  # the encoder's own limit, e.g. 256 word pieces

    def settings(self) -> dict[str, int]:
        return {"version": CHUNKING_VERSION, "max_tokens": self.max_tokens, "overlap": self.overlap_sentences}

    def chunks(self, entry: Entry) -> list[Chunk]:
        joiner = " "
        if is_page_entry(entry):  # one statement per line, as in the entry text
            parts, joiner = [(f.field, f.label, f.statements) for f in families(entry.fields)], "\n"
        else:
            # a document's sentence per line: a list item, a paragraph's end, a block stay where they were
            parts, joiner = [(entry.kind, "", split_sentences(entry.text))], "\n" if entry.kind == "document" else " "
        out: list[Chunk] = []
        for field, label, sentences in parts:
            head = self.bounded_head(entry.title, label)
            for number, body in enumerate(self.pack(head, sentences, joiner)):
                out.append(Chunk(f"{entry.id}::{field}:{number}", entry.id, entry.kind, entry.title, field, body))
        for number, description in enumerate(descriptions_of(entry)):
            for part, body in enumerate(self.pack("", [description])):
                chunk_id = f"{entry.id}::{ASKED_AS}:{number}" + (f".{part}" if part else "")
                out.append(Chunk(chunk_id, entry.id, entry.kind, entry.title, ASKED_AS, body.strip()))
        return out

    def pack(self, heading: str, sentences: list[str], joiner: str = " ") -> list[str]:
        """Greedy sentence packing with overlap; an over-long sentence is cut by words.

        Sentences are counted once and their counts summed (`_pack_counted`); the chunks that
        come out are checked whole, and an entry whose sums were off is packed again the slow
        way, re-counting every candidate (`_pack_exact`), which gives the same chunks.
        """
        packed = self._pack_counted(heading, sentences, joiner)
        return packed if packed is not None else self._pack_exact(heading, sentences, joiner)

    def _pack_counted(self, heading: str, sentences: list[str], joiner: str) -> list[str] | None:
        """`_pack_exact` with summed per-sentence counts; None when a finished chunk does not fit.

        cl100k pre-tokens never span a newline or a space before a word, so a chunk's count is
        the head's plus each sentence's (with its joiner); BERT word pieces never span
        whitespace, so the encoder count is exactly additive. Where a newline joiner may merge
        with a sentence's final punctuation (`.\n` is one token) the sum over-counts by at most
        one per joint, and candidates that close are counted exactly.
        """
        head = f"{heading}\n"
        limit = self.max_tokens
        head_tokens = count_tokens(head)
        budget = limit - head_tokens
        counter = self.fits  # None, or counts word pieces
        piece_limit = counter.limit - counter.special if counter is not None else 0
        head_pieces = counter.pieces([head])[0] if counter is not None else 0

        def counted(texts: list[str]) -> list[tuple[str, int, int, int]]:
            """(text, tokens at a chunk's start, tokens after a joiner, word pieces)."""
            pieces = counter.pieces(texts) if counter is not None else [0] * len(texts)
            return [(t, count_tokens(t), count_tokens(joiner + t), n) for t, n in zip(texts, pieces, strict=True)]

        items: list[tuple[str, int, int, int]] = []
        for item in counted(sentences):
            text, tokens, _, pieces = item
            if head_tokens + tokens <= limit and (counter is None or head_pieces + pieces <= piece_limit):
                items.append(item)
            else:  # cut re-checks the whole sentence exactly first
                items.extend(counted(self.cut(text, budget, head)))
        if not items:
            return [heading]
        if any(is_block(item[0]) for item in items):  # a block stands on lines of its own: joined by a newline
            items = [
                (t, tokens, count_tokens("\n" + t) if n and (is_block(t) or is_block(items[n - 1][0])) else after, p)
                for n, (t, tokens, after, p) in enumerate(items)
            ]
        slack = 1 if joiner == "\n" else 0  # possible over-count per joint

        def fits(run: list[tuple[str, int, int, int]]) -> bool:
            tokens = head_tokens + run[0][1] + sum(item[2] for item in run[1:])
            pieces = head_pieces + sum(item[3] for item in run)
            if counter is not None and pieces > piece_limit:
                return False
            if tokens <= limit:
                return True
            if tokens - slack * (len(run) - 1) > limit:
                return False
            return self.within(head + joined([item[0] for item in run], joiner), limit)

        bodies: list[list[tuple[str, int, int, int]]] = []
        current: list[tuple[str, int, int, int]] = []
        for item in items:
            candidate = [*current, item]
            if current and not fits(candidate):
                bodies.append(current)
                keep = current[-self.overlap_sentences :] if self.overlap_sentences else []
                current = [*keep, item]
                if not fits(current):
                    current = [item]
            else:
                current = candidate
        bodies.append(current)
        texts = [head + joined([item[0] for item in body], joiner) for body in bodies]
        if not all(self.within(text, limit) for text in texts):  # the safety check: sums were off
            return None
        return texts

    def _pack_exact(self, heading: str, sentences: list[str], joiner: str = " ") -> list[str]:
        """The reference packing: every candidate chunk is tokenized whole."""
        head = f"{heading}\n"
        budget = self.max_tokens - count_tokens(head)
        pieces = [p for s in sentences for p in self.cut(s, budget, head)]
        if not pieces:
            return [heading]
        bodies: list[list[str]] = []
        current: list[str] = []
        for piece in pieces:
            candidate = [*current, piece]
            if current and not self.within(head + joined(candidate, joiner), budget + count_tokens(head)):
                bodies.append(current)
                keep = current[-self.overlap_sentences :] if self.overlap_sentences else []
                current = [*keep, piece]
                if not self.within(head + joined(current, joiner), budget + count_tokens(head)):
                    current = [piece]
            else:
                current = candidate
        bodies.append(current)
        return [head + joined(body, joiner) for body in bodies]

    def bounded_head(self, title: str, label: str = "") -> str:
        """What every chunk of an entry starts with: its title (and label), kept to half of each budget.

        Half the tokens, and half the encoder's word pieces: a title of 300 `=` is short in tokens but
        300 word pieces, more than the encoder reads, which left room for one character of text a chunk.
        """
        title = truncate_tokens(title, self.max_tokens // 2)  # a huge title must not crowd out the text
        head = f"{title} — {label}" if label else title
        if self.fits is None:
            return head
        room = (self.fits.limit - self.fits.special) // 2
        if self.fits.pieces([head])[0] <= room:
            return head
        low, high = 0, len(title)  # the longest cut of the title whose head fits, by binary search
        while low < high:
            middle = (low + high + 1) // 2
            cut = title[:middle].rstrip() + "…"
            if self.fits.pieces([f"{cut} — {label}" if label else cut])[0] <= room:
                low = middle
            else:
                high = middle - 1
        title = title[:low].rstrip() + "…"
        return f"{title} — {label}" if label else title

    def within(self, text: str, limit: int) -> bool:
        return count_tokens(text) <= limit and (self.fits is None or self.fits(text))

    def cut(self, sentence: str, budget: int, head: str) -> list[str]:
        """A sentence longer than the budget is split into word runs that fit (characters if need be).

        Words are counted once and their counts summed (tokens and word pieces never span the single
        spaces that join them, as in `_pack_counted`); the runs that come out are checked whole, and a
        sentence whose sums were off is cut again the slow way (`_cut_exact`), which gives the same runs.
        Counting every growing run whole made a long line of short words quadratic.
        """
        limit = budget + count_tokens(head)
        if self.within(head + sentence, limit):
            return [sentence]
        block = as_block(sentence)
        if block is not None:
            return self.cut_block(block, head, limit)
        words = sentence.split()
        counter = self.fits
        head_tokens = count_tokens(head)
        head_pieces = counter.pieces([head])[0] if counter is not None else 0
        piece_limit = counter.limit - counter.special if counter is not None else 0
        pieces_of = counter.pieces(words) if counter is not None else [0] * len(words)
        runs: list[str] = []
        whole: list[str] = []  # runs made of whole words, to check
        current: list[str] = []
        tokens = pieces = 0
        for word, word_pieces in zip(words, pieces_of, strict=True):
            alone = count_tokens(word)
            if head_tokens + alone > limit or (counter is not None and head_pieces + word_pieces > piece_limit):
                if current:
                    runs.append(" ".join(current))
                    whole.append(runs[-1])
                    current = []
                runs.extend(self.cut_characters(word, head, limit))
                continue
            after = count_tokens(" " + word)
            if current and (tokens + after > limit or (counter is not None and pieces + word_pieces > piece_limit)):
                runs.append(" ".join(current))
                whole.append(runs[-1])
                current = []
            if current:
                tokens, pieces = tokens + after, pieces + word_pieces
            else:
                tokens, pieces = head_tokens + alone, head_pieces + word_pieces
            current.append(word)
        if current:
            runs.append(" ".join(current))
            whole.append(runs[-1])
        if all(self.within(head + run, limit) for run in whole):
            return runs
        return self._cut_exact(sentence, head, limit)

    def cut_block(self, block: Block, head: str, limit: int) -> list[str]:
        """A block over a chunk, cut at line boundaries into blocks that fit, each fenced again; a table's
        pieces each start with its header row. A line that alone does not fit is cut by words, each run a
        line of its own."""
        header = block.lines[:1] if block.is_table else ()
        rows = block.lines[1:] if block.is_table else block.lines
        room = limit - count_tokens(head + fenced(block.info, list(header)))
        lines = [
            part
            for line in rows
            for part in (
                [line]
                if count_tokens(line) < room and self.within(head + line, limit)
                else self.cut_line(line, head, limit)
            )
        ]
        pieces: list[str] = []
        current: list[str] = []
        for line in lines:
            candidate = fenced(block.info, [*header, *current, line])
            if current and not self.within(head + candidate, limit):
                pieces.append(fenced(block.info, [*header, *current]))
                current = []
            current.append(line)
        if current:
            pieces.append(fenced(block.info, [*header, *current]))
        return [piece for piece in pieces if self.within(head + piece, limit)] or self.cut(
            " ".join(lines), limit - count_tokens(head), head
        )

    def cut_line(self, line: str, head: str, limit: int) -> list[str]:
        """A block's line too long for a chunk with its fence: word runs that fit with room for the fence."""
        return self.cut(line, limit - count_tokens(head) - 16, head)

    def _cut_exact(self, sentence: str, head: str, limit: int) -> list[str]:
        """The reference cut: every candidate run is tokenized whole."""
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
        """The longest character prefixes that fit, found by binary search.

        The search starts from a doubling probe (64, 128, ... characters), so cutting a long word costs
        about as many characters tokenized as it has, not its whole length for every piece.
        """
        pieces = []
        while text:
            probe = 64
            while probe < len(text) and self.within(head + text[:probe], limit):
                probe *= 2
            low, high = max(1, probe // 2) if probe > 64 else 1, min(probe, len(text))
            while low < high:
                middle = (low + high + 1) // 2
                if self.within(head + text[:middle], limit):
                    low = middle
                else:
                    high = middle - 1
            pieces.append(text[:low])
            text = text[low:]
        return pieces
