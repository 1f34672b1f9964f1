"""Follow-ups: does a question lean on the conversation, and what does it stand for on its own?

A question that names something the knowledge knows (a title, an alias, a technology, or a
rare term an entry contains) is standalone, even when it is short ("What does FlashAttention
do?", "GPU"). Only pronouns ("does it also work for training?") and ellipsis ("and the
downside?") lean back; a question that says it changes the subject ("unrelated: ...") never does.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from assistant.question.reading import with_subjects
from assistant.text import content_words
from assistant.verify.citations import find_markers

History = list[tuple[str, str]]

TOPIC_SWITCH = re.compile(
    r"^\W*(?:unrelated|different (?:topic|question)|new (?:topic|question)|switching (?:topics?|gears)|"
    r"on another note|changing (?:the )?(?:topic|subject)|another (?:topic|question|thing)|"
    r"separate (?:thing|topic|question|issue)|side question|by the way|btw)\b",
    re.I,
)
# What points back at the last answer without naming it, any one of three: a pronoun ("does it scale?",
# "the latter", "is that faster?") ...
PRONOUN = (
    r"\b(?:it|its|it's|they|them|their|theirs|he|she|his|her|the former|the latter|the same|"
    r"(?:this|that|these|those)(?!\s+\w+\s+(?:where|which|that|who|when|whose)\b)(?=\s*(?:[?.!,;:]|$|"
    r"one|ones|approach|paper|method|system|technique|trick|idea|model|work|framework|design|scheme)))\b"
)
# ... "this"/"that" after a verb, a preposition or a conjunction ("where that buys you nothing", "how much
# faster is that than ...", "bring that cost down"), not after a noun, where it starts a relative clause
# ("the part that decides") ...
DEMONSTRATIVE = (
    r"\b(?:in|on|with|for|of|about|from|to|at|by|over|than|like|is|was|are|were|does|do|did|would|will|can|"
    r"could|where|when|if|whether|and|but|why|how|bring|get|make|use|beat|fix|handle|need)\s+(?:this|that)\b"
    r"(?!\s+(?:\w+\s+)?(?:where|which|who|whose)\b)"
)
# ... or a thing of the last answer by its place or role: "the second one", "the first paper", "which of
# those", "what did the authors measure?" (not "the paper that introduced ...", which says which paper)
BACK_REFERENCE = (
    r"\bthe (?:first|second|third|last|other|previous|above|earlier) (?:one|ones|paper|papers|entry|approach|"
    r"method|system|option|idea|design)\b|\b(?:which|one|either|neither|any|none|each) of (?:those|these)"
    r"(?=\s*(?:[?.!,]|$|(?:is|are|was|would|could|should|does|do|has|have|works?|runs?)\b))"
    r"|\bthe (?:authors?|paper|study|abstract)\b(?!\s+(?:that|which|where|who|on|about|from|by|of|in)\b)"
)
POINTS_BACK = re.compile(f"{PRONOUN}|{DEMONSTRATIVE}|{BACK_REFERENCE}", re.I)

# What opens like a continuation: "and ...", "what about ...", "tell me more", or a question about "the"
# thing just discussed without naming it ("what's the catch?")
CONTINUATION = (
    r"^\W*(?:and|also|what about|how about|so|then|but|why|ok so|and what|elaborate|expand on|go deeper|say more|"
    r"tell me more|more (?:on|about|details?)|any (?:numbers|figures|benchmarks|results|code|details))\b"
)
SUBJECTLESS = (
    r"^\W*(?:what(?:'s| is| are| was)|any) the (?:catch|downside|drawback|limitation|trade-?off|cost|overhead|"
    r"speedup|gain|difference|alternative)s?\b"
)
CONTINUES = re.compile(f"{CONTINUATION}|{SUBJECTLESS}", re.I)

# an acknowledgement before the question ("oh nice.", "ok,", "That sounds promising, but ..."): what follows
# it is read as if it opened the message
ACKNOWLEDGEMENT = re.compile(
    r"^\W*(?:(?:oh|ah|ok(?:ay)?|nice|cool|great|thanks|thank you|got it|i see|interesting|makes sense|perfect|"
    r"awesome|neat|wow|right|yes|yeah|sure)\b[\s,.!]*)+"
    r"|^\W*(?:(?:that|this|it) )?(?:sounds|seems|looks) (?:\w+ )?"
    r"(?:promising|good|great|interesting|useful|nice|cool)\b[\s,.!]*",
    re.I,
)


def leans_back(question: str, names_known: Callable[[str], str] = lambda _: "") -> bool:
    """Does the question read like a follow-up of the conversation before it?

    `names_known` says what the question names that the knowledge has ("name", "rare" or "").
    A question that starts like a continuation ("but doesn't switching ...", "what's the catch?")
    leans back unless it names a thing; one that does not, only when it is a word or two.
    """
    if TOPIC_SWITCH.search(question):
        return False
    question = ACKNOWLEDGEMENT.sub("", question, count=1) or question
    if POINTS_BACK.search(question):
        return True
    known = names_known(question)
    if CONTINUES.search(question):
        return known != "name"
    if known:
        return False
    return len(content_words(question)) <= 1


def refers_back(question: str, history: History, names_known: Callable[[str], str] = lambda _: "") -> bool:
    """Does the question lean on earlier turns? Never without an earlier user question."""
    if not any(role == "user" for role, _ in history):
        return False
    return leans_back(question, names_known)


def rule_condense(
    question: str, history: History, names_known: Callable[[str], str] = lambda _: "", depth: int = 3
) -> str:
    """Offline condensing: the follow-up plus the subject from the earlier user questions.

    The subject is the last user question; when that was itself a follow-up, the questions
    before it are added too (newest first, at most `depth`), so the third question in
    "What is a GPU?" / "And what caveat does it have?" / "What is it also called?" still
    knows what "it" is.
    """
    subjects: list[str] = []
    for role, text in reversed(history):
        if role != "user" or not text.strip():
            continue
        subjects.append(text.strip())
        if len(subjects) == depth or not leans_back(text, names_known):
            break
    return with_subjects(question, subjects)


def discussed(history: History, limit: int = 3) -> list[str]:
    """The entries the last answer cited, in order: what "it" and "the catch" of a follow-up are about.

    Raw marker ids, as the answer shows them; the retriever keeps those the index has.
    """
    for role, text in reversed(history):
        if role == "assistant":
            ids: list[str] = []
            for _start, _end, raw in find_markers(text):
                ids.extend(i for i in raw if i not in ids)
            return ids[:limit]
    return []


def format_history(history: History, limit: int = 6) -> str:
    return "\n".join(f"{role}: {text}" for role, text in history[-limit:])
