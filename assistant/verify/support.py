"""Does a cited entry support a claim? Literal checks first, the embedding only as a helper.

Word overlap alone verifies "GPUs are slow" and "CUDA is a GPU programming platform by AMD"
against the GPU page: every word but one is on the page. So a claim is judged against its
best supporting span - the entry sentence that covers most of it, plus up to two sentences
that each add two more of its words (a composed claim) - and it is supported only when:

1. Names (capitalised words, acronyms, identifiers with digits) are in that span or are the
   entry's subject (its title; for a paper, the system it names): the page lists both
   NVIDIA and AMD, but CUDA's line says NVIDIA.
2. Numbers are in the span, with a compatible unit (2x is not 2%, 14% is not 10.4%, 15 minutes
   is not 15 hours, 400 Gb/s is not 400 Mb/s), and names and numbers sit with the same words as
   in the span ("memory by 48.03%", not "memory by 4.42%" when the span has both numbers); a
   claim keeps each clause's things with their values (`clauses`), who does what (`roles`) and
   which way an order runs (`order`), and says "all", "every" or "always" only where the span does.
3. Polarity agrees: a negation ("not", "never", "fails to", "without") that governs words
   the other side also has must be on both sides, and no claim word is the opposite of a
   span word next to the same subject (fast/slow, increase/decrease, labeled/unlabeled).
4. Every other content word is said by the span: literally, as another form (`reduction`,
   `reduce`), as a listed synonym, or as a compound (`auto-regressive`). Light words
   ("typically", "helps") may be added freely; framing ("this is called", "the paper
   proposes") does not count at all.
5. Only then the embedding may vouch for what is left, and never for a name, a number or a
   polarity word (MiniLM puts "slow" near "speed" and "cheap" near "expensive"): one word
   the entry uses in another sentence, when the claim reads very like the quote; or up to
   two words whose removal does not bring the claim closer to the quote (a paraphrase like
   "copes with" for "addresses" carries the quote's meaning, an invented "attention layers"
   for "linear layers" does not) and that do not take another word's place next to a
   shared word ("batch size" for "window size").

A sentence quoted verbatim (the extractive model's answers) is supported without checks. A
sentence that orders its reader to say something (`instructions`) is not part of the entry at all.
The thresholds were fitted on the calibration half of knowledge/questions/claims.jsonl
(`python scripts/claim_support.py --fit`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from functools import lru_cache

from assistant.text import STOPWORDS, any_phrase, split_sentences, stem
from assistant.tuning import SupportSettings
from assistant.types import Entry
from assistant.verify.clauses import clause_index, mixed_clauses
from assistant.verify.instructions import is_instruction, is_mention
from assistant.verify.lexicon import (
    ACRONYMS,
    FRAMING,
    LIGHT,
    NEGATIONS,
    NEGATIVE_PREFIXES,
    NO_NEED,
    NOT_NEGATING,
    NUMBER_WORDS,
    PHRASES,
    REFERENTS,
    REFERRING,
    UNIT_WORDS,
    UNITS,
    UNIVERSAL,
    canonical_stems,
    canonical_words,
    opposite_index,
    related_index,
)
from assistant.verify.order import ORDER_WORDS, order_agrees, reversed_order
from assistant.verify.roles import substituted_argument, swapped_roles
from assistant.verify.unicode import plain

Similarity = Callable[[str, list[str]], list[float]]

# how far a word reaches in a sentence: read off how the language works, not fitted (the fitted
# thresholds are `SupportSettings`)
LIGHT_WEIGHT = 0.3  # what a light word (a pronoun, an ordinary verb) counts towards coverage
NEGATION_SCOPE = 4  # content words after a negation (in its clause) that it may govern
NEIGHBOURHOOD = 5  # tokens either side that tie an opposite word to its subject
BINDING = 3  # tokens either side that tie a name or number to what the claim says about it
PRONOUNS = frozenset({"it", "its", "they", "their", "this", "these"})

TOKEN = re.compile(r"\d+(?:,\d{3})+(?:\.\d+)?%?|\d+(?:\.\d+)?[A-Za-z%]*|[A-Za-z][A-Za-z0-9]*|%")
NUMBER = re.compile(r"(\d+(?:\.\d+)?)([a-z%]*)")
INTRODUCES = re.compile(
    r"\b(?:[Ww]e|paper|work)\s+(?:propose|present|introduce|develop|design|build)s?\s+(?:an? |the )?"
    r"((?:[A-Z][\w-]*\s*)+)(?:\(([A-Z][\w-]*)\))?"
)
CLAUSE_BREAK = re.compile(r"[,;:()]|\s-\s")
CONTRAST = any_phrase(
    "by contrast | in contrast | unlike | contrast with | compare to | compare with | conversely", re.I
)
OPPOSITES, SIDES = opposite_index()


@dataclass(frozen=True)
class Token:
    """One word or number of a sentence, with what the checks need to know about it."""

    text: str
    low: str
    key: str  # stem, folded onto its synonym group
    index: int
    number: tuple[float, str] | None = None  # value and unit ("" when none)
    name: bool = False
    compound: str = ""  # key of the hyphenated word it is part of, written closed ("autoregressive")
    clause: int = 0  # counts , ; : ( ) before it: a negation reaches no further than its clause
    start: int = 0  # character offsets in the normalised text
    end: int = 0

    @property
    def content(self) -> bool:
        return (
            self.number is None
            and len(self.low) > 1
            and self.low not in STOPWORDS
            and self.low not in NEGATIONS
            and self.low not in FRAMING
            and base_key(self.low) not in FRAMING_KEYS
        )

    @property
    def weight(self) -> float:
        light = self.low in LIGHT or base_key(self.low) in LIGHT_KEYS
        return LIGHT_WEIGHT if light and not self.name else 1.0


@dataclass(frozen=True)
class Sentence:
    """One sentence of an entry, tokenised, with its keys (acronyms expanded) and numbers."""

    text: str
    normal: str  # the text as tokenised (see `normalise`)
    line: int
    tokens: tuple[Token, ...]
    keys: frozenset[str]
    lows: frozenset[str]
    numbers: tuple[tuple[float, str], ...]

    @property
    def contrast(self) -> bool:
        """Does it describe something else ("By contrast, graph execution ...")? Then the title is not its subject."""
        return CONTRAST.match(self.text) is not None


@dataclass(frozen=True)
class EntryView:
    """An entry read once: its sentences, its title's words, its acronyms."""

    sentences: tuple[Sentence, ...]
    subject: frozenset[str]  # keys present in every sentence: the title's words (names only for papers)
    keys: frozenset[str]


