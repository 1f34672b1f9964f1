"""Evaluation metrics: pure functions on entry ids, citations and answer text (no I/O).

Retrieval follows BEIR (binary relevance, entry-level ids). The ranked list is first
deduplicated to the first occurrence of each id, because several chunks of one entry may be
retrieved and an entry must count once. Gold ids are a set. All retrieval metrics are
undefined (``None``) for an empty gold set, so refuse questions drop out of them.

- ``recall_at_k``  = |gold ∩ top-k| / |gold|.
- ``mrr_at_k``     = 1 / rank of the first gold id within the top k (ranks start at 1), else 0.
- ``ndcg_at_k``    = DCG / IDCG with DCG = Σ_{r ≤ k, id_r ∈ gold} 1 / log2(r + 1) and
  IDCG = Σ_{r=1}^{min(|gold|, k)} 1 / log2(r + 1) (binary gains).

Citations follow ALCE, scored on entry ids rather than on per-statement NLI:

- ``citation_precision`` = share of distinct cited ids that are gold (``None`` if nothing is
  cited; 0 when something is cited on a question with no gold).
- ``citation_recall``    = share of gold ids that are cited (``None`` if gold is empty).
- ``supported_share``    = share of citations whose ``supported`` flag is True, as set by the
  citation verifier (``None`` if there are no citations). Accepts Citation objects or bools.

Answer content:

- ``answered_with_gold`` = 1 when an answerable question was answered (not refused) and cites at
  least one gold id, else 0 (``None`` for refuse questions); ``name_in_answer`` is ``fact_recall``
  on questions whose intent is ``name`` (the fact is the concept's name).
- ``answered_with_fact`` = 1 when ``answered_with_gold`` is 1 and the answer states at least one
  of the facts (``fact_recall`` > 0), else 0 (``None`` without gold or facts): the fact, with a
  right citation. Gold may name files or sections (``assistant.eval.gold``).
- ``fact_recall`` = share of facts found in the answer text; text and fact are lower-cased,
  punctuation becomes a space and whitespace runs collapse, then a substring test
  (``None`` if there are no facts).

Refusals over a set of (should_refuse, did_refuse) pairs, refusal being the positive class:

- ``precision`` = TP / (TP + FP), ``recall`` = TP / (TP + FN), ``false_refusal_rate`` =
  refused answerable / answerable; each ``None`` when its denominator is 0.
- ``answered_only_precision`` = mean citation precision over answerable questions that were
  answered (not refused) and cited something, so refusing cannot raise or lower it.

Aggregation: ``mean_defined`` averages the values that are not ``None`` (percentiles are in
``assistant.figures``).
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Any

from assistant.verify.unicode import WORD

__all__ = [
    "answered_only_precision",
    "answered_with_fact",
    "answered_with_gold",
    "citation_precision",
    "citation_recall",
    "dedupe",
    "fact_recall",
    "mean_defined",
    "mrr_at_k",
    "ndcg_at_k",
    "normalise",
    "recall_at_k",
    "refusal_scores",
    "supported_share",
]


def dedupe(ids: Iterable[str]) -> list[str]:
    """Keep the first occurrence of each id, in order (several chunks of one entry count once)."""
    return list(dict.fromkeys(ids))


def _top(ranked: Sequence[str], k: int) -> list[str]:
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    return dedupe(ranked)[:k]


def recall_at_k(ranked: Sequence[str], gold: Iterable[str], k: int) -> float | None:
    """|gold ∩ top-k| / |gold|; None for empty gold."""
    gold_set = set(gold)
    if not gold_set:
        return None
    return len(gold_set.intersection(_top(ranked, k))) / len(gold_set)


def mrr_at_k(ranked: Sequence[str], gold: Iterable[str], k: int = 10) -> float | None:
    """Reciprocal rank of the first gold id in the top k, 0 if none; None for empty gold."""
    gold_set = set(gold)
    if not gold_set:
        return None
    for rank, entry_id in enumerate(_top(ranked, k), start=1):
        if entry_id in gold_set:
            return 1.0 / rank
    return 0.0


def ndcg_at_k(ranked: Sequence[str], gold: Iterable[str], k: int = 10) -> float | None:
    """Binary-gain nDCG@k with a log2(rank + 1) discount; None for empty gold."""
    gold_set = set(gold)
    if not gold_set:
        return None
    dcg = sum(1.0 / math.log2(r + 1) for r, i in enumerate(_top(ranked, k), start=1) if i in gold_set)
    idcg = sum(1.0 / math.log2(r + 1) for r in range(1, min(len(gold_set), k) + 1))
    return dcg / idcg


def citation_precision(cited_ids: Iterable[str], gold: Iterable[str]) -> float | None:
    """Share of distinct cited ids that are gold; None if nothing is cited."""
    cited = set(cited_ids)
    if not cited:
        return None
    return len(cited.intersection(gold)) / len(cited)


def citation_recall(cited_ids: Iterable[str], gold: Iterable[str]) -> float | None:
    """Share of gold ids that are cited; None for empty gold."""
    gold_set = set(gold)
    if not gold_set:
        return None
    return len(gold_set.intersection(cited_ids)) / len(gold_set)


def supported_share(citations: Iterable[Any]) -> float | None:
    """Share of citations flagged supported (Citation objects or plain bools); None if none."""
    flags = [bool(getattr(c, "supported", c)) for c in citations]
    if not flags:
        return None
    return sum(flags) / len(flags)


def normalise(text: str) -> str:
    """Lower-case, punctuation to spaces, collapsed whitespace: the form facts are matched in."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(WORD.findall(text))  # runs of letters and digits


