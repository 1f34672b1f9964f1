"""Should the knowledge answer this at all? A decision from evidence, not one threshold.

Three kinds of evidence, each cheap and each explainable to the user:

- the **value asked for**: a price, a date, a person, a company, a count, a product spec, install
  steps or an opinion. Concept pages and paper abstracts hardly ever state such values, so the
  question is refused unless one of the best entries has a sentence with that kind of value
  about the question's subject (e.g. a dollar figure near "H100"). The kind is read with the rest
  of the question (`question/reading.py`, by `question/value_kinds.py`); what an entry's sentence
  must hold to state it is decided here (`VALUE_EVIDENCE`);
- **names the knowledge never mentions** ("Gaudi", "CoreWeave"): a value about a thing no entry
  names cannot be in the entries. (Alone they are weak evidence: users name their own setups,
  "Xeons", "Newton-Schulz", in answerable questions, so a name refuses only with a value kind.)
- **grounding**: the specific things the sentence that asks names (a system, a paper's title, a product,
  a configuration key such as NCCL_SOCKET_IFNAME, a person, a place, a month) must be mentioned by some
  entry. A question about something no entry mentions ("who founded Groq?", "the default of
  NCCL_SOCKET_IFNAME?") is refused whatever kind of value it asks for, when it asks little else
  (`RefusalSettings.asked_besides`); a question that asks more keeps its answer, with a note naming
  what no entry mentions;
- **retrieval confidence** (dense similarity and rarity-weighted word coverage, see
  `retrieval/search.py`): only a clear miss (an off-topic question) falls below the low threshold.

The rules were read off the question sets they were fitted on. For the offline model a learned reader
(`refusal_reader.py`) weighs the same evidence with the question's words and has the last word except
on a clear miss (`decide`): on sets it was not fitted on it kept the rules' refusals and cut their false
ones (docs/retrieval-stages.md, "Refusal and lists"). It was fitted on questions about the pack: on a
team's documents the rules decide alone.

The offline extractive model cannot judge relevance itself, so for it every rule applies. An
LLM follows the prompt's refusal rule, so for it the gate stops only clear misses: off-topic
questions, and values about things the knowledge never names. `scripts/calibrate_refusal.py`
fits the threshold on the calibration half of a question set (README, "Refusals").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from itertools import pairwise

from assistant.answer import refusal_reader
from assistant.answer.section_values import measured, section_states, sizes
from assistant.question.names import (
    CONFIGURATION_KEY,
    MAGNITUDES,
    MEASUREMENT,
    MONTH_AND_YEAR,
    is_version,
    number_forms,
)
from assistant.question.reading import Reading
from assistant.question.user_terms import literature_terms
from assistant.question.value_kinds import KIND_NAMES, asks_how, asks_which_version, documents_kind
from assistant.text import any_phrase, content_words, split_sentences, stem, stems, words
from assistant.tuning import RefusalSettings
from assistant.types import Entry

# What an entry sentence must hold to answer each kind (besides the question's subject).
VALUE_EVIDENCE: dict[str, re.Pattern[str]] = {
    kind: re.compile(pattern)
    for kind, pattern in {
        "price": r"(?i)\$\s?\d|\b\d[\d,.]*\s?(?:usd|dollars?)\b|\bper hour\b|\bprice[sd]? (?:of|at)\b",
        "date": r"(?i)\b(?:19|20)\d\d\b.{0,60}\b(?:announce|release|launch|introduc|open-sourc|ship)|"
        r"\b(?:announce|release|launch|introduc|open-sourc|ship)\w*\b.{0,60}\b(?:19|20)\d\d\b",
        "person": r"(?i)\b(?:founded|founder|invented|inventor|ceo|created by|led by|architect)\b",
        "company": r"(?i)\b(?:acquired|acquisition|owned by|subsidiary|designed by|manufactured by|fab)\b",
        "count": r"(?i)\b\d[\d,.]*\s?(?:k|m|thousand|million)?\b|\b(?:two|three|four|five|six|seven|eight|nine|ten"
        r"|twelve|dozens?|hundreds?|thousands?)\b",
        "spec": r"(?i)\b\d[\d,.]*\s?(?:gb|tb|mb|w|watts|tflops|pflops|gb/s|tb/s|ghz|cores)\b",
        # a shell prompt, an install, or a command's own syntax: a --flag or a key=value argument (case counts)
        "howto": r"(?:^\$ \w|\bpip install \S|\bexport [A-Z_]{3,}=|\s--[a-z][\w-]+|\b[a-z_][\w.-]*=[\w./:@-]+)",
    }.items()
}  # and none for an opinion: the knowledge states findings, never our opinion


@dataclass(frozen=True)
class Evidence:
    """What the decision looked at, kept for the answer's notes and for calibration."""

    confidence: float
    unknown_share: float = 0.0  # share of the question's content words that no entry has
    kind: str | None = None  # the kind of value asked for
    kind_supported: bool = True  # does a best entry state that kind of value about the subject?
    unknown_names: tuple[str, ...] = ()  # names in the question no entry mentions
    ungrounded: tuple[str, ...] = ()  # things the asking sentences name that no entry mentions
    asked_besides: int = 0  # content words the asking sentences have besides the things they name
    refuse_probability: float | None = None  # the learned reader's (`refusal_reader.py`); None without weights
    documents: bool = False  # the best entries are sections of the user's documents, not the shipped pack


