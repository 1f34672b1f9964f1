"""One user's conversation in the UI: typed turns, kept per session in a `gr.State`.

Gradio deep-copies the State's initial value for every browser session, so concurrent users
never share turns; everything the handlers render comes from these objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from assistant import Answer, Source


@dataclass
class Turn:
    """A question and what came of it: the verified answer, or an error and what was retrieved."""

    question: str
    answer: Answer | None = None
    error: str | None = None
    sources: list[Source] = field(default_factory=list)
    numbering: dict[str, int] = field(default_factory=dict)  # citation number per cited entry id
    rendered: str | None = None  # the finished answer's chat message, rendered once
    kind: str | None = None  # what the question searched: "concept", "abstract" or None (both)


@dataclass
class Session:
    turns: list[Turn] = field(default_factory=list)
    selected: int | None = None  # the turn whose sources the side panel shows

    def history(self) -> list[tuple[str, str]]:
        """The answered turns as (role, text) pairs, the way `Assistant.stream` takes them."""
        return [pair for t in self.turns if t.answer for pair in (("user", t.question), ("assistant", t.answer.text))]

    def selected_turn(self) -> Turn | None:
        index = self.selected
        return self.turns[index] if index is not None and 0 <= index < len(self.turns) else None

    def refused_under_filter(self) -> Turn | None:
        """The last turn, when it was refused while a filter narrowed the search (it can widen it)."""
        last = self.turns[-1] if self.turns else None
        return last if last and last.kind and last.answer and last.answer.refused else None