@dataclass(frozen=True)
class Judgement:
    """The supporting sentence, the support (below `SupportSettings.supported` unless supported) and why not."""

    quote: str
    support: float
    reasons: tuple[str, ...] = ()


def normalise(text: str) -> str:
    """LaTeX and typography an abstract carries (`10.4\\%`, `2$\\times$`, `23--55%`) as plain text.

    A digit joined to a name by a hyphen is part of the name: "ns-3" and "GPT-4" are read as
    `ns3` and `GPT4`, so "within 3%" is not supported by the 3 of ns-3.
    """
    text = plain(text)  # look-alike letters, invisible characters and overlays read as what they look like
    text = re.sub(r"\\textcolor\{[^}]*\}\{", "", text)
    text = re.sub(r"\$?\\times\$?|×", "x", text)
    text = text.replace("\\%", "%").replace("$", "").replace("~", " ").replace("\\", " ")
    text = re.sub(r"[–—]|--", "-", text)
    text = re.sub(r"(?<![\w.])([A-Za-z]+)-(\d)", r"\1\2", text)  # ns-3, GPT-4: identifiers, not the number 3
    text = re.sub(
        r"(?<![A-Za-z])([KMGTkmgt])(?:b|B|bit)(?:/s|ps)\b", r"\1bps", text
    )  # 400 Gb/s, 400 Gbps, 400 Gbit/s: a rate
    text = re.sub(r"\b(can)'t\b|\b(ca)n't\b", r"\1\2 not", text, flags=re.I)
    text = re.sub(r"\bwon't\b", "will not", text, flags=re.I)
    text = re.sub(r"n't\b", " not", text)
    for pattern in NOT_NEGATING:
        text = re.sub(pattern, " ", text, flags=re.I)
    for pattern, replacement in PHRASES:
        text = re.sub(pattern, replacement, text, flags=re.I)
    return re.sub(NO_NEED, "no need", text, flags=re.I)


