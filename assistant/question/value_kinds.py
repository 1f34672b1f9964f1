"""What kind of value a question asks for: a price, a date, a person, a company, a count, a product
spec, install steps or an opinion.

Concept pages and paper abstracts hardly ever state such values, so refusal (`answer/refusal.py`)
asks an entry to state the kind asked for. Two readers decide it together. The patterns below read
the phrasings they were written for and miss the next one: on a question set written afresh in four
voices (`realistic-dev3.jsonl`), they found the kind of 21 of its 32 such questions ("what does a
BlueField-3 go for", "who came up with Raft", "the exact helm values") and read a price into four
answerable ones ("a noisy pricing task", "the invoice went from $2k to $11k").

The learned reader is multinomial logistic regression over the asking sentences (`linear_reader.py`),
fitted by `scripts/fit_value_reader.py` on 520 questions written to teach it (`knowledge/questions/
value-kinds.jsonl`: twelve per kind in many voices, and hard negatives that mention money, dates or
memory in passing) and on the calibration questions; the fresh set and the test half stayed out.
`asked_kind` trusts it when it is sure (`KIND_TRUSTED_AT`, `NONE_TRUSTED_AT`) and keeps the patterns'
reading otherwise, so a phrasing the patterns know still counts when the reader hesitates.
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache
from itertools import pairwise
from pathlib import Path

from assistant.knowledge.stated_values import parsed
from assistant.question.encoders import SHIPPED, SentenceEncoders
from assistant.question.intents import ASKS_FOR_A_NAME, asking_part
from assistant.question.linear_reader import load_weights, read_one
from assistant.text import words

# Command-line tools: a request for their use asks for instructions, which the knowledge does not hold
CLI_TOOLS = r"\b(?:nvidia-smi|kubectl|docker|torchrun|sbatch|srun|helm|conda|apt-get|systemctl|nvcc)\b"
# What a question asks for, from its wording. Patterns are written against the lower-cased question.
KIND_PATTERNS = {
    "price": (
        r"\$\s?\d|\b(price|prices|pricing|priced|hourly|per hour|on-demand rate|dollars?|usd|salary|salaries|wages?)\b"
        r"|\b(?:how much|what) (?:does|do|would|will|is|are)\b[^?]{0,60}\bcost\b(?!\s+(?:in|of)\b)"
        r"|\bcost(?:s)? (?:to buy|per (?:card|gpu|chip|month))\b"
        r"|\bgoing rate\b|\bhow pricey\b|\bbucks\b|\bset (?:us|me|you|them) back\b|\b(?:ballpark|rough) cost\b"
        r"|\bcharges? (?:per|for)\b|\bwhat (?:does|do) [\w .-]{1,30} charge\b"
    ),
    "date": (
        r"^\W*when (?:did|was|were|will|is|are)\b|\bwhat year\b|\brelease date\b|\bwhen\b[^?]{0,80}\b"
        r"(?:announced?|released?|launched?|shipped?|open-sourced?|introduced?)\b"
        r"|\bwill\b[^?]{0,60}\b(?:ship|release|launch|announce)\w*\b[^?]{0,30}\b(?:in|at)\b[^?]{0,20}\b20\d\d\b"
        r"|\bhow long ago\b|\bsince when\b|^\W*is [\w .-]{1,30} out yet\b"
        r"|\bwhen(?:'s| is| will)\b[^?]{0,40}\b(?:due|coming out|arrive|be available)\b"
    ),
    "person": (
        r"^\W*who (?:(?:\w+ly|first|actually|really) )?(?:is|was|were|started|founded|invented|created|wrote|"
        r"leads|led|runs|designed|developed|built|coined|came up with)\b"
        r"|\bwhich (?:researcher|person|engineer|scientist|professor)\b|\b(?:ceo|cto|founders?|inventor)\b"
        r"|^\W*who(?:'s| is) behind\b|\bwhose idea\b"
    ),
    "company": (
        r"\bwhich (?:company|companies|vendor|firm|foundry|startup)\b"
        r"|\bwho (?:acquired|bought|owns|makes|manufactures|fabricates)\b|\b(?:acquired|acquisition of)\b"
        r"|\bwhat (?:company|companies|vendor|firm|startup)\b"
        r"|\b(?:was|got|been) (?:\w+ )?bought\b|\bstill independent\b"
    ),
    # "how many GPUs does Meta have" asks a fact about someone; "how many slices do I need" and "how many
    # ids per second can one node push" are technical; "re-estimating how many tokens each reply needs"
    # describes a method: a count is asked when a sentence starts with it
    "count": (
        r"(?:^|[.?!:;]\s+)\W*(?:(?:so|and|ok|roughly|approximately|about|exactly)\s+)*how many\b"
        r"(?![^?]{0,60}\b(?:fewer|more|less|times|do i|do we|should|make up|are needed|need|watt|joules?|kwh|"
        r"hours|minutes|seconds|per (?:second|sec|minute|token|request|step|iteration|gpu|node|query))\b)"
        r"|^\W*what(?:'s| is) the (?:total )?number of\b"
    ),
    "spec": (
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
    "howto": (
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
    "opinion": (
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
VALUE_KINDS = {kind: re.compile(pattern) for kind, pattern in KIND_PATTERNS.items()}
# a price as a figure of speech, which asks for no price: "is there a price in output quality?", "the price
# we pay in accuracy", "at the price of stability"
FIGURATIVE_PRICE = re.compile(
    r"\b(?:pay|paid|pays|paying) (?:a|the|any|some|that) (?:\w+ )?price\b"
    r"|\bprice (?:in (?!(?:dollars|euros?|usd|eur|gbp|pounds|yen|yuan|rupees|cash|total)\b)|to pay|we pay|you pay|paid)"
    r"|\bat the (?:\w+ )?price of\b"
)

WEIGHTS = Path(__file__).resolve().parent / "value_reader.npz"
KINDS = ("none", "price", "date", "person", "company", "count", "spec", "howto", "opinion")
KIND_TRUSTED_AT = 0.8  # a kind the reader gives this probability overrides the patterns (calibration, cross-validated)
NONE_TRUSTED_AT = 0.9  # ... and "none" at this probability overrules a kind the patterns read
FIGURE_KINDS = frozenset({"count", "default", "spec"})  # the kinds a number answers (`extractive.states_a_figure`)
# how a refusal names each kind to the user: "no entry states the specification asked for"
KIND_NAMES = {
    "price": "price",
    "date": "date",
    "person": "person",
    "company": "company",
    "count": "count",
    "spec": "specification",
    "howto": "commands or install steps",
    "opinion": "opinion",
    "default": "default value",
    "email": "email address",
}


def asked_kind(question: str, asking: str | None = None, encoders: SentenceEncoders = SHIPPED) -> str | None:
    """The kind of value the question asks for (`price`, `date`, ...), or None for the rest.

    A question that asks what a concept is called is about the concept, whatever it describes.
    The learned reader decides on the asking sentences (`asking`, by default read off the question)
    when it is sure; otherwise the patterns do.
    """
    if ASKS_FOR_A_NAME.search(question.lower()):
        return None
    kind, probability = read(asking_part(question) if asking is None else asking, encoders)
    if kind not in ("none", "") and probability >= KIND_TRUSTED_AT:
        return kind
    if kind == "none" and probability >= NONE_TRUSTED_AT:
        return None  # "a noisy pricing task", "the invoice went from $2k to $11k": mentioned, not asked
    return pattern_kind(question)


def documents_kind(asking: str) -> str | None:
    """On a team's documents, the value the asking sentences ask for by their question words alone, when
    the readers above see none: a figure ("how many ...", "how much RAM ...", "what percentage ...") or a
    default ("what's the default ..."). The readers were fitted on questions about the shipped pack, where
    "how many watts" or "how much memory" asks what an abstract reports; a team's pages state such
    figures, and a section that states none does not answer them (`answer/section_values.py`). A default
    is asked when the question opens with it ("what's the default ...", "which default ..."): "which stores
    can do that, and is the default one ok?" asks whether it is ok. "What's the maximum number of ...?" asks
    a figure as "how many" does."""
    if asks_an_address(asking):
        return "email"
    tokens = words(asking.lower())
    how_many = any(a == "how" and b in ("many", "much") for a, b in pairwise(tokens))
    if (how_many and figure_asked(asking)) or share_asked(tokens):
        return "count"
    if tokens[:1] in (["what"], ["which"], ["whats"]) and "default" in tokens[1:5]:  # not "is the default one ok?"
        return "default"
    return "count" if number_asked(tokens) else None


def number_asked(tokens: list[str]) -> bool:
    """Is a number asked by its name: "what's the maximum number of steps a node can have?", "what is the
    largest number of queues it was tested with?" (a "what" or "which" opening, "number of" within its next
    six words), as "how many" asks it?"""
    if tokens[:1] not in (["what"], ["which"], ["whats"]):
        return False
    return any(a == "number" and b == "of" for a, b in pairwise(tokens[1:7]))


def share_asked(tokens: list[str]) -> bool:
    """Is a percentage asked ("what percentage of jobs ...?", "which percent ..."), not asked about ("is it a
    percentage in both?", a yes or no)? A question word within the two words before it asks for one."""
    return any(
        token in ("percentage", "percent") and QUESTION_WORDS & set(tokens[max(0, n - 2) : n])
        for n, token in enumerate(tokens)
    )


MAIL = frozenset({"email", "e-mail"})
# what follows an email that is asked for itself: "which email, to report ...?", "what email should I use?";
# not "which email alerts ...?"
MAIL_ASKED = frozenset({"address", "addresses", "should", "do", "does", "is", "can", "to", "for", "i", "we", "or"})


def asks_an_address(asking: str) -> bool:
    """Do the asking sentences ask which email address: "what email address should I use ...?", "who do I
    contact, or which email, ...?" (a "what" or "which" with an email among its next three words, the email
    asked for itself; or an email address asked by any question word but "how": "how do I set up email
    alerts?" asks how, "which email alerts does it send?" asks about alerts). The address is what is asked,
    whatever else the readers see: "what email address should I use" reads as a how-to to them."""
    tokens = words(asking.lower())
    for n, token in enumerate(tokens):
        if token not in ("what", "which", "whats"):
            continue
        for at in range(n + 1, min(n + 4, len(tokens))):
            if tokens[at] in MAIL and (at + 1 == len(tokens) or tokens[at + 1] in MAIL_ASKED):
                return True
    first = next((token for token in tokens if token in QUESTION_WORDS), None)
    return first not in (None, "how") and any(a in MAIL and b == "address" for a, b in pairwise(tokens))


@lru_cache(maxsize=1024)
def figure_asked(asking: str) -> bool:
    """Does some "how many" or "how much" of the asking sentences ask for the figure, rather than stand in a
    clause a verb or its object takes ("Which field caps how much they hand out?", "can the tool tell us
    roughly how much memory it needs?", "when Kueue works out how much room is left, which nodes ...?")?
    Read by spaCy's tagger: the word before "how", adverbs skipped, is no verb, particle or personal pronoun
    ("at most how many", "into how many", "by default, every how many steps")."""
    tokens = parsed(asking)
    for token in tokens[:-1]:
        if token.lower_ != "how" or tokens[token.i + 1].lower_ not in ("many", "much"):
            continue
        before = token.i - 1
        while before >= 0 and tokens[before].tag_ in ADVERBS:
            before -= 1
        if before < 0 or not embeds(tokens[before].tag_):
            return True
    return False


ADVERBS = frozenset({"RB", "RBR", "RBS"})


def embeds(tag: str) -> bool:
    """Does a word of this tag take a clause: a verb, a verb's particle ("works out"), a pronoun as its object
    ("tell us")?"""
    return tag.startswith("VB") or tag in ("RP", "PRP")


QUESTION_WORDS = frozenset({"how", "what", "which", "who", "whom", "whose", "when", "where", "why"})
AUXILIARIES = frozenset({"do", "does", "did", "can", "could", "should", "would", "will", "is", "are", "to"})


def asks_how(asking: str) -> bool:
    """Do the asking sentences ask how something works or is done: is their first question word "how" before
    a verb ("so how does YuniKorn know which person a pod belongs to?")? Such a question names a person, a
    company or a date only in what it asks about; "how many", "how long" ask for a figure."""
    tokens = words(asking.lower())
    first = next((n for n, token in enumerate(tokens) if token in QUESTION_WORDS), None)
    if first is None or tokens[first] != "how":
        return False
    return first + 1 < len(tokens) and tokens[first + 1] in AUXILIARIES


VERSION_WORDS = frozenset({"release", "releases", "version", "versions"})
DATE_NOUNS = frozenset({"date", "dates", "day", "year", "month"})


def asks_which_version(asking: str) -> bool:
    """Do the asking sentences ask which release or version ("Which YuniKorn release is the first one that
    supports Kubernetes 1.33?", "what version added it?"): is their first question word "which" or "what"
    with a release or version among the next three words? Such a question asks for a version, not a date."""
    tokens = words(asking.lower())
    first = next((n for n, token in enumerate(tokens) if token in QUESTION_WORDS), None)
    if first is None or tokens[first] not in ("which", "what"):
        return False
    following = tokens[first + 1 : first + 5]
    return bool(VERSION_WORDS & set(following[:3])) and not DATE_NOUNS & set(following)  # not "release date"


def pattern_kind(question: str) -> str | None:
    """The first kind whose pattern the lower-cased question matches."""
    lowered = FIGURATIVE_PRICE.sub(" ", question.lower())
    for kind, pattern in VALUE_KINDS.items():
        if pattern.search(lowered):
            return kind
    return None


_lock = threading.Lock()


class ValueReader:
    """The fitted weights; `read` is pure, so one instance serves every thread."""

    def __init__(self, path: Path = WEIGHTS) -> None:
        self.vocabulary, self.weights, self.bias = load_weights(path)

    def read(self, text: str, encoders: SentenceEncoders = SHIPPED) -> dict[str, float] | None:
        """Each kind's probability for the asking sentences `text`; None when `encoders` are not the ones
        the weights were fitted on."""
        row = read_one((self.vocabulary, self.weights, self.bias), text, encoders)
        return None if row is None else dict(zip(KINDS, (float(p) for p in row), strict=True))


_loaded: ValueReader | None = None


def _reader() -> ValueReader:
    """The shipped reader, loaded once on first use (a 60 KB file; the encoder loads lazily too)."""
    global _loaded
    with _lock:
        if _loaded is None:
            _loaded = ValueReader()
        return _loaded


@lru_cache(maxsize=2048)
def read(text: str, encoders: SentenceEncoders = SHIPPED) -> tuple[str, float]:
    """The most likely kind for the asking sentences `text` and its probability (("", 0.0) when the
    reader cannot read the encoders' vectors)."""
    scores = _reader().read(text, encoders)
    if scores is None:
        return "", 0.0
    kind = max(scores, key=scores.__getitem__)
    return kind, scores[kind]
