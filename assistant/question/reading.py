"""The question, read once: what every stage of the chain asks of it, worked out on first use.

Retrieval, refusal, context packing and the offline model each need the same few readings of the
question - the asker's own words, the sentences that ask, what they ask for, the term quoted, the
two sides compared, the names used, the kind of value asked for. Read where each stage needed them,
they were read again and again (the asking sentences five times by refusal alone); a `Reading` is
made once, after a follow-up is condensed, and handed to every stage. Each part is computed when a
stage first asks for it, so a part no stage needs (the value kind of a question that is never
weighed) costs nothing.

This module also owns the `(about: ...)` suffix that offline condensing appends to a follow-up
(`with_subjects`): the reading takes it off again (`own_words`), so writer and reader live together.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property

from assistant.question.encoders import SHIPPED, SentenceEncoders
from assistant.question.intents import (
    QUOTED,
    asked_parts,
    asking_part,
    compare_sides,
    described_sides,
    intent_of,
    subject_of,
)
from assistant.question.names import named_things, names_in
from assistant.question.value_kinds import asked_kind
from assistant.text import any_phrase, content_words, stem, words

ABOUT = re.compile(r"\s*\(about: .*\)\s*$", re.S)
# contractions typed without the apostrophe and chat filler: no entry has them, and they say nothing about
# what the question is about ("why bother tho, whats wrong with pasting the readings in?")
CHAT_SPELLING = any_phrase(
    "whats | thats | theres | whos | hows | wheres | dont | doesnt | didnt | isnt | arent | wasnt | werent | cant"
    " | wont | couldnt | wouldnt | shouldnt | havent | hasnt | im | ive | youre | theyre | weve | tho | lol | gonna"
    " | wanna | kinda | sorta | idk | btw | tbh | imo | pls | plz | thx",
    re.I,
)


def with_subjects(question: str, subjects: list[str]) -> str:
    """A follow-up with the earlier questions it leans on: `and its caveat? (about: What is a GPU?)`."""
    return f"{question} (about: {' / '.join(subjects)})" if subjects else question


def own_words(question: str) -> str:
    """The question without the `(about: ...)` subjects that condensing appended."""
    return ABOUT.sub("", question) or question


@dataclass(frozen=True)
class Reading:
    """One question as the stages read it. `text` is what is searched for: the standalone question,
    a follow-up with the subjects it leans on; every other part is read off the asker's own words.
    `typed` is the question as the asker put it, when condensing made `text` out of it; `encoders` are
    the sentence encoders the learned readers and the offline model read it with (`encoders.py`)."""

    text: str
    typed: str | None = None
    encoders: SentenceEncoders = field(default=SHIPPED, compare=False, repr=False)

    @cached_property
    def as_asked(self) -> Reading:
        """The question in the asker's own words, which refusal weighs: this reading, unless a model
        rewrote a follow-up into other words (then the words typed are read too)."""
        if self.typed is None or own_words(self.typed) == self.own_words:
            return self
        return Reading(self.typed, encoders=self.encoders)

    @cached_property
    def own_words(self) -> str:
        """The question without the subjects condensing appended."""
        return own_words(self.text)

    @cached_property
    def lowered(self) -> str:
        """The own words lower-cased, as the patterns are written."""
        return self.own_words.lower()

    @cached_property
    def asking(self) -> str:
        """The sentences that ask (`intents.asking_part`): a setup told before them is context."""
        return asking_part(self.own_words)

    @cached_property
    def parts(self) -> tuple[str, ...]:
        """The questions the asking sentences put (`intents.asked_parts`): two when "What X, and how Y?"
        asks two things, which two documents may answer; else the asking sentences alone."""
        return asked_parts(self.asking)

    @cached_property
    def part_questions(self) -> tuple[str, ...]:
        """One question per part: the own words with the other parts taken out, so each keeps the setup told
        before it ("cloud job sits in CONFIGURING. what does that state mean"); empty for a one-part question."""
        if len(self.parts) < 2:
            return ()
        out = []
        for n in range(len(self.parts)):
            text = self.own_words
            for m, part in enumerate(self.parts):
                if m != n:
                    text = text.replace(part, " ")
            out.append(" ".join(text.split()))
        return tuple(out)

    @cached_property
    def intent(self) -> str:
        """What the question asks for: a definition, a name, papers, a comparison, ... (`intents.INTENTS`)."""
        return intent_of(self.own_words, self.encoders)

    @cached_property
    def quoted(self) -> str | None:
        """A term the asker quotes ("people say it's 'overfit'"), or None."""
        match = QUOTED.search(self.own_words)
        return match.group(1) if match else None

    @cached_property
    def subject(self) -> str:
        """What a definition question asks about, lower-cased ("What is a learning rate?" -> "learning rate")."""
        return subject_of(self.own_words)

    @cached_property
    def sides(self) -> tuple[str, str] | None:
        """The two things a comparison names ("data and tensor parallelism"), or None."""
        return compare_sides(self.own_words)

    @cached_property
    def described_sides(self) -> tuple[str, str] | None:
        """The two approaches a comparison describes without naming them, or None."""
        return described_sides(self.own_words)

    @cached_property
    def names(self) -> tuple[str, ...]:
        """Tokens that look like names of things, anywhere in the question (`names.names_in`)."""
        return tuple(names_in(self.own_words))

    @cached_property
    def named_in_asking(self) -> tuple[str, ...]:
        """The specific things the asking sentences name (`names.named_things`)."""
        return tuple(named_things(self.asking))

    @cached_property
    def content_words(self) -> set[str]:
        """The own words' stemmed content words (`text.content_words`)."""
        return content_words(self.own_words)

    @cached_property
    def topic_words(self) -> dict[str, tuple[str, ...]]:
        """The content words the topic is read from, without what fast typing adds ("whats", "tho"); each
        with the stems of its hyphenated parts of two letters or more ("over-provisioned": "over",
        "provis"), which the knowledge may have where it lacks the compound."""
        topic = content_words(CHAT_SPELLING.sub("", self.own_words))
        return {w: tuple(stem(p) for p in w.split("-") if len(p) > 1) if "-" in w else () for w in topic}

    @cached_property
    def initials(self) -> str:
        """The first letters of the own words, lower-cased: an acronym the question spells out is in them."""
        return "".join(w[0] for w in words(self.own_words) if w[0].isalpha())

    @cached_property
    def words_besides_names(self) -> int:
        """How many content words the asking sentences have besides the things they name: a question that
        asks little else is about what it names."""
        rest = self.asking
        for name in self.named_in_asking:
            rest = rest.replace(name, " ")
        return len(content_words(rest))

    @cached_property
    def value_kind(self) -> str | None:
        """The kind of value asked for (`value_kinds.asked_kind`: a price, a date, ...), or None."""
        return asked_kind(self.own_words, self.asking, self.encoders)