def base_key(word: str) -> str:
    """The shared stemmer's stem, also without a doubled final consonant or a final "e".

    So `overfitting`/`overfit`, `evaluated`/`evaluate`, `rebalancing`/`rebalances` and
    `optimised`/`optimized` meet.
    """
    word = re.sub(r"is(e|ed|es|ing|ation|ations)$", r"iz\1", word) if len(word) > 6 else word  # optimise
    base = stem(word)
    if base != word and len(base) > 3 and base[-1] == base[-2] and base[-1] not in "lsz":
        base = base[:-1]
    if len(base) > 3 and base.endswith("e") and not base.endswith("ee"):
        base = base[:-1]
    return base


CANONICAL = canonical_stems(base_key)
CANONICAL_WORDS = canonical_words(base_key)


def key_of(word: str) -> str:
    """The word's stem folded onto its synonym group (a listed word onto its own group)."""
    if word in CANONICAL_WORDS:
        return CANONICAL_WORDS[word]
    base = base_key(word)
    return CANONICAL.get(base, base)


RELATED = related_index(key_of)


LIGHT_KEYS = frozenset(base_key(w) for w in LIGHT)
FRAMING_KEYS = frozenset(base_key(w) for w in FRAMING)


def tokenize(text: str) -> list[Token]:
    """Words and numbers; a unit word after a number joins it ("2.1 times" -> 2.1x)."""
    text = normalise(text)
    compounds = [
        (m.start(), m.end(), key_of(m.group().replace("-", "").lower()))
        for m in re.finditer(r"[A-Za-z]+(?:-[A-Za-z]+)+", text)
    ]
    out: list[Token] = []
    matches = list(TOKEN.finditer(text))
    skip = False
    for position, match in enumerate(matches):
        if skip:
            skip = False
            continue
        raw = match.group()
        low = raw.lower().replace(",", "")
        number = NUMBER.fullmatch(low)
        if number and (number.group(2) in UNITS or not number.group(2)):
            unit = UNITS.get(number.group(2), "")
            following = matches[position + 1].group().lower() if position + 1 < len(matches) else ""
            if not unit and following in UNITS:
                unit, skip = UNITS[following], True
            out.append(Token(raw, low, low, len(out), (float(number.group(1)), unit)))
        elif low in NUMBER_WORDS:
            following = matches[position + 1].group().lower() if position + 1 < len(matches) else ""
            unit, skip = (UNITS[following], True) if following in UNITS and following.isalpha() else ("", False)
            out.append(Token(raw, low, low, len(out), (NUMBER_WORDS[low], unit)))
        else:
            starts = match.start() == 0 or re.search(r"[:;.!?]\s*$", text[: match.start()]) is not None
            name = len(raw) > 1 and (
                any(c.isupper() for c in raw[1:])
                or (any(c.isdigit() for c in raw) and any(c.isalpha() for c in raw))
                or (raw[0].isupper() and not starts)
            )
            compound = next((key for a, b, key in compounds if a <= match.start() < b), "")
            out.append(Token(raw, low, key_of(low), len(out), None, name, compound))
        clause = len(CLAUSE_BREAK.findall(text, 0, match.start()))
        out[-1] = replace(out[-1], clause=clause, start=match.start(), end=matches[position + int(skip)].end())
    return out


def acronyms(text: str) -> dict[str, tuple[str, ...]]:
    """Acronym key -> the keys of its expansion: "Latent Parallelism (LP)" and the common ones."""
    found = {acr: tuple(key_of(w) for w in words.split()) for acr, words in ACRONYMS.items()}
    for match in re.finditer(r"((?:[A-Za-z][\w-]*[\s-]+){1,6})\(([A-Z][A-Za-z]*[A-Z])s?\)", text):
        letters = match.group(2).lower()
        words = re.split(r"[\s-]+", match.group(1).strip())
        tail = words[-len(letters) :] if len(words) >= len(letters) else []
        if tail and "".join(w[0].lower() for w in tail) == letters:
            found[key_of(letters)] = tuple(key_of(w.lower()) for w in tail)
    return found


def with_acronyms(keys: set[str], known: dict[str, tuple[str, ...]]) -> frozenset[str]:
    """A sentence's keys plus an acronym's expansion where it has the acronym, and vice versa."""
    out = set(keys)
    for acronym, expansion in known.items():
        if acronym in keys:
            out.update(expansion)
        elif expansion and all(k in keys for k in expansion):
            out.add(acronym)
    return frozenset(out)