@dataclass(frozen=True)
class Decision:
    refuse: bool
    reason: str = ""  # one sentence for the user, empty when answering
    evidence: Evidence = field(default_factory=lambda: Evidence(1.0))


def unknown_names(names: Iterable[str], vocabulary: frozenset[str]) -> tuple[str, ...]:
    """The names (`Reading.names`) that no entry of the knowledge contains (a plural forgiven either way:
    H100s asked, DaemonSet asked of pages that say DaemonSets; a size spelt out, "352-billion-parameter", is
    known as the "352B" an abstract writes)."""
    out = []
    for name in names:
        word = name.lower()
        if word in vocabulary or (word.endswith("s") and word[:-1] in vocabulary) or f"{word}s" in vocabulary:
            continue
        if any(form in vocabulary for form in name_forms(word)[1:] if " " not in form):
            continue
        if MEASUREMENT.match(word) and not (is_version(word) or SPELT_SIZE.match(word)):  # "64-GPU", "32GB": a value
            continue  # (a model named by its size, "the 13-billion one", stays a name)
        parts = word.split("-")  # "CPU-offload" where the pages write "CPU offload"; not "us-east-1", an id
        if len(parts) > 1 and all(part.isalpha() and part in vocabulary for part in parts):
            continue
        out.append(name)
    return tuple(out)


# a size the asker spells out ("352-billion-parameter", "70-billion") that abstracts write as 352B or 70B
SPELT_SIZE = re.compile(r"^(\d[\d.,]*)[- ]?(thousand|million|billion|trillion)(?:-[a-z]+)*$")
SIZE_LETTER = {word: letter for _, letter, word in MAGNITUDES} | {"trillion": "t"}


def name_forms(name: str) -> list[str]:
    """The lower-cased ways an entry may write a name: itself, and for a spelt-out size its number with
    the magnitude's letter ("352b") or word ("352 billion", "352-billion")."""
    forms = [name]
    size = SPELT_SIZE.match(name)
    if size:
        number, magnitude = size.groups()
        forms += [f"{number}{SIZE_LETTER[magnitude]}", f"{number} {magnitude}", f"{number}-{magnitude}"]
    return forms


def mentions(text: str, name: str) -> bool:
    """Does the lower-cased text hold the name in one of its forms (`name_forms`), a hyphen written as a space
    or not ("Kueue-managed" of pages that say "Kueue managed")?"""
    return any(form in text or form.replace("-", " ") in text for form in name_forms(name))


def subject_words(reading: Reading) -> set[str]:
    """The question's content words minus the words that only say what kind of value is asked."""
    return reading.content_words - FRAME_WORDS


