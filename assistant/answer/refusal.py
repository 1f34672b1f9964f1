"""Should the knowledge answer this at all? A decision from evidence, not one threshold.

Three kinds of evidence, each cheap and each explainable to the user:

- the **value asked for**: a price, a date, a person, a company, a count, a product spec, install
  steps or an opinion. Concept pages and paper abstracts hardly ever state such values, so the
  question is refused unless one of the best entries has a sentence with that kind of value
  about the question's subject (e.g. a dollar figure near "H100");
- **names the knowledge never mentions** ("Gaudi", "CoreWeave"): a value about a thing no entry
  names cannot be in the entries. (Alone they are weak evidence: users name their own setups,
  "Xeons", "Newton-Schulz", in answerable questions, so a name refuses only with a value kind.)
- **grounding**: the specific things the sentence that asks names (a system, a paper's title, a product,
  a configuration key such as NCCL_SOCKET_IFNAME, a person, a place, a month) must be mentioned by some
  entry. A question about something no entry mentions ("who founded Groq?", "the default of
  NCCL_SOCKET_IFNAME?") is refused whatever kind of value it asks for, when it asks little else
  (`ASKED_BESIDES`); a question that asks more keeps its answer, with a note naming what no entry mentions;
- **retrieval confidence** (dense similarity and rarity-weighted word coverage, see
  `retrieval/search.py`): only a clear miss (an off-topic question) falls below the low threshold.

The rules were read off the question sets they were fitted on. For the offline model a learned reader
(`refusal_reader.py`) weighs the same evidence with the question's words and has the last word except
on a clear miss (`decide`): on sets it was not fitted on it kept the rules' refusals and cut their false
ones (docs/retrieval-stages.md, "Refusal and lists").

The offline extractive model cannot judge relevance itself, so for it every rule applies. An
LLM follows the prompt's refusal rule, so for it the gate stops only clear misses: off-topic
questions, and values about things the knowledge never names. `scripts/calibrate_refusal.py`
fits the threshold on the calibration half of a question set (README, "Refusals").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace

from assistant.answer import refusal_reader
from assistant.question import value_reader
from assistant.question.intents import ASKS_FOR_A_NAME, asking_part
from assistant.question.names import CONFIGURATION_KEY, MONTH, named_things, names_in
from assistant.question.user_terms import literature_terms
from assistant.text import content_words, split_sentences, stem, stems, words
from assistant.types import Entry

# Command-line tools: a request for their use asks for instructions, which the knowledge does not hold
CLI_TOOLS = r"\b(?:nvidia-smi|kubectl|docker|torchrun|sbatch|srun|helm|conda|apt-get|systemctl|nvcc)\b"
# What a question asks for, from its wording. Patterns are written against the lower-cased question.
VALUE_KINDS: dict[str, re.Pattern[str]] = {
    "price": re.compile(
        r"\$\s?\d|\b(price|prices|pricing|priced|hourly|per hour|on-demand rate|dollars?|usd|salary|salaries|wages?)\b"
        r"|\b(?:how much|what) (?:does|do|would|will|is|are)\b[^?]{0,60}\bcost\b(?!\s+(?:in|of)\b)"
        r"|\bcost(?:s)? (?:to buy|per (?:card|gpu|chip|month))\b"
        r"|\bgoing rate\b|\bhow pricey\b|\bbucks\b|\bset (?:us|me|you|them) back\b|\b(?:ballpark|rough) cost\b"
        r"|\bcharges? (?:per|for)\b|\bwhat (?:does|do) [\w .-]{1,30} charge\b"
    ),
    "date": re.compile(
        r"^\W*when (?:did|was|were|will|is|are)\b|\bwhat year\b|\brelease date\b|\bwhen\b[^?]{0,80}\b"
        r"(?:announced?|released?|launched?|shipped?|open-sourced?|introduced?)\b"
        r"|\bwill\b[^?]{0,60}\b(?:ship|release|launch|announce)\w*\b[^?]{0,30}\b(?:in|at)\b[^?]{0,20}\b20\d\d\b"
        r"|\bhow long ago\b|\bsince when\b|^\W*is [\w .-]{1,30} out yet\b"
        r"|\bwhen(?:'s| is| will)\b[^?]{0,40}\b(?:due|coming out|arrive|be available)\b"
    ),
    "person": re.compile(
        r"^\W*who (?:(?:\w+ly|first|actually|really) )?(?:is|was|were|started|founded|invented|created|wrote|"
        r"leads|led|runs|designed|developed|built|coined|came up with)\b"
        r"|\bwhich (?:researcher|person|engineer|scientist|professor)\b|\b(?:ceo|cto|founders?|inventor)\b"
        r"|^\W*who(?:'s| is) behind\b|\bwhose idea\b"
    ),
    "company": re.compile(
        r"\bwhich (?:company|companies|vendor|firm|foundry|startup)\b"
        r"|\bwho (?:acquired|bought|owns|makes|manufactures|fabricates)\b|\b(?:acquired|acquisition of)\b"
        r"|\bwhat (?:company|companies|vendor|firm|startup)\b"
        r"|\b(?:was|got|been) (?:\w+ )?bought\b|\bstill independent\b"
    ),
    # "how many GPUs does Meta have" asks a fact about someone; "how many slices do I need" and "how many
    # ids per second can one node push" are technical; "re-estimating how many tokens each reply needs"
    # describes a method: a count is asked when a sentence starts with it
    "count": re.compile(
        r"(?:^|[.?!:;]\s+)\W*(?:(?:so|and|ok|roughly|approximately|about|exactly)\s+)*how many\b"
        r"(?![^?]{0,60}\b(?:fewer|more|less|times|do i|do we|should|make up|are needed|need|watt|joules?|kwh|"
        r"hours|minutes|seconds|per (?:second|sec|minute|token|request|step|iteration|gpu|node|query))\b)"
        r"|^\W*what(?:'s| is) the (?:total )?number of\b"
    ),
    "spec": re.compile(
        # "how much HBM does an H200 have?"; not a gain a paper reports ("how much more bandwidth ... did it claim?")
        r"\bhow much (?!(?:more|less|extra|higher|lower|better)\b)(?:\w+ )?(?:hbm\w*|vram|sram|memory|on-chip|bandwidth"
        r"|power)\b(?![^?]{0,60}\b(?:save|saved|saves|need|use|cut|reduce)\b)|\b(?:score|accuracy) did\b"
        r"|\b(?:tdp|tflops|petaflops|peak (?:bf16|fp16|fp8|fp32|int8)|memory bandwidth of|clock speed)\b"
        r"|\b(?:nvlink|hbm|memory|network) bandwidth per\b|\bwhat (?:\w+ )?bandwidth does (?:a|an|one|the)\b"
        r"|\bhow fast is (?:nvlink|pcie|infiniband|hbm\w*|ethernet|cxl|ucie)\b"
        # a spec of a product named by its model number: "the FP8 throughput of an MI325X", "a TPU v5p"
        r"|\bwhat(?:'s| is) the (?:\w+ )?(?:throughput|bandwidth|tdp|vram|memory|clock|flops) of "
        r"(?:an? |one |the |each )?(?:[a-z]{1,5}\d{2,4}[a-z]{0,2}|tpu v\d\w*)\b"
    ),
    "howto": re.compile(
        r"\bhow (?:do|can|should) (?:i|we)\b[^?]{0,40}\b(?:install|set up|setup|configure|compile|ssh)\b"
        r"|\b(?:exact|the) command\b|\bcommand[- ]line flag\b|\b(?:which|what|set)\b[^?]{0,30}\benv(?:ironment)? var"
        r"|\b(?:what|which|exact)\b[^?]{0,30}\bcommands\b|\bcommands? (?:do|should|would|can) (?:i|we)\b"
        r"|\b[\w-]+\.(?:conf|ya?ml|toml|ini|cfg)\b|\bwhich (?:lines|settings|flags|options)\b[^?]{0,40}\b(?:i|we)\b"
        # "step by step" asks for instructions when it opens or closes the request, not inside a description
        # ("varies the GPUs per request, step by step, according to its deadline")
        r"|^\W*step[- ]by[- ]step\b|\bstep[- ]by[- ]step\W*$|\bstep[- ]by[- ]step (?:guide|instructions|tutorial)\b"
        r"|\bpip install\b|^\W*(?:install|set up|configure)\b"
        r"|\b(?:what|which) (?:flags?|arguments|args|env vars|command-line options)\b"
        # a command-line tool in a request for its use: "how do I get nvidia-smi to show ...", "a docker run line"
        rf"|{CLI_TOOLS}(?=[^?]*\b(?:command|flags?|line|syntax)\b)"
        rf"|\bhow (?:do|can|should) (?:i|we)\b[^?]{{0,30}}{CLI_TOOLS}"
        r"|\bsteps to (?:install|set up|configure|upgrade|uninstall)\b"
        r"|\bhow (?:do|can|should) (?:i|we)\b[^?]{0,40}\b(?:turn (?:on|off)|uninstall|upgrade|downgrade)\b"
        r"|\bhow (?:do|can|should) (?:i|we)\b[^?]{0,80}\b(?:on|in) "
        r"(?:ubuntu|debian|centos|rhel|fedora|windows|macos|wsl)\b"
    ),
    "opinion": re.compile(
        r"\bin your opinion\b|\bwhich\b[^?]{0,60}\bis (?:the )?best\b|\bbetter buy\b|\bcan you recommend\b"
        r"|\bwhich is (?:the )?better (?:cloud|provider|vendor|host|platform|service|card|gpu|deal)\b"
        r"|\bwhich (?:\w+ )?would you (?:pick|choose|go with|recommend|buy)\b|\bwould you (?:pick|choose|go with)\b"
        r"|\bshould (?:our|my|we|i) (?:team )?(?:standardi[sz]e|go with|buy|pick)\b"
        # the assistant's own view or forecast: "what would you do?", "what's your take?", "do you think X will ..."
        r"|\bwhat would you (?:do|pick|choose|use|recommend)\b|\bwhat(?:'s| is) your (?:take|view|opinion|advice|gut)\b"
        r"|\bwhat do you think (?:of|about)\b"
        r"|\b(?:do|would) you (?:think|believe|reckon|expect)\b[^?]{0,80}\b(?:will|going to)\b"
        r"|\bdo you prefer\b|\bin your view\b|\bwould you recommend\b|\bworth (?:learning|buying|the money)\b"
        r"|\bwhat(?:'s| is) the best (?:open[- ]source |open[- ]weights? )?"
        r"(?:llm|model|gpu|card|cloud|provider|framework|library|tool|stack)s? (?:to|for)\b"
    ),
}
# a price as a figure of speech, which asks for no price: "is there a price in output quality?", "the price
# we pay in accuracy", "at the price of stability"
FIGURATIVE_PRICE = re.compile(
    r"\b(?:pay|paid|pays|paying) (?:a|the|any|some|that) (?:\w+ )?price\b"
    r"|\bprice (?:in (?!(?:dollars|euros?|usd|eur|gbp|pounds|yen|yuan|rupees|cash|total)\b)|to pay|we pay|you pay|paid)"
    r"|\bat the (?:\w+ )?price of\b"
)
# What an entry sentence must hold to answer each kind (besides the question's subject).
VALUE_EVIDENCE: dict[str, re.Pattern[str]] = {
    "price": re.compile(r"\$\s?\d|\b\d[\d,.]*\s?(?:usd|dollars?)\b|\bper hour\b|\bprice[sd]? (?:of|at)\b", re.I),
    "date": re.compile(
        r"\b(?:19|20)\d\d\b.{0,60}\b(?:announce|release|launch|introduc|open-sourc|ship)|"
        r"\b(?:announce|release|launch|introduc|open-sourc|ship)\w*\b.{0,60}\b(?:19|20)\d\d\b",
        re.I,
    ),
    "person": re.compile(r"\b(?:founded|founder|invented|inventor|ceo|created by|led by|architect)\b", re.I),
    "company": re.compile(r"\b(?:acquired|acquisition|owned by|subsidiary|designed by|manufactured by|fab)\b", re.I),
    "count": re.compile(
        r"\b\d[\d,.]*\s?(?:k|m|thousand|million)?\b|\b(?:two|three|four|five|six|seven|eight|nine|ten|twelve|"
        r"dozens?|hundreds?|thousands?)\b",
        re.I,
    ),
    "spec": re.compile(r"\b\d[\d,.]*\s?(?:gb|tb|mb|w|watts|tflops|pflops|gb/s|tb/s|ghz|cores)\b", re.I),
    # a shell prompt, an install, or a command's own syntax: a --flag or a key=value argument
    "howto": re.compile(r"(?:^\$ \w|\bpip install \S|\bexport [A-Z_]{3,}=|\s--[a-z][\w-]+|\b[a-z_][\w.-]*=[\w./:@-]+)"),
    "opinion": re.compile(r"(?!)"),  # the knowledge states findings, never our opinion
}
# A name: a word with a digit and a letter (H200, v5p, p4d.24xlarge), or a capitalised word that
# does not start the question (nor is a function word opening a later sentence), or CamelCase
# (CoreWeave). Approximate words are not names.
# Below this many entries a knowledge base lacks ordinary words ("stands", "right"), so a word no
# entry has says nothing about the question being off-topic: the seed corpus (60 entries) would
# refuse a third of its answerable questions; mlsys (2,107) refuses none of the calibration half.
VOCABULARY_ENTRIES = 1000


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


@dataclass(frozen=True)
class Thresholds:
    """A clear miss: retrieval confidence below `clear_miss`, or at least `unknown_words` of the
    question's words in no entry at all (sourdough, Wimbledon, salaries in Berlin) with confidence
    below `unknown_words_confidence`."""

    clear_miss: float = 0.20
    unknown_words: float = 0.35
    # ... and only when retrieval is weak too: slang ("junk creeps in and muddies it") is unknown
    # words in a question the knowledge answers (off-topic calibration questions: confidence <= 0.25)
    unknown_words_confidence: float = 0.30


@dataclass(frozen=True)
class Decision:
    refuse: bool
    reason: str = ""  # one sentence for the user, empty when answering
    evidence: Evidence = field(default_factory=lambda: Evidence(1.0))


def asked_kind(question: str) -> str | None:
    """The kind of value the question asks for (`price`, `date`, ...), or None for the rest.

    A question that asks what a concept is called is about the concept, whatever it describes.
    The learned reader (`value_reader.py`) decides when it is sure; otherwise the patterns do.
    """
    if ASKS_FOR_A_NAME.search(question.lower()):
        return None
    kind, probability = value_reader.read(asking_part(question))
    if kind != "none" and probability >= value_reader.SURE:
        return kind
    if kind == "none" and probability >= value_reader.SURELY_NONE:
        return None  # "a noisy pricing task", "the invoice went from $2k to $11k": mentioned, not asked
    return pattern_kind(question)


def pattern_kind(question: str) -> str | None:
    """The first kind whose pattern the lower-cased question matches."""
    lowered = FIGURATIVE_PRICE.sub(" ", question.lower())
    for kind, pattern in VALUE_KINDS.items():
        if pattern.search(lowered):
            return kind
    return None


def unknown_names(question: str, vocabulary: frozenset[str]) -> tuple[str, ...]:
    """Names in the question that no entry of the knowledge contains (plurals forgiven: H100s; a size
    spelt out, "352-billion-parameter", is known as the "352B" an abstract writes)."""
    out = []
    for name in names_in(question):
        word = name.lower()
        if word in vocabulary or (word.endswith("s") and word[:-1] in vocabulary):
            continue
        if any(form in vocabulary for form in name_forms(word)[1:] if " " not in form):
            continue
        out.append(name)
    return tuple(out)


# a size the asker spells out ("352-billion-parameter", "70-billion") that abstracts write as 352B or 70B
SPELT_SIZE = re.compile(r"^(\d[\d.,]*)[- ]?(thousand|million|billion|trillion)(?:-[a-z]+)*$")
SIZE_LETTER = {"thousand": "k", "million": "m", "billion": "b", "trillion": "t"}


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
    """Does the lower-cased text hold the name in one of its forms (`name_forms`)?"""
    return any(form in text for form in name_forms(name))


def subject_words(question: str) -> set[str]:
    """The question's content words minus the words that only say what kind of value is asked."""
    return content_words(question) - FRAME_WORDS


