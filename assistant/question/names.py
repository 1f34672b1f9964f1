"""The tokens of a question that look like names of things: products, systems, versions, companies.

Read by the search (a name the knowledge knows changes what is looked up) and by refusal (a name no
entry contains).
"""

from __future__ import annotations

import re

from assistant.text import STOPWORDS

NAME_TOKEN = re.compile(r"[A-Za-z0-9]+(?:[.:\-][A-Za-z0-9]+)*")
APPROXIMATE = re.compile(r"-(?:ish|like|style|type|based|sized|scale|aware|free|heavy)$", re.I)
NUMBER_WITH_UNIT = re.compile(r"^\d[\d.]*[a-z]{0,3}$", re.I)


def names_in(question: str) -> list[str]:
    """Tokens of the question that look like names of things (products, companies, versions).

    The question's first word, and a function word that opens a later sentence ("Does the rewrite pay
    for itself?" after "what's the catch?"), are capitalised by grammar, not because they name something.
    """
    out = []
    for position, match in enumerate(NAME_TOKEN.finditer(question)):
        token = match.group()
        if APPROXIMATE.search(token) or NUMBER_WITH_UNIT.match(token):
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
