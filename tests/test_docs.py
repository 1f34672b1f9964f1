"""The commands in README.md and docs/*.md: the cheap ones run here, every other one says where it runs.

Every line of a ```bash block is a command: a trailing backslash joins the next line, `#` starts a
comment, and an `export` line only sets the environment for the lines after it. A command is read
without its leading `NAME=value` assignments and with `.venv/bin/` dropped, so `ASSISTANT_HOME=x
.venv/bin/assistant ask ...` is `assistant ask ...`. A cheap command (CHEAP) runs in a subprocess
with this venv's python and must exit 0; every other command must start like a row of EXERCISED,
which names the test file that runs it (and a string that file must contain), CI, or why it is run
by hand. A new command in the docs fails here until someone says how it is run.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

README = REPO / "README.md"
PAGES = [README, *sorted((REPO / "docs").glob("*.md"))]
README_MAX_LINES = 300

# Run here, exactly as written (after the normalising above): each takes seconds at most.
CHEAP = {
    "assistant --help",
    "assistant ask --help",
    "assistant index --help",
    "python scripts/import_layers.py --check",
    "python scripts/check_questions.py",
    "python scripts/question_overlap.py knowledge/questions/realistic-dev5.jsonl",
    "python scripts/claim_support.py",
}

# command prefix -> (where it is exercised, the string that file must contain; None for no file)
# A row whose file is in PENDING is for a feature being built: its test file is checked once it exists.
EXERCISED: dict[str, tuple[str, str | None]] = {
    "make run": ("tests/test_startup.py", "serve"),  # the Makefile's run target is `assistant serve`
    "make test": ("Makefile", "pytest"),  # CI runs make test: the whole suite
    "make eval": ("tests/test_faults.py", 'main(["eval"'),  # its `assistant eval`; the full sets by hand
    "make bench": ("tests/test_bench.py", "assistant.bench"),  # its parts; the full run takes 15 minutes
    "make soak": ("tests/test_soak.py", 'load_script("soak")'),
    "make llm": ("tests/test_real_llm.py", None),
    "python3.11 -m venv": ("Makefile", "-m venv"),  # what make run and make test do first
    "pip install": ("Makefile", "pip install --quiet -c $(LOCK)"),
    "source .venv/bin/activate": ("Makefile", "-m venv"),  # the venv's own activate script
    "assistant ask": ("tests/test_api.py", 'main(["ask"'),
    "assistant index": ("tests/test_api.py", 'main(["index"'),
    "assistant index --rebuild": ("tests/test_reliability.py", '"--rebuild"'),
    "assistant chat": ("tests/test_faults.py", 'main(["chat"])'),
    "assistant serve": ("tests/test_startup.py", '"serve", "--port"'),
    "assistant serve --no-sync": ("tests/test_replicas.py", '"serve", "--no-sync"'),
    "chroma run": ("tests/processes.py", '"run", "--path"'),
    "docker compose": ("by hand: builds an image, starts four containers; test_replicas runs the same", None),
    "python -m assistant.bench.replica": ("by hand: the scale points take up to an hour; bench tests its parts", None),
    "assistant eval": ("tests/test_faults.py", 'main(["eval"'),
    "assistant bench": ("tests/test_bench.py", "assistant.bench"),
    "assistant doctor": ("tests/test_robust_index.py", '"doctor"'),
    "assistant describe": ("tests/test_describe.py", None),
    "python scripts/fit_ranker.py": ("tests/test_ranker.py", 'load_script("fit_ranker")'),
    "python scripts/fit_value_reader.py": ("tests/test_value_reader.py", 'load_script("fit_value_reader")'),
    "python scripts/train_question_pieces.py": ("by hand: trains a model for minutes with the export extra", None),
    "python scripts/calibrate_refusal.py": ("by hand: needs the mlsys index (minutes to build)", None),
    "python scripts/cold_start.py": ("by hand: a measurement of fresh processes, printed, never asserted", None),
    "python -m assistant.bench.encoders": ("by hand: part of the full assistant bench (minutes)", None),
    "python scripts/descriptions_effect.py": ("by hand: indexes twice, runs whole question sets", None),
}
PENDING = {"tests/test_describe.py", "tests/test_real_llm.py"}  # features being built
PENDING_PAGES = {"docs/local-model.md"}  # a page being written with its feature

ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=\S*$")
LINK = re.compile(r"\]\(([^)\s]+)\)|src=\"([^\"]+)\"")


def bash_commands(page: Path) -> list[str]:
    """Every command of the page's ```bash blocks, normalised."""
    commands, block, joined = [], False, ""
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            block = line.strip() == "```bash"
            continue
        if not block:
            continue
        joined += line.rstrip()
        if joined.endswith("\\"):
            joined = joined[:-1] + " "
            continue
        command, joined = normalise(joined), ""
        if command:
            commands.append(command)
    return commands


