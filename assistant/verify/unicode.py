"""Text as it reads: one spelling for what looks the same, so look-alike letters cannot fool a check.

A model's reply or a question may spell "not" with a Cyrillic "о", "AMD" in fullwidth letters,
"not" struck through with combining overlays, or an entry id with a zero-width space inside: to
a reader it is the word, to a regular expression it is not. `plain` gives the text a reader sees:

1. NFKC (fullwidth and mathematical letters and digits become ASCII, "［" becomes "["), except
   superscript and subscript digits and fractions ("10⁹", "x²" keep their meaning);
2. default-ignorable code points removed (zero-width spaces and joiners, soft hyphens,
   variation selectors, bidirectional controls and overrides, the BOM, tag characters);
3. combining marks that did not compose with an ASCII letter or digit removed (overlays,
   strokes, enclosing circles: "n̶o̶t̶" is "not");
4. letters that Unicode TS #39 lists as confusable with ASCII letters or digits (465 characters
   from its confusables.txt: Cyrillic, Greek, Armenian, Cherokee, Latin small capitals, letter-
   like symbols; `lookalike_table.py`) folded onto them - inside a word that also has ASCII
   letters (mixed script: "nоt", "АMD"), or a word of two or more letters that are all such
   look-alikes (whole-script confusable: "АМО"). A word in another script ("привет", "λόγος"
   with its non-confusable letters) and a lone Greek letter ("α") are left as they are.

The answer the user sees, the claims the verifier checks, the entry text they are checked
against and the question read by the refusal rules all go through it (measured on the held-out
knowledge/questions/claims-swaps.jsonl, which it was not tuned on).
"""

from __future__ import annotations

import re
import unicodedata

from assistant.verify.lookalike_table import LOOKALIKES

# Default_Ignorable_Code_Point (DerivedCoreProperties.txt) with the bidirectional controls
# (a str.translate table: each is deleted)
IGNORABLE = dict.fromkeys(
    [
        *(0x00AD, 0x034F, 0x061C, 0x115F, 0x1160, 0x17B4, 0x17B5, *range(0x180B, 0x1810), *range(0x200B, 0x2010)),
        *(*range(0x202A, 0x202F), *range(0x2060, 0x2070), 0x3164, *range(0xFE00, 0xFE10), 0xFEFF, 0xFFA0),
        *(*range(0xFFF0, 0xFFF9), *range(0x1BCA0, 0x1BCA4), *range(0x1D173, 0x1D17B), *range(0xE0000, 0xE1000)),
    ]
)
WORD = re.compile(r"[^\W_]+", re.UNICODE)


def plain(text: str) -> str:
    """The text with one spelling for what reads the same (see the module docstring)."""
    if text.isascii():
        return text
    text = nfkc_keeping_exponents(text).translate(IGNORABLE)
    text = without_stray_marks(text)
    return WORD.sub(fold_word, text) if any(c in LOOKALIKES for c in text) else text


def nfkc_keeping_exponents(text: str) -> str:
    """NFKC, but superscript and subscript digits and signs and vulgar fractions stay as they are."""
    out: list[str] = []
    run: list[str] = []
    for char in text:
        if is_exponent(char):
            out.append(unicodedata.normalize("NFKC", "".join(run)))
            out.append(char)
            run = []
        else:
            run.append(char)
    out.append(unicodedata.normalize("NFKC", "".join(run)))
    return "".join(out)


def is_exponent(char: str) -> bool:
    """A superscript or subscript number or sign, or a fraction: NFKC would change what it says."""
    if char.isascii():
        return False
    tag = unicodedata.decomposition(char).split(" ", 1)[0]
    return tag == "<fraction>" or (tag in ("<super>", "<sub>") and not char.isalpha())


def without_stray_marks(text: str) -> str:
    """Combining marks left on an ASCII letter or digit after NFKC (it composes the real accents) dropped."""
    out: list[str] = []
    base = ""
    for char in text:
        if unicodedata.category(char) in ("Mn", "Me"):
            if base.isascii() and base.isalnum():
                continue
        else:
            base = char
        out.append(char)
    return "".join(out)


def fold_word(match: re.Match[str]) -> str:
    """A mixed-script word, or a whole word of look-alikes, in the ASCII it looks like."""
    word = match.group()
    if word.isascii():
        return word
    letters = [c for c in word if c.isalpha()]
    mixed = any(c.isascii() for c in letters)
    whole = len(letters) >= 2 and all(c.isascii() or c in LOOKALIKES for c in letters)
    if not (mixed or whole):
        return word
    return "".join(LOOKALIKES.get(c, c) for c in word)
