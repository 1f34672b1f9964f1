"""The retrieval chain: condense a follow-up, retrieve, pack context, prompt, generate, verify.

Driven step by step, because each step is timed, the refusal decision sits between retrieval
and generation, and the final Answer needs the verified text rather than the raw stream. The
prompt is rendered from the text files in `prompts/` as (role, text) messages, which a LangChain
chat model reads as its message types; the offline model reads data instead, so answering with it
imports no LangChain.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, replace

from assistant.answer.context import pack_context
from assistant.answer.echo import ECHO_NOTE, echoes_instructions, instruction_lines, without_echo
from assistant.answer.followups import History, discussed, format_history, refers_back, rule_condense
from assistant.answer.labels import stream_ids, to_ids
from assistant.answer.models import ChatModel, Prompt, StreamCutOffError
from assistant.answer.prompts import load_prompt, render
from assistant.answer.refusal import Evidence, decide, gather
from assistant.errors import AssistantError, ModelError
from assistant.index.chroma_index import Index
from assistant.question.encoders import SHIPPED, SentenceEncoders
from assistant.question.intents import ASKS_FOR_ANOTHER_NAME, NAMES_A_SYSTEM
from assistant.question.reading import Reading
from assistant.question.value_kinds import FIGURE_KINDS, KIND_NAMES
from assistant.retrieval.search import Retrieval, Retriever
from assistant.settings import Settings
from assistant.text import any_phrase, more_tokens_than, split_sentences, truncate_tokens
from assistant.types import Answer, Source
from assistant.verify.citations import verify
from assistant.verify.unicode import plain

# a definition asked in so many words: "what does X mean", "what does it stand for", "in plain terms"
# ("what's the fastest decode speed on one node?" is read as a definition too, but asks no meaning)
ASKS_WHAT_IT_MEANS = any_phrase(
    "mean | means | meaning | meant | stand for | stands for | define | definition | in plain terms"
    " | in plain english | in plain words"
)
# C0 controls but tab, newline and carriage return, DEL and C1 controls: read as spaces (str.translate)
CONTROL = dict.fromkeys([*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), *range(0x7F, 0xA0)], " ")
# the answer when every sentence the model wrote cited an entry that does not say it (all were dropped)
NOTHING_VERIFIED = "None of what the model wrote is supported by the entries it cited, so none of it is shown."
NO_VERIFIED_CLAIM = "No claim in this answer is backed by a verified citation."
# the note above an extractive answer shown in place of a reply that kept no verified citation
FALLBACK_NOTE = (
    "The model's reply kept no verified citation, so the extractive answer from the same entries is shown instead."
)


@dataclass(frozen=True)
class Prepared:
    question: str
    standalone: str
    notes: list[str]


def clean_question(question: str, settings: Settings) -> Prepared:
    """Strip control and invisible characters, join lines; trim an over-long question, with a note.

    The question becomes one line, so it cannot lay out lines of its own in the prompt (a fake
    `[ID] Title (concept)` block, a second `Question:` line) that look like the context's.
    """
    if not isinstance(question, str):
        raise AssistantError("The question must be text - type a question")
    limit = settings.question_chars
    question = question.lstrip()
    text = one_line(question[:limit])  # a 50 MB question is not read (nor echoed) past what is used
    if not text:
        raise AssistantError("The question is empty - type a question, e.g. 'What is a GPU?'")
    notes = []
    if len(question) > limit or more_tokens_than(text, settings.question_tokens):
        text = truncate_tokens(text, settings.question_tokens).strip()
        notes.append(f"The question was longer than {settings.question_tokens} tokens; only its start was used.")
    return Prepared(text, text, notes)


def one_line(text: str) -> str:
    """Text as it reads (`as_read`), without control characters, its lines joined by single spaces."""
    return " ".join(as_read(text.translate(CONTROL)).split())


def as_read(question: str) -> str:
    """The question as a person reads it, before any rule reads it.

    Invisible characters (zero-width spaces, direction overrides, the BOM) hide "What is" from the
    definition pattern and words from search, and a Cyrillic "о" in "cost" hides a price question
    from the refusal rules: NFKC, ignorables and overlays removed, look-alike letters folded
    (`assistant.verify.unicode.plain`).
    """
    return plain(question)


def clean_history(history: History, settings: Settings) -> History:
    """Earlier turns as one-line texts of at most `question_tokens` tokens each.

    History comes from the caller (the /chat API takes any list), so a turn is bounded the way
    a question is: a 100,000-character turn must not become the search query or the prompt.
    """
    out: History = []
    for role, text in history:
        text = one_line(str(text)[: settings.question_chars])
        if more_tokens_than(text, settings.question_tokens):
            text = truncate_tokens(text, settings.question_tokens).strip()
        out.append((role, text))
    return out


class AnswerChain:
    """One question in, a stream of text deltas and finally a verified Answer out."""

    def __init__(
        self,
        settings: Settings,
        index: Index,
        retriever: Retriever,
        chat: ChatModel,
        encoders: SentenceEncoders = SHIPPED,
    ):
        self.settings = settings
        self.index = index
        self.retriever = retriever
        self.chat = chat
        self.encoders = encoders  # what the question's readers encode with, handed down in each Reading

    def condense(self, question: str, history: History) -> str:
        """The question as it stands alone: a follow-up gets its subject from the conversation."""
        known = self.retriever.names_known
        if not refers_back(question, history, known):
            return question
        if self.chat.rewrites_followups:  # a LangChain chat model: LangChain is loaded
            from langchain_core.prompts import ChatPromptTemplate

            from assistant.answer.models import complete

            messages = [("human", render("condense", history=format_history(history), question=question))]
            try:
                rewritten = complete(self.chat.llm, ChatPromptTemplate.from_messages(messages).format_messages())
                if rewritten.strip() and not echoes_instructions(rewritten.strip().splitlines()[0]):
                    return rewritten.strip().splitlines()[0]
            except ModelError:
                pass
        return rule_condense(question, history, known)

    def evidence(self, question: str, history: History | None = None, kind: str | None = None) -> Evidence:
        """What the refusal decision weighs for this question (used by the chain and by calibration)."""
        history = clean_history(list(history or []), self.settings)
        prepared = clean_question(question, self.settings)
        standalone = self.condense(prepared.question, history)
        reading = Reading(standalone, prepared.question, self.encoders)
        retrieval = self.retrieve(reading, kind, self.carried(prepared.question, standalone, history))
        return self.weigh(reading.as_asked, retrieval)

    def carried(self, question: str, standalone: str, history: History) -> list[str]:
        """A follow-up that leans back ("what's the catch?") is about what the last answer cited."""
        return discussed(history) if standalone != question else []

    def weigh(self, asked: Reading, retrieval: Retrieval) -> Evidence:
        """The refusal evidence for the question as asked (`Reading.as_asked`) and what retrieval found."""
        best = [e for s in retrieval.sources[:3] if (e := self.index.entry(s.entry_id)) is not None]
        r = self.retriever
        entries = len(self.index.entries)
        return gather(
            asked,
            retrieval.confidence,
            best,
            r.vocabulary,
            r.document_frequency,
            entries,
            r.knows,
            settings=self.settings.refusal,
        )

    def similarity(self, claim: str, sentences: list[str]) -> list[float]:
        """Cosine of the claim to each candidate sentence (vectors are normalised)."""
        vectors = self.index.embedder.embed_documents([claim, *sentences])
        head = vectors[0]
        return [sum(a * b for a, b in zip(head, v, strict=True)) for v in vectors[1:]]

    def retrieve(self, reading: Reading, kind: str | None = None, carried: list[str] | None = None) -> Retrieval:
        """Search for the question; one that asks what a thing is or is called prefers concept pages.

        A question that asks what something means and names a concept page in what it quotes or in the
        sentence that asks ("what does it mean when my teammate says our detector has bad recall?") is
        about it: unless the search already put first a page whose title the question uses, the most
        specific page it names leads ("recall", not "model"). A quoted term that is no page's name
        ("people say it's 'overfit', what does that mean?") is still what it is about: the concept page
        a search for the term alone finds first leads.
        """
        query = reading.text
        intent = reading.intent
        prefer = "concept" if intent in ("name", "definition") else None
        asks_new_name = intent == "name" and not ASKS_FOR_ANOTHER_NAME.search(reading.lowered)
        if asks_new_name:  # what the conversation already named is the context, not the name asked for
            known = [*self.retriever.cited_entries(carried or []), *self.retriever.concepts_named_in(query)]
            carried = None
            # the name of a concept, asked for: papers only mention concepts; a team's documents have no concept
            # pages ("which label selects the queue?" is answered in their sections)
            if kind is None and not NAMES_A_SYSTEM.search(reading.lowered) and self.retriever.concept_names:
                kind = "concept"
        found = self.retriever.retrieve(query, k=self.settings.top_k, kind=kind, prefer=prefer, carried=carried)
        if asks_new_name:
            found = self.trailing(found, set(known))
        quoted = reading.quoted
        said = quoted if quoted is not None else reading.asking  # what it quotes, else where it asks
        defines = intent == "definition" and kind in (None, "concept")
        asks_meaning = defines and ASKS_WHAT_IT_MEANS.search(reading.lowered)
        named = self.retriever.concepts_named_in(said) if asks_meaning else []
        top = found.sources[0].entry_id if found.sources else ""
        if named and not (top and self.retriever.uses_title(top, said)):  # "my teammate says bad recall: what is it?"
            chosen = self.retriever.most_specific(named, said)
            lead = next((s for s in found.sources if s.entry_id == chosen), None)
            found = self.leading(found, [lead or self.retriever.source_of(chosen, query)])
        elif intent == "definition" and quoted is not None and kind in (None, "concept"):
            term = self.retriever.retrieve(quoted, k=1, kind="concept").sources
            if term:
                found = self.leading(found, [term[0]])
        sides = reading.sides if intent == "compare" else None
        if sides:  # "A vs B" is about two things: one query's vector mixes them, so each side is searched too
            each = [self.retriever.retrieve(side, k=1, kind=kind).sources for side in sides]
            found = self.leading(found, [*found.sources[:1], *(s for side in each for s in side)])
        elif reading.part_questions and found.sources and found.sources[0].kind == "document":
            # "which plugin, and what do jobs need?" asks two things a team's documents often answer in two
            # files: each part's best section is packed right after the best one, and its best from another file
            each = [self.retriever.retrieve(part, k=PART_DEPTH, kind=kind).sources for part in reading.part_questions]
            found = self.leading(found, [*found.sources[:1], *(s for part in each for s in best_and_other_file(part))])
        return found

    def trailing(self, found: Retrieval, named: set[str]) -> Retrieval:
        """`found` with the concept pages in `named` moved behind the other concept pages.

        "And what's the name for the part inside that cell that forgets?" after a question about
        LSTMs asks for a name the asker does not know: LSTM, which they named and the last answer
        cited, is what the search is about (it stays in context) but not the answer.
        """
        concepts = [s for s in found.sources if s.kind == "concept"]
        new = [s for s in concepts if s.entry_id not in named]
        if not new or len(new) == len(concepts):
            return found
        last_new = found.sources.index(new[-1])
        return self.leading(found, [s for s in found.sources[: last_new + 1] if s.entry_id not in named])

    def leading(self, found: Retrieval, first: list[Source]) -> Retrieval:
        """`found` with `first` moved to the front, in order, and the ranks renumbered."""
        lead = list({s.entry_id: s for s in first}.values())
        rest = [s for s in found.sources if s.entry_id not in {f.entry_id for f in lead}]
        ranked = [replace(s, rank=n) for n, s in enumerate([*lead, *rest], start=1)]
        return Retrieval(ranked[: self.settings.top_k], found.confidence)

    def stream(self, question: str, history: History | None = None, kind: str | None = None) -> Iterator[str | Answer]:
        """Text deltas, then the verified Answer; a `ModelError` carries `.sources` (what was retrieved)."""
        history = clean_history(list(history or []), self.settings)
        timings: dict[str, float] = {}
        started = time.perf_counter()
        prepared = clean_question(question, self.settings)
        self.index.require_entries()

        t0 = time.perf_counter()
        standalone = self.condense(prepared.question, history)
        timings["condense"] = ms(t0)
        t0 = time.perf_counter()
        # every later stage reads the question from here
        reading = Reading(standalone, prepared.question, self.encoders)
        retrieval = self.retrieve(reading, kind, self.carried(prepared.question, standalone, history))
        timings["retrieve"] = ms(t0)
        answer = Answer(prepared.question, "", [], retrieval.sources, False, self.chat.name, timings, prepared.notes)
        if standalone != prepared.question:
            answer.notes.append(f"Searched for: {standalone}")

        decision = decide(
            self.weigh(reading.as_asked, retrieval),
            self.settings.refusal,
            model_judges=self.chat.rewrites_followups,
        )
        if decision.evidence.ungrounded:  # refused for them, or asked about besides other things: said
            answer.notes.append(f"No entry mentions {', '.join(decision.evidence.ungrounded)}.")
        if decision.refuse or not retrieval.sources:
            answer.text, answer.refused = refusal_text(retrieval.sources[:3], decision.reason), True
            timings["total"] = ms(started)
            yield answer.text
            yield answer
            return

        packed = pack_context(
            retrieval.sources,
            self.index,
            self.settings.context_tokens,
            question=reading.text,
            sentences=self.settings.context_sentences,
            first_chunks=parts_leading(reading, retrieval.sources),
        )
        messages = answer_prompt(packed.text, reading.text)
        t0 = time.perf_counter()
        parts: list[str] = []
        reply = self.chat.reply(reading, packed, messages, started=started)  # ends by the answer's deadline
        try:
            for delta in stream_ids(reply, packed.labels):  # the user sees ids, never the context's labels
                parts.append(delta)
                yield delta
        except ModelError as error:
            # the model failed after its retries, but retrieval worked: the UI still shows the sources
            error.sources = list(retrieval.sources)
            if isinstance(error, StreamCutOffError):
                error.partial = to_ids(error.partial, packed.labels)
            raise
        timings["generate"] = ms(t0)

        t0 = time.perf_counter()
        raw = plain(to_ids("".join(parts), packed.labels).strip())  # read as the user will see it
        answer.notes.extend(reply.notes)  # a reply cut at the token limit or the character cap says so
        raw, echoed = without_echo(raw, instruction_lines(messages, packed.text))
        if echoed:
            answer.notes.append(ECHO_NOTE)
        if (raw or not echoed) and is_refusal(raw):
            answer.text, answer.refused = refusal_text(retrieval.sources[:3], unstated(decision.evidence)), True
        else:
            verified = verify(raw, packed.entries, self.similarity, self.settings.support)
            answer.text, answer.citations = verified.text, verified.citations
            if verified.dropped:
                answer.notes.append(
                    f"Removed citations of ids that were not in the context: {', '.join(verified.dropped)}"
                )
            answer.notes.extend(f"Unverified sentence removed - {n}" for n in verified.unsupported)
            if not answer.text:
                answer.text = NOTHING_VERIFIED
            verified_any = any(c.supported for c in answer.citations)
            if not verified_any and not self.fall_back(answer, retrieval.sources, reading):
                answer.notes.append(NO_VERIFIED_CLAIM)
        timings["verify"] = ms(t0)
        timings["total"] = ms(started)
        yield answer

    def fall_back(self, answer: Answer, sources: list[Source], reading: Reading) -> bool:
        """Show the extractive answer to the same entries in place of a reply that kept no verified citation.

        Only when `Settings.extractive_fallback` is on, the model is not the extractive one already, and
        the extractive model finds an answer whose citations verify; then the model's text and the notes
        about its sentences give way to one note saying so (those about invented ids and the reply's
        bounds stay: the user saw that text stream). False when nothing was replaced.
        """
        if not self.settings.extractive_fallback or self.chat.name == "extractive":
            return False
        from assistant.answer.models.extractive import extract_answer, layout_of

        # whole chunks, as it reads best
        packed = pack_context(
            sources, self.index, self.settings.context_tokens, first_chunks=parts_leading(reading, sources)
        )
        text = plain(
            to_ids(
                extract_answer(reading, packed.blocks, self.settings.offline_answer, layout_of(packed)), packed.labels
            ).strip()
        )
        if is_refusal(text):
            return False
        verified = verify(text, packed.entries, self.similarity, self.settings.support)
        if not any(c.supported for c in verified.citations):
            return False
        kept = [n for n in answer.notes if not n.startswith("Unverified sentence removed")]  # of text not shown
        answer.text, answer.citations = verified.text, verified.citations
        answer.notes[:] = [*kept, FALLBACK_NOTE]
        return True


def answer_prompt(context: str, question: str) -> Prompt:
    """The answer prompt: the system rules and the user turn (context, question), as (role, text) messages."""
    values = {"refusal": load_prompt("refusal"), "context": context, "question": question}
    return [("system", render("answer_system", **values)), ("human", render("answer_user", **values))]


def is_refusal(text: str) -> bool:
    refusal = load_prompt("refusal").lower().rstrip(".")
    return not text or text.lower().startswith(refusal) or (refusal in text.lower() and len(split_sentences(text)) <= 2)


def unstated(evidence: Evidence) -> str:
    """Why a model that was let answer a team's documents refused, when the evidence says: a figure was asked
    and its sections state none (the offline model refuses a "how many ...?" it would answer with no number,
    `extractive.states_a_figure`); else "" (the general reason)."""
    if evidence.documents and evidence.kind in FIGURE_KINDS:
        return f"no entry states the {KIND_NAMES[evidence.kind]} asked for"
    return ""


def refusal_text(suggestions: list[Source], reason: str = "") -> str:
    if not suggestions:
        return load_prompt("refusal")
    names = ", ".join(f"“{s.title}”" for s in suggestions)
    # on a team's documents the suggestions are sections, and there are no papers to name
    documents = all(s.kind == "document" for s in suggestions)
    prompt = "refusal_suggestions_documents" if documents else "refusal_suggestions"
    return render(prompt, reason=reason or "none of its entries answers the question", suggestions=names)


def ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 2)


# sections searched for each part of a two-part question on documents, for its best from another file: at 3, a
# page with three sections on the part hid the file that answers it (slurm's cgroup plugin, fourth and fifth
# after gres.html's sections); at 5, two-file questions citing both +3 and facts +2 on the development sets, none
# lost (the same at 8)
PART_DEPTH = 5


def parts_leading(reading: Reading, sources: list[Source]) -> int:
    """How many of the first sources bring their best chunk before any section's further chunks: a question in
    two parts on documents leads with the best section and each part's best (`AnswerChain.retrieve`), and the
    first section's further chunks filled the context before the second part's section (slurm's "what does
    that state mean and how long until slurm gives up on the node?" packed the power-saving page alone).
    Reserving each part's best from another file too gained two-file answers (+3 on the seven development
    sets) but lost two facts."""
    if not reading.part_questions or not sources or sources[0].kind != "document":
        return 0
    return 1 + len(reading.part_questions)


def best_and_other_file(sources: list[Source]) -> list[Source]:
    """A part's best section and its best from another document: the search for one part of a question
    often finds two sections of the file the whole question found, while the part is answered elsewhere."""
    if not sources:
        return []
    first_file = sources[0].entry_id.partition("#")[0]
    other = next((s for s in sources[1:] if s.entry_id.partition("#")[0] != first_file), None)
    return [sources[0], *([other] if other is not None else [])]
