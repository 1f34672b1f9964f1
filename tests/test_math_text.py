"""TeX in entry text shown as plain text: math spans, TeX in running text, and dollars that are prices."""

from __future__ import annotations

import json
import re

import pytest

from assistant.knowledge.math_text import plain_math
from tests.conftest import REPO

PAPERS = REPO / "knowledge" / "mlsys" / "arxiv-mlsys" / "papers.jsonl"
GLOSSARY = REPO / "knowledge" / "mlsys" / "ml-glossary" / "terms.jsonl"


@pytest.mark.parametrize(
    ("tex", "text"),
    [
        # from the seed and the mlsys pack
        (r"banded linear systems ${\bf A} {\bf x} = {\bf b}$ on a GPU", "banded linear systems A x = b on a GPU"),
        (r"up to 4.4$\times$ higher throughput", "up to 4.4× higher throughput"),
        (r"a $11.35\times$ speedup", "a 11.35× speedup"),
        (r"Coloring in $O(\log Δ)$ Amortized Update Time", "Coloring in O(log Δ) Amortized Update Time"),
        (r"UFO$^3$: Weaving the Digital Agent Galaxy", "UFO³: Weaving the Digital Agent Galaxy"),
        (r"Estimating CO$_2$ emissions", "Estimating CO₂ emissions"),
        (r"Unstructured $S_{N}$ Transport", "Unstructured S_N Transport"),
        (r"$\mathcal{O}(10^{10})$ operations", "O(10¹⁰) operations"),
        (r"$O(σf / \sqrt{T} + f^2 / T)$", "O(σf / √T + f² / T)"),
        (r"$\frac{1}{6}$ of the nodes", "1/6 of the nodes"),
        (r"$k \ll d$ and $\varepsilon = 5.0$", "k ≪ d and ε = 5.0"),
        (r"a $\sim$40-point drop", "a ~40-point drop"),
        (r"over $>$1k downloads", "over >1k downloads"),
        (r"within 10.4\% of measured", "within 10.4% of measured"),
        (r"guarantees \emph{until-decode privacy}", "guarantees until-decode privacy"),
        (r"a recent paper~\cite{CG-24} generalizes", "a recent paper generalizes"),
        # a glossary formula (the reader turns [$$]...[/$$] into $...$)
        (
            r"$\text{Accuracy} = \frac{\text{Correct Predictions}} {\text{Total Number Of Examples}}$",
            "Accuracy = (Correct Predictions)/(Total Number Of Examples)",
        ),
        (r"$$x_{i+1} = x_i - \eta \nabla f$$", "x_(i+1) = x_i - η ∇ f"),
        # dollars that are money stay as written
        ("costs $2 per hour and $3 per day", "costs $2 per hour and $3 per day"),
        ("$5-$10 a month", "$5-$10 a month"),
        ("US$5 and US$6", "US$5 and US$6"),
        ("incurs about $ 0.3 API cost and $ 5 per kernel", "incurs about $ 0.3 API cost and $ 5 per kernel"),
        ("no markup at all", "no markup at all"),
    ],
)
def test_tex_becomes_plain_text(tex: str, text: str) -> None:
    assert plain_math(tex) == text


def test_the_mlsys_pack_shows_no_tex_math() -> None:
    """Every title and abstract of the pack, and every glossary definition: no math command is left."""
    texts = [t for line in PAPERS.read_text(encoding="utf-8").splitlines() for t in json.loads(line).values()]
    texts += [
        json.loads(line)["definition"].replace("[$$]", "$").replace("[/$$]", "$")
        for line in GLOSSARY.read_text(encoding="utf-8").splitlines()
    ]
    with_math = [t for t in texts if isinstance(t, str) and re.search(r"\$[^$]*\\[a-z]+", t)]
    assert len(with_math) > 150  # the pack does hold TeX (202 texts)
    left = re.compile(r"\\(?:times|frac|mathcal|mathbf|mathsf|mathtt|text|log|sqrt|cdot|sim|left|right|bf|emph)\b")
    assert [t for t in with_math if left.search(plain_math(t))] == []
    assert not [t for t in with_math if re.search(r"(?<![\w\s(≲~])\$\S", plain_math(t))]  # no "$x" math left open


def test_the_chat_ui_shows_an_abstract_without_tex_in_sources_cards_and_answers() -> None:
    from assistant.knowledge.corpus import load_corpus
    from assistant.types import Answer, Citation, Source
    from ui.cards import entry_card
    from ui.render import render_answer
    from ui.sources import sources_html

    entries = load_corpus([REPO / "knowledge" / "seed"]).entries
    (banded,) = [e for e in entries.values() if "{\\bf A}" in e.title]
    quote = next(s for s in re.split(r"(?<=\.)\s+", banded.text) if "{\\bf A}" in s)
    plain = "solving sparse or dense banded linear systems A x = b"
    source = Source(banded.id, f"{banded.id}#0", banded.title, "abstract", banded.text, 0.5, 1)
    panel = sources_html([source], turn=0)
    card = entry_card(banded, quote, number=1)
    answer = Answer("q", f"I cannot answer that. The nearest entries are “{banded.title}”.", [], [source], True)
    shown = render_answer(answer, {})
    for html in (panel, card, shown):
        assert plain in html.replace("\\", "") and "bf" not in html and "&#36;" not in html, html
    abstract = card.split('<div class="card-label">Abstract</div>', 1)[1]
    assert abstract.startswith(f"<div><mark>We discuss an approach for {plain} on a")  # the quote is still found
    citation = Citation(banded.id, banded.title, "abstract", None, quote)
    assert "bf" not in render_answer(Answer("q", f"{quote} [{banded.id}]", [citation]), {banded.id: 1})


def test_math_escaped_for_mathjax_in_a_plain_text_copy_reads_as_math_and_a_stray_backslash_never_raises() -> None:
    """Documentation written for MathJax through Markdown doubles its backslashes (`\\\\(W_{l}\\\\)`); a `.txt`
    copy keeps them. Such a line used to raise an AssertionError from `tex_to_text` wherever it was shown."""
    line = r"Given a layer \\(l\\) with weight matrix \\(W_{l}\\), find \\(\\hat{W}_{l}\\):"
    assert plain_math(line) == "Given a layer l with weight matrix W_l, find W_l:"
    assert plain_math(r"a \(x^2\) b") == "a x² b"
    assert plain_math("a \\(x\\\n\\) b") == "a x b"  # a backslash before a line break inside the span
