"""Word lists for checking claim support: framing, light words, synonyms, negation, opposites.

General English and ML-writing vocabulary, not tied to any entry. A word list is easier to
audit than a learned model, and each list has one job in `assistant.verify.support`:

- FRAMING words only say how a sentence frames a fact ("this is called", "the paper
  proposes"); they never count for or against a claim.
- LIGHT words carry little of the claim's meaning ("typically", "helps", "approach"); a claim
  may add them freely.
- SYNONYMS let a paraphrase use another common word for the same thing (one group per word).
- RELATED words may stand in for one another in a claim, one pair at a time (a word may be in
  several groups, and relatedness is not passed on: "scale" is related to "grow" and to
  "size", "grow" is not related to "size"). Chosen from the words ML abstracts use most,
  with the plain words an answer tends to put in their place.
- PHRASES are rewritten before anything else ("takes advantage of" -> "leverages").
- NEGATIONS flip the polarity of the words that follow them.
- OPPOSITES are sides that exclude each other (fast/slow, increase/decrease, linear/quadratic,
  allowed/denied, required/optional); a claim that states one side where its quote states another
  contradicts it.
- UNITS join a number ("15 minutes" is 15 min, never 15 s); UNIT_WORDS are the time-unit words
  that only the quote itself can vouch for.
"""

from __future__ import annotations

from collections.abc import Callable


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


FRAMING = _words(
    """called call calls term terms name names named known stand stands refer refers referred mean means
    meaning synonym paper papers author authors study abstract article entry glossary according
    propose proposes proposed present presents presented introduce introduces introduced describe describes
    described show shows shown report reports reported demonstrate demonstrates demonstrated note notes
    noted say says said define defines defined definition another also essentially basically simply literally"""
)

LIGHT = _words(
    """make makes made making allow allows allowed allowing enable enables enabled enabling help helps helped
    helping let lets provide provides provided providing offer offers offered offering give gives given
    giving get gets got getting take takes took taking way ways approach approaches method methods technique
    techniques mechanism mechanisms scheme schemes strategy thing things kind kinds type types typical
    typically usual usually often generally general mostly mainly largely especially particularly much
    lot lots well even still already able various different certain specific particular overall key
    important main major real actually really just directly may might must like including include
    includes example examples instance instances case cases around roughly approximately up thus hence
    therefore because since due via through across within among per between either every whole one
    ones another others instead rather yet however though although whether again further furthermore
    moreover additionally together currently now recently today modern latest existing current
    significant significantly substantially greatly considerably notably important importantly crucial
    critical essential primary principal central core basic simple simply practical practically
    effectively efficiently clearly new novel so called based upon onto toward towards along versus
    kept keep keeps work works something find finds found besides raw sheer mere merely effect effects
    partly partially aim aims aimed target targets targeted whose whom whatever itself themselves unless
    until onto part parts portion achieve achieves achieved reach reaches reached attain attains
    obtain obtains under over inside outside along amid throughout beside out off try tries tried attempt
    attempts attempted seek seeks"""
)