FRAME_WORDS = content_words(
    "price cost much hourly rate when year release date announce who founder company vendor many "
    "number spec peak memory bandwidth install command step opinion best better recommend first"
)


def kind_supported(
    kind: str, reading: Reading, entries: Iterable[Entry], everywhere: frozenset[str] = frozenset()
) -> bool:
    """Does some sentence of these entries state that kind of value about the question's subject?

    The sentence must hold the value (a dollar figure, a year, a number with a unit, ...) and
    every name the question uses (a price of another GPU is not the price asked for); without
    names, two of the question's subject words; for a count, the thing counted too. Names the asker
    uses only to set the scene, before the sentence that asks, need only be in the entry ("I read
    about a forecasting model built into Google's warehouse, usable from SQL. How many series can it
    handle?"); names in the asking sentence are what the value is about ("how many GPUs are in
    ByteDance's cluster?"), so they must be in the value's sentence.

    A section of a team's documents is asked only for the asking sentence's names: the asker's scene
    ("What's the chargeback rate for an H100? Need it for our Q3 budget.") is not what a section about the
    value must say, nor is a name most of the documents use (`everywhere`, `pervasive`: "KServe" of KServe's
    pages), which a section about its transformer need not repeat.
    """
    if kind == "opinion":  # the knowledge states findings, never our opinion
        return False
    evidence = VALUE_EVIDENCE.get(kind)
    subject = subject_words(reading)
    names = name_keys(reading.names)
    asking = reading.asking.lower()
    # a measurement the asker writes ("a 2000-node cluster") is no name the value's section must repeat
    asked = {name for name in names if name in asking and not MEASUREMENT.match(name)}
    counted = COUNTED.search(reading.lowered)
    for entry in entries:
        whole = f"{entry.title}. {entry.text}"
        if entry.kind == "document":  # a team's section: read for values in its own words (`section_values`)
            if section_answers(kind, entry, whole, asked - everywhere, subject, reading):
                return True
            continue
        if evidence is None:  # a kind only documents are asked for (`value_kinds.documents_kind`)
            continue
        if not all(mentions(whole.lower(), name) for name in names - asked):
            continue
        for sentence in split_sentences(whole):
            if not evidence.search(sentence):
                continue
            lowered = sentence.lower()
            if not all(mentions(lowered, name) for name in asked):
                continue  # a value about another product is not the one asked for
            if not names and len(subject & content_words(sentence)) < 2:
                continue
            if kind == "count" and counted and not counts(sentence, counted.group(1), reading.lowered):
                continue
            return True
    return False


def section_answers(kind: str, entry: Entry, whole: str, asked: set[str], subject: set[str], reading: Reading) -> bool:
    """Does a section of the user's documents state a value of `kind` about the question's subject? The
    section is about its heading, so the names the asking sentence uses and two of the subject's words
    need only be in the section (`whole`: with its heading path); the value must be on a line of its text
    about what is asked (`section_values`)."""
    if not all(mentions(whole.lower(), name) for name in asked):
        return False
    if not asked and len(subject & content_words(whole)) < 2:
        return False
    return section_states(kind, entry.title, entry.text, reading.asking, reading.names, reading.lowered)


# a value the question itself states, to be confirmed: "was it $2,900?", "is it --kv-page-size?", "Ada Okonkwo's?"
STATED_VALUES: dict[str, re.Pattern[str]] = {
    **{
        kind: re.compile(pattern)
        for kind, pattern in {
            "price": r"(?i)[$€£]\s?\d[\d,.]*\s?[kmb]?\b|\b\d[\d,.]*\s?(?:usd|eur|gbp|dollars|euros)\b",
            "person": r"(?<=[a-z,] )[A-Z][a-z]+(?:[ -][A-Z][a-z]+)+",
        }.items()
    },
    "howto": CONFIGURATION_KEY,
    "date": MONTH_AND_YEAR,  # a year alone is in many abstracts
}


