"""Shared fixtures: one real index of the seed corpus per test session (real MiniLM, real Chroma)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from assistant.offline import offline_environment

offline_environment()  # before any library that reads it is imported

REPO = Path(__file__).resolve().parent.parent
SEED = REPO / "knowledge" / "seed"
DATA = Path(__file__).resolve().parent / "data"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


@pytest.fixture(scope="session")
def seed_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An index of knowledge/seed built once; tests copy it (see `seed_settings`)."""
    from assistant import Settings
    from assistant.index import Index

    home = tmp_path_factory.mktemp("seed-index")
    Index(Settings(home=home, knowledge=(SEED,))).sync(progress=False)
    return home


@pytest.fixture
def seed_settings(seed_home: Path, tmp_path: Path):
    """Settings for a private copy of the seed index, extractive model."""
    from assistant import Settings

    home = tmp_path / "home"
    shutil.copytree(seed_home, home)
    return Settings(home=home, knowledge=(SEED,), model="extractive")


@pytest.fixture(scope="session")
def seed_assistant(seed_home: Path):
    """A shared read-only Assistant over the seed index (extractive model)."""
    from assistant import Assistant, Settings

    return Assistant(Settings(home=seed_home, knowledge=(SEED,), model="extractive"))