def normalise(line: str) -> str:
    words = shlex.split(line, comments=True)
    if words[:1] == ["export"]:
        return ""
    while words and ASSIGNMENT.match(words[0]):
        words.pop(0)
    if words:
        words[0] = words[0].removeprefix(".venv/bin/")
    if words[:1] == ["python3"]:
        words[0] = "python"
    return shlex.join(words) if words else ""


def anchors(page: Path) -> set[str]:
    """The anchors GitHub gives the page's headings: lower case, punctuation dropped, spaces as dashes."""
    headings = re.findall(r"^#+ (.+)$", page.read_text(encoding="utf-8"), flags=re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def documented() -> list[tuple[str, str]]:
    return [(page.relative_to(REPO).as_posix(), c) for page in PAGES for c in bash_commands(page)]


def row_for(command: str) -> str | None:
    """The longest EXERCISED prefix the command starts with, word for word."""
    words = shlex.split(command)
    fits = [p for p in EXERCISED if words[: len(p.split())] == p.split()]
    return max(fits, key=len, default=None)


def test_the_pages_have_commands_and_the_parser_reads_them() -> None:
    commands = [c for _, c in documented()]
    assert "make run" in commands and "make test" in commands
    assert normalise("ASSISTANT_HOME=x .venv/bin/assistant ask 'What is a GPU?'  # a comment") == (
        "assistant ask 'What is a GPU?'"
    )
    assert normalise("export ASSISTANT_HOME=x") == ""


@pytest.mark.parametrize(("page", "command"), documented())
def test_every_command_runs_here_or_says_where_it_runs(page: str, command: str) -> None:
    if command in CHEAP:
        return  # run by the test below
    row = row_for(command)
    assert row is not None, (
        f"{page}: `{command}` is neither run here (CHEAP) nor listed in EXERCISED - "
        "add it to one of them in tests/test_docs.py"
    )


@pytest.mark.parametrize("command", sorted({c for _, c in documented() if c in CHEAP}))
def test_cheap_commands_exit_0(command: str, tmp_path: Path) -> None:
    words = shlex.split(command)
    argv = [sys.executable, "-m", "assistant", *words[1:]] if words[0] == "assistant" else [sys.executable, *words[1:]]
    env = {**os.environ, "ASSISTANT_HOME": str(tmp_path / "home"), "PYTHONPATH": str(REPO)}
    done = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"`{command}` exited {done.returncode}:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"


def test_every_place_named_exists_and_runs_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    pending = []
    for prefix, (where, needle) in EXERCISED.items():
        if where.startswith("by hand: "):
            assert needle is None and len(where) > len("by hand: ") + 10, f"{prefix}: say why it is run by hand"
            continue
        path = REPO / where
        if where in PENDING and not path.exists():
            pending.append(f"{prefix} ({where})")
            continue
        assert path.is_file(), f"{prefix}: {where} does not exist"
        if needle is not None:
            assert needle in path.read_text(encoding="utf-8"), f"{prefix}: {where} does not contain {needle!r}"
    with capsys.disabled():
        if pending:
            print(f"\ndocs commands whose tests are pending: {', '.join(pending)}")


def test_no_row_is_left_over() -> None:
    """A row or a cheap command no page uses any more is removed, so the table stays true."""
    commands = [c for _, c in documented()]
    assert sorted(c for c in CHEAP if c not in commands) == []
    used = {row_for(c) for c in commands if c not in CHEAP}
    assert sorted(set(EXERCISED) - used) == []


def test_the_readme_is_a_page_a_user_reads() -> None:
    assert len(README.read_text(encoding="utf-8").splitlines()) <= README_MAX_LINES


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_linked_page_exists(page: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for match in LINK.finditer(page.read_text(encoding="utf-8")):
        target, _, anchor = (match.group(1) or match.group(2)).partition("#")
        if re.match(r"^[a-z]+:", target):
            continue  # a web link
        path = (page.parent / target).resolve() if target else page
        shown = path.relative_to(REPO).as_posix()
        if shown in PENDING_PAGES and not path.exists():
            with capsys.disabled():
                print(f"\n{page.name} links {shown}, a page still to be written")
            continue
        assert path.exists(), f"{page.relative_to(REPO)} links {target}, which does not exist"
        if anchor and path.suffix == ".md":
            assert anchor in anchors(path), f"{page.relative_to(REPO)} links {target}#{anchor}: no such heading"


def test_the_layer_graph_in_the_architecture_page_is_the_script_s() -> None:
    """docs/architecture.md prints the output of scripts/import_layers.py: a new import must update it."""
    from tests.script_modules import load_script

    page = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    heading = "The output of `python3 scripts/import_layers.py`:"
    assert heading in page, "docs/architecture.md lost the printed layer graph"
    block = page.split(heading, 1)[1].split("```", 2)[1].strip("\n").splitlines()
    lines, _ = load_script("import_layers").report()
    assert block == lines, "docs/architecture.md's layer graph differs: paste `python3 scripts/import_layers.py`"