FRAME_WORDS = content_words(
    "price cost much hourly rate when year release date announce who founder company vendor many "
    "number spec peak memory bandwidth install command step opinion best better recommend first"
)


def kind_supported(kind: str, question: str, entries: Iterable[Entry]) -> bool:
    """Does some sentence of these entries state that kind of value about the question's subject?

    The sentence must hold the value (a dollar figure, a year, a number with a unit, ...) and
    every name the question uses (a price of another GPU is not the price asked for); without
    names, two of the question's subject words; for a count, the thing counted too. Names the asker
    uses only to set the scene, before the sentence that asks, need only be in the entry ("I read
    about a forecasting model built into Google's warehouse, usable from SQL. How many series can it
    handle?"); names in the asking sentence are what the value is about ("how many GPUs are in
    ByteDance's cluster?"), so they must be in the value's sentence.
    """
    evidence = VALUE_EVIDENCE[kind]
    subject = subject_words(question)
    names = name_keys(names_in(question))
    asking = asking_part(question).lower()
    asked = {name for name in names if name in asking}
    counted = COUNTED.search(question.lower())
    for entry in entries:
        whole = f"{entry.title}. {entry.text}"
        if not all(mentions(whole.lower(), name) for name in names - asked):
            continue
        for sentence in split_sentences(whole):
            if not evidence.search(sentence):
                continue
            lowered = sentence.lower()
            if not all(mentions(lowered, name) for name in asked):
                continue  # a value about another product is not the one asked for
            # a section of a user's document is about its heading: the subject may be in the sentence before
            about = content_words(whole) if entry.kind == "document" else content_words(sentence)
            if not names and len(subject & about) < 2:
                continue
            if kind == "count" and counted and not counts(sentence, counted.group(1), question):
                continue
            return True
    return False


