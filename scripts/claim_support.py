#!/usr/bin/env python3
"""How often a "verified" citation is right: the citation verifier on the labelled claim set.

Each claim in knowledge/questions/claims.jsonl is an answer sentence with the entry it cites
and a label (the entry supports it or not). This runs `assistant.verify.citations.verify` on
"<claim> [<entry>]" with that entry as the whole context and the local MiniLM cosine as the
similarity, exactly as the chain calls it, and prints per split:

- precision of "verified": of the citations shown as verified, the share the entry supports;
- recall: of the supported claims, the share shown as verified;
- a confusion table per kind (faithful, verbatim, negation, swapped-entity, ...).

    python scripts/claim_support.py
    python scripts/claim_support.py --json results.json   # also write the figures
    python scripts/claim_support.py --errors calibration  # list the wrong decisions of a split
    python scripts/claim_support.py --no-embeddings       # lexical evidence only (fast)
    python scripts/claim_support.py --fit                 # grid-search the thresholds on calibration
    python scripts/claim_support.py --claims knowledge/questions/claims-docs-dev.jsonl \
        --docs knowledge/questions/claims-docs-dev        # claims on Markdown sections of a folder

A claims file may name its entry by `entry` (an id of the seed and mlsys knowledge) or by `file` and
`section` (a document of the `--docs` folder and the `##` heading its claim is about, "" for the text
before the first heading): the folder is read with the product's own document readers
(`assistant.knowledge.corpus.load_corpus`), so the entry is the one the assistant would cite. A
heading with subheadings is several entries; the claim then cites all of them, as a model citing
that part of the page would.

`--fit` sweeps each support threshold of `SupportSettings` (assistant/tuning.py: lexical_min, cosine_min,
in_entry_cosine, close_cosine, deletion_max, max_close) over a grid, the others at their defaults, and prints
precision and recall on the calibration split only; the test split is never looked at.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from assistant.knowledge.corpus import load_corpus  # noqa: E402
from assistant.knowledge.documents import SEPARATOR, document_id  # noqa: E402
from assistant.tuning import SupportSettings  # noqa: E402
from assistant.types import Entry  # noqa: E402
from assistant.verify.citations import claim_with_marker, verify  # noqa: E402

CLAIMS = ROOT / "knowledge" / "questions" / "claims.jsonl"
KNOWLEDGE = [ROOT / "knowledge" / "seed", ROOT / "knowledge" / "mlsys"]
SPLITS = ("calibration", "test")
KINDS = (
    "verbatim",
    "faithful",
    "negation",
    "antonym",
    "swapped-entity",
    "swapped-role",
    "unicode",
    "changed-number",
    "invented-detail",
    "unrelated",
)

Similarity = Callable[[str, list[str]], list[float]]
GRID = {
    "lexical_min": (0.6, 0.7, 0.75, 0.8, 0.85, 0.9),
    "cosine_min": (0.0, 0.4, 0.5, 0.55, 0.6, 0.7),
    "in_entry_cosine": (0.7, 0.75, 0.8, 0.82, 0.85, 0.9, 2.0),
    "close_cosine": (0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 2.0),
    "deletion_max": (-0.02, -0.01, 0.0, 0.01, 0.02, 0.03, 0.05),
    "max_close": (0, 1, 2, 3),
}


def local_similarity(cold: bool = False) -> Similarity:
    """The chain's similarity (cosine of normalised MiniLM vectors), with vectors cached per text.

    `cold`: the cache is emptied before each claim, as in the chain (which keeps no vectors), so
    the time per claim includes encoding the entry's sentences.
    """
    from assistant.index.embeddings import make_embedder

    embedder = make_embedder("local")
    cache: dict[str, list[float]] = {}

    def similarity(claim: str, sentences: list[str]) -> list[float]:
        if cold and claim not in cache:
            cache.clear()
        missing = [t for t in dict.fromkeys([claim, *sentences]) if t not in cache]
        if missing:
            cache.update(zip(missing, embedder.embed_documents(missing), strict=True))
        head = cache[claim]
        return [sum(a * b for a, b in zip(head, cache[s], strict=True)) for s in sentences]

    return similarity


def load_claims(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def section_entries(claims: list[dict], folder: Path) -> tuple[dict[str, Entry], list[str]]:
    """Each (file, section) claim's entry ids set on it as `entries` (and `entry`, the first), read from
    `folder` as the assistant reads it; returns the entries and the (file, section) pairs not found."""
    entries = load_corpus([folder]).entries
    missing = []
    for row in claims:
        prefix = document_id(row["file"], "")
        ours = [e for e in entries.values() if e.id.startswith(prefix)]
        heading = row["section"]
        # the heading's own text and its subsections ("Heading › Sub"), also under a parent heading
        found = [e.id for e in ours if heading in str(e.fields.get("section", "")).split(SEPARATOR)]
        if not heading:  # the text before the first heading
            found = [e.id for e in ours if e.id.endswith("#top")]
        if not found:
            missing.append(f"{row['file']} / {heading!r}")
            continue
        row["entries"], row["entry"] = found, found[0]
    return entries, missing


def judge(
    claims: list[dict], entries: dict[str, Entry], similarity: Similarity | None, settings: SupportSettings
) -> list[dict]:
    """Each claim with `verified` (the verifier's decision) and its support score and quote."""
    out = []
    for row in claims:
        cited = [entries[entry_id] for entry_id in row.get("entries", [row["entry"]])]
        text = claim_with_marker(row["claim"], f" [{', '.join(e.id for e in cited)}]")
        started = time.perf_counter()
        result = verify(text, {e.id: e for e in cited}, similarity, settings)
        seconds = time.perf_counter() - started
        citation = max(
            (c for c in result.citations if c.entry_id in row.get("entries", [row["entry"]])),
            key=lambda c: (c.supported, c.support),
        )
        reason = result.unsupported[0].rpartition(" (")[2].rstrip(")") if result.unsupported else ""
        out.append(
            {
                **row,
                "verified": citation.supported,
                "support": citation.support,
                "quote": citation.quote,
                "why": reason,
                "seconds": seconds,
            }
        )
    return out


def figures(judged: list[dict]) -> dict:
    """Precision, recall and per-kind counts for one split."""
    verified = [r for r in judged if r["verified"]]
    supported = [r for r in judged if r["label"] == "supported"]
    right = [r for r in verified if r["label"] == "supported"]
    faithful = [r for r in judged if r["kind"] == "faithful"]
    kinds: dict[str, Counter] = defaultdict(Counter)
    times = sorted(r["seconds"] for r in judged)
    labels: dict[str, str] = {}
    for r in judged:
        kinds[r["kind"]]["verified" if r["verified"] else "not_verified"] += 1
        labels[r["kind"]] = r["label"] if labels.get(r["kind"], r["label"]) == r["label"] else "mixed"
    order = [*KINDS, *sorted(set(kinds) - set(KINDS))]
    return {
        "claims": len(judged),
        "supported": len(supported),
        "verified": len(verified),
        "true_verified": len(right),
        "precision": round(len(right) / len(verified), 4) if verified else None,
        "recall": round(len(right) / len(supported), 4) if supported else None,
        "faithful_recall": round(sum(r["verified"] for r in faithful) / len(faithful), 4) if faithful else None,
        "kinds": {k: dict(kinds[k]) for k in order if k in kinds},
        "labels": {k: labels[k] for k in order if k in kinds},
        "ms_per_claim": round(1000 * sum(times) / len(times), 2) if times else None,
        "ms_p95": round(1000 * times[int(0.95 * (len(times) - 1))], 2) if times else None,
    }


def fit(claims: list[dict], entries: dict[str, Entry], similarity: Similarity) -> list[tuple[str, float, dict]]:
    """Each threshold swept over its grid, the others held at their current values (calibration only)."""
    calibration = [r for r in claims if r["split"] == "calibration"]
    rows = []
    for name, values in GRID.items():
        for value in values:
            settings = replace(SupportSettings(), **{name: value})
            rows.append((name, value, figures(judge(calibration, entries, similarity, settings))))
    return rows


def report(name: str, fig: dict) -> str:
    precision = "-" if fig["precision"] is None else f"{fig['precision']:.3f}"
    recall = "-" if fig["recall"] is None else f"{fig['recall']:.3f}"
    lines = [
        f"{name}: {fig['claims']} claims, {fig['supported']} supported, {fig['verified']} verified "
        f"({fig['true_verified']} rightly)",
        f"  precision of verified {precision}   recall of supported {recall}"
        f" (faithful paraphrases {'-' if fig['faithful_recall'] is None else format(fig['faithful_recall'], '.3f')})",
        f"  {fig['ms_per_claim']} ms per claim (p95 {fig['ms_p95']} ms)",
        f"  {'kind':<16} {'label':<12} {'verified':>8} {'not':>5}",
    ]
    for kind, counts in fig["kinds"].items():
        label = fig["labels"][kind]
        lines.append(f"  {kind:<16} {label:<12} {counts.get('verified', 0):>8} {counts.get('not_verified', 0):>5}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--claims", type=Path, default=CLAIMS)
    parser.add_argument("--docs", type=Path, help="the folder of documents a (file, section) claims file is about")
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--errors", choices=(*SPLITS, "all"), help="list the claims of a split the verifier got wrong")
    parser.add_argument("--no-embeddings", action="store_true", help="no similarity function (lexical only)")
    parser.add_argument("--cold", action="store_true", help="no vectors kept from one claim to the next (timing)")
    parser.add_argument("--fit", action="store_true", help="grid-search the thresholds on the calibration split")
    args = parser.parse_args(argv)

    claims = load_claims(args.claims)
    if all("file" in r for r in claims):
        if args.docs is None:
            parser.error("a claims file of (file, section) pairs needs --docs, the folder they are in")
        entries, missing = section_entries(claims, args.docs)
        if missing:
            print(f"no entry for: {'; '.join(missing)}", file=sys.stderr)
            return 1
    else:
        entries = load_corpus(KNOWLEDGE).entries
    unknown = sorted({r["entry"] for r in claims} - set(entries))
    if unknown:
        print(f"unknown entry ids: {', '.join(unknown)}", file=sys.stderr)
        return 1
    similarity = None if args.no_embeddings else local_similarity(args.cold)
    if args.fit:
        if similarity is None:
            parser.error("--fit needs the embeddings")
        print("calibration split; one threshold varied at a time, the others at their current values")
        for name, value, fig in fit(claims, entries, similarity):
            mark = "  <- current" if value == getattr(SupportSettings(), name) else ""
            print(f"{name:<16} {value:>5}  precision {fig['precision']:.3f}  recall {fig['recall']:.3f}{mark}")
        return 0
    judged = judge(claims, entries, similarity, SupportSettings())

    results = {split: figures([r for r in judged if r["split"] == split]) for split in SPLITS}
    results["all"] = figures(judged)
    for name, fig in results.items():
        print(report(name, fig))
        print()
    if args.errors:
        for r in judged:
            if args.errors not in ("all", r["split"]):
                continue
            if r["verified"] != (r["label"] == "supported"):
                flag = "FALSE VERIFIED" if r["verified"] else "MISSED"
                print(f"{flag:<14} {r['id']} {r['split']:<11} {r['kind']:<15} {r['support']:.3f} [{r['entry']}]")
                print(f"    claim: {r['claim']}")
                print(f"    quote: {r['quote']}")
                if r["why"]:
                    print(f"    why:   {r['why']}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        payload = {"claims_file": args.claims.name, "embeddings": not args.no_embeddings, **results}
        args.json.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