SYNONYM_GROUPS = (
    "design designed built build building intend intended engineer engineered",
    "widely common commonly often frequent frequently popular broadly prevalent typically",
    "utilize utilizes leverage leverages harness harnesses employ employs exploit exploits",
    "fast faster fastest quick quicker quickly rapid rapidly speed speeds accelerate accelerates speedup speedups",
    "reduce reduces reduced reducing lower lowers lowered lowering cut cuts cutting decrease decreases "
    "decreased lessen diminish minimize minimizes minimise",
    "increase increases increased increasing raise raises boost boosts grow grows growing rise rises expand expands",
    "improve improves improved improvement improvements enhance enhances enhanced better",
    "large larger largest big bigger huge massive sizable sizeable extensive vast",
    "highly massively extremely heavily",
    "small smaller smallest little tiny",
    "workload workloads task tasks job jobs work",
    "compute computation computations computing calculation calculations calculate calculates math "
    "arithmetic computational computationally",
    "require requires required requirement requirements need needs needed demand demands necessitate "
    "mandatory compulsory obligatory",
    "predict predicts prediction predictions estimate estimates forecast",
    "problem problems issue issues challenge challenges",
    "expensive costly pricey pricy priciest cost costs",
    "cheap cheaper cheapest inexpensive affordable",
    "choose chooses choosing chosen choice select selects selected selecting selection pick picks picked",
    "combine combines combined merge merges unify unifies unified join joins couple couples coupled "
    "integrate integrates integrated",
    "split splits partition partitions partitioned divide divides divided shard shards sharding "
    "decompose decomposes decomposed",
    "goal goals aim aims objective objectives purpose",
    "fraction share proportion ratio percentage",
    "correct correctly right accurate accurately",
    "difficult hard harder hardest challenging tough",
    "easy easier easiest straightforward simpler",
    "address addresses addressed handle handles handled tackle tackles tackled solve solves solved deal "
    "overcome overcomes mitigate mitigates mitigated fight fights combat combats counter",
    "many numerous multiple multi several plenty",
    "whole entire full complete",
    "start starts started begin begins began",
    "end ends ended ending stop stops stopped finish finishes terminate terminates halt halts",
    "retain retains preserve preserves preserved maintain maintains hold holds",
    "remove removes removed removing drop drops dropped delete deletes eliminate eliminates eliminating "
    "discard discards",
    "launch launches spawn spawns",
    "achieve achieves achieved reach reaches reached attain attains obtain obtains elicit elicits deliver delivers",
    "cause causes caused lead leads led result results create creates created induce induces",
    "stay stays remain remains reside resides residing",
    "establish establishes established lay lays laid",
    "run runs running execute executes executed execution",
    "outperform outperforms beat beats surpass surpasses",
    "exceed exceeds exceeded exceeding beyond above",
    "comparable similar equivalent",
    "tool tools utility utilities",
    "additional extra",
    "match matches matching align aligns aligned",
    "measure measures measured quantify quantifies quantified",
    "data dataset datasets",
    "tweak tweaks adjust adjusts tune tunes modify modifies change changes alter alters",
    "track tracks tracking monitor monitors",
    "limit limits limited limitation limitations constrain constrained constraint constraints restrict "
    "restricted bound bounded cap caps capped",
    "concurrent concurrently parallel simultaneous simultaneously",
    # time units, with their "every ..." adverbs: "every day" is "daily", never "weekly" (see UNIT_WORDS)
    "second seconds",
    "minute minutes",
    "hour hours hourly",
    "day days daily",
    "night nights nightly",
    "week weeks weekly",
    "month months monthly",
    "quarter quarters quarterly",
    "year years yearly annual annually",
)
# words that name a unit of time: said by the quote or not at all (the embedding puts "minutes" next to
# "seconds" and "weekly" next to "daily", and a paraphrase never converts one into another)
# words that say when rather than who or what: never a participant of a predicate (`roles`)
TIME_WORDS = _words(
    """every each once twice per utc gmt monday tuesday wednesday thursday friday saturday sunday morning
    evening midnight noon"""
)
# words that widen a statement to everything: a claim says one only when its quote does ("rejected in
# production" does not say "rejected in every environment"); "every" before a time unit counts time
UNIVERSAL = _words("all any every always everywhere everyone everything anywhere anytime")
UNIT_WORDS = _words(
    """second seconds minute minutes hour hours hourly day days daily night nights nightly week weeks weekly
    month months monthly quarter quarters quarterly year years yearly annual annually weekday weekdays
    weekend weekends"""
)

# each group: words an answer may use for one another (not transitive across groups); the words
# are those of the corpus's most frequent content words that have common paraphrases, never two
# sides of an opposition (see OPPOSITE_GROUPS) and never names
RELATED_GROUPS = (
    "use uses used using utilize utilizes utilized utilizing leverage leverages leveraged leveraging harness "
    "harnesses harnessing exploit exploits exploiting employ employs employing apply applies applied applying "
    "adopt adopts adopted",
    "rely relies relying depend depends depending",
    "huge enormous immense vast massive gigantic",
    "combined aggregate aggregated total joint collective",
    "scale scales scaling grow grows growing",
    "standard dominant prevailing mainstream default",
    "hurt hurts harm harms compromise compromises degrade degrades damage damages worsen worsens",
    "move moves moving transfer transfers transferring migrate migrates ship ships send sends",
    "add adds adding introduce introduces incur incurs impose imposes",
    "strong superior excellent remarkable impressive outstanding",
    "run runs running deploy deploys deploying deployed serve serves serving host hosts hosting operate operates",
    "remain remains remained still continue continues persist persists",
    "system systems framework frameworks platform platforms solution solutions infrastructure",
    "pressure consumption usage footprint demand demands",
    "chip chips processor processors",
    "operation operations op ops computation computations",
    "various diverse varied assorted",
    "build builds built develop develops developed create creates created construct constructs constructed "
    "implement implements implemented",
    "difficulty difficulties obstacle obstacles hurdle hurdles roadblock roadblocks challenge challenges",
    "limited scarce finite insufficient",
    "break breaks split splits decompose decomposes",
    "node nodes machine machines computer computers server servers host hosts",
    "biggest main primary major chief principal",
    "iteration iterations step steps round rounds",
    "slash slashes trim trims shrink shrinks reduce reduces",
    "cope copes manage manages handle handles address addresses",
    "fall falls fell fallen drop drops dropped decline declines declined",
    "rise rises rose risen climb climbs climbed jump jumps jumped",
)
# multi-word phrases and the word an entry would use, rewritten in claims and entries alike
PHRASES = (
    (r"\btak(?:e|es|ing|en)\s+advantage\s+of\b", "leverages"),
    (r"\bmak(?:e|es|ing)\s+use\s+of\b", "uses"),
    (r"\bde[\s-]+facto\b", "standard"),
    (r"\bon\s+the\s+fly\b", "dynamically"),
    (r"\bthanks\s+to\b", "due to"),
    (r"\ba\s+lot\s+of\b|\blots\s+of\b", "much"),
    (r"\ba\s+number\s+of\b", "several"),
)

