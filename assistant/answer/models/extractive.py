"""The offline default chat model: answers by quoting the context sentences that fit best.

It reads what an LLM's prompt is rendered from, as data: the question's reading and the
labelled context blocks (`Packed.blocks`), so it sees only what retrieval packed, and a change
to the prompt's wording cannot change its answers. It answers with whole sentences from those
entries, each followed by its `[ID]`. Deterministic, no network; a sentence it picks is by
construction a sentence of the cited entry, so every citation verifies.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from assistant.answer.closeness import Closeness
from assistant.answer.context import Block, Packed
from assistant.answer.labels import as_page_brackets
from assistant.answer.models.data_reply import DataReplyModel
from assistant.answer.prompts import load_prompt
from assistant.answer.section_values import DEFAULT_LABEL
from assistant.answer.section_values import FIGURE as FIGURE_SAID
from assistant.blocks import (
    MAX_QUOTED_CHARS,
    TABLE,
    as_block,
    block_words,
    code_quote,
    fenced,
    is_block,
    row_quotes,
    table_cells,
    units,
)
from assistant.knowledge.stated_values import states_new_value
from assistant.question.intents import ASKS_FOR_ANOTHER_NAME
from assistant.question.reading import Reading, own_words
from assistant.question.user_terms import with_literature_terms
from assistant.question.value_kinds import FIGURE_KINDS, documents_kind
from assistant.text import (
    POINTER_PHRASES,
    any_phrase,
    content_words,
    rarity,
    split_sentences,
    without_parenthesis,
)
from assistant.text import words as text_words  # `words` names the word sets of the scoring below
from assistant.tuning import OfflineAnswerSettings

INTENTS = (
    (any_phrase("caveat | limitation | drawback | downside | pitfall | watch out | careful | catch"), "Caveat:", 0.8),
    (any_phrase("example | use case | used for | what for | use it"), "Example:", 0.6),
    (
        any_phrase(
            "also called | alias | another name | other name | abbreviat | stand for | short for | known as"
            " | full name",
            ending=r"\w*",
        ),
        "Also known as:",
        0.8,
    ),
)
DEFINITION_QUESTION = re.compile(r"^\s*(what\s+(is|are|does)|define|definition|meaning|what's)\b|\bmean\b", re.I)


@dataclass(frozen=True)
class Candidate:
    entry_id: str
    rank: int
    position: int  # 0 = the first sentence after the block's title line
    kind: str
    text: str
    title: str = ""
    lead_in: str = ""  # on a document: what the sentence answers or goes on from (`layout_of`)


def candidates_of(blocks: Sequence[Block], layout: Layout | None = None) -> list[Candidate]:
    """The candidate sentences of every context block, in block order. A document's paragraph that is one
    question (an FAQ's "What does "Slurm" stand for?") is not a candidate: it heads the answer below it
    (`layout_of`)."""
    layout = layout or Layout()
    candidates: list[Candidate] = []
    for rank, block in enumerate(blocks):
        if not block.lines:
            continue
        heading, *body = block.lines
        core = heading == block.title  # the title alone heads an entry's main chunk
        position = 0  # 0 = the first sentence of the main chunk
        for line in body:
            if (block.entry_id, line) in layout.questions:
                continue
            for sentence in quotable_units(line):
                lead_in = layout.lead_ins.get((block.entry_id, sentence), "")
                candidates.append(
                    Candidate(
                        block.entry_id,
                        rank,
                        position if core else position + 1,
                        block.kind,
                        sentence,
                        block.title,
                        lead_in,
                    )
                )
                position += 1
    return candidates


@dataclass(frozen=True)
class Layout:
    """How the packed documents are laid out, by block label (`layout_of`)."""

    lead_ins: dict[tuple[str, str], str] = field(default_factory=dict)  # (label, sentence) -> its lead-in
    questions: frozenset[tuple[str, str]] = frozenset()  # (label, line): the FAQ questions that head answers
    files: dict[str, str] = field(default_factory=dict)  # label -> the document a section is of


def layout_of(packed: Packed) -> Layout:
    """Which document each packed section is of, and what each of its sentences is read with, from its
    entry's own text (a chunk has a sentence per line, so its paragraphs and list items are read there):
    the FAQ question it answers (the last paragraph before it that is one question) and the first sentence
    of its paragraph or list item (a list item's term, "bf_window=# - How long ...", before its "The
    default value is 1440 minutes"), which its own words leave out. Their words count as the sentence's
    own (`score_candidates`)."""
    of: dict[tuple[str, str], str] = {}
    questions: set[tuple[str, str]] = set()
    files: dict[str, str] = {}
    for label, entry_id in packed.labels.items():
        entry = packed.entries.get(entry_id)
        if entry is None or entry.kind != "document":
            continue
        files[label] = entry_id.partition("#")[0]
        asked = ""
        for unit in units(entry.text):
            sentences = [unit] if is_block(unit) else split_sentences(unit)
            if len(sentences) == 1 and unit.endswith("?") and not is_block(unit):
                asked = unit
                questions.add((label, unit))
                continue
            for n, sentence in enumerate(sentences):
                lead = sentences[0] if n else ""
                of[(label, sentence)] = " ".join(part for part in (asked, lead) if part)
    return Layout(of, frozenset(questions), files)


def own_text(text: str) -> str:
    """What a candidate says of its own: a table row's cells without the header every row repeats (else
    "default" in the question matches every row of a table headed "Default"); a sentence as it is."""
    block = as_block(text) if text.startswith("```") else None
    if block is None or not block.is_table or len(block.lines) < 2:
        return text
    return " ".join(cell for line in block.lines[1:] for cell in table_cells(line))


def quotable_units(line: str) -> list[str]:
    """What an answer may quote of a context line: its sentences; a code block whole (its first lines,
    `blocks.code_quote`); a table never whole, but each row under the header (`blocks.row_quotes`). A list's
    number the sentence splitter cut off its item ("**1. Same-domain placement** Force ...", a numbered
    paragraph no Markdown list holds, split into "1." and its text) says nothing alone: it is no sentence."""
    out: list[str] = []
    for sentence in split_sentences(line):
        block = as_block(sentence)
        if block is None:
            if not ENUMERATOR.fullmatch(sentence):
                out.append(sentence)
        elif block.is_table:
            out.extend(row.text for row in row_quotes(block))
        else:
            out.append(code_quote(block).text)
    return out


ENUMERATOR = re.compile(r"\(?\d{1,3}[.)]?")  # "1.", "2)", "(3)", "4": a list item's number alone


def score_candidates(question: str, candidates: list[Candidate]) -> list[tuple[float, Candidate]]:
    """Question-word coverage weighted by rarity, plus intent and rank priors. The question's words
    include the terms papers use for its shop talk (`user_terms.py`: "cards" -> GPU), so a sentence
    saying it in the literature's words counts."""
    asked = content_words(with_literature_terms(question))
    documents = [content_words(own_text(c.text)) for c in candidates]
    if candidates and all(c.kind == "document" for c in candidates):  # "Kubernetes 1.33" finds the "1.33.x" row
        asked |= numbers_in(question)
        documents = [words | numbers_in(own_text(c.text)) for words, c in zip(documents, candidates, strict=True)]
    lead_ins = [content_words(c.lead_in) for c in candidates]  # said with the sentence (`layout_of`)
    titles = [content_words(c.title) for c in candidates]  # a sentence is also about its entry's title
    total = len(candidates) or 1
    frequency: dict[str, int] = {}
    for words in documents:
        for word in words & asked:
            frequency[word] = frequency.get(word, 0) + 1
    weight = {w: rarity(total, frequency.get(w, 0)) for w in asked}
    norm = math.fsum(weight.values()) or 1.0  # fsum: a set's order changes with the process, the sum may not
    lowered = own_words(question).lower()
    scored = []
    for candidate, own, lead_in, title in zip(candidates, documents, lead_ins, titles, strict=True):
        words = own | lead_in
        coverage = (
            math.fsum(weight[w] for w in asked & words) + 0.5 * math.fsum(weight[w] for w in (asked & title) - words)
        ) / norm
        if coverage == 0:
            continue
        score = coverage + 0.15 / (1 + candidate.rank)
        for pattern, prefix, bonus in INTENTS:
            if pattern.search(lowered) and candidate.text.startswith(prefix):
                score += bonus
        if DEFINITION_QUESTION.search(own_words(question)) and candidate.kind == "concept" and candidate.position == 0:
            score += 0.5
        scored.append((score, candidate))
    return sorted(scored, key=lambda item: (-item[0], item[1].rank, item[1].position))


# a number as a key: a version or a size the question names, however a page writes it around ("1.33.x",
# "2000(nodes)", "v1.8.0"); a lone digit is too common to tell lines apart
NUMBER_KEY = re.compile(r"(?<![\w.])v?(\d+(?:\.\d+)+|\d{2,})(?=[^\w.]|\.(?!\d)|\.x\b|$)", re.I)


def numbers_in(text: str) -> set[str]:
    """The numbers of two digits or more, and the dotted versions, a text names, as `#1.33`, `#2000` (apart
    from its words, so "1.33" meets "1.33.x" and "2000-node" meets "2000(nodes)")."""
    return {f"#{match.group(1)}" for match in NUMBER_KEY.finditer(text)}


SYNONYM_SENTENCE = any_phrase(
    "is a synonym for | is a synonym of | also called | also known as | another name for", re.I
)
POINTER = any_phrase(POINTER_PHRASES, re.I)  # read at a sentence's start (`match`)
CONTRIBUTION = re.compile(
    r"\b(?:we (?:propose|present|introduce|design|develop|build|describe|implement)|this (?:paper|work) "
    r"(?:proposes|presents|introduces)|in this (?:paper|work)|we show|our (?:system|approach|method|framework))\b",
    re.I,
)
MECHANISM = re.compile(
    r"\b(?:by|via|through|using|uses|leverag\w*|exploit\w*|consists? of|combin\w*|key (?:idea|insight)|"
    r"instead of|decoupl\w*|mapping|maps)\b",
    re.I,
)
LIMITATION = re.compile(
    r"^caveat:|\b(?:however|but|limitation|drawback|overhead|at the cost|at the expense|trade-?off|only|cannot|"
    r"fails?|worse|degrad\w*|bottleneck|suffers?|challeng\w*|costly|expensive)\b",
    re.I,
)
EXAMPLE_SENTENCE = re.compile(r"^example:|\b(?:for example|for instance|e\.g\.|such as|case stud)", re.I)
# a figure as abstracts write it: 35%, 2.3x, 1.15 times, 26.6 percentage points, and LaTeX's 5.79$\times$ and 12\%
FIGURE = re.compile(
    r"\d+(?:\.\d+)?\s?(?:%|×|\\%|\$?\\times|(?:x|times|ms|s|gb|tb|mb|percent|percentage points?)\b)", re.I
)
Scores = dict[int, float]  # id(candidate) -> how well it fits the question


@dataclass
class EntryView:
    """One entry as the context shows it: its title, kind, retrieval rank and sentences in order."""

    entry_id: str
    title: str
    kind: str
    rank: int
    sentences: list[Candidate]
    tuning: OfflineAnswerSettings = field(repr=False, compare=False)
    closeness: Closeness | None = field(default=None, repr=False, compare=False)
    _meaning: dict[int, float] = field(default_factory=dict, repr=False, compare=False)

    def meaning(self, sentence: Candidate) -> float:
        """How close the sentence is in meaning to the question (0 without a `closeness`), read with its
        lead-in (`layout_of`) as its words are; the entry's sentences are encoded together, on first use."""
        if self.closeness is None:
            return 0.0
        if not self._meaning:
            values = self.closeness.of([f"{c.lead_in} {c.text}".strip() for c in self.sentences])
            self._meaning.update((id(c), v) for c, v in zip(self.sentences, values, strict=True))
        return self._meaning.get(id(sentence), 0.0)

    def fit(self, sentence: Candidate, score: Scores) -> float:
        """How well a scored sentence fits the question: its word score plus its meaning (`tuning.meaning`; for
        a section of a team's documents `tuning.section_meaning`, by default none: not encoded at all)."""
        weight = self.tuning.section_meaning if self.kind == "document" else self.tuning.meaning
        return score[id(sentence)] + (weight * self.meaning(sentence) if weight else 0.0)

    @property
    def definition(self) -> Candidate | None:
        return next((c for c in self.sentences if c.position == 0), self.sentences[0] if self.sentences else None)

    @property
    def background(self) -> set[int]:
        """ids of an abstract's sentences before the first that says what the paper contributes, without a
        figure: the setting and the problem, which state no answer (empty for a concept page, or when no
        sentence says what the paper contributes)."""
        if self.kind != "abstract":
            return set()
        first = next((c.position for c in self.sentences if CONTRIBUTION.search(c.text)), None)
        if first is None:
            return set()
        return {id(c) for c in self.sentences if c.position < first and not FIGURE.search(c.text)}

    @property
    def is_pointer(self) -> bool:
        first = self.definition
        return first is not None and bool(POINTER.match(first.text))


def entry_views(
    candidates: list[Candidate], tuning: OfflineAnswerSettings, closeness: Closeness | None = None
) -> list[EntryView]:
    """The context's entries in retrieval order, each sentence once."""
    views: dict[str, EntryView] = {}
    for c in candidates:
        view = views.setdefault(c.entry_id, EntryView(c.entry_id, c.title, c.kind, c.rank, [], tuning, closeness))
        if all(s.text != c.text for s in view.sentences):
            view.sentences.append(c)
    for view in views.values():
        view.sentences.sort(key=lambda c: (c.position, c.rank))
    return sorted(views.values(), key=lambda v: v.rank)


def extract_answer(
    reading: Reading, blocks: Sequence[Block], tuning: OfflineAnswerSettings, layout: Layout | None = None
) -> str:
    """An answer that answers: a first sentence for what is asked, then support, each with its [ID]."""
    layout = layout or Layout()
    candidates = candidates_of(blocks, layout)
    scored = score_candidates(reading.text, candidates)
    if not scored:
        return load_prompt("refusal")
    asked = reading.own_words
    score: Scores = {id(c): s for s, c in scored}
    # all of them: "overfit" asks about `Overfitting`, whose words it lacks
    views = sentence_led(entry_views(candidates, tuning, Closeness(asked, reading.encoders.closeness)), score)
    compose = COMPOSERS.get(composed_as(reading, views), problem_answer)
    lines = compose(reading, views, score, tuning) or problem_answer(reading, views, score, tuning)
    lines = lines + other_parts(reading, views, lines)
    if asks_for_code(reading):
        lines = with_code_block(lines, views, reading.own_words, candidates, layout)
    elif layout.files:  # on documents, a block the lead introduces or that names what is asked shows it
        lines = with_code_block(lines, views, reading.own_words, candidates, layout, shares=1)
    lines = sentence_first(with_what_follows(lines, candidates))
    if layout.files:
        lines = default_first(with_value_that_follows(lines, reading, candidates), reading)
        lines = with_introduced_blocks(with_lead_ins(lines, candidates), candidates)
    lines = without_repeats(lines)
    if layout.files and asks_a_figure(reading) and not states_a_figure(lines, reading):
        return load_prompt("refusal")  # "how many ...?" answered with no number at all answers nothing asked
    return "\n".join(lines)


def asks_a_figure(reading: Reading) -> bool:
    """Does the question ask for a figure: a count, a default or a specification (`value_kinds`)?"""
    return (documents_kind(reading.asking) or reading.value_kind) in FIGURE_KINDS


def states_a_figure(lines: list[str], reading: Reading) -> bool:
    """Does some quoted line, code and tables included, hold a number (`section_values.FIGURE`) the question
    does not write itself? Refusal asked the search's first sections for such a number on a line about what is
    asked (`refusal.kind_supported`); an answer composed from them, with its close alternatives, that quotes
    none at all states no figure of anything."""
    for line in lines:
        said = CITED_AT_END.sub("", line)
        if any(match.group().lower() not in reading.lowered for match in FIGURE_SAID.finditer(said)):
            return True
    return False


def without_repeats(lines: list[str]) -> list[str]:
    """The answer's lines, each quoted sentence or block once, where it is first quoted: a block two chunks
    share, a sentence moved up to go with the one it follows (`with_lead_ins`), and a sentence quoted both
    under a close alternative's title ("Section › Subsection: " and the sentence) and on its own."""
    kept: list[str] = []
    for line in dict.fromkeys(lines):
        if is_cited_code(line) or not any(line.endswith(f": {k}") or k.endswith(f": {line}") for k in kept):
            kept.append(line)
    return kept


def composed_as(reading: Reading, views: list[EntryView]) -> str:
    """The composer an answer is built by (`COMPOSERS`): the question's intent on the pack. A team's documents
    are answered by their best section's best sentences whatever the intent: the other composers read what
    only the pack has (a concept page's first sentence or its `Caveat:` field, a paper's contribution, a
    figure as abstracts write it, one concept page per side of a comparison). On nine documentation sets
    the best sections answered 6 more questions with the fact and 1 fewer ("feast apply vs materialize?",
    whose sides are two sections)."""
    if views and all(view.kind == "document" for view in views):
        return "problem"
    if reading.intent == "problem" and len(reading.own_words.split()) <= 4 and named(views, reading.subject):
        return "definition"  # a bare name ("GPU", "NCCL meaning") asks what it is
    return reading.intent


def sentence_led(views: list[EntryView], score: Scores) -> list[EntryView]:
    """Of a team's documents, the first three sections that share a word with the question, led by the one
    whose best sentence fits it clearly better than the first's (`tuning.sentence_lead`): the search ranks
    sections as wholes, and of two sections of one page the one that says the answer often shares fewer of
    the question's words overall. The pack's entries keep the search's order."""
    if not views or any(view.kind != "document" for view in views):
        return views
    first = [view for view in views if entry_score(view, score) > 0][:3]
    if not first:
        return views
    best = max(first, key=lambda view: entry_score(view, score))
    if entry_score(best, score) <= (1 + views[0].tuning.sentence_lead) * entry_score(first[0], score):
        return views
    return [best, *(view for view in views if view is not best)]


def default_first(lines: list[str], reading: Reading) -> list[str]:
    """A question for a default on documents ("what's the default wait before ...?") answered with the lead
    section's labelled default first ("Default value: 30s", a property's own section): the answer quoted it
    after sentences that only share more of the question's words. An unlabelled "The default value is 30"
    stays where it is: it says whose default it is only after the sentence before it."""
    if documents_kind(reading.asking) != "default" or not lines or DEFAULT_LABEL.match(lines[0]):
        return lines
    lead_id = cited_id(lines[0])
    stating = next(
        (
            line
            for line in lines[1:]
            if lead_id and cited_id(line) == lead_id and not is_cited_code(line) and DEFAULT_LABEL.match(line)
        ),
        None,
    )
    return lines if stating is None else [stating, *(line for line in lines if line != stating)]


CITED_AT_END = re.compile(r"\[([^\[\]]+)\][.!?…]*$")  # a line's marker, as `cite` writes it


def cited_id(line: str) -> str | None:
    """The entry a quoted line cites (its marker at the end, `cite`), or None."""
    marker = CITED_AT_END.search(line)
    return marker.group(1) if marker else None


def quoted_as(candidate: Candidate, line: str) -> bool:
    """Is `line` the candidate as the answer quotes it (`cite`: its marker before its closing stops, maybe after
    its section's title)? Its own text with the full stop is not in the line."""
    return line.endswith(cite(candidate.text, candidate.entry_id))


# what a "who" or "when" question on documents asks for, by its question word (`stated_values` kinds)
ASKED_ENTITIES: dict[str, tuple[str, ...]] = {
    "who": ("person", "company"),
    "whom": ("person", "company"),
    "whose": ("person", "company"),
    "when": ("date",),
}
ITEM_LINES = 2  # sentences after the lead within which its owner or date stands


def with_value_that_follows(lines: list[str], reading: Reading, candidates: list[Candidate]) -> list[str]:
    """A who or when question's answer on documents, with the person or date that follows the lead: notes give a
    list item's owner and date on the lines after it ("AI-2 Alert on every TLS secret that expires in less than
    21 days ... / Owner: Aisha Bello. Due 2025-06-27."), sharing no word with the question, so no score
    quotes them (or quotes another item's). When the lead states no value of the kind asked, the first of the
    ITEM_LINES sentences after it (in its chunk) that does is quoted right after it."""
    asked = {word for word in text_words(reading.asking) if word in ASKED_ENTITIES}
    kinds = {kind for word in asked for kind in ASKED_ENTITIES[word]}
    if not kinds or not lines:
        return lines
    lowered = reading.lowered
    if any(states_new_value(kind, lines[0], lowered) for kind in kinds):
        return lines
    for n, lead in enumerate(candidates):
        if lead.kind != "document" or not quoted_as(lead, lines[0]):
            continue
        following = [
            c for c in candidates[n + 1 : n + 1 + ITEM_LINES] if c.entry_id == lead.entry_id and c.rank == lead.rank
        ]
        stating = next((c for c in following if any(states_new_value(k, c.text, lowered) for k in kinds)), None)
        if stating is not None:
            return after_lead(lines, cite(stating.text, stating.entry_id))
    return lines


INTRODUCED = 3  # sentences (list items) quoted after a document's sentence that ends with a colon


def with_what_follows(lines: list[str], candidates: list[Candidate]) -> list[str]:
    """A document's quoted sentence that ends with a colon ("... a .deepspeed_env file that looks like this:",
    "Steps to follow:") says nothing without what it introduces: the block that follows it, else up to
    INTRODUCED sentences (list items) that follow it, each quoted after it unless the answer has it."""
    out: list[str] = []
    for line in lines:
        out.append(line)
        start = next(
            (
                n
                for n, c in enumerate(candidates)
                if c.kind == "document" and c.text.endswith(":") and line == cite(c.text, c.entry_id)
            ),
            None,
        )
        if start is None:
            continue
        lead = candidates[start]
        following: list[Candidate] = []
        for c in candidates[start + 1 : start + 1 + INTRODUCED]:
            if c.entry_id != lead.entry_id or c.rank != lead.rank or (following and is_block(c.text)):
                break
            following.append(c)
            if is_block(c.text) or c.text.endswith(":"):
                break
        out += [cited for c in following if (cited := cite(c.text, c.entry_id)) not in lines and cited not in out]
    return out


def with_introduced_blocks(lines: list[str], candidates: list[Candidate]) -> list[str]:
    """Each quoted sentence with the code block it introduces (within FOLLOWS sentences after it, in its chunk)
    right after it, moved there when the answer quotes it further down as one of the section's best sentences
    (unless an earlier sentence shows it): a close alternative's "You should consider backing this up
    regularly." is followed by its "Exporting example:" block, which holds the command, and a supporting
    sentence's "... it'll only support the architectures visible at the time of building." by the
    `TORCH_CUDA_ARCH_LIST=...` build line (`with_code_block` shows one block, the lead's).

    A sentence that introduces a small table is followed by the table whole (`table_introduced`) when the
    answer quotes none of its rows: "Phone numbers for when PagerDuty or Slack is down." is said of the names
    and numbers under it, which share no word with "what's their mobile number?". A row the question picked
    ("the default idle_timeout?") answers alone."""
    out: list[str] = []
    for line in lines:
        out.append(line)
        cited = cited_id(line)
        if not cited or is_cited_code(line):
            continue
        block = next(blocks_after(line, cited, candidates), None)
        if block is not None:
            if (shown := cite(block.text, block.entry_id)) not in out:
                out.append(shown)  # moved here; its later copy goes with the answer's repeats (`extract_answer`)
        elif (table := table_introduced(line, cited, candidates)) is not None:
            text, rows = table
            if any(quoted_as(row, quoted) for row in rows for quoted in lines):
                continue  # the question picked its row ("the default idle_timeout?"): the row answers, not the table
            if (shown := cite(text, cited)) not in out:
                out.append(shown)
    return out


LEAD_IN_WITHIN = 2  # sentences before a quoted one within which the first sentence it goes on from stands


def with_lead_ins(lines: list[str], candidates: list[Candidate]) -> list[str]:
    """Each quoted sentence of a document that goes on from its paragraph's or list item's first sentence (its
    `lead_in`, whose words counted as its own, `layout_of`) with that sentence right before it, moved there when
    the answer quotes it further down: "Default value is 30 seconds." says whose default it is only after
    "bf_interval=# - Interval between backfill scheduling attempts.", and "This parameter defines the
    reservation timeout ..." goes on from the "Default value: 15 minutes." above it, which shares no word with
    the question. A close alternative's title moves to the first sentence."""
    going_on: dict[str, Candidate] = {}  # each such sentence as `cite` quotes it, the first of its copies
    placed: dict[tuple[str, int, int], Candidate] = {}
    for c in candidates:
        if c.kind == "document" and c.lead_in:
            going_on.setdefault(cite(c.text, c.entry_id), c)
        placed.setdefault((c.entry_id, c.rank, c.position), c)
    out: list[str] = []
    for line in lines:
        found = None if is_cited_code(line) else lead_of(line, going_on, placed)
        if found is None:
            out.append(line)
            continue
        sentence, lead = found
        quoted = cite(sentence.text, sentence.entry_id)
        title = line.removesuffix(quoted)  # "Section › Subsection: " before a close alternative's sentence
        shown = cite(lead.text, lead.entry_id)
        # shown already, or quoted under a close alternative's title ("Section › Subsection: " and the sentence)
        titled = any(other != shown and other.endswith(shown) for other in lines)
        if titled or any(other.endswith(shown) for other in out):
            out.append(line)
        else:  # its later copy, if the answer quotes it further down, goes with the answer's repeats
            out += [title + shown, quoted]
    return out


def lead_of(
    line: str, going_on: dict[str, Candidate], placed: dict[tuple[str, int, int], Candidate]
) -> tuple[Candidate, Candidate] | None:
    """The quoted document sentence a `line` shows (itself or after a close alternative's title) and the first
    sentence of the paragraph or list item it goes on from, LEAD_IN_WITHIN sentences before it at most, when
    the context holds both."""
    quotes = [line, *(line[cut.end() :] for cut in re.finditer(": ", line))]
    sentence = next((going_on[quote] for quote in quotes if quote in going_on), None)
    if sentence is None:
        return None
    for back in range(1, LEAD_IN_WITHIN + 1):
        lead = placed.get((sentence.entry_id, sentence.rank, sentence.position - back))
        if lead is not None and sentence.lead_in.endswith(lead.text):
            return sentence, lead
    return None


def table_introduced(line: str, entry_id: str, candidates: list[Candidate]) -> tuple[str, list[Candidate]] | None:
    """The table a quoted sentence (`line`, of `entry_id`) introduces, as one block, and the row candidates it
    is made of: its rows start within FOLLOWS sentences after the sentence, in its chunk, and it has at most
    INTRODUCED_TABLE_ROWS rows and MAX_QUOTED_CHARS characters. A longer table stays quoted row by row (a
    4,000-character reference table is no answer)."""
    for n, quoted in enumerate(candidates):
        if quoted.entry_id != entry_id or quoted.text.startswith("```") or not quoted_as(quoted, line):
            continue
        following = candidates[n + 1 : n + 1 + FOLLOWS]
        start = next(
            (n + 1 + m for m, c in enumerate(following) if c.rank == quoted.rank and table_row_of(c, entry_id)),
            None,
        )
        if start is None:
            return None
        rows: list[tuple[Candidate, str]] = []  # each row's candidate and its line
        header = ""
        for candidate in candidates[start:]:
            cells = table_row_of(candidate, entry_id)
            if cells is None or candidate.rank != quoted.rank or (rows and cells[0] != header):
                break
            header = cells[0]
            rows.append((candidate, cells[1]))
        text = fenced(TABLE, [header, *(row for _, row in rows)])
        if len(rows) > INTRODUCED_TABLE_ROWS or len(text) > MAX_QUOTED_CHARS:
            return None
        return text, [candidate for candidate, _ in rows]
    return None


def table_row_of(candidate: Candidate, entry_id: str) -> tuple[str, str] | None:
    """The header and the row of a candidate that is one row of a table of `entry_id` (`row_quotes`), or None."""
    block = as_block(candidate.text) if candidate.entry_id == entry_id else None
    if block is None or not block.is_table or len(block.lines) != 2:
        return None
    return block.lines[0], block.lines[1]


INTRODUCED_TABLE_ROWS = 8  # rows of a table a sentence introduces that an answer shows whole


def blocks_after(line: str, entry_id: str, candidates: list[Candidate]) -> Iterator[Candidate | None]:
    """For each place the candidate `line` quotes (of `entry_id`) stands in the context, the code block within
    FOLLOWS sentences after it in its chunk, or None: a sentence may close one chunk and open the next."""
    for n, quoted in enumerate(candidates):
        if quoted.entry_id == entry_id and quoted_as(quoted, line):
            following = [c for c in candidates[n + 1 : n + 1 + FOLLOWS] if c.rank == quoted.rank]
            yield next((c for c in following if c.entry_id == entry_id and is_code(c.text)), None)


def sentence_first(lines: list[str]) -> list[str]:
    """The answer led by a sentence: a code block chosen to lead follows the first sentence instead."""
    first = next((n for n, line in enumerate(lines) if not is_cited_code(line)), 0)
    return [lines[first], *lines[:first], *lines[first + 1 :]] if first else lines


def is_cited_code(line: str) -> bool:
    """A line `cite` made of a code block (and its marker on the line after)."""
    block = line.rpartition("\n")[0]
    return is_code(block) if block else False


FOLLOWS = 2  # sentences after the lead within which a code block is the one the lead introduces


def asks_for_code(reading: Reading) -> bool:
    """Whether the answer should show a command or a config: the reading asks for install steps, commands or
    configuration (`value_kinds`: howto, read by the learned value reader)."""
    return reading.value_kind == "howto"


def with_code_block(
    lines: list[str],
    views: list[EntryView],
    question: str,
    candidates: list[Candidate],
    layout: Layout,
    shares: int = 0,
) -> list[str]:
    """The answer with the answering section's code block quoted verbatim right after the lead sentence, when
    the lead's section has one (moved there when the answer quotes it further down): the block that follows
    the lead sentence closely (within FOLLOWS sentences: "The example below ..." and its example), else the
    one that shares most words with the question (the first on a tie). A section that explains without one
    ("Running Workflow Pods as non-root is best practice") is often followed by one that shows it: then the
    block of the same document's other packed sections that shares most words with the question.

    With `shares` (a question that does not ask for steps, on documents), only the lead's own section is
    looked at, and its block is quoted when the lead introduces it or it has `shares` of the question's words:
    a troubleshooting answer's fix or a default's config line is often only in the block."""
    if not lines:
        return lines
    lead_id = cited_id(lines[0])
    if lead_id is None:
        return lines
    view = next((v for v in views if v.entry_id == lead_id), None)
    code = [c for c in view.sentences if is_code(c.text)] if view is not None else []
    if not code:
        return with_sibling_code(lines, views, question, layout, lead_id) if not shares else lines
    asked = content_words(question)
    fitting = max(code, key=lambda c: (len(asked & content_words(block_words(c.text))), -c.position))
    # the lead may close one chunk and open the next (the chunks' overlap): each place it stands is looked at
    introduced = next((block for block in blocks_after(lines[0], lead_id, candidates) if block), None)
    best = introduced or (fitting if len(asked & content_words(block_words(fitting.text))) >= shares else None)
    if best is None:
        return lines
    return after_lead(lines, cite(best.text, lead_id))


def with_sibling_code(
    lines: list[str], views: list[EntryView], question: str, layout: Layout, lead_id: str
) -> list[str]:
    """The answer with the code block of the lead's document, from another of its packed sections, that shares
    most words with the question (the best-found section's first on a tie), right after the lead
    (`with_code_block`)."""
    document = layout.files.get(lead_id)
    if document is None:
        return lines
    asked = content_words(question)
    siblings = [
        (len(asked & content_words(block_words(c.text))), -v.rank, -c.position, c)
        for v in views
        if v.entry_id != lead_id and layout.files.get(v.entry_id) == document
        for c in v.sentences
        if is_code(c.text)
    ]
    if not siblings:
        return lines
    *_, best = max(siblings, key=lambda found: found[:3])
    return after_lead(lines, cite(best.text, best.entry_id))


def after_lead(lines: list[str], quoted: str) -> list[str]:
    """The answer with `quoted` right after its lead sentence (moved there when the answer quotes it later)."""
    return [lines[0], quoted, *(line for line in lines[1:] if line != quoted)]


def is_code(text: str) -> bool:
    block = as_block(text)
    return block is not None and not block.is_table


def best_sentence(
    view: EntryView, score: Scores, prefer: re.Pattern[str] | None = None, as_well: float = 0.0
) -> Candidate | None:
    """The entry's sentence that fits the question best; one matching `prefer` wins when it fits at least
    `as_well` of the best fit. A sentence's fit is its word score plus its closeness in meaning to the
    question (`tuning.meaning`). A caveat, an example or a figure asked for is that shape (any fit will do);
    a paper's contribution is only a likely answer (`tuning.preferred_fit`): the sentence that answers leads.

    When a sentence of some shape is wanted (`prefer`: a lead), an abstract's background - the sentences
    before it says what it contributes, with no figure of its own ("Large Language Models have achieved
    remarkable progress ...") - counts `tuning.background` of its fit: it shares the question's broad words and
    answers nothing the question asks. A supporting sentence may restate the asker's problem."""
    background = view.background if prefer is not None else set()  # a supporting sentence may restate the problem
    counted = {id(c): view.tuning.background if id(c) in background else 1.0 for c in view.sentences if id(c) in score}
    words = {key: score[key] * share for key, share in counted.items()}
    fit = {id(c): view.fit(c, score) * counted[id(c)] for c in view.sentences if id(c) in counted}
    ranked = sorted((c for c in view.sentences if id(c) in fit), key=lambda c: -fit[id(c)])
    if prefer is not None:
        # whether a sentence of the preferred shape leads is read off the word scores, as it was fitted; the
        # meaning, which rates every sentence of an on-topic entry alike, would let a contribution lead always
        preferred = [c for c in ranked if prefer.search(c.text)]
        if preferred and words[id(preferred[0])] >= as_well * max(words.values()):
            return preferred[0]
    return ranked[0] if ranked else None


def entry_score(view: EntryView, score: Scores) -> float:
    return max((score[id(c)] for c in view.sentences if id(c) in score), default=0.0)


def scored(views: list[EntryView], score: Scores) -> list[EntryView]:
    """The entries with a sentence that shares a word with the question (the others are only looked up by name)."""
    return [v for v in views if entry_score(v, score) > 0]


def normalise_name(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def named(views: list[EntryView], subject: str) -> EntryView | None:
    """The concept whose title (or a parenthesised alias in it) is the subject, if the context has one."""
    wanted = normalise_name(subject)
    if not wanted:
        return None
    for view in views:
        if view.kind != "concept":
            continue
        title = view.title.lower()
        names = {normalise_name(title), normalise_name(without_parenthesis(title))}
        names |= {normalise_name(a) for a in re.findall(r"\(([^)]+)\)", title)}
        squashed = {n.replace(" ", "") for n in names}  # "iid" names `i.i.d.`
        if wanted in names or wanted.removesuffix("s") in names or wanted.replace(" ", "") in squashed:
            return view
    for view in views:  # "overfit" names "overfitting": a word form of the whole title
        if view.kind == "concept" and len(wanted) >= 5 and " " not in wanted:
            title = normalise_name(without_parenthesis(view.title))
            if " " not in title and (title.startswith(wanted) or wanted.startswith(title)) and len(title) >= 5:
                return view
    return headed_by(views, wanted)


def headed_by(views: list[EntryView], wanted: str) -> EntryView | None:
    """The one concept whose title is the subject and one more word ("sigmoid" names "sigmoid function",
    "dropout" names "dropout regularization"); None when two titles qualify ("batch": "batch size" and
    "batch normalization"), since then the subject does not say which."""
    if len(wanted) < 4:
        return None
    found = []
    for view in views:
        title = normalise_name(without_parenthesis(view.title)).split()
        if view.kind == "concept" and len(title) == len(wanted.split()) + 1 and " ".join(title[:-1]) == wanted:
            found.append(view)
    return found[0] if len(found) == 1 else None


def followed(view: EntryView, views: list[EntryView]) -> EntryView:
    """A pointer entry ("Synonym for learning rate") is replaced by the entry it points to, if present."""
    first = view.definition
    if first is None or not view.is_pointer:
        return view
    pointer = POINTER.match(first.text)
    return named(views, first.text[pointer.end() if pointer else 0 :].strip(" .:")) or view


def other_names(question: str, views: list[EntryView], score: Scores) -> list[str]:
    """ "What is it also called?": the page's own aliases, or an entry that is a synonym of it."""
    concepts = [v for v in views if v.kind == "concept"][:4]
    if not concepts:
        return []
    if concepts[0].is_pointer:
        return []  # "another word for step size": the entry it points to is the other name
    subject = concepts[0]
    aliases = next((c for c in subject.sentences if c.text.startswith("Also known as")), None)
    if aliases is not None:
        return [cite(aliases.text, subject.entry_id)]
    asked = f" {normalise_name(question)} "
    pointers = [
        v for v in views if v is not subject and v.is_pointer and followed(v, views) is subject and v.definition
    ]
    # the name the asker already used ("another name for a DQN") is the last choice of another name
    unused = [v for v in pointers if f" {normalise_name(v.title)} " not in asked]
    synonym = next((c for c in subject.sentences if SYNONYM_SENTENCE.search(c.text)), None)
    choice = unused[0] if unused else pointers[0] if pointers and synonym is None else None
    if choice is not None and choice.definition is not None:
        return [cite(f"{choice.title}: {choice.definition.text}", choice.entry_id)]
    return [cite(synonym.text, subject.entry_id)] if synonym is not None else []


def name_answer(reading: Reading, views: list[EntryView], score: Scores, tuning: OfflineAnswerSettings) -> list[str]:
    """ "What is this called?": the concept's name first, its definition as the evidence."""
    if ASKS_FOR_ANOTHER_NAME.search(reading.lowered) and (also := other_names(reading.own_words, views, score)):
        return also
    concepts = [v for v in views if v.kind == "concept"][:4]
    if not concepts:
        return []
    # the search's order, not shared words: a description in the asker's words shares few with the
    # definition it describes, and the search has weighed it with vectors and word-piece matches
    top = followed(concepts[0], views)
    definition = top.definition
    if definition is None:
        return []
    lines = [cite(f"{top.title}: {definition.text}", top.entry_id)]
    pointers = [v for v in concepts if v is not top and v.is_pointer and followed(v, views) is top]
    if pointers and pointers[0].definition:  # "LSTM: Abbreviation for Long Short-Term Memory", once
        lines.append(cite(f"{pointers[0].title}: {pointers[0].definition.text}", pointers[0].entry_id))
    # a pointer to the named concept is another name for it, never a neighbour
    others = [v for v in scored(concepts, score) if v is not top and v not in pointers]
    return lines + close_alternative([top, *others], score)


def original_case(subject: str, question: str) -> str:
    """`flashattention` as the asker wrote it (`FlashAttention`)."""
    start = question.lower().find(subject)
    return question[start : start + len(subject)] if start != -1 else subject


def subject_in(subject: str, text: str) -> bool:
    return bool(subject) and f" {normalise_name(subject)} " in f" {normalise_name(text)} "


def technology_line(subject: str, views: list[EntryView]) -> Candidate | None:
    """A concept page's line that explains the subject by name (`NCCL: ...`), if one is in context."""
    wanted = normalise_name(subject)
    if not wanted:
        return None
    for view in views:
        for c in view.sentences:
            head, colon, _ = c.text.partition(":")
            if colon and normalise_name(head) == wanted:
                return c
    return None


def definition_answer(
    reading: Reading, views: list[EntryView], score: Scores, tuning: OfflineAnswerSettings
) -> list[str]:
    """ "What is X?": X's definition (and example); no entry for X but papers mention it: say so."""
    subject = reading.subject
    view = named(views, subject)
    if view is None and len(subject.split()) > 4:
        return []  # not a thing's name but a described situation: answered as a problem
    explained = technology_line(subject, views)
    if view is None and explained is not None:  # "NCCL: NVIDIA collective-communication library."
        return [cite(explained.text, explained.entry_id)]
    if view is None:  # described in the asker's words: the best concept page among the top entries
        concepts = [v for v in views[:3] if v.kind == "concept" and not v.is_pointer and v.sentences]
        described = content_words(subject)
        # one word the page's title lacks is a name it only mentions ("what's a GPU?" is not answered by
        # "device: ... including CPUs, GPUs, and TPUs"); a description may share the definition's words
        words_of = content_words(concepts[0].title) if concepts else set()
        if concepts and len(described) > 1:
            words_of |= content_words(concepts[0].sentences[0].text)
        if concepts and described & words_of:
            view = concepts[0]
    if view is not None:
        view = followed(view, views)
        first = view.definition
        if first is None:
            return []
        lines = [cite(first.text, view.entry_id)]
        example = next((c for c in view.sentences if c.text.startswith("Example:")), None)
        following = next((c for c in view.sentences if c.position == first.position + 1), None)
        if example is None and following is not None and not following.text.startswith(("Also known as", "Level:")):
            example = following  # a glossary definition goes on in its second sentence
        if example is not None:
            lines.append(cite(example.text, view.entry_id))
        return lines
    mentions = [v for v in views if v.kind == "abstract" and any(subject_in(subject, c.text) for c in v.sentences)]
    if not mentions or len(subject.split()) > 4:
        return []
    shown = original_case(subject, reading.own_words)
    lines = [f"The knowledge has no concept page for “{shown}”, but these papers mention it:"]
    for v in mentions[:3]:
        sentence = next(c for c in v.sentences if subject_in(subject, c.text))
        lines.append(cite(f"{v.title}: {sentence.text}", v.entry_id))
    return lines


def papers_answer(reading: Reading, views: list[EntryView], score: Scores, tuning: OfflineAnswerSettings) -> list[str]:
    """ "Which papers ...?", "is there work on ...?", "who has implemented ...?": each of the first
    `tuning.papers_listed` papers that fits the question well enough beside the best (`tuning.listed_close`),
    each with the sentence that says what it contributes; the list is what was asked, so one paper is not the answer
    when the search found more."""
    papers = [v for v in scored(views, score) if v.kind == "abstract"][: tuning.papers_listed]
    if not papers:
        return []
    top = entry_score(papers[0], score)
    lines: list[str] = []
    for view in papers:
        if lines and entry_score(view, score) < tuning.listed_close * top:
            continue
        sentence = best_sentence(view, score, CONTRIBUTION, tuning.preferred_fit)
        if sentence is not None:
            lines.append(cite(f"{view.title}: {sentence.text}", view.entry_id))
    return lines


def how_answer(reading: Reading, views: list[EntryView], score: Scores, tuning: OfflineAnswerSettings) -> list[str]:
    """ "How does X work?": the best entry's contribution, then its method sentences in its own order, then
    a close alternative."""
    views = scored(views, score)
    if not views:
        return []
    top = views[0]
    lead = best_sentence(top, score, CONTRIBUTION, tuning.preferred_fit)
    if lead is None:
        return []
    # the paper's own method sentences, even those that share no word with the question
    method = [c for c in top.sentences if c is not lead and MECHANISM.search(c.text) and not FIGURE.search(c.text)]
    method.sort(key=lambda c: (-score.get(id(c), 0.0), c.position))
    chosen = [lead, *sorted(method[:2], key=lambda c: c.position)]
    return [cite(titled(top, c) if c is lead else c.text, c.entry_id) for c in chosen] + close_alternative(views, score)


def best_for(text: str, views: list[EntryView]) -> EntryView | None:
    """The entry whose title, then sentences, share most words with `text` (retrieval order breaks ties)."""
    wanted = content_words(text)
    if not wanted or not views:
        return None

    def overlap(v: EntryView) -> tuple[int, int, int]:
        title = len(wanted & content_words(v.title))
        body = max((len(wanted & content_words(c.text)) for c in v.sentences), default=0)
        return title, body, -v.rank

    best = max(views, key=overlap)
    return best if overlap(best)[:2] != (0, 0) else None


def compare_answer(reading: Reading, views: list[EntryView], score: Scores, tuning: OfflineAnswerSettings) -> list[str]:
    """ "A vs B": each side's definition, or the sentence of a paper that speaks of it, side by side.

    A side with no concept page is said plainly, as for "what is X?", before the papers' sentences.
    """
    sides = reading.sides
    if not sides:
        described = reading.described_sides
        return one_entry_per_side(described, views, tuning) if described else []
    lines: list[str] = []
    unnamed: list[str] = []
    used: set[str] = set()
    for side in sides:
        view = named(views, side)
        sentence = None
        if view is None:
            others = [v for v in views if v.entry_id not in used]
            view, sentence = speaks_of(side, others, score)
            view = view or best_for(side, others)
        if view is None:
            return []
        if view.kind == "concept":
            view = followed(view, views)
            sentence = view.definition
        else:
            if view.kind == "abstract":  # said plainly for papers; a team's section just answers its side
                unnamed.append(original_case(side, reading.own_words))
            sentence = sentence or best_sentence(view, score, CONTRIBUTION)
        if sentence is None or view.entry_id in used:
            return []
        used.add(view.entry_id)
        lines.append(cite(f"{view.title}: {sentence.text}", view.entry_id))
    if unnamed:
        missing = " or ".join(f"“{side}”" for side in unnamed)
        lines.insert(0, f"The knowledge has no concept page for {missing}; these papers speak of them:")
    return lines


def one_entry_per_side(sides: tuple[str, str], views: list[EntryView], tuning: OfflineAnswerSettings) -> list[str]:
    """Two approaches the asker described ("Option A: shard over CPU boxes ... Option B: a graph on GPU
    servers ..."): the search's first entry answers the side it fits better, and the entry among the
    next ones (to `tuning.described_depth`) that fits the other side best answers that one; each with its
    contribution and the sentence that fits its side best, in the order the question gave the sides.
    The whole question's search mixes both descriptions, so its first entry is about one side only."""
    shown = views[: tuning.described_depth]
    if not shown:
        return []
    candidates = [c for v in shown for c in v.sentences]
    fits = [{id(c): s for s, c in score_candidates(side, candidates)} for side in sides]
    first = shown[0]
    lead_side = 0 if entry_score(first, fits[0]) >= entry_score(first, fits[1]) else 1
    other_side = 1 - lead_side
    others = scored(shown[1:], fits[other_side])
    if not others:
        return []
    second = max(others, key=lambda v: (entry_score(v, fits[other_side]), -v.rank))
    chosen = {lead_side: first, other_side: second}
    lines = []
    for side in (0, 1):
        view = chosen[side]
        sentence = best_sentence(view, fits[side], CONTRIBUTION if view.kind == "abstract" else None)
        if sentence is None:  # the search's first entry may share no word with its side: its contribution
            sentence = next((c for c in view.sentences if CONTRIBUTION.search(c.text)), view.definition)
        if sentence is None:
            return []
        lines.append(cite(f"{view.title}: {sentence.text}", view.entry_id))
        support = best_sentence(view, fits[side])  # what the side described, in the entry's words
        if support is not None and support is not sentence:
            lines.append(cite(support.text, view.entry_id))
    return lines


def speaks_of(subject: str, views: list[EntryView], score: Scores) -> tuple[EntryView | None, Candidate | None]:
    """The entry sentence that names the subject and fits the question best (retrieval order on ties)."""
    found = [(v, c) for v in views for c in v.sentences if subject_in(subject, c.text)]
    if not found:
        return None, None
    return max(found, key=lambda pair: (score.get(id(pair[1]), 0.0), -pair[0].rank, -pair[1].position))


def focused_answer(
    prefer: re.Pattern[str], field: str | None = None
) -> Callable[[Reading, list[EntryView], Scores, OfflineAnswerSettings], list[str]]:
    """A caveat, an example or a figure: a concept page's own field (`Caveat: ...`) among the top
    entries first, else the best such sentence of the top two entries, leads."""

    def compose(reading: Reading, views: list[EntryView], score: Scores, tuning: OfflineAnswerSettings) -> list[str]:
        views = scored(views, score)
        prefix = field or "\0"  # no field: nothing starts with it
        for view in views[:3]:
            own = next((c for c in view.sentences if c.text.startswith(prefix)), None)
            if own is not None:
                return [cite(own.text, view.entry_id)] + (
                    [cite(view.definition.text, view.entry_id)]
                    if view.definition and view.definition is not own
                    else []
                )
        for view in views[:2]:
            if view is not views[0] and entry_score(view, score) < tuning.close * entry_score(views[0], score):
                break  # a cue word ("bottleneck") does not make a weaker entry the answer: say what the best one does
            sentence = best_sentence(view, score, prefer)
            if sentence is not None and prefer.search(sentence.text):
                lead = best_sentence(view, score, CONTRIBUTION) if view.kind == "abstract" else view.definition
                chosen = [sentence] + ([lead] if lead is not None and lead is not sentence else [])
                return [cite(c.text, c.entry_id) for c in chosen] + further_support(view, score, chosen)
        return []

    return compose


def problem_answer(reading: Reading, views: list[EntryView], score: Scores, tuning: OfflineAnswerSettings) -> list[str]:
    """A problem in the asker's words: the best entry's answer to it, then a close alternative."""
    views = scored(views, score)
    if not views:
        return [load_prompt("refusal")]
    top = views[0]
    lead = best_sentence(top, score, CONTRIBUTION if top.kind == "abstract" else None, tuning.preferred_fit)
    if lead is None:
        return [load_prompt("refusal")]
    lines = [cite(titled(top, lead), top.entry_id)]
    support = best_sentence(top, score)
    if support is lead and top.kind == "abstract":  # the answering sentence led: then what the paper is
        support = next((c for c in top.sentences if CONTRIBUTION.search(c.text)), None)
    if support is not None and support is not lead:
        lines.append(cite(support.text, top.entry_id))
    return lines + further_support(top, score, [lead, support]) + close_alternative(views, score)


def other_parts(reading: Reading, views: list[EntryView], lines: list[str]) -> list[str]:
    """For a question that asks two things of a team's documents ("which plugin, and what do jobs need?"),
    the sentence that answers a part the answer left unsaid, from whichever section says it best: the two
    parts are often answered in two files, and the composed answer quotes one entry.

    A sentence fits a part by the part's own content words (those the other parts lack) it says, a word
    of its section's title counting half, then by the whole question's words it says. A part is left
    unsaid when a sentence of the context fits it better than every sentence the answer quotes; that
    sentence is added, with its citation. Concept pages and abstracts are left as composed: their
    answers quote the entry the whole question is about.
    """
    if len(reading.parts) < 2 or not views or any(v.kind != "document" for v in views):
        return []
    answer = " ".join(lines)
    asked = content_words(reading.own_words)
    added: list[str] = []
    for n, part in enumerate(reading.parts):
        others = set().union(*(content_words(p) for m, p in enumerate(reading.parts) if m != n))
        own = content_words(part) - others
        if not own:
            continue
        shown = {id(c): cite(c.text, c.entry_id) in answer for v in views for c in v.sentences}  # as `cite` quotes
        said = max((part_fit(own, asked, v, c) for v in views for c in v.sentences if shown[id(c)]), default=(0, 0))
        fresh = [
            ((part_fit(own, asked, v, c), -v.rank, -c.position), v, c)
            for v in views
            for c in v.sentences
            if not shown[id(c)] and own & content_words(c.text)
        ]
        if not fresh:
            continue
        (fit, *_), view, candidate = max(fresh, key=lambda scored: scored[0])
        if fit > said:
            line = cite(titled(view, candidate), view.entry_id)
            added.append(line)
            answer += " " + line
    return added


def part_fit(own: set[str], asked: set[str], view: EntryView, candidate: Candidate) -> tuple[float, int]:
    """How well a sentence fits one part of a question: the part's `own` words it says (a word of its
    section's title counts half), then the whole question's words (`asked`)."""
    words = content_words(candidate.text)
    title = content_words(f"{view.title} {candidate.lead_in}")
    return len(own & words) + 0.5 * len((own & title) - words), len(asked & words)


def further_support(view: EntryView, score: Scores, shown: Sequence[Candidate | None]) -> list[str]:
    """More of the answering entry, up to `tuning.entry_sentences` in all (`section_sentences` for a section
    of a document), closest to the question first (word score and meaning), each sharing a word with it: a
    lead and one support sentence left out most of the facts an asker wanted (fact recall 0.29-0.57 on the
    held-out sets; quoting three sentences 0.48-0.70, docs/retrieval-stages.md). An abstract's background is
    never quoted: the setting answers nothing. At most TABLE_ROWS table rows are quoted in all: on the four
    documentation sets no fact was in a third row."""
    quoted = {id(c) for c in shown if c is not None}
    rest = [c for c in view.sentences if id(c) in score and id(c) not in quoted | view.background]
    rest.sort(key=lambda c: -view.fit(c, score))
    limit = view.tuning.section_sentences if view.kind == "document" else view.tuning.entry_sentences
    rows = sum(is_table_row(c.text) for c in {id(c): c for c in shown if c is not None}.values())  # each once
    chosen: list[Candidate] = []
    for candidate in rest:
        if len(chosen) >= limit - len(quoted):
            break
        if is_table_row(candidate.text):
            if rows >= TABLE_ROWS:
                continue  # a reference table's further rows share a word with any question about its area
            rows += 1
        chosen.append(candidate)
    return [cite(c.text, c.entry_id) for c in chosen]


TABLE_ROWS = 2  # of one table, quoted in an answer


def is_table_row(text: str) -> bool:
    """A candidate that is a table's row under its header (`quotable_units`)."""
    block = as_block(text) if text.startswith("```") else None
    return block is not None and block.is_table


def titled(view: EntryView, sentence: Candidate) -> str:
    """A concept page's sentence with the concept's name before it, unless it says the name itself:
    "A form of regularization useful in training neural networks" does not say it is dropout."""
    name = normalise_name(re.sub(r"\([^)]*\)", "", view.title)).replace(" ", "")  # "L1 regularization" is "L 1 ..."
    if view.kind != "concept" or name in normalise_name(sentence.text).replace(" ", ""):
        return sentence.text
    return f"{view.title}: {sentence.text}"


def close_alternative(views: list[EntryView], score: Scores) -> list[str]:
    """The next entry of the same kind as the first, titled, when it fits the question about as well
    (half the first's word score or more): on a question in the asker's own words the search may
    have put the answer second, and one more titled line costs the reader less than a wrong lead.
    Of a team's documents, each of the next three sections that fits a third as well (`tuning.section_close`,
    `tuning.section_alternatives`): the section that says it was third about as often as second on the
    documentation sets, and it, or a two-file question's second file, often shares fewer of the question's
    words than the first; and with its best sentence the one after it, which often says what the first
    announces ("each of these is composed of 3 containers:" and the first of them; "there is a flag for that"
    and how to set it). `views` are the `scored` ones, in search order."""
    if not views:
        return []
    top, best = views[0], entry_score(views[0], score)
    documents = top.kind == "document"
    close = top.tuning.section_close if documents else top.tuning.close
    lines: list[str] = []
    for view in views[1 : 1 + (top.tuning.section_alternatives if documents else 2)]:
        if view.kind == top.kind and entry_score(view, score) >= close * best:
            other = best_sentence(
                view, score, CONTRIBUTION if view.kind == "abstract" else None, view.tuning.preferred_fit
            )
            if other is not None:
                lines.append(cite(f"{view.title}: {other.text}", view.entry_id))
                if view.kind == "document" and (after := next_sentence(view, other)) is not None:
                    lines.append(cite(after.text, after.entry_id))
            if view.kind != "document":
                break
    return lines


def next_sentence(view: EntryView, sentence: Candidate) -> Candidate | None:
    """The sentence right after `sentence` in its context block (one chunk of the section: a later chunk's
    positions start again), if the context holds it."""
    return next((c for c in view.sentences if c.rank == sentence.rank and c.position == sentence.position + 1), None)


COMPOSERS: dict[str, Callable[[Reading, list[EntryView], Scores, OfflineAnswerSettings], list[str]]] = {
    "name": name_answer,
    "definition": definition_answer,
    "papers": papers_answer,
    "how": how_answer,
    "compare": compare_answer,
    "caveat": focused_answer(LIMITATION, "Caveat:"),
    "example": focused_answer(EXAMPLE_SENTENCE, "Example:"),
    "number": focused_answer(FIGURE),
    "problem": problem_answer,
}


def cite(sentence: str, entry_id: str) -> str:
    """The sentence and its marker: `A claim [ID].`; a block (`Title:` and a block, or a block alone) on
    lines of its own with the marker on the line after it, where it cannot break the closing fence."""
    fence = sentence.find("```")
    if fence != -1 and is_block(sentence[fence:]):
        lead = sentence[:fence].strip()
        return f"{as_page_brackets(lead)}\n" * bool(lead) + f"{sentence[fence:]}\n[{entry_id}]"
    match = re.match(r"^(.*?)([.!?…]*)$", as_page_brackets(sentence.strip()), re.S)
    assert match is not None
    return f"{match.group(1)} [{entry_id}]{match.group(2) or '.'}"


@dataclass
class ExtractiveChatModel(DataReplyModel):
    """The offline chat model: no network, quotes the context (see module docstring)."""

    tuning: OfflineAnswerSettings = field(default_factory=OfflineAnswerSettings)  # `Settings.offline_answer`

    @property
    def _llm_type(self) -> str:
        return "extractive"

    def answer(self, reading: Reading, packed: Packed) -> str:
        return extract_answer(reading, packed.blocks, self.tuning, layout_of(packed))
