"""The refusal gate with an LLM configured: evaluate a question set against a local fake model.

With an OpenAI-compatible model the gate stops only clear misses and leaves the rest to the
model's own refusal rule. This runs `assistant eval` with `ASSISTANT_MODEL=openai:fake` against the
test suite's fake OpenAI server (tests/fake_openai.py, real HTTP, the real `openai` client), which
answers every question (so every refusal is the gate's) and rewrites a follow-up by appending the
earlier question, as an LLM's condensing would. Its false-refusal rate is the gate's.

    ASSISTANT_HOME=.assistant-mlsys ASSISTANT_KNOWLEDGE=knowledge/mlsys \\
        python scripts/llm_gate.py knowledge/questions/realistic.jsonl --split test --out results/llm-gate
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from assistant.eval.runner import run  # noqa: E402
from assistant.settings import Settings  # noqa: E402
from tests.fake_openai import FakeOpenAI, Reply  # noqa: E402


class CondensingFake(FakeOpenAI):
    """Replies 'An answer.' to answer prompts; a condense prompt gets the follow-up plus the earlier question."""

    def step_for(self, body: dict) -> Reply:
        prompt = str((body.get("messages") or [{}])[-1].get("content", ""))
        if "Standalone question:" in prompt:
            earlier = re.findall(r"^user: (.+)$", prompt, re.M)
            follow_up = re.search(r"Follow-up question: (.+)", prompt)
            return Reply(f"{follow_up.group(1) if follow_up else ''} {earlier[-1] if earlier else ''}".strip())
        return Reply("An answer.")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("questions", type=Path)
    parser.add_argument("--split", choices=("calibration", "test"))
    parser.add_argument("--out", type=Path, default=Path("results/llm-gate"))
    args = parser.parse_args(argv)
    with CondensingFake() as fake:
        settings = Settings.from_env().with_(model="openai:fake", openai_base_url=fake.base_url)
        return run(settings, args.questions, args.out, modes=(), split=args.split)


if __name__ == "__main__":
    sys.exit(main())
