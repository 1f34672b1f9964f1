"""The tokens of a question that look like names of things: products, systems, versions, companies.

Read by the search (a name the knowledge knows changes what is looked up) and by refusal (a name no
entry contains).
"""

from __future__ import annotations

import re

from assistant.text import STOPWORDS

NAME_TOKEN = re.compile(r"[A-Za-z0-9]+(?:[.:\-][A-Za-z0-9]+)*")
APPROXIMATE = ("-ish", "-like", "-style", "-type", "-based", "-sized", "-scale", "-aware", "-free", "-heavy")
NUMBER_WITH_UNIT = re.compile(r"^\d[\d.]*[a-z]{0,3}$", re.I)


def names_in(question: str) -> list[str]:
    """Tokens of the question that look like names of things (products, companies, versions).

    The question's first word, and a function word that opens a later sentence ("Does the rewrite pay
    for itself?" after "what's the catch?"), are capitalised by grammar, not because they name something.
    """
    out = []
    for position, match in enumerate(NAME_TOKEN.finditer(question)):
        token = match.group()
        if token.lower().endswith(APPROXIMATE) or NUMBER_WITH_UNIT.match(token):
            continue
        grammar = position == 0 or (token.lower() in STOPWORDS and opens_a_sentence(question, match.start()))
        has_digit = any(ch.isdigit() for ch in token) and any(ch.isalpha() for ch in token)
        capitalised = token[0].isupper() and not grammar and not token.isupper()
        camel = any(ch.isupper() for ch in token[1:]) and any(ch.islower() for ch in token)
        acronym = token.isupper() and len(token) >= 2 and position > 0
        if has_digit or capitalised or camel or acronym:
            out.append(token)
    return out


def opens_a_sentence(text: str, start: int) -> bool:
    """Does the word at `start` follow a sentence's end (quotes and brackets between them allowed)?"""
    before = text[max(0, start - 8) : start].rstrip(" \t\n\"'([“‘")
    return before[-1:] in (".", "!", "?")


# A configuration key or a flag, named exactly: NCCL_SOCKET_IFNAME, max_num_seqs, spark.executor.memory,
# --tensor-parallel-size (three dotted parts at least: "llama.cpp" and "tf.keras" are names of things)
CONFIGURATION_KEY = re.compile(
    r"(?<![\w-])--[a-z][a-z0-9-]*[a-z0-9]"
    r"|(?<![\w.])[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+(?![\w.])"
    r"|(?<![\w.])[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*){2,}(?![\w.])"
)
# A configuration key as an asker of a team's documents writes it, for finding the sentence that states its
# value (`answer/section_values.py`): a --flag with underscores too (--num_cpu_threads_per_process, which
# CONFIGURATION_KEY reads as --num), lowerCamelCase, and UpperCamelCase of three parts or more
# (InitProcessGroupKwargs; two parts are as often a product's name: DeepSpeed, PyTorch). CONFIGURATION_KEY
# stays as it is: the pack's grounding was fitted with it.
ASKED_KEY = re.compile(
    r"(?<![\w-])(?:--[a-z][\w-]*|[A-Za-z][A-Za-z0-9]*(?:_\w+)+|[a-z]+[A-Z]\w*|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+){2,})"
)
# a title the asker quotes: two words or more, one of them capitalised ("the paper 'Sparse Routing for Edge'")
QUOTED_TITLE = re.compile(r"(?<![A-Za-z0-9])['\"‘“]([^'\"’”]*[A-Z][^'\"’”]*\s[^'\"’”]+)['\"’”](?![A-Za-z0-9])")
MONTH = r"january|february|march|april|may|june|july|august|september|october|november|december"
MONTH_AND_YEAR = re.compile(rf"\b(?:{MONTH})\s+(?:19|20)\d\d\b", re.I)
# a measurement, not a name: 600B, 200GB, 4th, 60k, 3x3, 128-bit, 8-GPU, 95th-percentile
MEASUREMENT = re.compile(r"^\d[\d.,]*(?:st|nd|rd|th|[a-z]{1,3})?$|^\d[\d.,]*(?:st|nd|rd|th)?-|^\d+x\d+$", re.I)
NAME_SHAPE = re.compile(r"[A-Za-z0-9]+(?:[.:\-+][A-Za-z0-9+]+)*")
AFTER_SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s+|\n)\W*$")  # "Ask: who founded ..." starts a sentence too


