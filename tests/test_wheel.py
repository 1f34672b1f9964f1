"""The wheel is complete: built, installed non-editable into a fresh venv, it answers a question.

The fresh venv borrows the test venv's installed dependencies through a `.pth` file (so nothing
is downloaded), but not the project: the editable finder in that site-packages is not run, and
the commands run from a folder outside the checkout, so every module, prompt and stylesheet comes
from the installed wheel.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from tests.conftest import REPO, SEED

pytestmark = pytest.mark.slow


def run(command: list[str], **kwargs) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, **kwargs)
    assert done.returncode == 0, f"{' '.join(command)}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    return done


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(REPO)])
    [built] = out.glob("mlsys_assistant-*.whl")
    return built


def test_the_wheel_holds_the_prompts_and_the_stylesheet(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    prompts = {n for n in names if n.startswith("prompts/") and n.endswith(".txt")}
    assert {"prompts/answer_system.txt", "prompts/refusal.txt"} <= prompts
    assert "ui/style.css" in names and "assistant/answer/models/extractive.py" in names
    assert {
        "assistant/retrieval/learned_order.json",
        "assistant/question/value_reader.npz",
    } <= names  # fitted weights the search loads
    assert not any(n.startswith(("tests/", "knowledge/", "scripts/")) for n in names)


def test_installed_wheel_answers_a_question(wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = venv / "bin" / "python"
    site = Path(run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"]).stdout.strip())
    (site / "borrowed-dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n", encoding="utf-8")
    run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", "-q", str(wheel)])

    workdir = tmp_path / "elsewhere"
    workdir.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ASSISTANT_", "OPENAI_", "PYTHONPATH"))}
    where = run(
        [str(python), "-c", "import assistant, prompts, ui; print(assistant.__file__, prompts.__file__, ui.__file__)"],
        cwd=workdir,
        env=env,
    ).stdout.split()
    assert all(path.startswith(str(venv)) for path in where), where

    env.update({"ASSISTANT_HOME": str(tmp_path / "home"), "ASSISTANT_KNOWLEDGE": str(SEED)})
    done = run([str(venv / "bin" / "assistant"), "ask", "What is a GPU?", "--json"], cwd=workdir, env=env)
    answer = json.loads(done.stdout)
    assert not answer["refused"] and answer["citations"][0]["entry_id"] == "MLD-0472"