def states_value(kind: str, reading: Reading, entries: Iterable[Entry]) -> bool:
    """Does the question state a value of the kind asked for that one of these entries states too? A
    question that names the figure, the flag, the person or the date and asks to confirm it is grounded
    by an entry that says it, whatever words that entry uses around it.

    On a team's documents a capitalised pair the sections' headings carry ("Which company built Argo
    Workflows?") is what the documents are about, not a person the question names."""
    pattern = STATED_VALUES.get(kind)
    stated = [m.group().lower() for m in pattern.finditer(reading.asking)] if pattern else []
    entries = list(entries)
    if kind == "person" and entries and all(entry.kind == "document" for entry in entries):
        stated = [value for value in stated if not any(value in entry.title.lower() for entry in entries)]
    texts = [f"{entry.title}. {entry.text}".lower() for entry in entries]
    return any(value in text for value in stated for text in texts)


def name_keys(names: Iterable[str]) -> set[str]:
    """Names as matched in lower-cased text: "NVIDIA's" -> "nvidia", "H100s" -> "h100"."""
    return {n.lower().removesuffix("'s").rstrip("s") or n.lower() for n in names}


# "how many Jetson modules has NVIDIA shipped": the counted phrase runs up to its verb
COUNTED = re.compile(
    r"\bhow many ((?:[\w-]+ ){0,3}?[\w-]+?)"
    r"(?= (?:has|have|had|is|are|was|were|do|does|did|can|could|will|would|should|in|on|of|per|at|across)\b|[?,.]|$)"
)
# A count of units sold, shipped or used is a market figure: the sentence must say that, not any number
MARKET_WORDS = any_phrase(
    "sold | sell | sells | selling | shipped | ship | ships | purchased | bought | download | downloads | downloaded"
    " | users | customers | employees | subscribers | install | installs | installed"
)


def counts(sentence: str, counted: str, lowered: str) -> bool:
    """Does the sentence count the thing asked about: a number just before the counted noun ("43,520
    GPUs", "25 quantized open-source LLMs"), and the question's market word (sold, shipped; read off the
    lower-cased question) if it has one?"""
    said = words(sentence)
    tokens = [stem(w) for w in said]
    market = MARKET_WORDS.search(lowered)
    if market and stem(market.group()) not in tokens:
        return False
    # the counted noun as asked, as the literature writes it ("graphics cards" -> GPUs), or as a
    # capacity figure counts people ("how many people at once" -> "two concurrent users")
    head = {*stems(counted)[-1:], *(stem(t) for t in literature_terms(counted))}
    head |= {alias for word in list(head) for alias in COUNTED_ALIASES.get(word, ())}
    return any(
        token in head and any(NUMBER.match(w) or w in NUMBER_WORDS for w in said[max(0, i - 4) : i])
        for i, token in enumerate(tokens)
    )