@lru_cache(maxsize=512)
def view(entry_id: str, title: str, text: str, kind: str) -> EntryView:
    """Sentences of an entry (its title line left out), tokenised once per entry text."""
    known = acronyms(f"{title}. {text}")
    sentences = []
    for line_number, line in enumerate(text.splitlines()):
        previous: list[Token] = []
        for sentence in split_sentences(line):
            if sentence == title or is_instruction(sentence):  # an order to the reader states no fact
                continue
            tokens = tuple(tokenize(sentence))
            own = {t.key for t in tokens if t.number is None} | {t.compound for t in tokens} - {""}
            if tokens and tokens[0].low in PRONOUNS:  # "It is useful ..." is about the last sentence's subject
                own |= {t.key for t in leading_phrase(previous)}
            previous = list(tokens)
            keys = with_acronyms(own, known)
            numbers = tuple(t.number for t in tokens if t.number is not None)
            sentences.append(
                Sentence(
                    sentence, normalise(sentence), line_number, tokens, keys, frozenset(t.low for t in tokens), numbers
                )
            )
    if not sentences:
        tokens = tuple(tokenize(title))
        keys = with_acronyms({t.key for t in tokens}, known)
        sentences.append(Sentence(title, normalise(title), 0, tokens, keys, frozenset(t.low for t in tokens), ()))
    everything = set().union(*(s.keys for s in sentences))
    return EntryView(tuple(sentences), subject_keys(title, text, kind, known), frozenset(everything))


def leading_phrase(tokens: list[Token]) -> list[Token]:
    """The run of content words a sentence starts with: its subject, roughly ("Dynamic parallelism")."""
    phrase = []
    for token in tokens:
        if not token.content:
            break
        phrase.append(token)
    return phrase


def subject_keys(title: str, text: str, kind: str, known: dict[str, tuple[str, ...]]) -> frozenset[str]:
    """What the entry is about, so any of its sentences may be said of it.

    A concept's or glossary term's title ("learning rate"); for a paper the system it names
    or introduces ("RAPID-LLM: ...", "we propose XPipe", "bounded lag synchronous (BLS)" when
    the title spells it out), not every word of a long title.
    """
    if kind != "abstract":
        return with_acronyms({t.key for t in tokenize(title) if t.content}, known)
    title_keys = {t.key for t in tokenize(title) if t.content}
    head = tokenize(title.partition(":")[0])
    names = [t for t in head if t.name and t.text[1:] != t.low[1:]]
    if ":" in title and 0 < len(head) <= 3 and head[0].text[0].isupper():  # "Bine Trees: ...": a short name, whole
        names = [t for t in head if t.content]
    for groups in INTRODUCES.findall(text):  # "we propose MemFine", "... Transformation (Gyges)"
        for group in filter(None, groups):
            parts = tokenize(group)
            names += parts if len(parts) == 1 else [t for t in parts if t.name and t.text[1:] != t.low[1:]]
    keys = {t.key for t in names} | {a for a, words in known.items() if words and all(w in title_keys for w in words)}
    return with_acronyms(keys, known)


