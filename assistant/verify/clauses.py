"""Which value goes with which thing: a claim may not take one part from each clause of a sentence.

"Grafana is served on port 3000 and Prometheus on port 9090" has every word of "Grafana is
served on port 9090"; "Jumbo frames are required on the storage VLAN and optional on the management
VLAN" has every word of "Jumbo frames are optional on the storage VLAN"; "zstd is enabled by
default; gzip is disabled" has every word of "gzip is enabled by default". Each clause of such a
sentence binds its own things to its own values, so the quote is split into its clauses, and so is
the claim: at ";", "but", "while" and "whereas", and at "and", "then" and "yet" once the clause so
far has a verb and is not a list ("A, B and C") or an aside in parentheses. A clause without a subject of its
own ("and optional on ...", "but still require ...") shares the first clause's subject; one with a
subject but no verb ("and Prometheus on port 9090") shares the first clause's verbs.

A claim clause mixes two clauses of the quote when it has a word (a name, a number, a word of an
opposition such as required/optional or before/after, or another content word) said only in one
clause and another said only in a second, and each of those clauses has, in the claim's place, a
counterpart of the same kind that the claim leaves out (Prometheus for Grafana, 3000 for 9090): the
claim moved a value from one thing to another. When neither word is a value (a number or a side of an
opposition), the two clauses must also be parallel (`parallel`), or the claim must have as many
clauses as the quote ("approved by A and executed by B" for "approved by B and executed by A").
Only sentences of up to `MAX_TOKENS` words are split. A claim that takes a list item from a later clause
("X shards parameters, gradients and optimizer states" -> "X shards optimizer states") leaves no
counterpart in that clause, and is fine.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import combinations

from assistant.verify.roles import BE, Word, verb_like

CONJUNCTIONS = frozenset({"and", "but", "while", "whereas", "then", "yet"})
AUXILIARIES = BE | frozenset({"has", "have", "had", "can", "could", "may", "might", "will", "would", "should", "must"})
DETERMINERS = frozenset({"the", "a", "an", "each", "every", "its", "their", "this", "these", "those", "all", "our"})
NOT_A_SPLIT = frozenset({"between", "both", "either"})  # "between 5 and 10 ms": one thing, not two clauses
# longer sentences (an abstract's) join lists, comparisons and asides with "and" in ways that word order
# alone cannot tell from clauses; the sentences of a runbook or a policy page state one fact per clause
MAX_TOKENS = 24

Opposed = Callable[[str, str], bool]


class Clause:
    """The words of one clause: its own, and those it shares with the first clause (subject, verbs)."""

    def __init__(self, tokens: list[Word]) -> None:
        self.tokens = tokens
        self.subject: list[Word] = []  # the first clause's subject, when this one has none
        self.verbs: list[Word] = []  # the first clause's verbs, when this one has a subject but no verb

    @property
    def all(self) -> list[Word]:
        return [*self.tokens, *self.subject, *self.verbs]


def clauses(tokens: Sequence[Word], text: str, verbless_share: bool = True) -> list[Clause]:
    """The sentence's clauses, each later one with what it shares with the first.

    `verbless_share`: a later clause with neither subject nor verb ("and optional on the management
    VLAN") shares the first clause's subject; off for a claim, where such a clause is as often the
    last item of a list of objects ("GPU clusters and high-bandwidth interconnects")."""
    parts: list[list[Word]] = [[]]
    for position, token in enumerate(tokens):
        gap = text[tokens[position - 1].end : token.start] if position else ""
        recent = {t.low for t in tokens[max(0, position - 4) : position]}
        if (
            token.low in CONJUNCTIONS
            and parts[-1]
            and not (recent & NOT_A_SPLIT)
            and joins_clauses(parts[-1], token, tokens, text)
        ):
            parts.append([])
            continue
        if ";" in gap and parts[-1]:
            parts.append([])
        parts[-1].append(token)
    found = [Clause(p) for p in parts if any(t.content or t.number is not None for t in p)]
    if len(found) < 2:
        return found
    first = found[0].tokens
    verbs = [t for t in first if is_verb(t, tokens, text)]
    # the subject ends at the first auxiliary ("Jumbo frames are ..."): a plural noun reads like a verb
    start = next((i for i, t in enumerate(first) if t.low in AUXILIARIES), None)
    if start is None:
        start = next((i for i, t in enumerate(first) if is_verb(t, tokens, text)), len(first))
    subject = [t for t in first[:start] if t.content]
    for clause in found[1:]:
        verbless = not any(is_verb(t, tokens, text) for t in clause.tokens)
        if not own_subject(clause.tokens, tokens, text) and (verbless_share or not verbless):
            clause.subject += subject  # "and optional on the management VLAN": its own predicate, the same subject
        elif not any(is_verb(t, tokens, text) for t in clause.tokens):
            clause.verbs += [t for t in verbs if t.content]  # "and Prometheus on port 9090": the same verb
    return found


def ends_list(part: list[Word], conjunction: Word, text: str) -> bool:
    """Does the "and" close a list ("A, B, and C", "A, B and C") rather than join two clauses? A comma
    in the clause so far, other than one right before the "and", says so."""
    if conjunction.low not in ("and", "or") or not part:
        return False
    commas = text.count(",", part[0].start, conjunction.start)
    right_before = text[part[-1].end : conjunction.start].strip() == ","
    return commas > (1 if right_before else 0)


def joins_clauses(part: list[Word], conjunction: Word, tokens: Sequence[Word], text: str) -> bool:
    """Does the conjunction start a new clause? Not when it closes a list, not when what comes before
    it has no verb yet ("The computation workload and the memory footprint grow ..."), and not
    between two adverbs ("concurrently and continuously")."""
    before = text[: conjunction.start]
    if before.count("(") > before.count(")"):
        return False  # an aside: "(but not the training examples)"
    if conjunction.low in ("but", "while", "whereas"):
        return True
    if ends_list(part, conjunction, text) or not any(is_verb(t, tokens, text) for t in part):  # "The devices then"
        return False
    position = conjunction.index
    after = tokens[position + 1] if position + 1 < len(tokens) else None
    return not (part[-1].low.endswith("ly") and after is not None and after.low.endswith("ly"))


def clause_index(tokens: Sequence[Word], text: str) -> dict[int, int]:
    """Token index -> the number of the clause it is in (its own words only)."""
    return {t.index: number for number, clause in enumerate(clauses(tokens, text)) for t in clause.tokens}


def is_verb(token: Word, tokens: Sequence[Word], text: str) -> bool:
    """An auxiliary ("is", "must") or a word that reads as a verb here."""
    if token.low in AUXILIARIES:
        return True
    # a sentence's first word is read as its subject ("Grafana is served ..."), not as an imperative
    if token.index == 0 or not token.content or token.number is not None or token.name:
        return False
    return verb_like(token, tokens, text)


def own_subject(clause: list[Word], tokens: Sequence[Word], text: str) -> bool:
    """Does the clause name its own subject ("gzip is disabled", "Prometheus on port 9090", "the rollout
    continues") rather than go on about the first clause's ("optional on ...", "still require ...")?"""
    words = [t for t in clause if t.content or t.number is not None or t.low in DETERMINERS or t.low in AUXILIARIES]
    if not words:
        return False
    head = words[0]
    if head.low in AUXILIARIES:
        return False
    # not "still require a review", "optional on the management VLAN", "storage links at 100 Gb/s"
    return head.low in DETERMINERS or head.name or any(t.low in AUXILIARIES for t in words[1:])


def kind(token: Word, opposed: Opposed) -> str:
    """number, polar (a side of an opposition) or word (a name or another content word: "Grafana" and
    "Prometheus" are what a port is for, whether or not a sentence opens with one)."""
    if token.number is not None:
        return "number"
    return "polar" if opposed(token.low, "") else "word"


def same(a: Word, b: Word) -> bool:
    """The same word (by key) or the same number (value, and unit when both state one)."""
    if a.number is None or b.number is None:
        return a.number is None and b.number is None and a.key == b.key
    (value, unit), (other_value, other_unit) = a.number, b.number
    return abs(value - other_value) < 1e-9 and (not unit or not other_unit or unit == other_unit)


def mixed_clauses(
    claim: Sequence[Word], claim_text: str, quote: Sequence[Word], quote_text: str, opposed: Opposed
) -> str | None:
    """Why the claim binds a value of one clause of the quote to a thing of another, or None."""
    if len(quote) > MAX_TOKENS:
        return None
    parts = clauses(quote, quote_text)
    if len(parts) < 2:
        return None
    claim_clauses = clauses(claim, claim_text, verbless_share=False)
    mirrored = len(claim_clauses) == len(
        parts
    )  # "approved by A and executed by B" for "approved by B and executed by A"
    for claim_clause in claim_clauses:
        said = claim_clause.all
        # a subject the claim's clause only shares is context, not something it binds ("Serving LLMs is costly
        # because ... GPU clusters and high-bandwidth interconnects": the interconnects are not said of serving)
        words = [
            t
            for t in [*claim_clause.tokens, *claim_clause.verbs]
            if t.number is not None or t.name or (t.content and (weighty(t) or kind(t, opposed) == "polar"))
        ]
        where = {t.index: {i for i, c in enumerate(parts) if any(same(t, q) for q in c.all)} for t in words}
        for a, b in combinations(words, 2):
            sides_a, sides_b = where[a.index], where[b.index]
            if not sides_a or not sides_b or sides_a & sides_b:
                continue
            valued = any(t.number is not None or kind(t, opposed) == "polar" for t in (a, b))
            for i in sides_a:
                for j in sides_b:
                    if not valued and not mirrored and not parallel(parts[i], parts[j], said):
                        continue
                    if counterpart(b, parts[i], said, parts, opposed) and counterpart(
                        a, parts[j], said, parts, opposed
                    ):
                        return f"puts {a.text} with {b.text}, which the quote says of different things"
    return None


def parallel(one: Clause, other: Clause, said: list[Word]) -> bool:
    """Do the two clauses say the same thing of different things: a word of their own in common that the
    claim says too ("X owns A and Y owns B")? Two words (not a value) are only weighed across such
    clauses: "a framework for training and inference on GPU clusters" lists, it does not bind."""
    return any(same(t, u) and any(same(t, s) for s in said) for t in one.tokens if t.content for u in other.tokens)


def weighty(token: Word) -> bool:
    """A content word that carries meaning (the light words a claim may add are left out)."""
    weight = getattr(token, "weight", 1.0)
    return bool(weight == 1.0)


def counterpart(token: Word, clause: Clause, said: list[Word], parts: list[Clause], opposed: Opposed) -> bool:
    """Does the clause hold, where the claim has `token`, something of its kind that the claim does not say?"""
    wanted = kind(token, opposed)
    for other in clause.tokens:
        if not (other.content or other.number is not None) or any(same(other, s) for s in said):
            continue
        if all(any(same(other, q) for q in c.all) for c in parts):
            continue  # said in every clause: not what tells them apart
        if wanted == "polar":
            found = opposed(token.low, other.low)
        elif wanted == "number":
            found = other.number is not None
        else:
            found = other.number is None and (weighty(other) or other.name or opposed(other.low, ""))
        if found:
            return True
    return False
