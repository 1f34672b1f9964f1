"""LaTeX math in entry text as plain text, for display: `${\\bf A} {\\bf x}$` reads `A x`.

arXiv abstracts and glossary definitions keep their formulas as TeX (`$O(n^2 d)$`, `$4\\times$`,
`$\\text{Accuracy} = \\frac{...}{...}$`). A list or a card that shows them raw reads as noise, so
the display converts each math span to the characters it stands for. Stored entries, chunks and
quotes keep the TeX: this is for the eye only, and applied to a quote and its entry alike, so a
highlighted quote is still found in the converted text.

A `$...$` span is math only when it is written as TeX writes it (no space inside either dollar)
and holds TeX (a command, `^`, `_`, braces) or a short symbol (`$k$`): "$2 per hour and $3" is
prices, left alone.
"""

from __future__ import annotations

import re

from assistant.text import substituted, substitutions

_SPAN = re.compile(r"\$\$(?P<display>.+?)\$\$|(?<![$\\])\$(?P<inline>\s?[^\s$](?:[^$]*?[^\s$\\])?\s?)\$", re.S)
_DOLLAR = "\ue000"  # stands in for `\$` while math spans are found
_TEX_MARKS = frozenset("\\^_{}")
_SHORT_SYMBOL = re.compile(r"[\w\u0370-\u03ff+\-*/().,|'=<>≤≥ ]{1,24}")
_WORD = re.compile(r"[A-Za-z]{3,}")

_SYMBOLS = {
    "times": "×", "cdot": "·", "sim": "~", "approx": "≈", "geq": "≥", "ge": "≥", "leq": "≤", "le": "≤",
    "pm": "±", "to": "→", "rightarrow": "→", "leftarrow": "←", "Rightarrow": "⇒", "ll": "≪", "gg": "≫",
    "in": "∈", "notin": "∉", "infty": "∞", "ldots": "…", "cdots": "…", "dots": "…", "cap": "∩", "cup": "∪",
    "setminus": "∖", "subseteq": "⊆", "subset": "⊂", "lesssim": "≲", "gtrsim": "≳", "langle": "⟨",
    "rangle": "⟩", "lceil": "⌈", "rceil": "⌉", "lfloor": "⌊", "rfloor": "⌋", "ell": "ℓ", "neq": "≠",
    "ne": "≠", "propto": "∝", "sum": "∑", "prod": "∏", "partial": "∂", "nabla": "∇", "forall": "∀",
    "exists": "∃", "mid": "|", "vert": "|", "lvert": "|", "rvert": "|", "|": "‖", "%": "%", "&": "&",
    "#": "#", "_": "_", "$": "$", "{": "{", "}": "}", ",": " ", ";": " ", ":": " ", "!": "", " ": " ",
    "quad": " ", "qquad": " ",
}  # fmt: skip
_GREEK = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε", "zeta": "ζ",
    "eta": "η", "theta": "θ", "vartheta": "θ", "iota": "ι", "kappa": "κ", "lambda": "λ", "mu": "μ", "nu": "ν",
    "xi": "ξ", "pi": "π", "rho": "ρ", "sigma": "σ", "tau": "τ", "upsilon": "υ", "phi": "φ", "varphi": "φ",
    "chi": "χ", "psi": "ψ", "omega": "ω", "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ",
    "Xi": "Ξ", "Pi": "Π", "Sigma": "Σ", "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω",
}  # fmt: skip
# commands that only style or size what follows: dropped, their argument kept
_STYLES = """bf it rm sf tt cal mathbf mathcal mathsf mathtt mathrm mathit mathbb mathfrak boldsymbol bm text
    textbf textit textrm texttt textsf emph operatorname widetilde tilde Tilde hat widehat bar overline
    underline vec dot left right big Big bigg Bigg bigl bigr Bigl Bigr displaystyle textstyle scriptstyle
    limits nolimits mathop unicode"""