def judge(claim: str, entry: Entry, similarity: Similarity | None, settings: SupportSettings) -> Judgement:
    """The entry sentence that best supports `claim`, how well, and why not when it does not."""
    # a claim may name the entry it cites before saying what it says ("LoRAServe: We present ...")
    if claim.casefold().startswith(f"{entry.title.casefold()}:"):
        claim = claim[len(entry.title) + 1 :].strip() or claim
    said = " ".join(plain(claim).split()).casefold()
    for line in split_sentences(entry.text):  # a quoted sentence (the extractive model's answers) needs no checks
        quotable = not is_instruction(line) or is_mention(line)  # an example of an order may be quoted as such
        if line != entry.title and quotable and " ".join(plain(line).split()).casefold() == said:
            return Judgement(line, 1.0)
    entry_view = view(entry.id, entry.title, entry.text, entry.kind)
    tokens = tokenize(claim)
    words = [t for t in tokens if t.content]
    numbers = [t for t in tokens if t.number is not None]
    span = best_span(words, numbers, entry_view, settings.extra_sentences)
    quote = span[0].text
    keys = frozenset().union(*(s.keys | subject_of(s, entry_view) for s in span))
    lows = frozenset().union(*(s.lows for s in span))

    vetoes = [f"names {t.text}, which the quote does not" for t in words if t.name and not has_name(t, keys, lows)]
    vetoes += widened(tokens, span)
    # a document's title names the page, not what each sentence is about: its words may not take the
    # place of the quote's own ("Platform handbook": "the platform team owns the object store" against
    # "the storage team owns ..."), as a concept's or a term's name may ("Federated learning trains ...")
    own = frozenset().union(*(s.keys for s in span))
    vetoes += [
        f"says {t.text} where the quote says another"
        for t in words
        if entry.kind == "document"
        and t.key in entry_view.subject
        and t.key not in own
        and not t.name
        and replaces(t, tokens, own, span)
    ]
    vetoes += [f"says {t.text}, which the quote does not" for t in numbers if not has_number(t, span)]
    claim_text = normalise(claim)
    for sentence in span:
        vetoes += polarity_clash(tokens, sentence, subject_of(sentence, entry_view))
        vetoes += swapped_bindings(tokens, sentence, entry_view.subject)
        mixed = mixed_clauses(tokens, claim_text, list(sentence.tokens), sentence.normal, opposed)
        if mixed:
            vetoes.append(mixed)
        way = reversed_order(tokens, sentence.tokens)
        if way:
            vetoes.append(way)
    first = span[0]
    clause_of = (clause_index(tokens, claim_text), clause_index(first.tokens, first.normal))
    roles = swapped_roles(
        tokens, list(first.tokens), claim_text, first.normal, subject_of(first, entry_view), clause_of
    )
    if roles:
        vetoes.append(roles)
    for sentence in span:
        others = [s.keys for s in entry_view.sentences if s is not sentence]
        other = substituted_argument(
            tokens, list(sentence.tokens), claim_text, sentence.normal, others, subject_of(sentence, entry_view)
        )
        if other:
            vetoes.append(other)
            break

    if any(order_agrees(tokens, s.tokens) for s in span):  # "B after A" says "A before B": the order word is said
        words = [t for t in words if t.low not in ORDER_WORDS]
    claim_keys = {t.key for t in words} | {t.compound for t in words} - {""}
    span_text = " ".join(focus(s, claim_keys, {t.number for t in numbers}) for s in span)
    credit, cosine = cover(claim, words, tokens, span, keys, span_text, entry_view, similarity, settings)
    total = sum(t.weight for t in words)
    lexical = sum(t.weight * credit.get(t.index, 0.0) for t in words) / total if total else 0.0
    missing = [t for t in words if t.index not in credit and t.weight == 1.0 and not t.name]
    reasons = list(vetoes)
    if missing:
        reasons.append(f"says {', '.join(t.text for t in missing)}, which the quote does not")
    if not reasons and lexical < settings.lexical_min:
        reasons.append("shares too few words with the quote")
    if not reasons and cosine is not None and cosine < settings.cosine_min and any(v < 1.0 for v in credit.values()):
        reasons.append("reads too differently from the quote")
    # the support shown is the covered share; a claim that fails a check stays below `supported`,
    # and one the quote contradicts (a name, number or polarity) far below
    support = lexical if not reasons else min(lexical, settings.supported - 0.01) * (0.5 if vetoes else 1.0)
    return Judgement(quote, round(min(1.0, support), 3), tuple(reasons))


