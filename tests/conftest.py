"""Shared fixtures: one real index of the seed corpus per test session (real MiniLM, real Chroma)."""

from __future__ import annotations

import json
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
GLOSSARY = REPO / "knowledge" / "mlsys" / "ml-glossary" / "terms.jsonl"


def write_glossary(knowledge: Path, terms: set[str] | None) -> Path:
    """A new knowledge folder holding the real glossary records in `terms` (None: all 412)."""
    knowledge.mkdir(parents=True)
    every = GLOSSARY.read_text("utf-8").splitlines()
    lines = [line for line in every if terms is None or json.loads(line)["term"] in terms]
    (knowledge / "terms.jsonl").write_text("\n".join(lines) + "\n", "utf-8")
    return knowledge


def glossary_assistant_of(folder: Path, terms: set[str]):  # type: ignore[no-untyped-def]
    """An Assistant (extractive) over a real index of the named real glossary terms, built in `folder`."""
    from assistant import Assistant, Settings
    from assistant.index.chroma_index import Index

    knowledge = write_glossary(folder / "ml-glossary", terms)
    settings = Settings(home=folder / "home", knowledge=(knowledge,), model="extractive")
    Index(settings).sync(progress=False)
    return Assistant(settings)


def documents_assistant_of(folder: Path, files: dict[str, str]):  # type: ignore[no-untyped-def]
    """An Assistant (extractive) over a real index of the documents `files` (name -> text), written into
    `folder`/docs with its home in `folder`/home."""
    from assistant import Assistant, Settings

    knowledge = folder / "docs"
    knowledge.mkdir(parents=True)
    for name, text in files.items():
        (knowledge / name).write_text(text, encoding="utf-8")
    bot = Assistant(Settings(home=folder / "home", knowledge=(knowledge,), model="extractive"))
    bot.index(progress=False)
    return bot


def int8_without_vnni() -> bool:
    """Does onnxruntime's int8 matrix product differ on this CPU? On x86 without VNNI (AVX2 only), its u8 x s8
    kernel sums pairs of products in 16 bits, which saturate; the encoder has it widen them instead
    (`session.x64quantprecision`, `onnx_encoder`), which brings its vectors near a VNNI machine's (worst cosine
    to torch 0.992 against 0.994; 0.985 saturated, on one AMD EPYC) but not to the same bits, so checks
    pinned to the figures recorded on a VNNI machine cannot hold there."""
    try:
        flags = Path("/proc/cpuinfo").read_text(encoding="utf-8")
    except OSError:
        return False
    return " avx2" in flags and " avx512_vnni" not in flags and " avx_vnni" not in flags


INT8_WITHOUT_VNNI = int8_without_vnni()
WITHOUT_VNNI_REASON = (
    "this CPU has AVX2 but no VNNI: onnxruntime computes its int8 products another way, so the shipped "
    "encoder's vectors differ slightly from those the recorded figures were measured with (see tests/conftest.py)"
)


@pytest.fixture(scope="session")
def seed_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An index of knowledge/seed built once; tests copy it (see `seed_settings`)."""
    from assistant import Settings
    from assistant.index.chroma_index import Index

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
