"""Prompt templates live in `prompts/` as text files and are loaded by name.

Keeping them out of the code lets people tune wording without touching Python; each
template is a `str.format` string whose placeholders a test checks.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

PROMPTS_DIR = Path(__file__).resolve().parent.parent / "prompts"


@cache
def load_prompt(name: str) -> str:
    """The text of `prompts/<name>.txt`, without its trailing newline."""
    path = PROMPTS_DIR / f"{name}.txt"
    if not path.is_file():
        raise FileNotFoundError(f"No prompt named {name!r} in {PROMPTS_DIR.name}/ - expected {path.name}")
    return path.read_text(encoding="utf-8").rstrip("\n")


def render(name: str, **values: object) -> str:
    return load_prompt(name).format(**values)


def available() -> list[str]:
    return sorted(p.stem for p in PROMPTS_DIR.glob("*.txt"))