def cover(
    claim: str,
    words: list[Token],
    tokens: list[Token],
    span: list[Sentence],
    keys: frozenset[str],
    span_text: str,
    entry_view: EntryView,
    similarity: Similarity | None,
    settings: SupportSettings,
) -> tuple[dict[int, float], float | None]:
    """How much each claim word counts as said by the span (by token index; absent = not at
    all), and the claim's cosine to the span when it was needed.

    1.0 for the word itself, a synonym, its hyphenated or closed compound, or another form
    of it (`reduction` for `reduce`); `close_credit` for a word the embedding vouches for.
    Names only ever count literally, polarity words literally or as another form.
    """
    credit = {
        t.index: 1.0
        for t in words
        if t.key in keys or t.compound in keys or joined(t, tokens) in keys or related(t, keys)
    }
    subject = entry_view.subject
    forms = {base_key(low) for s in span for low in s.lows} | keys
    for token in words:
        own = {base_key(token.low), token.key}
        if token.index in credit:
            continue
        other_form = not token.name and any(same_word(o, f) for o in own for f in forms)
        if other_form or (refers(token, tokens, entry_view.keys) and not replaces(token, tokens, keys, span)):
            credit[token.index] = 1.0
    loose = [
        t
        for t in words
        if t.index not in credit
        and not t.name
        and t.low not in OPPOSITES
        and t.low not in UNIT_WORDS
        and t.key not in subject
    ]
    heavy = [t for t in loose if t.weight == 1.0]
    # the embedding only fills gaps in a claim the span already says most of, word for word
    said = [t for t in words if credit.get(t.index) == 1.0 and t.weight == 1.0 and t.key not in subject]
    if similarity is None or not loose or len(said) < max(2, 2 * len(heavy)):
        return credit, None
    base = similarity(claim, [span_text])[0]
    if len(heavy) == 1 and heavy[0].key in entry_view.keys and base >= settings.in_entry_cosine:
        # one word the entry uses elsewhere ("models", "serving"), in a claim that reads like the quote
        credit[heavy[0].index] = settings.close_credit
    elif base >= settings.close_cosine and len(heavy) <= settings.max_close:
        # the claim reads like the quote, and leaving the word out does not bring it closer:
        # a paraphrase ("copes with" for "addresses"), not a detail of its own ("attention layers")
        for token in heavy:
            if replaces(token, tokens, keys, span):
                continue
            without = re.sub(rf"\b{re.escape(token.text)}\b", "", claim, count=1)
            if similarity(without, [span_text])[0] - base <= settings.deletion_max:
                credit[token.index] = settings.close_credit
    return credit, base


def refers(token: Token, tokens: list[Token], entry_keys: frozenset[str]) -> bool:
    """ "The framework", "this system": what the entry presents, by a word it uses (or a related one)."""
    before = tokens[token.index - 1] if token.index > 0 else None
    return (
        before is not None
        and before.low in REFERRING
        and token.low in REFERENTS
        and (token.key in entry_keys or related(token, entry_keys))
    )


def related(token: Token, keys: Iterable[str]) -> bool:
    """Is a word related to the token (RELATED_GROUPS) among the keys? Never for a name."""
    return not token.name and token.key in RELATED and not RELATED[token.key].isdisjoint(keys)


def replaces(token: Token, claim: list[Token], keys: frozenset[str], span: list[Sentence]) -> bool:
    """Does the word take the place of another one in front of a word both share?

    "layer-level experts" against "rank-level experts", "the batch size" against "window
    size": the shared word has a different modifier in the quote, so the claim swapped a
    detail rather than rephrased it.
    """
    claim_keys = {t.key for t in claim}
    if token.index + 1 >= len(claim):
        return False
    head = claim[token.index + 1]
    if not head.content or head.weight < 1.0 or head.key not in keys:
        return False
    for sentence in span:
        for i, other in enumerate(sentence.tokens[1:], start=1):
            slot = sentence.tokens[i - 1]
            if other.key == head.key and slot.content and slot.weight == 1.0 and slot.key not in claim_keys:
                return True
    return False


def focus(sentence: Sentence, keys: set[str], numbers: set[tuple[float, str] | None]) -> str:
    """The part of a sentence the claim draws on: from its first to its last shared word, two words either side.

    A claim that restates one clause of a 60-word abstract sentence is compared with that clause:
    the cosine with the whole sentence is diluted by everything else it says.
    """
    shared = [
        i
        for i, t in enumerate(sentence.tokens)
        if ((t.key in keys or t.compound in keys) if t.number is None else t.number in numbers)
    ]
    if not shared:
        return sentence.text
    first = sentence.tokens[max(0, shared[0] - 2)]
    last = sentence.tokens[min(len(sentence.tokens) - 1, shared[-1] + 2)]
    return sentence.normal[first.start : last.end]


def same_word(a: str, b: str) -> bool:
    """Two forms of one word: a common start of five letters or more, most of the shorter one."""
    if a == b:
        return True
    shorter = min(len(a), len(b))
    if shorter < 5:
        return False
    common = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        common += 1
    return common >= 5 and common >= 0.8 * shorter


def joined(token: Token, tokens: list[Token]) -> str:
    """The token and the next word written as one ("look" + "up" -> "lookup"), or ""."""
    following = tokens[token.index + 1] if token.index + 1 < len(tokens) else None
    if following is None or following.number is not None or token.number is not None:
        return ""
    return key_of(token.key + following.low)