# nouns that, after "the", "this" or "our", refer to what the entry presents ("the framework")
REFERENTS = _words(
    """framework frameworks system systems method approach technique tool design scheme algorithm
    architecture solution platform"""
)
REFERRING = _words("the this its our their")

NEGATIONS = _words(
    "not no never none nothing neither nor cannot without rarely seldom hardly barely unable lack lacks "
    "lacking fail fails failed failing"
)
# phrases that look negative but add to a claim rather than deny it, or deny a need
NOT_NEGATING = (
    r"\bnot (?:only|just|merely|necessarily)\b",
    r"\bno matter\b",
    r"\bnone the less\b",
)
NO_NEED = r"\b(?:eliminat|remov|obviat|avoid)\w* the need\b"

# each group lists sides that exclude each other
OPPOSITE_GROUPS = (
    ("fast faster fastest quick quickly rapid rapidly", "slow slower slowest slowly sluggish"),
    ("high higher highest", "low lower lowest"),
    (
        "increase increases increased increasing raise raises grow grows growing rise rises rose risen climb "
        "climbs climbed",
        "decrease decreases decreased decreasing reduce reduces reduced reducing shrink shrinks shrinking "
        "lower lowers cut cuts fall falls fell fallen drop drops dropped",
    ),
    ("more", "less fewer"),
    ("most", "least"),
    ("large larger largest big bigger", "small smaller smallest little"),
    ("long longer longest", "short shorter shortest"),
    ("easy easier easiest straightforward", "hard harder hardest difficult challenging"),
    ("cheap cheaper cheapest inexpensive affordable", "expensive costly pricey priciest"),
    ("strong stronger strongest", "weak weaker weakest"),
    ("good better best", "bad worse worst"),
    (
        "improve improves improved improving",
        "worsen worsens worsened degrade degrades degraded hurt hurts harm harms compromise compromises",
    ),
    ("maximize maximizes maximise maximum max", "minimize minimizes minimise minimum min"),
    ("include includes included including", "exclude excludes excluded excluding"),
    ("open", "proprietary closed"),
    ("dense", "sparse"),
    ("static statically", "dynamic dynamically"),
    ("synchronous synchronously", "asynchronous asynchronously"),
    ("sequential sequentially serial serially", "parallel"),
    ("single sole", "multiple many several"),
    ("many", "few"),
    ("common commonly widely often frequently", "rare rarely uncommon seldom"),
    ("first", "last"),
    ("forward", "backward"),
    ("early earlier earliest", "late later latest"),
    ("before", "after"),
    ("above", "below"),
    ("positive", "negative"),
    ("stable", "unstable"),
    ("upload uploads uploaded", "download downloads downloaded"),
    ("homogeneous", "heterogeneous"),
    ("balanced", "unbalanced imbalanced"),
    ("overfitting overfit", "underfitting underfit"),
    ("closely tightly", "loosely"),
    ("resilient resilience robust robustness", "fragile brittle"),
    ("versatile flexible", "rigid inflexible"),
    ("centralized centralised", "decentralized decentralised"),
    (
        "linear linearly",
        "quadratic quadratically",
        "cubic cubically",
        "exponential exponentially",
        "logarithmic logarithmically",
    ),
    ("add adds added", "multiply multiplies multiplied", "subtract subtracts", "divide divides divided"),
    (
        "add adds added introduce introduces incur incurs impose imposes",
        "remove removes removed eliminate eliminates eliminated avoid avoids avoided",
    ),
    ("input inputs", "output outputs"),
    ("true", "false"),
    # what a rule, a check or a setting does: an answer that flips it says the opposite of the page
    (
        "allow allows allowed allowing permit permits permitted",
        "deny denies denied block blocks blocked forbid forbids forbidden prohibit prohibits prohibited "
        "disallow disallows disallowed reject rejects rejected refuse refuses refused",
    ),
    ("accept accepts accepted accepting", "reject rejects rejected rejecting refuse refuses refused"),
    ("enable enables enabled enabling", "disable disables disabled disabling"),
    ("required require requires mandatory compulsory obligatory", "optional"),
    ("automatic automatically auto", "manual manually"),
    ("inbound incoming ingress", "outbound outgoing egress"),
    ("internal private", "external public"),
    ("same identical", "different distinct"),
    ("primary", "secondary"),
    ("weekday weekdays", "weekend weekends"),
    ("online", "offline"),
    ("local locally", "global globally remote remotely"),
)
# un-/in-/non- words whose base is also a word: "unlabeled" opposes "labeled"
NEGATIVE_PREFIXES = ("un", "in", "im", "ir", "il", "non", "dis")

