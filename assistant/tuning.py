"""The tuned numbers of each stage, in one described group per stage, nested in `Settings`.

Each number was fitted or chosen on a calibration split; it lives here once, with what it does and
how it was chosen, and reaches its stage as the group passed in (`settings.retrieval`,
`settings.refusal`, `settings.support`, `settings.offline_answer`), never as a module constant. A
test or a fitting script changes one with `dataclasses.replace` on its group. The few that users set
have environment variables, read in `assistant/settings.py` (`ASSISTANT_REFUSAL_THRESHOLD`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any


def knob(default: Any, description: str) -> Any:
    """A field with its description kept beside it (`describe` lists them)."""
    return field(default=default, metadata={"description": description})


def describe(group: object) -> list[tuple[str, Any, str]]:
    """Each field of a settings group: name, value, description."""
    return [(f.name, getattr(group, f.name), f.metadata.get("description", "")) for f in fields(group)]  # type: ignore[arg-type]


@dataclass(frozen=True)
class RetrievalSettings:
    """Reciprocal rank fusion of the dense and lexical legs and the lifts after it (`retrieval/search.py`)."""

    rrf_k: int = knob(60, "the k of reciprocal rank fusion: a rank r adds weight / (k + r)")
    documents_rrf_k: int = knob(
        10,
        "the same k when the knowledge is a team's documents alone: a first place counts for more against the "
        "places after it (on five documentation sets right-file MRR@10 rose on each, k 10 against 60)",
    )
    candidates: int = knob(40, "hits each leg (dense, lexical, feedback) fetches before fusing")
    description_discount: float = knob(
        0.15,
        "what an asked-as description's cosine loses before it counts as the knowledge's closeness (the "
        "refusal confidence): every discount from -0.05 to 0.35 refuses the same on the 920 calibration "
        'questions, 0.15 is the middle of that tie; the mlsys set needs one ("Summarise the plot of '
        "Hamlet.\" is 0.34 to a description of an RL state, 0.22 to any entry's own text)",
    )
    dense_weight: float = knob(
        1.5, "fusion weight of the dense leg: +0.066 recall@5 for paraphrases (realistic calibration half)"
    )
    lexical_weight: float = knob(1.0, "fusion weight of the lexical (BM25) leg")
    feedback_weight: float = knob(
        0.5, "fusion weight of the dense-feedback leg: widens the pool the learned order sees"
    )
    coverage_weight: float = knob(1.0, "of a first place: the rarity-weighted share of the query's words an entry has")
    carried_bonus: float = knob(1.0, "of a top score: for the entries a leaning-back follow-up is about")
    preferred_kind_bonus: float = knob(
        0.4, 'of a top score: "what is this called?" wants a concept (+0.024 recall@5, calibration)'
    )
    own_name_bonus: float = knob(0.5, "of a top score: the page whose own title the name is, over pages sharing it")
    synonym_depth: int = knob(
        2, "the first entries whose other-name pages follow them (calibration R@5: 1 -> 0.904, 2 -> 0.910)"
    )


@dataclass(frozen=True)
class RefusalSettings:
    """When a question is a clear miss (`answer/refusal.py`); fitted by `scripts/calibrate_refusal.py`."""

    clear_miss: float = knob(
        0.20,
        "retrieval confidence below this is a clear miss (ASSISTANT_REFUSAL_THRESHOLD; fitted on the "
        "calibration half of knowledge/questions/realistic.jsonl)",
    )
    unknown_words: float = knob(0.35, "a question with this share of words no entry has is a clear miss ...")
    unknown_words_confidence: float = knob(
        0.30,
        "... when retrieval confidence is below this too: slang is unknown words in a question the "
        "knowledge answers (off-topic calibration questions: confidence <= 0.25)",
    )
    vocabulary_entries: int = knob(
        1000,
        "entries below which a word no entry has says nothing (a small corpus lacks ordinary words: the "
        "60-entry seed would refuse a third of its answerable questions, mlsys none of the calibration half)",
    )
    asked_besides: int = knob(
        8,
        "content words besides the names no entry mentions up to which the question is refused for them: on "
        "the five calibration sets the 3 answerable such questions have 10 or more (an aside), 39 of the 43 "
        'unanswerable ones 8 or fewer ("who founded Groq?")',
    )


@dataclass(frozen=True)
class SupportSettings:
    """Whether a quote supports a claim (`verify/support.py`); fitted by `scripts/claim_support.py --fit`,
    each threshold at the middle of the range giving the best calibration precision and recall."""

    supported: float = knob(0.5, "support at or above which a citation counts as verified")
    lexical_min: float = knob(0.75, "weighted share of the claim's words the quote must cover")
    cosine_min: float = knob(0.55, "sentence cosine a claim leaning on paraphrased words must reach")
    in_entry_cosine: float = knob(0.82, "claim-quote cosine that lets one word from elsewhere in the entry pass")
    close_cosine: float = knob(0.75, "claim-quote cosine from which a paraphrased word may pass")
    deletion_max: float = knob(0.03, "how much closer to the quote the claim may get without the word")
    max_close: int = knob(2, "paraphrased words one claim may lean on")
    close_credit: float = knob(0.8, "how much such a word counts towards coverage")
    extra_sentences: int = knob(2, "sentences a composed claim may draw on besides the best one")


@dataclass(frozen=True)
class OfflineAnswerSettings:
    """How the offline (extractive) model chooses entries and sentences (`answer/models/extractive.py`)."""

    close: float = knob(0.5, "of the first entry's word score: a later entry fits the question about as well")
    section_close: float = knob(
        0.3,
        "the same for a section of a team's documents, quoted as a close alternative: the section that says it, or "
        "a two-file question's second file, often shares fewer of the question's words (0.3 against 0.5: +9 facts "
        "with a right-file citation on the nine development sets, none lost; 0 the same facts)",
    )
    section_alternatives: int = knob(
        3,
        "the sections after the first that may be quoted as close alternatives (three against two, with "
        "`section_close`: +6 more facts, none lost, two-file questions citing both 41 -> 45 of 68; with both, "
        "answers 147 -> 188 words and citation precision 0.63 -> 0.51 on average; four: +5 more facts, 207 words)",
    )
    sentence_lead: float = knob(
        0.25,
        "of a team's documents: how much better than the first section's best sentence another of the first "
        "three sections' must fit the question to lead the answer (0 and 0.1 lost facts the search's order had)",
    )
    preferred_fit: float = knob(
        0.5, "of the best sentence's fit: a sentence of the preferred shape (a contribution) still leads"
    )
    background: float = knob(0.5, "of its word score: what an abstract's background sentence counts for")
    described_depth: int = knob(5, "entries a described side of a comparison may be matched to")
    meaning: float = knob(
        1.0,
        "what a sentence's closeness in meaning to the question (a cosine) adds to its word score, a "
        "share of the question's weighted words",
    )
    section_meaning: float = knob(
        0.0,
        "the same for a sentence of a team's documents: a section's sentences all sit close to a question about "
        "its topic, so closeness ranks the one stating the fact lower than its words do (docs/evaluation.md)",
    )
    entry_sentences: int = knob(3, "of the answering entry quoted for a problem, a figure, a caveat or an example")
    section_sentences: int = knob(
        6,
        "the same for a section of a team's documents, whose facts lie further apart than an abstract's (six "
        "against five: +9 facts with a right-file citation on the nine development sets, none lost; seven: +12, -1)",
    )
    listed_close: float = knob(
        0.3,
        '"what work is there on ...": a later paper is listed when it fits at least this share as well as the '
        "first (0.5 listed one paper for most such questions of realistic-dev5 to -dev7; 0.3 lists the second)",
    )
    papers_listed: int = knob(4, '"what work is there on ...": the search\'s first papers considered')
