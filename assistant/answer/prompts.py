"""Prompt templates live in the top-level `prompts` package as text files and are loaded by name.

Keeping them out of the code lets people tune wording without touching Python; each template is
a `str.format` string whose placeholders a test checks. They are read with `importlib.resources`,
so an installed wheel finds them as a source checkout does.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable


def prompts_dir() -> Traversable:
    return resources.files("prompts")


@cache
def load_prompt(name: str) -> str:
    """The text of `prompts/<name>.txt`, without its trailing newline."""
    path = prompts_dir() / f"{name}.txt"
    if not path.is_file():
        raise FileNotFoundError(f"No prompt named {name!r} in prompts/ - expected {name}.txt")
    return path.read_text(encoding="utf-8").rstrip("\n")


def render(name: str, **values: object) -> str:
    return load_prompt(name).format(**values)


def available() -> list[str]:
    return sorted(p.name.removesuffix(".txt") for p in prompts_dir().iterdir() if p.name.endswith(".txt"))