STYLES = frozenset(_STYLES.split())
_SUPERSCRIPT = str.maketrans("0123456789+-=()ni", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁿⁱ")
_SUBSCRIPT = str.maketrans("0123456789+-=()", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎")
_TEXT_SYMBOL = re.compile(r"\\([A-Za-z]+)\b")
_COMMAND = re.compile(r"\\([A-Za-z]+|.)")
# TeX written in running text, outside math: `10.4\%`, `\emph{until-decode privacy}`, `~\cite{X}`
_TEXT_TEX = substitutions(
    (
        (r"~?\\cite[pt]?(?:\[[^\]]*\])?\{[^{}]*\}", ""),
        (r"\\footnote\{([^{}]*)\}", r" (\1)"),
        (r"\\textcolor\{[^{}]*\}\{([^{}]*)\}", r"\1"),
        (r"\{\\(?:em|bf|it|rm|tt|sf|sc)\s+([^{}]*)\}", r"\1"),
        (r"\\(?:emph|text|textbf|textit|textrm|texttt|textsf|textsc|underline|uline)\{([^{}]*)\}", r"\1"),
        (r"\\href\{[^{}]*\}\{([^{}]*)\}", r"\1"),
        (r"\\(?:begin|end)\{(?:itemize|enumerate)\}\s*", ""),
        (r"\\item\b", "•"),
        (r"\\(?:linebreak|newline)\b|\\[,;: ]", " "),
        (r"\\([%&#_$])", r"\1"),
    )
)


def _group(tex: str, start: int) -> tuple[str, int]:
    """The argument at `start` (a `{...}` group, a command, or one character) and the index after it."""
    while start < len(tex) and tex[start] == " ":
        start += 1
    if start >= len(tex):
        return "", start
    if tex[start] == "{":
        depth = 0
        for i in range(start, len(tex)):
            depth += {"{": 1, "}": -1}.get(tex[i], 0)
            if depth == 0:
                return tex[start + 1 : i], i + 1
        return tex[start + 1 :], len(tex)
    command = _COMMAND.match(tex, start)
    if command:
        return command.group(), command.end()
    return tex[start], start + 1


def _wrapped(text: str) -> str:
    """`text` in parentheses when it is more than one symbol (`(n+1)/2`, but `1/2`)."""
    return text if re.fullmatch(r"[\w.\u0370-\u03ff]+", text) else f"({text})"


def _script(body: str, table: dict[int, int], mark: str) -> str:
    """A super- or subscript: Unicode when every character has one (`n²`), else `^(...)`/`_(...)`."""
    if body and all(ord(c) in table for c in body):
        return body.translate(table)
    return mark + _wrapped(body) if body else ""


def tex_to_text(tex: str) -> str:
    """One math span's TeX as plain text: symbols as characters, styles dropped, fractions as a/b."""
    out: list[str] = []
    i = 0
    while i < len(tex):
        char = tex[i]
        if char == "\\":
            command = _COMMAND.match(tex, i)
            if command is None:  # a backslash ending the span, or before a line break (`\\(l\\)` read as `\(l\` `\)`)
                i += 1
                continue
            name, i = command.group(1), command.end()
            if name in ("frac", "tfrac", "dfrac"):
                top, i = _group(tex, i)
                bottom, i = _group(tex, i)
                out.append(f"{_wrapped(tex_to_text(top))}/{_wrapped(tex_to_text(bottom))}")
            elif name == "sqrt":
                body, i = _group(tex, i)
                out.append("√" + _wrapped(tex_to_text(body)))
            elif name in ("href", "url"):
                _, i = _group(tex, i) if name == "href" else ("", i)
                body, i = _group(tex, i)
                out.append(tex_to_text(body))
            elif name == "unicode":
                _, i = _group(tex, i)
            elif name in STYLES:
                continue
            else:
                out.append(_SYMBOLS.get(name) or _GREEK.get(name) or name)
        elif char in "^_":
            body, i = _group(tex, i + 1)
            table = _SUPERSCRIPT if char == "^" else _SUBSCRIPT
            out.append(_script(tex_to_text(body), table, char))
        elif char in "{}":
            i += 1
        elif char == "~":
            out.append(" ")
            i += 1
        else:
            out.append(char)
            i += 1
    return re.sub(r"\s+", " ", "".join(out)).strip()


def is_math(span: str, before: str = "", after: str = "") -> bool:
    """Whether the inside of a `$...$` pair is TeX rather than text between two prices.

    TeX marks decide (`UFO$^3$`, `4$\\times$4`); a short symbol (`$k$`, `$f < 1/2$`, `$>$1k`) counts
    unless it holds a number with a digit just outside the dollars (`$5-$10` is a price range).
    """
    if span != span.strip():  # "$ 0.3 API cost ... and $": spaces inside the dollars are prices', unless TeX
        return "\\" in span
    if not _TEX_MARKS.isdisjoint(span):
        return True
    symbols = _SHORT_SYMBOL.fullmatch(span) and len(_WORD.findall(span)) < 2
    price = any(c.isdigit() for c in span) and (before.isdigit() or after.isdigit())
    return bool(symbols) and not price


def plain_math(text: str) -> str:
    """`text` with every TeX math span written as plain text; text without TeX is returned as it was."""
    if "$" not in text and "\\" not in text:
        return text

    def convert(match: re.Match[str]) -> str:
        tex = match.group("display") or match.group("inline")
        if match.group("inline") is not None:
            before = text[match.start() - 1 : match.start()]
            if not is_math(tex, before, text[match.end() : match.end() + 1]):
                return match.group()
        return tex_to_text(tex)

    text = text.replace("\\$", _DOLLAR)  # an escaped dollar is money, never a math delimiter
    text = _SPAN.sub(convert, text)
    # \( ... \) inline, and \\( ... \\) as Markdown written for MathJax keeps it in a plain-text copy
    text = re.sub(
        r"(\\?)\\\((.+?)\\?\\\)",
        lambda m: tex_to_text(m.group(2).replace("\\\\", "\\") if m.group(1) else m.group(2)),
        text,
        flags=re.S,
    )
    text = substituted(text, _TEXT_TEX)
    text = text.replace(_DOLLAR, "$")
    return _TEXT_SYMBOL.sub(lambda m: _SYMBOLS.get(m.group(1)) or _GREEK.get(m.group(1)) or m.group(), text)
