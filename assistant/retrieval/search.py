"""Hybrid retrieval: dense and lexical results fused per entry, names and aliases first.

Users name things ("what is NCCL", "HBM", "MoE"), so an exact or fuzzy match of an entry's
title or alias is ranked first; the rest is reciprocal rank fusion of Chroma (dense) and
bm25s (lexical) rankings, one hit per entry. The lexical leg also searches the words papers use for
the question's shop talk ("cards" -> GPU, `user_terms.py`). Opt-in stages after the fusion, off by
default because they did not pay on question sets they were not fitted on (docs/retrieval-stages.md):
late interaction re-ordering the best candidates (`late_interaction.py`, `ASSISTANT_RERANK=maxsim`),
weighed with the fusion's own evidence by a learned linear model (`learned_order.py`,
`ASSISTANT_RERANK=learned`), and a third leg searching the question again with the rare words of the
dense leg's best chunks (`dense_feedback.py`, `ASSISTANT_DENSE_FEEDBACK=on`). The best dense cosine
similarity (of an entry's own text; of an asked-as description, less its discount) is kept as
the confidence the refusal threshold is compared against, because fused scores are ranks, not evidence.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING

from assistant.index.chroma_index import Index
from assistant.index.embeddings import question_pieces_for
from assistant.knowledge.asked_as import FIELD as ASKED_AS
from assistant.question.intents import first_clause, without_fillers
from assistant.question.names import names_in
from assistant.question.user_terms import with_literature_terms
from assistant.retrieval.corpus_tables import POINTS_TO, CorpusTables, normalise_name
from assistant.retrieval.dense_feedback import FEEDBACK_CHUNKS, feedback_terms
from assistant.retrieval.late_interaction import CHUNKS_PER_ENTRY, DEPTH, LateInteraction
from assistant.retrieval.learned_order import Candidate, learned_order
from assistant.settings import reranking_for
from assistant.text import content_words, lexical_tokens, rarity, without_parenthesis, words
from assistant.types import Chunk, Source
from assistant.verify.citations import canonical

if TYPE_CHECKING:
    from assistant.settings import Settings
    from assistant.tuning import RetrievalSettings

QUESTION_FRAME = re.compile(
    r"^(?:what|who|which)(?:\s+|'s\s+)(?:is|are|was|were|does|do)?\s*(?:an?\s+|the\s+)?|"
    r"^(?:define|explain|describe|meaning of|definition of)\s+|^(?:tell me about|what do you know about)\s+|"
    r"\s+(?:stands? for|mean|means|meaning|definition|used for|do|does|acronym)\s*$",
)


@dataclass(frozen=True)
class Retrieval:
    sources: list[Source]
    confidence: float  # mean of best dense cosine and best word coverage; 1.0 on a name match


class Retriever:
    """Searches an Index; `mode` is hybrid, dense or lexical (`settings.retrieval_mode` unless given).

    The re-ranking, the feedback leg and the fusion's weights (`settings.retrieval`) are read from the
    settings passed in, once: not from the index's."""

    def __init__(self, index: Index, settings: Settings, mode: str | None = None) -> None:
        self.index = index
        self.mode = mode or settings.retrieval_mode
        self.rerank = settings.rerank
        self.dense_feedback = settings.dense_feedback
        self.tuning: RetrievalSettings = settings.retrieval

    @cached_property
    def reranker(self) -> LateInteraction | None:
        """Late interaction for the hybrid mode, when the encoder has word-piece vectors and it is on."""
        embedder = self.index.embedder
        wanted = self.mode == "hybrid" and self.reranking in ("learned", "maxsim")
        if not (wanted and LateInteraction.supports(embedder)):
            return None
        # the learned order reads the question's pieces by MiniLM's question side fitted for it; `maxsim` is
        # late interaction untrained
        fitted = question_pieces_for(embedder) if self.reranking == "learned" else None
        return LateInteraction(embedder, fitted, self.index.piece_signs())  # type: ignore[arg-type]

    @cached_property
    def reranking(self) -> str:
        """How the best fused candidates are re-ordered for this knowledge (`settings.reranking_for`)."""
        return reranking_for(self.rerank, self.tables.kinds)

    @cached_property
    def tables(self) -> CorpusTables:
        """The name tables, stems and text of the whole knowledge (`corpus_tables`): a replica's from its
        cache when they are there, else made in one walk of the entries (and cached)."""
        folder = self.index.tables_dir()
        found = CorpusTables.open(folder) if folder is not None else None
        if found is None:
            found = CorpusTables.build(self.index.entries, self.index.entries_in_order())
            if folder is not None:
                found.save(folder)
        return found

    @property
    def names(self) -> dict[str, list[str]]:
        """Normalised title / alias / acronym, or a technology a concept page explains -> entry ids."""
        return self.tables.names

    @property
    def concept_names(self) -> dict[str, list[str]]:
        """Normalised title / alias / acronym -> entry ids (concept pages and glossary terms)."""
        return self.tables.concept_names

    @property
    def other_names(self) -> dict[str, list[str]]:
        """Concept page -> the pages that are only another name for it, and back ("IoU" <-> "intersection
        over union (IoU)", "step size" <-> "learning rate"): one concept under two titles. The page pointed
        to is the one its `related` link names, else the one whose title the pointer's words are."""
        return self.tables.other_names

    def with_other_names(self, ordered: list[tuple[str, float]], chunks: dict[str, Chunk]) -> list[tuple[str, float]]:
        """The other names' pages (`other_names`) of the first `synonym_depth` entries, right after them.

        Someone who describes intersection over union is answered by its page and by "IoU", which says
        that it is the same thing; the search ranks the two apart, since the pointer has almost no words
        of its own (on the realistic calibration half, recall@5 of the questions with two gold entries
        0.643 -> 0.738). The first entries keep their places: put straight after its page, a pointer
        pushed the search's second entry, often the close neighbour a name answer offers, to third
        (calibration half answered with gold 0.928 -> 0.916, name in answer 1.000 -> 0.947; placed
        after the first two, both unchanged). Not for a search of papers or by tags."""
        if not self.other_names:
            return ordered
        head = ordered[: self.tuning.synonym_depth]
        lead = {entry_id for entry_id, _ in head}
        score = dict(ordered)
        moved: dict[str, float] = {}
        for entry_id, value in head:
            for partner in self.other_names.get(entry_id, []):
                if partner not in lead and partner not in moved:
                    moved[partner] = min(value, score.get(partner, value))  # never above its page
                    chunks.setdefault(partner, self.index.chunks_of(partner)[0])
        rest = [(entry_id, value) for entry_id, value in ordered[self.tuning.synonym_depth :] if entry_id not in moved]
        return [*head, *moved.items(), *rest]

    def name_lookup(self, query: str) -> list[str]:
        """Entries whose title or alias is what the question asks about (exact, then fuzzy); the page whose
        own title it is first (`owner_of_name`)."""
        found, owner = self.named_pages(query)
        return [owner, *(e for e in found if e != owner)] if owner else found

    def named_pages(self, query: str) -> tuple[list[str], str | None]:
        """The entries the question's subject names, and the one whose own title it is (or None)."""
        asked = without_fillers(query).rstrip("?.! ").lower()  # "so what's HBM anyway?" asks "what's HBM"
        framed = QUESTION_FRAME.sub("", asked)
        subject = normalise_name(first_clause(framed) if framed != asked else framed)  # "what is NCCL, a library?"
        if not subject:
            return [], None
        if subject not in self.names and len(subject) >= 5 and len(subject.split()) <= 4:
            subject = self.tables.closest_name(subject, cutoff=0.9) or subject
        found = list(self.names.get(subject, []))
        return found, self.owner_of_name(subject, found)

    def owner_of_name(self, name: str, entry_ids: list[str]) -> str | None:
        """Of several pages a name reaches, the one whose own title it is, when that page is more than another
        name: "tensor" reaches Tensor, and rank (Tensor) and shape (Tensor) by their qualifier, which the
        glossary's titles share with aliases ("(GAN)"); "TPU" reaches a page that only says "Abbreviation
        for Tensor Processing Unit", so there the search decides, as it does for a single page."""
        if len(entry_ids) < 2:
            return None
        for entry_id in entry_ids:
            entry = self.index.entries[entry_id].entry
            if normalise_name(entry.title) == name and not POINTS_TO.match(entry.text.strip()):
                return entry_id
        return None

    def concepts_named_in(self, text: str, longest: int = 5) -> list[str]:
        """Concept pages whose title or alias the text uses anywhere ("How do LSTMs keep context?" -> Long
        Short-Term Memory), a trailing plural forgiven; in order of appearance. A technology a page
        explains (NCCL on the GPU page) does not name the page."""
        tokens = normalise_name(text).split()
        names = self.concept_names
        found: list[str] = []
        for start in range(len(tokens)):
            for size in range(min(longest, len(tokens) - start), 0, -1):
                phrase = " ".join(tokens[start : start + size])
                ids = names.get(phrase) or (names.get(phrase[:-1]) if phrase.endswith("s") else None)
                if ids:
                    found.extend(e for e in ids if e not in found)
                    break
        return found

    def most_specific(self, entry_ids: list[str], text: str) -> str:
        """Of the concept pages `text` names (`concepts_named_in`), the one it is about: a page whose own
        title it uses before one it reaches by a shared alias ("a tensor" names Tensor, not "rank
        (Tensor)"), then the title whose rarest content word the fewest entries have ("recall", not
        "model" or "training"), then the first."""

        def key(entry_id: str) -> tuple[bool, int, int]:
            frequencies = [self.document_frequency.get(w, 0) for w in content_words(self.bare_title(entry_id))]
            spread = min(frequencies, default=self.tables.entry_count)
            return not self.uses_title(entry_id, text), spread, entry_ids.index(entry_id)

        return min(entry_ids, key=key)

    def uses_title(self, entry_id: str, text: str) -> bool:
        """Does the text use the entry's own title (its parenthesis left out), not only an alias? Punctuation
        inside it is forgiven ("one-vs-all" is "one-vs.-all")."""

        def bare(phrase: str) -> str:
            return " ".join(re.findall(r"[a-z0-9]+", phrase.lower()))

        title = bare(self.bare_title(entry_id))
        return bool(title) and re.search(rf"\b{re.escape(title)}\b", bare(text)) is not None

    def bare_title(self, entry_id: str) -> str:
        """The entry's title without its parenthesis: "rank (Tensor)" -> "rank"."""
        return without_parenthesis(self.index.entries[entry_id].entry.title)

    def source_of(self, entry_id: str, query: str) -> Source:
        """An entry the question names, as a search result: its chunk sharing most words with the query."""
        chunk = best_named_chunk(self.index.chunks_of(entry_id), query)
        return Source(entry_id, chunk.id, chunk.title, chunk.kind, chunk.text, 1.0, 1)

    def cited_entries(self, raw_ids: list[str]) -> list[str]:
        """The index's entries among ids as an answer cited them (any case, `arxiv: 2510.1`), in order."""
        if not raw_ids:
            return []
        known = {entry_id.lower(): entry_id for entry_id in self.index.entries}
        return [e for e in (canonical(raw, known) for raw in raw_ids) if e is not None]

    def names_known(self, question: str) -> str:
        """What the question names that the knowledge knows: "name" for a title, an alias or a name-like
        word an entry has (FlashAttention, H100), "rare" for a word few entries have, else ""."""
        if self.name_lookup(question) or any(n.lower() in self.vocabulary for n in names_in(question)):
            return "name"
        rare = max(3, self.tables.entry_count // 100)
        return "rare" if any(0 < self.document_frequency.get(w, 0) <= rare for w in content_words(question)) else ""

    @property
    def vocabulary(self) -> frozenset[str]:
        """Every lower-cased word of every entry: is a name in a question known to the knowledge?"""
        return self.tables.vocabulary

    def knows(self, name: str) -> bool:
        """Does some entry mention the thing named (`question.names.named_things`)? A word by the vocabulary,
        a plural forgiven either way (H100s; HPU where the pages say HPUs), a version of a known name known
        (TF1, Llama3) and a hyphen optional (NVL-72 is NVL72); a hyphenated compound by its name-like parts
        (open-ISA, spill-to-RAM); a phrase or a configuration key as written."""
        lowered = name.lower()
        if " " in lowered or "_" in lowered or lowered.startswith("--"):  # a hyphen or a space joins alike:
            joined = {lowered, lowered.replace("-", " "), lowered.replace(" ", "-")}  # "Kueue-managed RayJob"
            return any(self.tables.said_anywhere(form) for form in joined)
        if self.knows_word(lowered) or self.knows_word(lowered.replace("-", "")):
            return True
        parts = [p for p in name.split("-") if p != name and p.lower() != p and len(p) > 1]
        return "-" in name and all(self.knows_word(p.lower()) for p in parts)

    def knows_word(self, word: str) -> bool:
        version = re.fullmatch(r"([a-z]{2,})v?\d{1,2}", word)  # TF1, llama3: a version of a known name
        # the word, a plural asked (H100s) or written (HPU where the pages say HPUs), a version of a known name
        plurals = (word.removesuffix("s"), f"{word}s", word.removesuffix("'s"))
        forms = (word, *plurals, version.group(1) if version else word)
        return any(form in self.vocabulary for form in forms)

    @property
    def document_frequency(self) -> dict[str, int]:
        return self.tables.document_frequency

    def coverage(self, query: str, entry_ids: list[str]) -> dict[str, float]:
        """Share of the query's rarity-weighted content words each entry contains (0..1).

        A word no entry has weighs most, so "the price of an H100" is not covered by a paper
        that merely mentions H100s, while "MicroEP" is fully covered by the paper that names it.
        """
        asked = content_words(query)
        if not asked:
            return dict.fromkeys(entry_ids, 0.0)
        total = self.tables.entry_count or 1
        weight = {w: rarity(total, self.document_frequency.get(w, 0)) for w in asked}
        norm = math.fsum(weight.values())  # fsum: a set's order changes with the process, the sum may not
        return {e: math.fsum(weight[w] for w in asked & self.tables.words_of(e)) / norm for e in entry_ids}

    @cached_property
    def fusion(self) -> RetrievalSettings:
        """The fusion's settings for this knowledge: documents alone fuse with `documents_rrf_k`. Sections of
        one page share most of their words, so the legs agree on the first place less often than on a
        pack's distinct entries, and a second place in both legs overtook a first place in one."""
        if set(self.tables.kinds) == {"document"}:
            return replace(self.tuning, rrf_k=self.tuning.documents_rrf_k)
        return self.tuning

    def retrieve(
        self,
        query: str,
        k: int = 10,
        kind: str | None = None,
        tags: list[str] | None = None,
        prefer: str | None = None,
        carried: list[str] | None = None,
    ) -> Retrieval:
        """Entries for `query`, best first; `kind` filters, `prefer` lifts one kind (concepts for names),
        `carried` lifts the entries a follow-up leans on (ids as an answer cited them; unknown ones ignored)."""
        tuning = self.fusion
        dense: list[tuple[Chunk, float]] = []
        lexical: list[tuple[Chunk, float]] = []
        knowledge_similarity = 0.0  # the best cosine of what the knowledge says, not of how it is asked for
        if self.mode in ("hybrid", "dense"):
            vector = self.index.embedder.embed_query(query)
            hits = self.index.nearest(vector, tuning.candidates, kind)
            dense = best_per_entry(hits)
            if dense and dense[0][0].field == ASKED_AS:
                described = dense[0][1] - tuning.description_discount
                knowledge_similarity = max(self.own_similarity(vector, hits, kind), described)
            elif dense:
                knowledge_similarity = dense[0][1]
        searched = with_literature_terms(query)  # "cards" also searches "GPU" (`user_terms.py`)
        if self.mode in ("hybrid", "lexical"):
            lexical = best_per_entry(self.index.lexical(searched, tuning.candidates, kind))
        # a re-ranking always sees the pool the feedback leg widens (the learned order weighs its rank)
        wants_feedback = self.mode == "hybrid" and (self.dense_feedback or self.reranking != "off")
        feedback = self.feedback(searched, dense, kind) if wants_feedback else []
        pages, owner = self.named_pages(query)
        named = [e for e in pages if kind is None or self.index.entries[e].entry.kind == kind]
        fused: dict[str, float] = {}
        chunks: dict[str, Chunk] = {}
        legs: dict[str, dict[str, tuple[int, float]]] = {"dense": {}, "lexical": {}, "feedback": {}}  # rank, score
        weighed = (
            ("dense", dense, tuning.dense_weight),
            ("lexical", lexical, tuning.lexical_weight),
            ("feedback", feedback, tuning.feedback_weight),
        )
        for name, ranking, weight in weighed:
            for rank, (chunk, score) in enumerate(ranking, start=1):
                fused[chunk.entry_id] = fused.get(chunk.entry_id, 0.0) + weight / (tuning.rrf_k + rank)
                chunks.setdefault(chunk.entry_id, chunk)
                legs[name][chunk.entry_id] = (rank, score)
        unit = 1.0 / (tuning.rrf_k + 1)  # what a first place in one ranking is worth
        covered = self.coverage(query, list(fused))
        if self.mode == "hybrid":
            for entry_id, share in covered.items():
                fused[entry_id] += tuning.coverage_weight * share * unit
        best = (
            tuning.dense_weight * bool(dense) + tuning.lexical_weight * bool(lexical) + tuning.coverage_weight
        ) * unit
        if prefer:
            for entry_id in fused:
                if self.index.entries[entry_id].entry.kind == prefer:
                    fused[entry_id] += tuning.preferred_kind_bonus * best
        lifted = self.cited_entries(carried or [])
        for found in lifted:
            if kind is None or self.index.entries[found].entry.kind == kind:
                fused[found] = fused.get(found, 0.0) + tuning.carried_bonus * best
                chunks.setdefault(found, best_named_chunk(self.index.chunks_of(found), query))
        for entry_id in named:  # names outrank any fusion; a name's own page before those that share it
            fused[entry_id] = fused.get(entry_id, 0.0) + (2 + tuning.own_name_bonus * (entry_id == owner)) * best
            chunks.setdefault(entry_id, best_named_chunk(self.index.chunks_of(entry_id), query))
        if tags:
            wanted = {t.lower() for t in tags}
            fused = {e: s for e, s in fused.items() if wanted & entry_tags(self.index, e)}
        ordered = sorted(fused.items(), key=lambda item: (-item[1], item[0]))
        if self.reranker is not None:
            kept = {*named, *lifted}
            fusion = Fusion(ordered, chunks, best, legs, covered, tuning)
            ordered = self.reranked(query, fusion, kept)
        if kind in (None, "concept") and not tags:
            ordered = self.with_other_names(ordered, chunks)
        ordered = ordered[:k]
        shown = {e: self.quotable(chunks[e]) for e, _ in ordered}
        sources = [
            Source(e, shown[e].id, shown[e].title, shown[e].kind, shown[e].text, round(min(1.0, s / best), 4), rank)
            for rank, (e, s) in enumerate(ordered, start=1)
        ]
        top_coverage = max((covered.get(e, 0.0) for e, _ in ordered[:5]), default=0.0)
        # an asked-as description is short and casual, so any casual question sits close to some of them:
        # how close the knowledge is to the question is read off the entries' own chunks, and off a
        # description only by what it exceeds its discount (`description_discount`)
        similarity = knowledge_similarity if dense else top_coverage
        confidence = 1.0 if named else (similarity + top_coverage) / 2
        return Retrieval(sources, confidence)

    def own_similarity(self, vector: list[float], hits: list[tuple[Chunk, float]], kind: str | None) -> float:
        """The best cosine of an entry's own chunk (not an asked-as description): read off the dense
        candidates already fetched, and asked of the index only when all of them are descriptions (that
        filtered query took ~70 ms p50 at 10,551 chunks, on 57 of the 141 mlsys questions; the candidates
        held the same value for 56 of them, docs/retrieval-stages.md)."""
        found = next((score for chunk, score in hits if chunk.field != ASKED_AS), None)
        if found is not None:
            return found
        own = self.index.nearest(vector, 1, kind, described=False)
        return own[0][1] if own else 0.0

    def quotable(self, chunk: Chunk) -> Chunk:
        """The chunk itself, or for an asked-as description that matched, its entry's first own chunk:
        a description finds an entry but is never what an answer quotes."""
        if chunk.field != ASKED_AS:
            return chunk
        own = self.index.chunks_of(chunk.entry_id)
        return own[0] if own else chunk

    def feedback(self, searched: str, dense: list[tuple[Chunk, float]], kind: str | None) -> list[tuple[Chunk, float]]:
        """The lexical search of the question with the rare words of the dense leg's best chunks added
        (`dense_feedback.py`), one hit per entry; empty when the dense leg found nothing.

        Not for a search of concept pages alone ("what is it called?"): the rare words of the glossary
        definitions it finds are their neighbours' names, the very confusion such a question risks
        (with the leg on those searches too, answered with gold fell on three calibration sets)."""
        if kind == "concept":
            return []
        texts = [chunk.text for chunk, _ in dense[:FEEDBACK_CHUNKS]]
        if not texts:
            return []
        total, frequency = self.index.lexical_frequencies(set(lexical_tokens(" ".join(texts))))
        added = feedback_terms(lexical_tokens(searched), texts, frequency, total)
        return (
            best_per_entry(self.index.lexical(f"{searched} {' '.join(added)}", self.tuning.candidates, kind))
            if added
            else []
        )

    def reranked(self, query: str, fusion: Fusion, kept: set[str]) -> list[tuple[str, float]]:
        """The top `DEPTH` of the fusion re-ordered, by the learned model (`learned_order.py`) or by MaxSim alone
        (`ASSISTANT_RERANK=maxsim`); `kept` entries stay first: the names the question uses, and what a leaning-back
        follow-up is about ("what's the catch?" has no words of its own to match).

        An entry's MaxSim is that of its best chunk among its first `CHUNKS_PER_ENTRY` and the one that matched.
        """
        assert self.reranker is not None
        ordered, chunks = fusion.ordered, fusion.chunks
        head, tail = ordered[:DEPTH], ordered[DEPTH:]
        texts: dict[str, list[str]] = {}
        for entry_id, _ in head:
            own = self.index.chunks_of(entry_id)[:CHUNKS_PER_ENTRY]
            texts[entry_id] = list(dict.fromkeys([chunks[entry_id].text, *(c.text for c in own)]))
        flat = [t for entry_texts in texts.values() for t in entry_texts]
        if not flat:
            return ordered
        scores = iter(self.reranker.scores(query, flat))  # a follow-up's (about: ...) subject included
        maxsim = {entry_id: [next(scores) for _ in entry_texts] for entry_id, entry_texts in texts.items()}
        first = [item for item in head if item[0] in kept]
        others = [item for item in head if item[0] not in kept]
        if self.reranking == "learned":
            found = self.candidates(fusion, maxsim, kept)
            position = {entry_id: n for n, entry_id in enumerate(learned_order(found))}
            rest = sorted(others, key=lambda item: position[item[0]])
        else:
            rest = sorted(others, key=lambda item: (-max(maxsim[item[0]]), item[0]))
        return [*first, *rest, *tail]

    def candidates(self, fusion: Fusion, maxsim: dict[str, list[float]], kept: set[str]) -> list[Candidate]:
        """What the learned order weighs for each of the top `DEPTH` fused entries not in `kept`.

        The fused score and rank are those without the feedback leg, which has its own feature: the
        feedback leg decides which entries are candidates, the order how much its rank is worth."""
        found = []
        own = [(entry_id, score - fusion.feedback_share(entry_id)) for entry_id, score in fusion.ordered[:DEPTH]]
        own.sort(key=lambda item: (-item[1], item[0]))
        for rank, (entry_id, score) in enumerate(own, start=1):
            if entry_id in kept:
                continue
            dense = fusion.legs["dense"].get(entry_id)
            lexical = fusion.legs["lexical"].get(entry_id)
            feedback = fusion.legs["feedback"].get(entry_id)
            found.append(
                Candidate(
                    entry_id=entry_id,
                    maxsim=max(maxsim[entry_id]),
                    matched_maxsim=maxsim[entry_id][0],
                    fused=score / fusion.best,
                    fused_rank=rank,
                    dense_rank=dense[0] if dense else None,
                    dense_score=dense[1] if dense else None,
                    lexical_rank=lexical[0] if lexical else None,
                    lexical_score=lexical[1] if lexical else None,
                    coverage=fusion.coverage.get(entry_id, 0.0),
                    chunks=len(self.index.chunks_of(entry_id)),
                    feedback_rank=feedback[0] if feedback else None,
                )
            )
        return found


@dataclass(frozen=True)
class Fusion:
    """The fused candidates and what each leg said of them, for the re-ranking step."""

    ordered: list[tuple[str, float]]  # entry id, fused score; best first
    chunks: dict[str, Chunk]  # the chunk each entry matched by
    best: float  # the fused score of a first place in every leg
    legs: dict[str, dict[str, tuple[int, float]]]  # "dense" / "lexical" / "feedback" -> entry id -> (rank, score)
    coverage: dict[str, float]
    tuning: RetrievalSettings  # the feedback leg's weight and the fusion's k

    def feedback_share(self, entry_id: str) -> float:
        """What the feedback leg added to the entry's fused score (0 when it did not find the entry)."""
        found = self.legs["feedback"].get(entry_id)
        return self.tuning.feedback_weight / (self.tuning.rrf_k + found[0]) if found else 0.0


def best_per_entry(hits: list[tuple[Chunk, float]]) -> list[tuple[Chunk, float]]:
    """One hit per entry (its best chunk), order kept."""
    seen: set[str] = set()
    out = []
    for chunk, score in hits:
        if chunk.entry_id not in seen:
            seen.add(chunk.entry_id)
            out.append((chunk, score))
    return out


def best_named_chunk(chunks: list[Chunk], query: str) -> Chunk:
    """The chunk of a named entry that shares most words with the query (first on ties)."""
    asked = set(words(query))
    return max(chunks, key=lambda c: (len(asked & set(words(c.text))), -chunks.index(c)))


def entry_tags(index: Index, entry_id: str) -> set[str]:
    fields = index.entries[entry_id].entry.fields
    return {str(t).lower() for t in [*fields.get("tags", []), *fields.get("categories", [])]}