# a value the question itself states, to be confirmed: "was it $2,900?", "is it --kv-page-size?", "Ada Okonkwo's?"
STATED_VALUES: dict[str, re.Pattern[str]] = {
    "price": re.compile(r"[$€£]\s?\d[\d,.]*\s?[kmb]?\b|\b\d[\d,.]*\s?(?:usd|eur|gbp|dollars|euros)\b", re.I),
    "howto": CONFIGURATION_KEY,
    "person": re.compile(r"(?<=[a-z,] )[A-Z][a-z]+(?:[ -][A-Z][a-z]+)+"),
    "date": re.compile(rf"\b(?:{MONTH})\s+(?:19|20)\d\d\b", re.I),  # a year alone is in many abstracts
}


def states_value(kind: str, question: str, entries: Iterable[Entry]) -> bool:
    """Does the question state a value of the kind asked for that one of these entries states too? A
    question that names the figure, the flag, the person or the date and asks to confirm it is grounded
    by an entry that says it, whatever words that entry uses around it."""
    pattern = STATED_VALUES.get(kind)
    stated = [m.group().lower() for m in pattern.finditer(asking_part(question))] if pattern else []
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
MARKET_WORDS = re.compile(
    r"\b(sold|sell|sells|selling|shipped|ship|ships|purchased|bought|downloads?|downloaded|"
    r"users|customers|employees|subscribers|installs?|installed)\b"
)


