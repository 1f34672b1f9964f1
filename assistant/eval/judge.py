"""An optional LLM-judged score: only with an openai: model (offline models cannot grade themselves).

It is labelled "judged (LLM)" wherever it is shown, so nobody mistakes it for a measured figure.
"""

from __future__ import annotations

import re

from assistant.answer.prompts import render
from assistant.eval.questions import Question
from assistant.eval.scoring import JudgeFn
from assistant.settings import Settings
from assistant.types import Answer

JUDGE_LABEL = "judged (LLM)"
_JUDGE_WORDS = {"correct": 1.0, "partially": 0.5, "incorrect": 0.0}


def judge_score(reply: str) -> float | None:
    """correct 1, partially 0.5, incorrect 0 - the first of these words in the reply; None without one."""
    found = re.search(r"\b(incorrect|partially|correct)\b", reply.lower())
    return _JUDGE_WORDS[found.group(1)] if found else None


def make_judge(settings: Settings) -> tuple[JudgeFn | None, str]:
    """The judge for an openai: model, and a note saying who graded (or why nobody did)."""
    name = settings.resolved_model
    if not name.startswith("openai:"):
        return None, f"skipped: needs an openai: model, not {name}"
    from assistant.answer.models import make_chat_model

    chat = make_chat_model(settings).llm

    def judge_fn(q: Question, answer: Answer) -> float | None:
        prompt = render("judge", question=q.question, facts="; ".join(q.facts) or "(none listed)", answer=answer.text)
        try:
            reply = chat.invoke(prompt)
        except Exception:  # an optional score must not sink the run; None marks it
            return None
        return judge_score(str(getattr(reply, "content", reply)))

    return judge_fn, f"graded by {name}"