def fact_recall(text: str, facts: Sequence[str]) -> float | None:
    """Share of facts found in the text after normalisation; None if there are no facts."""
    if not facts:
        return None
    haystack = normalise(text)
    found = sum(1 for fact in facts if normalise(fact) in haystack)
    return found / len(facts)


def answered_with_gold(refused: bool, cited_ids: Iterable[str], gold: Iterable[str]) -> float | None:
    """1 when an answerable question was answered and cites a gold entry, else 0; None without gold."""
    gold_set = set(gold)
    if not gold_set:
        return None
    return float(not refused and bool(gold_set.intersection(cited_ids)))


def answered_with_fact(
    refused: bool, cited_ids: Iterable[str], gold: Iterable[str], text: str, facts: Sequence[str]
) -> float | None:
    """1 when the answer cites a gold entry (or file) and states one of the expected facts, else 0;
    None without gold or facts. The headline for documentation sets: the fact, with a right citation."""
    cited = answered_with_gold(refused, cited_ids, gold)
    recall = fact_recall(text, facts)
    if cited is None or recall is None:
        return None
    return float(cited == 1.0 and recall > 0)


def _ratio(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


def refusal_scores(pairs: Iterable[tuple[bool, bool]]) -> dict[str, float | None]:
    """Precision, recall and false refusal rate of refusing, from (should, did) pairs."""
    tp = fp = fn = answerable = refused_answerable = 0
    for should, did in pairs:
        if should and did:
            tp += 1
        elif did:
            fp += 1
        elif should:
            fn += 1
        if not should:
            answerable += 1
            refused_answerable += int(did)
    return {
        "precision": _ratio(tp, tp + fp),
        "recall": _ratio(tp, tp + fn),
        "false_refusal_rate": _ratio(refused_answerable, answerable),
    }


def answered_only_precision(rows: Iterable[tuple[bool, bool, float | None]]) -> float | None:
    """Mean citation precision over (should_refuse, did_refuse, precision) rows answered and answerable."""
    return mean_defined(p for should, did, p in rows if not should and not did)


def mean_defined(values: Iterable[float | None]) -> float | None:
    """Mean of the values that are not None; None if there are none."""
    defined = [v for v in values if v is not None]
    return sum(defined) / len(defined) if defined else None