def best_span(words: list[Token], numbers: list[Token], entry_view: EntryView, extra: int) -> list[Sentence]:
    """The sentence covering most of the claim, plus up to `extra` sentences that add most to it.

    A further sentence counts only when it adds two content words or numbers (a composed
    claim, "a parallel processor, used to accelerate neural-network training"): one word
    from a neighbouring sentence is how a swapped detail gets in.
    """

    def covered(sentence: Sentence) -> set[int]:
        keys = sentence.keys | subject_of(sentence, entry_view)
        found = {t.index for t in words if t.key in keys or t.compound in keys}
        return found | {t.index for t in numbers if t.number in sentence.numbers}

    scored = [(len(covered(s)), -i, s) for i, s in enumerate(entry_view.sentences)]
    _, _, first = max(scored, key=lambda item: (item[0], item[1]))
    span, have = [first], covered(first)
    heavy = {t.index for t in words if t.weight == 1.0} | {t.index for t in numbers}
    for _ in range(extra):
        best: tuple[int, Sentence] | None = None
        for sentence in entry_view.sentences:
            adds = len((covered(sentence) - have) & heavy)
            if sentence not in span and adds >= 2 and (best is None or adds > best[0]):
                best = (adds, sentence)
        if best is None:
            break
        span.append(best[1])
        have |= covered(best[1])
    return span


def subject_of(sentence: Sentence, entry_view: EntryView) -> frozenset[str]:
    """The title's words, which every sentence of the entry is about (unless it draws a contrast)."""
    return frozenset() if sentence.contrast else entry_view.subject


def widened(claim: list[Token], span: list[Sentence]) -> list[str]:
    """The claim says "all", "every", "any" or "always" where the quote says no such thing (it names one
    environment, one cluster, business hours): the claim widens its scope. "Every night" and "every
    15 minutes" count time, not things."""
    said = frozenset().union(*(s.lows for s in span))
    if said & UNIVERSAL:
        return []
    for token in claim:
        following = claim[token.index + 1] if token.index + 1 < len(claim) else None
        counts_time = following is not None and (following.number is not None or following.low in UNIT_WORDS)
        if token.low in UNIVERSAL and not counts_time:
            return [f"says {token.text}, which the quote does not"]
    return []


def has_name(token: Token, keys: frozenset[str], lows: frozenset[str]) -> bool:
    """A claim's name is in the span: as a word, an acronym's expansion, or inside a longer name."""
    return token.key in keys or (len(token.low) >= 3 and any(token.key in low for low in lows))


def has_number(token: Token, span: list[Sentence]) -> bool:
    """The same value in the span, with the same unit when both state one."""
    assert token.number is not None
    value, unit = token.number
    for sentence in span:
        for other_value, other_unit in sentence.numbers:
            if abs(other_value - value) < 1e-9 and (not unit or not other_unit or unit == other_unit):
                return True
    return False


def polarity_clash(claim: list[Token], sentence: Sentence, subject: frozenset[str]) -> list[str]:
    """Reasons the claim and one span sentence disagree in polarity (negation or an opposite)."""
    reasons = []
    claim_keys = {t.key for t in claim if t.number is None}
    claim_negations = negated(claim, sentence.keys | subject)
    quote_negations = negated(list(sentence.tokens), claim_keys)
    if len(claim_negations) % 2 != len(quote_negations) % 2:
        cue = (claim_negations or quote_negations)[0]
        where = "the claim" if claim_negations else "the quote"
        reasons.append(f"{where} says '{cue}' and the other does not")
    claim_lows = {t.low for t in claim}
    converse = order_agrees(claim, sentence.tokens)  # "B after A" for "A before B"
    for token in claim:
        if converse and token.low in ORDER_WORDS:
            continue
        for opposite in opposites(token, sentence, claim_lows):
            if tied(token, claim, opposite, sentence):
                reasons.append(f"says {token.text} where the quote says {opposite.text}")
                break
    return reasons