def named_things(text: str) -> list[str]:
    """The specific things a text names, each as written: configuration keys and flags, quoted titles, a
    month with its year, and name-shaped words - a word with letters and digits (MI325X, v5p), CamelCase
    (CoreWeave), an acronym, a capitalised word that does not start a sentence (Memphis, Groq).

    Stricter than `names_in`: a capitalised word after any sentence start ("... done. Anything on it?",
    "Ask: what ...") is grammar, and measurements (600B, 8-GPU) are values, not names; a three-number
    release (26.05.3) is a name. What a refusal
    checks against the knowledge (`refusal.ungrounded_names`)."""
    whole = [*CONFIGURATION_KEY.finditer(text), *QUOTED_TITLE.finditer(text), *MONTH_AND_YEAR.finditer(text)]
    found = [(m.start(), m.group(m.lastindex or 0).strip()) for m in whole]
    rest = list(text)
    for match in whole:  # their words are not names of their own
        rest[match.start() : match.end()] = " " * (match.end() - match.start())
    for match in NAME_SHAPE.finditer("".join(rest)):
        token = match.group()
        if (MEASUREMENT.match(token) and not is_version(token)) or token.lower().endswith(APPROXIMATE):
            continue
        starts = AFTER_SENTENCE_START.search(text[: match.start()]) is not None
        has_digit = any(ch.isdigit() for ch in token) and any(ch.isalpha() for ch in token)
        camel = any(ch.isupper() for ch in token[1:]) and any(ch.islower() for ch in token)
        capitalised = token[0].isupper() and not starts and not token.isupper()
        acronym = token.isupper() and len(token) >= 2 and not starts and any(ch.isalpha() for ch in token)
        if has_digit or camel or capitalised or acronym or is_version(token):
            found.append((match.start(), token))
    return list(dict.fromkeys(name for _, name in sorted(found)))


def is_version(token: str) -> bool:
    """A release named by three numbers ("26.05.3", "0.6.0"): a thing, where "2.5" or "1,024" is a value."""
    parts = token.split(".")
    return len(parts) == 3 and all(part.isdigit() and len(part) <= 4 for part in parts)


# a number of a hundred or more as a question writes a size: "2,000", "5000", "50k", "1.5B", "6 billion"
SIZE_NUMBER = re.compile(
    r"(?<![\w.,$-])(?:(\d{1,3}(?:,\d{3})+|\d{3,})|(\d+(?:\.\d+)?)\s?(k|m|b|thousand|million|billion))(?![\w,]|\.\d)",
    re.I,
)
# (power of ten, letter, word) of the magnitudes a size is written with, largest first
MAGNITUDES = ((9, "b", "billion"), (6, "m", "million"), (3, "k", "thousand"))
MAGNITUDE_OF = {name: magnitude for magnitude in MAGNITUDES for name in magnitude[1:]}  # "k" or "thousand"


def number_forms(size: str) -> tuple[str, ...]:
    """The lower-cased ways a page may write a size a question writes ("2,000" -> 2000, 2,000, 2k; "50k" ->
    50k, 50 thousand, 50000, 50,000; "6 billion" -> 6b, 6 billion, 6-billion, ...); () for no size."""
    match = SIZE_NUMBER.fullmatch(size.strip())
    if match is None:
        return ()
    plain, mantissa, magnitude = match.groups()
    if plain:
        value = int(plain.replace(",", ""))
    else:
        scaled = float(mantissa) * 10 ** MAGNITUDE_OF[magnitude.lower()][0]
        if not scaled.is_integer():
            return (size.lower(),)
        value = int(scaled)
    forms = [str(value), f"{value:,}"]
    for power, letter, word in MAGNITUDES:
        if value % 10**power == 0 and value >= 10**power:
            short = value // 10**power
            forms += [f"{short}{letter}", f"{short} {word}", f"{short}-{word}"]
            break
    if mantissa and not mantissa.isdigit():  # "1.5B": a decimal size is written as asked, or in its word
        _, letter, word = MAGNITUDE_OF[magnitude.lower()]
        forms += [f"{mantissa}{letter}", f"{mantissa} {word}"]
    return tuple(dict.fromkeys(forms))
