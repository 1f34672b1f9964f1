"""The process environment that keeps every library offline and quiet.

No library may reach for a model hub or phone home: the Hugging Face hub is switched off,
Chroma's and Gradio's telemetry too, and tokenizers does not fork threads behind our back.
Set once, early (the CLI, the index, tests); a value the user set explicitly is kept.
"""

from __future__ import annotations

import os

OFFLINE_ENV = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "GRADIO_ANALYTICS_ENABLED": "False",
    "ANONYMIZED_TELEMETRY": "False",
    "TOKENIZERS_PARALLELISM": "false",
}


def offline_environment() -> None:
    """Put OFFLINE_ENV into os.environ, keeping what is already set."""
    for key, value in OFFLINE_ENV.items():
        os.environ.setdefault(key, value)


def offline_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """An environment for a child process: `base` (default: this process's) with OFFLINE_ENV filled in."""
    return {**OFFLINE_ENV, **(dict(os.environ) if base is None else base)}