def negated(tokens: list[Token], other_keys: Iterable[str]) -> list[str]:
    """Negation cues whose scope the other side also talks about (so they are about the same thing).

    The scope is the next few content words of the cue's clause, adverbs skipped ("not
    widely adopted" is about "adopted"); the other side must have two of them (or the only
    one), so "not a convex set" in the quote does not deny a claim about a convex function,
    while "without requiring hardware or hypervisor support" does deny "requires hypervisor
    support".
    """
    other = set(other_keys)
    cues = []
    for position, token in enumerate(tokens):
        if token.low not in NEGATIONS:
            continue
        scope = [
            t
            for t in tokens[position + 1 :]
            if t.content and t.clause == token.clause and t.weight == 1.0 and t.low != "longer" and t.low[-2:] != "ly"
        ][:NEGATION_SCOPE]
        shared = sum(1 for t in scope if t.key in other or t.compound in other)
        if scope and shared >= min(2, len(scope)):
            cues.append(token.text)
    return cues


def opposites(token: Token, sentence: Sentence, claim_lows: set[str]) -> list[Token]:
    """Words of the sentence on another side of an opposition than `token`, when it lacks token's side."""
    found = []
    for group, side in OPPOSITES.get(token.low, []):
        if SIDES[group, side] & sentence.lows:
            continue
        for other in sentence.tokens:
            sides = [s for g, s in OPPOSITES.get(other.low, []) if g == group and s != side]
            if sides and other.low not in claim_lows:
                found.append(other)
    for prefix in NEGATIVE_PREFIXES:  # "unlabeled" against "labeled", and the other way round
        for other in sentence.tokens:
            if token.low in sentence.lows or other.low in claim_lows or not token.content:
                continue
            base, prefixed = (token.low, other.low) if other.low.startswith(prefix) else (other.low, token.low)
            if prefixed == prefix + base and len(base) >= 4:
                found.append(other)
    return found


def opposed(word: str, other: str) -> bool:
    """Are the two words on different sides of an opposition ("required"/"optional", "labeled"/"unlabeled")?
    With `other` empty: is the word on a side of one at all?"""
    sides = OPPOSITES.get(word, [])
    if not other:
        return bool(sides)
    if any(g == h and s != t for g, s in sides for h, t in OPPOSITES.get(other, [])):
        return True
    return any(other == p + word or word == p + other for p in NEGATIVE_PREFIXES)


def tied(token: Token, claim: list[Token], other: Token, sentence: Sentence) -> bool:
    """Do the two opposite words sit next to a shared content word (the same subject)?"""

    def near(tokens: Iterable[Token], centre: int) -> set[str]:
        return {t.key for t in tokens if t.content and 0 < abs(t.index - centre) <= NEIGHBOURHOOD}

    return bool(near(claim, token.index) & near(sentence.tokens, other.index))


def swapped_bindings(claim: list[Token], sentence: Sentence, subject: frozenset[str]) -> list[str]:
    """Names or numbers the sentence pairs with the claim's words the other way round.

    "reduces memory by 4.42% and improves throughput by 48.03%" against "reduces memory by
    48.03% and improves throughput by 4.42%": both numbers are there, but the words around
    each sit around the other one in the quote. Likewise "an Astra-Sim frontend with a
    DeepFlow-based backend" against "a DeepFlow-based frontend ... an Astra-Sim backend".
    """
    anchors = [t for t in claim if (t.number is not None or (t.name and t.key not in subject))]
    if not anchors:
        return []

    def same(a: Token, b: Token) -> bool:
        return a.number == b.number if a.number is not None else a.key == b.key

    def around(tokens: Iterable[Token], centre: Token) -> set[str]:
        return {
            t.key
            for t in tokens
            if t.content
            and not t.name
            and 0 < abs(t.index - centre.index) <= BINDING
            and not (centre.compound and t.compound == centre.compound)
        }

    reasons = []
    for anchor in anchors:
        context = around(claim, anchor)
        here = [t for t in sentence.tokens if same(t, anchor)]
        if not context or not here:
            continue
        own = max(len(context & around(sentence.tokens, t)) for t in here)
        # a number is weighed against every other number of the sentence, a name against the claim's names
        others = (
            [t for t in sentence.tokens if t.number is not None and t.number != anchor.number]
            if anchor.number is not None
            else [t for t in anchors if t.number is None]
        )
        for other in others:
            if same(other, anchor):
                continue
            there = [t for t in sentence.tokens if same(t, other)]
            theirs = max((len(context & around(sentence.tokens, t)) for t in there), default=0)
            # both need a clear case: the same words twice more around the other one, or none around a name
            if theirs >= own + 2 if anchor.number is not None else (own == 0 and theirs >= 2):
                reasons.append(f"pairs {anchor.text} with what the quote says of {other.text}")
                break
    return reasons