def counts(sentence: str, counted: str, question: str) -> bool:
    """Does the sentence count the thing asked about: a number just before the counted noun ("43,520
    GPUs", "25 quantized open-source LLMs"), and the question's market word (sold, shipped) if it has one?"""
    said = words(sentence)
    tokens = [stem(w) for w in said]
    market = MARKET_WORDS.search(question.lower())
    if market and stem(market.group(1)) not in tokens:
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
# contractions typed without the apostrophe and chat filler: no entry has them, and they say nothing about
# whether the knowledge answers ("why bother tho, whats wrong with pasting the readings in?")
CHAT_SPELLING = re.compile(
    r"\b(?:whats|thats|theres|whos|hows|wheres|dont|doesnt|didnt|isnt|arent|wasnt|werent|cant|wont|couldnt"
    r"|wouldnt|shouldnt|havent|hasnt|im|ive|youre|theyre|weve|tho|lol|gonna|wanna|kinda|sorta|idk|btw|tbh|imo"
    r"|pls|plz|thx)\b",
    re.I,
)
NUMBER_WORDS = frozenset(
    {"two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "twelve", "dozen", "dozens"}
    | {"hundred", "hundreds", "thousand", "thousands", "million", "millions", "billion"}
)


def gather(
    question: str,
    confidence: float,
    best: list[Entry],
    vocabulary: frozenset[str],
    document_frequency: Mapping[str, int],
    entries: int,
    knows: Callable[[str], bool] | None = None,
) -> Evidence:
    kind = asked_kind(question)
    asked = content_words(CHAT_SPELLING.sub("", question))  # "whats", "tho": typed fast, not unknown topics
    missing, besides = grounding(question, knows or (lambda name: name.lower() in vocabulary))
    unknown = 0.0
    if asked and entries >= VOCABULARY_ENTRIES:  # a small corpus lacks ordinary words; absence says little
        unknown = sum(1 for w in asked if not known_word(w, document_frequency)) / len(asked)
    evidence = Evidence(
        confidence=confidence,
        unknown_share=unknown,
        kind=kind,
        kind_supported=kind is None or kind_supported(kind, question, best) or states_value(kind, question, best),
        unknown_names=unknown_names(question, vocabulary),
        ungrounded=missing,
        asked_besides=besides,
    )
    return replace(evidence, refuse_probability=refusal_reader.refuse_probability(asking_part(question), evidence))


# "nothing else was asked": on the five calibration sets the 3 answerable questions whose asking sentences
# name something no entry mentions have 10 or more other content words (an aside: "are we slower than teams
# using the JVM languages?"), and 39 of the 43 such unanswerable ones 8 or fewer ("who founded Groq?")
ASKED_BESIDES = 8


def grounding(question: str, knows: Callable[[str], bool]) -> tuple[tuple[str, ...], int]:
    """The things the asking sentences name that no entry mentions (`knows`), and how many content words
    those sentences have besides the things named. An acronym the question spells out ("a GLM, the
    generalized linear model") is explained, not unknown."""
    asking = asking_part(question)
    named = named_things(asking)
    missing = tuple(n for n in named if not knows(n) and not spelled_out(n, question))
    rest = asking
    for name in named:
        rest = rest.replace(name, " ")
    return missing, len(content_words(rest))


def spelled_out(name: str, question: str) -> bool:
    """Is an acronym's expansion in the question: consecutive words whose initials spell it?"""
    if not (name.isupper() and name.isalpha() and 2 <= len(name) <= 6):
        return False
    initials = "".join(w[0] for w in words(question) if w[0].isalpha())
    return name.lower() in initials


def known_word(word: str, document_frequency: Mapping[str, int]) -> bool:
    """Does some entry have the (stemmed) word? A compound the asker hyphenates ("S-shaped",
    "over-provisioned") is known when each of its parts of two letters or more is."""
    if document_frequency.get(word):
        return True
    parts = [p for p in word.split("-") if len(p) > 1]
    return "-" in word and bool(parts) and all(document_frequency.get(stem(p)) for p in parts)


def decide(evidence: Evidence, thresholds: Thresholds, *, model_judges: bool) -> Decision:
    """Refuse or answer. `model_judges`: an LLM will apply the prompt's refusal rule itself.

    For the extractive model the learned reader (`refusal_reader.py`) has the last word, except on a
    clear miss: it overrules a rule's refusal it finds unlikely (a ticket id or a salutation is a name
    no entry mentions, and says nothing about what is asked), and refuses when it is sure where the
    rules saw nothing, unless an entry states the kind of value asked for (`stated`). An LLM's gate stays
    the rules' alone: the model refuses by the prompt itself."""
    decision = decide_by_rules(evidence, thresholds, model_judges=model_judges)
    p = evidence.refuse_probability
    if model_judges or p is None or decision.reason in CLEAR_MISSES:
        return decision
    if decision.refuse and p < refusal_reader.UNLIKELY:
        return Decision(False, "", evidence)
    # ASSISTANT_REFUSAL_THRESHOLD=0 asks for an answer whenever the rules allow one: the reader adds none
    adds = thresholds.clear_miss > 0
    if adds and not decision.refuse and p >= refusal_reader.SURE and not stated(evidence):
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


def decide_by_rules(evidence: Evidence, thresholds: Thresholds, *, model_judges: bool) -> Decision:
    """The rules alone: grounding, a clear miss, unknown words, a value kind no entry states."""
    e = evidence
    if e.ungrounded and e.asked_besides <= ASKED_BESIDES:  # first: the most telling reason
        # the names go to the answer's notes, not into its text: a question's own words are never echoed
        return Decision(True, "no entry mentions what it names", e)
    if e.confidence < thresholds.clear_miss:
        return Decision(True, CLEAR_MISS, e)
    if e.unknown_share >= thresholds.unknown_words and e.confidence < thresholds.unknown_words_confidence:
        return Decision(True, UNKNOWN_WORDS, e)
    if e.kind is not None and not e.kind_supported and (e.unknown_names or not model_judges):
        about = f" about {', '.join(e.unknown_names)}" if e.unknown_names else ""
        return Decision(True, f"no entry states the {KIND_NAMES[e.kind]} asked for{about}", e)
    return Decision(False, "", e)


CLEAR_MISS = "none of its entries is close to the question"
UNKNOWN_WORDS = "most of the question's words appear in none of its entries"
CLEAR_MISSES = (CLEAR_MISS, UNKNOWN_WORDS)  # retrieval found nothing near: no reader overrules that

KIND_NAMES = {
    "price": "price",
    "date": "date",
    "person": "person",
    "company": "company",
    "count": "count",
    "spec": "specification",
    "howto": "commands or install steps",
    "opinion": "opinion",
}