COUNTED_ALIASES = {"peopl": ("user", "client"), "person": ("user", "client")}
NUMBER = re.compile(r"^\d[\d,.]*[kmb]?$")
NUMBER_WORDS = frozenset(
    {"two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "twelve", "dozen", "dozens"}
    | {"hundred", "hundreds", "thousand", "thousands", "million", "millions", "billion"}
)


def gather(
    reading: Reading,
    confidence: float,
    best: list[Entry],
    vocabulary: frozenset[str],
    document_frequency: Mapping[str, int],
    entries: int,
    knows: Callable[[str], bool] | None = None,
    *,
    settings: RefusalSettings,
) -> Evidence:
    """The evidence for the question as the asker put it (`reading`) and the entries retrieval found best.

    On a team's documents a how-to is taken as answered by the sections found unless it names something
    no entry mentions: their sections are mostly steps, commands and configuration, so whether one holds
    steps says nothing of whether they are the steps asked for. On the five documentation sets the check
    refused 17 answerable how-tos against 4 unanswerable ones, 2 of those naming an unknown thing."""
    documents = bool(best) and all(entry.kind == "document" for entry in best)
    asked_of_documents = documents_kind(reading.asking) if documents else None
    # an email address asked is what is asked, whatever the pack's readers see ("what email address should I
    # use" reads as a how-to to them)
    kind = "email" if asked_of_documents == "email" else reading.value_kind or asked_of_documents
    if documents and kind == "opinion":  # a team's pages recommend ("use the TE backend for FP8"); abstracts do not
        kind = None
    if documents and kind in ("person", "company", "date") and asks_how(reading.asking):
        kind = None  # "how does it know which person a pod belongs to?" asks how, not who
    if documents and kind == "date" and asks_which_version(reading.asking):
        kind = None  # "which release first supports Kubernetes 1.33?" asks a version; pages list versions
    asked = reading.topic_words  # "whats", "tho": typed fast, not unknown topics
    known = knows or (lambda name: name.lower() in vocabulary)
    missing, besides = grounding(reading, known)
    if documents:  # "ResourceQuota" of pages that write "resource quota", "HF" of pages that say "Hugging Face"
        missing = tuple(name for name in missing if not written_their_way(name, best))
    everywhere = pervasive(reading.names, document_frequency, entries) if documents else frozenset()
    if documents and not missing:
        missing = tuple(
            compound
            for compound in unknown_compounds(reading, known)
            if not (subject_led(compound, everywhere) or abbreviated(compound, best))
        )
    unknown = 0.0
    if asked and entries >= settings.vocabulary_entries:  # a small corpus lacks ordinary words; absence says little
        unknown = sum(1 for w, parts in asked.items() if not known_word(w, parts, document_frequency)) / len(asked)
    names_unknown = unknown_names(reading.names, vocabulary)
    if documents:
        names_unknown = tuple(name for name in names_unknown if not written_their_way(name, best))
        # what a section need not write as asked: the documents' subject, and a name it writes its own way
        everywhere |= name_keys(name for name in reading.names if written_their_way(name, best))
    unmeasured = tuple(noun for noun in measured(reading.asking) if not known(noun.lower())) if documents else ()
    # "how many watts ...?" of pages that never say watt, "how much memory for 50k workloads?" of pages that never
    # write 50k: no section states it (`section_values`)
    unmeasured += tuple(size for size in sizes(reading.asking) if not size_written(size, known)) if documents else ()
    if unmeasured:
        kind, names_unknown = kind or "count", (*names_unknown, *unmeasured)
    evidence = Evidence(
        confidence=confidence,
        unknown_share=unknown,
        kind=kind,
        kind_supported=not unmeasured
        and (
            kind is None
            or (documents and kind == "howto" and not names_unknown)
            or kind_supported(kind, reading, best, everywhere)
            or states_value(kind, reading, best)
            or (documents and every_part_answered(reading, best))
        ),
        unknown_names=names_unknown,
        ungrounded=missing,
        asked_besides=besides,
        documents=documents,
    )
    probability = refusal_reader.refuse_probability(reading.asking, evidence, reading.encoders)
    return replace(evidence, refuse_probability=probability)


def size_written(size: str, known: Callable[[str], bool]) -> bool:
    """Does some entry write the size in one of its forms (`number_forms`)? A form of one word ("2000", "2k")
    is a word of the vocabulary; one with a comma or a space ("2,000", "2 thousand") a phrase after a space,
    so that "15,000" is not "5,000"."""
    return any(known(form if form.isalnum() else f" {form}") for form in number_forms(size))


def every_part_answered(reading: Reading, best: list[Entry]) -> bool:
    """Of a question that asks two things ("who owns the quota, and which label selects the queue?"), is the
    value each part asks for stated by a section, each part read as a question of its own? Read whole, a
    value is asked about the names of both parts, which no one section holds; the answer then answers each
    part from the section that holds it (`extractive.other_parts`). Every part that asks for a value must be
    answered: "how much does the training course cost and how many days does it take?" is not answered by
    a section that counts days of something else."""
    if len(reading.parts) < 2:
        return False
    asked = [
        (kind, part)
        for part in (Reading(p, encoders=reading.encoders) for p in reading.parts)
        if (kind := part.value_kind)
    ]
    return bool(asked) and all(kind_supported(k, part, best) or states_value(k, part, best) for k, part in asked)


def grounding(reading: Reading, knows: Callable[[str], bool]) -> tuple[tuple[str, ...], int]:
    """The things the asking sentences name that no entry mentions (`knows`), and how many content words
    those sentences have besides the things named. An acronym the question spells out ("a GLM, the
    generalized linear model") is explained, not unknown."""
    missing = tuple(n for n in reading.named_in_asking if not knows(n) and not spelled_out(n, reading))
    return missing, reading.words_besides_names


def unknown_compounds(reading: Reading, knows: Callable[[str], bool]) -> tuple[str, ...]:
    """Names the asking sentences write as one ("VS Code", "Windows Server") that no entry mentions as one,
    though each word of them is known: on a team's documents "VS" and "Code" are somewhere, the editor is not."""
    names = reading.named_in_asking
    compounds = [
        f"{first} {second}"
        for first, second in pairwise(names)
        if f"{first} {second}" in reading.asking and not (first[:1].isdigit() or second[:1].isdigit())
    ]
    return tuple(c for c in compounds if not knows(c))


EVERYWHERE = 0.3  # of the entries: a name a third of the sections use is what the documents are about


def pervasive(names: Iterable[str], document_frequency: Mapping[str, int], entries: int) -> frozenset[str]:
    """The names (as `name_keys` writes them) whose every word a third or more of the entries use: the
    documents' own subject ("KServe" of KServe's pages, where 40% of the sections say it). A section need not
    repeat it, and "KServe Python model server" is no compound the pages must write as one."""
    floor = EVERYWHERE * entries
    return frozenset(
        key
        for key in name_keys(names)
        if (stemmed := content_words(key)) and all(document_frequency.get(word, 0) >= floor for word in stemmed)
    )


def subject_led(compound: str, everywhere: frozenset[str]) -> bool:
    """Does a compound open with the documents' subject and go on with no number ("KServe Python model
    server", which is KServe's Python model server)? "Argo Workflows v4.1" names a release of it, which the
    pages must write."""
    first, second = compound.split()[:2]
    return bool(name_keys([first]) & everywhere) and not any(character.isdigit() for character in second)


def written_their_way(name: str, best: list[Entry]) -> bool:
    """Do the best sections write the name their own way: its capitalised parts apart, or its acronym out?"""
    return written_apart(name, best) or abbreviated(name, best)


def abbreviated(name: str, best: list[Entry]) -> bool:
    """Is a name with an acronym ("HF", "HF vLLM") written out in the best sections ("Hugging Face vLLM")? An
    acronym of two to four capitals stands for as many consecutive capitalised words with those initials."""
    words_of = name.split()
    acronyms = [word.isupper() and word.isalpha() and 2 <= len(word) <= 4 for word in words_of]
    if not any(acronyms):
        return False
    pattern = r"[\s-]+".join(
        r"[\s-]".join(rf"{letter}[a-z]+" for letter in word) if acronym else rf"(?i:{re.escape(word)})"
        for word, acronym in zip(words_of, acronyms, strict=True)
    )
    written = re.compile(rf"\b{pattern}\b")
    return any(written.search(f"{entry.title}\n{entry.text}") for entry in best)


def written_apart(name: str, best: list[Entry]) -> bool:
    """Is a name written as one word of capitalised parts ("ResourceQuota", "LocalQueue") in the best sections
    as those words apart ("resource quota", "Local Queue", "local-queue")? Then the pages name it; a name of
    parts they only have elsewhere ("TensorFlow" of pages that say "tensor" and "flow") is still unknown."""
    parts = CAMEL_PARTS.findall(name)
    if len(parts) < 2 or "".join(parts) != name:
        return False
    apart = re.compile(r"\b" + r"[ -]".join(re.escape(part) for part in parts) + r"\b", re.I)
    return any(apart.search(f"{entry.title}\n{entry.text}") for entry in best)


CAMEL_PARTS = re.compile(r"[A-Z][a-z]{2,}")  # the capitalised words of a CamelCase name


def spelled_out(name: str, reading: Reading) -> bool:
    """Is an acronym's expansion in the question: consecutive words whose initials spell it?"""
    if not (name.isupper() and name.isalpha() and 2 <= len(name) <= 6):
        return False
    return name.lower() in reading.initials


def known_word(word: str, parts: tuple[str, ...], document_frequency: Mapping[str, int]) -> bool:
    """Does some entry have the (stemmed) word? A compound the asker hyphenates ("S-shaped",
    "over-provisioned") is known when each of its parts of two letters or more (`parts`, stemmed;
    `Reading.topic_words`) is."""
    if document_frequency.get(word):
        return True
    return "-" in word and bool(parts) and all(document_frequency.get(p) for p in parts)


def decide(evidence: Evidence, settings: RefusalSettings, *, model_judges: bool) -> Decision:
    """Refuse or answer. `model_judges`: an LLM will apply the prompt's refusal rule itself.

    For the extractive model the learned reader (`refusal_reader.py`) has the last word, except on a
    clear miss: it overrules a rule's refusal it finds unlikely (a ticket id or a salutation is a name
    no entry mentions, and says nothing about what is asked), and refuses when it is sure where the
    rules saw nothing, unless an entry states the kind of value asked for (`stated`). An LLM's gate stays
    the rules' alone: the model refuses by the prompt itself."""
    decision = decide_by_rules(evidence, settings, model_judges=model_judges)
    p = evidence.refuse_probability
    # the reader was fitted on questions about the pack, where users name their own setups; on a team's
    # documents a name no section mentions ("Terraform", "Oracle") is what the question is about, so the rules'
    # refusal stands, and the one refusal it added on the development sets' documents was of an answerable
    # question ("SSO fails for members of loads of AD groups"): there the rules decide alone
    if model_judges or p is None or decision.reason in CLEAR_MISSES or evidence.documents:
        return decision
    if decision.refuse and p < refusal_reader.UNLIKELY:
        return Decision(False, "", evidence)
    # ASSISTANT_REFUSAL_THRESHOLD=0 asks for an answer whenever the rules allow one: the reader adds none
    adds = settings.clear_miss > 0
    if adds and not decision.refuse and p >= refusal_reader.REFUSES_AT and not stated(evidence):
        return Decision(True, learned_reason(evidence), evidence)
    return decision


def stated(e: Evidence) -> bool:
    """Did an entry state the kind of value asked for, about the question's subject? Then the entries
    answer, whatever the words of the question make likely ("who built Tessaly, Ada Okonkwo's group?")."""
    return e.kind is not None and e.kind_supported


def learned_reason(e: Evidence) -> str:
    """The evidence that most likely made the reader refuse, said as the rules would say it."""
    if e.ungrounded:
        return "no entry mentions what it names"
    if e.kind is not None and not e.kind_supported:
        return f"no entry states the {KIND_NAMES[e.kind]} asked for"
    return "none of its entries states what it asks"


def decide_by_rules(evidence: Evidence, settings: RefusalSettings, *, model_judges: bool) -> Decision:
    """The rules alone: grounding, a clear miss, unknown words, a value kind no entry states."""
    e = evidence
    if e.ungrounded and e.asked_besides <= settings.asked_besides:  # first: the most telling reason
        # the names go to the answer's notes, not into its text: a question's own words are never echoed
        return Decision(True, "no entry mentions what it names", e)
    if e.confidence < settings.clear_miss:
        return Decision(True, CLEAR_MISS, e)
    if e.unknown_share >= settings.unknown_words and e.confidence < settings.unknown_words_confidence:
        return Decision(True, UNKNOWN_WORDS, e)
    if e.kind is not None and not e.kind_supported and (e.unknown_names or not model_judges):
        about = f" about {', '.join(e.unknown_names)}" if e.unknown_names else ""
        return Decision(True, f"no entry states the {KIND_NAMES[e.kind]} asked for{about}", e)
    return Decision(False, "", e)


CLEAR_MISS = "none of its entries is close to the question"
UNKNOWN_WORDS = "most of the question's words appear in none of its entries"
CLEAR_MISSES = (CLEAR_MISS, UNKNOWN_WORDS)  # retrieval found nothing near: no reader overrules that