NUMBER_WORDS = {
    "zero": 0.0,
    "two": 2.0,
    "twice": 2.0,
    "three": 3.0,
    "thrice": 3.0,
    "four": 4.0,
    "five": 5.0,
    "six": 6.0,
    "seven": 7.0,
    "eight": 8.0,
    "nine": 9.0,
    "ten": 10.0,
    "eleven": 11.0,
    "twelve": 12.0,
    "twenty": 20.0,
    "hundred": 100.0,
    "thousand": 1000.0,
    "million": 1e6,
    "billion": 1e9,
}
UNITS = {
    "x": "x",
    "times": "x",
    "fold": "x",
    "%": "%",
    "percent": "%",
    "k": "k",
    "m": "m",
    "b": "b",
    "kb": "kb",
    "mb": "mb",
    "gb": "gb",
    "tb": "tb",
    "ms": "ms",
    "millisecond": "ms",
    "milliseconds": "ms",
    # time: "5 seconds" is not "5 minutes"
    "sec": "s",
    "secs": "s",
    "second": "s",
    "seconds": "s",
    "min": "min",
    "mins": "min",
    "minute": "min",
    "minutes": "min",
    "h": "h",
    "hr": "h",
    "hrs": "h",
    "hour": "h",
    "hours": "h",
    "day": "day",
    "days": "day",
    "week": "week",
    "weeks": "week",
    "month": "month",
    "months": "month",
    "quarter": "quarter",
    "quarters": "quarter",
    "year": "year",
    "years": "year",
    # rates (`normalise` writes "Gb/s" as "gbps"): a 400 Gb/s link is not a 400 Mb/s one
    "kbps": "kb/s",
    "mbps": "mb/s",
    "gbps": "gb/s",
    "tbps": "tb/s",
}
# acronyms common enough that an entry may spell them out without defining them
ACRONYMS = {
    "llm": "large language model",
    "gpu": "graphics processing unit",
    "cpu": "central processing unit",
    "tpu": "tensor processing unit",
    "ml": "machine learning",
    "dl": "deep learning",
    "rl": "reinforcement learning",
    "dnn": "deep neural network",
    "nn": "neural network",
    "cnn": "convolutional neural network",
    "rnn": "recurrent neural network",
    "gnn": "graph neural network",
    "sgd": "stochastic gradient descent",
    "hpc": "high performance computing",
    "fl": "federated learning",
    "moe": "mixture of experts",
}


def canonical_stems(key: Callable[[str], str]) -> dict[str, str]:
    """key of a word -> the key that stands for its synonym group."""
    out: dict[str, str] = {}
    for group in SYNONYM_GROUPS:
        members = [key(w) for w in group.split()]
        for member in members:
            out.setdefault(member, members[0])
    return out


def canonical_words(key: Callable[[str], str]) -> dict[str, str]:
    """A listed word (as written) -> the key of its own synonym group.

    Looked up before the stem: "massively" is listed with "highly", while its stem is also
    the stem of "massive", listed with "large".
    """
    out: dict[str, str] = {}
    for group in SYNONYM_GROUPS:
        words = group.split()
        for word in words:
            out.setdefault(word, key(words[0]))
    return out


def related_index(key: Callable[[str], str]) -> dict[str, frozenset[str]]:
    """key of a word -> the keys of the words related to it (see RELATED_GROUPS)."""
    out: dict[str, set[str]] = {}
    for group in RELATED_GROUPS:
        keys = {key(w) for w in group.split()}
        for member in keys:
            out.setdefault(member, set()).update(keys - {member})
    return {k: frozenset(v) for k, v in out.items()}


def opposite_index() -> tuple[dict[str, list[tuple[int, int]]], dict[tuple[int, int], frozenset[str]]]:
    """word (lower-cased, unstemmed) -> every (group, side) it is on; (group, side) -> its words."""
    by_word: dict[str, list[tuple[int, int]]] = {}
    by_side: dict[tuple[int, int], frozenset[str]] = {}
    for group_index, sides in enumerate(OPPOSITE_GROUPS):
        for side_index, side in enumerate(sides):
            words = side.split()
            by_side[group_index, side_index] = frozenset(words)
            for word in words:
                by_word.setdefault(word, []).append((group_index, side_index))
    return by_word, by_side
