"""The encoders shipped in `encoder_files/`: where their files are and what their export recorded.

Its own module so the encoders (`onnx_encoder.py`, `static_encoder.py`) and the factory that
builds them (`embeddings.py`) both read it without importing each other.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

ENCODER_FILES = Path(__file__).resolve().parent / "encoder_files"


@lru_cache(maxsize=1)
def _encoders() -> dict[str, dict[str, Any]]:
    data: dict[str, dict[str, Any]] = json.loads((ENCODER_FILES / "encoders.json").read_text(encoding="utf-8"))
    return data


def encoder_info(setting: str) -> dict[str, Any]:
    """What `scripts/export_encoder.py` recorded for a shipped encoder (`local` or `static`)."""
    return _encoders()[setting]
