"""Jupyter notebooks read as documents: Markdown cells by their headings, code cells as code blocks with
what they printed, citations pointing into the file; a file that is no notebook is a problem, not a stop."""

from __future__ import annotations

import json
from pathlib import Path

from assistant import Assistant, Settings
from assistant.knowledge.corpus import load_corpus
from assistant.knowledge.notebook_reader import OUTPUT_CHARS, OUTPUT_LINES, read_notebook

LOG = [f"step {n} loss 0.{n:03d}\n" for n in range(40)]


def markdown(*lines: str) -> dict[str, object]:
    return {"cell_type": "markdown", "metadata": {}, "source": list(lines)}


def code(source: str, *outputs: dict[str, object]) -> dict[str, object]:
    return {"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": list(outputs), "source": [source]}


def printed(*lines: str) -> dict[str, object]:
    return {"name": "stdout", "output_type": "stream", "text": list(lines)}


NOTEBOOK = {
    "cells": [
        markdown("# Fine-tuning with LoRA on one A100\n", "\n", "This notebook trains an adapter."),
        markdown("## Setup\n", "Install the pinned versions first."),
        code("!pip install peft==0.13.2", printed("Successfully installed peft-0.13.2\n")),
        code("trainer.train()", printed(*LOG)),
        markdown("## Results\n", "The adapter reaches 71.3% accuracy after 3 epochs."),
        code(
            "evaluate(model)",
            {"output_type": "execute_result", "data": {"text/plain": ["0.713"], "image/png": "iVBORw0KGgo="}},
            {
                "output_type": "error",
                "ename": "RuntimeError",
                "evalue": "CUDA out of memory",
                "traceback": ["\u001b[31m"],
            },
        ),
        {"cell_type": "raw", "metadata": {}, "source": ["{{ jinja_only_for_nbconvert }}"]},
    ],
    "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
    "nbformat": 4,
    "nbformat_minor": 5,
}


def written(notebook: dict[str, object]) -> str:
    return json.dumps(notebook, indent=1)  # as Jupyter writes a notebook: one source line a JSON line


def test_cells_read_as_sections_code_and_what_it_printed() -> None:
    text = written(NOTEBOOK)
    document = read_notebook(text)
    assert document.title == "Fine-tuning with LoRA on one A100"
    by_heading = {section.heading: section for section in document.sections}
    assert set(by_heading) == {"", "Setup", "Results"}
    setup = by_heading["Setup"].text
    assert "```python\n!pip install peft==0.13.2\n```" in setup
    assert "```output\nSuccessfully installed peft-0.13.2\n```" in setup
    log = [f"step {n} loss 0.{n:03d}" for n in range(OUTPUT_LINES)]
    assert "```output\n" + "\n".join(log) + "\n…\n```" in setup  # a long log: its first lines
    assert "step 39" not in setup
    results = by_heading["Results"].text
    assert "```output\n0.713\nRuntimeError: CUDA out of memory\n```" in results  # no image, no ANSI frames
    every = "\n".join(section.text for section in document.sections)
    assert "iVBOR" not in every and "jinja_only_for_nbconvert" not in every and "\u001b" not in every
    lines = text.split("\n")  # a section's line is its heading's line in the file
    assert '"## Setup\\n"' in lines[by_heading["Setup"].line - 1]
    assert '"## Results\\n"' in lines[by_heading["Results"].line - 1]


def test_an_endless_output_line_is_cut() -> None:
    notebook = {**NOTEBOOK, "cells": [markdown("# Run\n"), code("print(blob)", printed("x" * 100_000 + "\n"))]}
    text = read_notebook(written(notebook)).sections[0].text
    assert f"```output\n{'x' * OUTPUT_CHARS}\n…\n```" in text


def test_a_file_that_is_no_notebook_is_a_problem_naming_the_fix(tmp_path: Path) -> None:
    folder = tmp_path / "notebooks"
    folder.mkdir()
    (folder / "good.ipynb").write_text(written(NOTEBOOK), encoding="utf-8")
    (folder / "cut.ipynb").write_text(written(NOTEBOOK)[:200], encoding="utf-8")
    (folder / "old.ipynb").write_text(json.dumps({"nbformat": 3, "worksheets": []}), encoding="utf-8")
    corpus = load_corpus([folder])
    problems = {Path(problem.path).name: problem.message for problem in corpus.problems}
    assert problems["cut.ipynb"].startswith("not a notebook: invalid JSON at line "), problems
    assert problems["old.ipynb"] == "notebook format 3: convert it with `jupyter nbconvert --to notebook --nbformat 4`"
    assert "good.ipynb" not in problems
    assert {entry.source.split(":")[0] for entry in corpus.entries.values()} == {str(folder / "good.ipynb")}


def test_a_notebook_folder_is_indexed_and_answered_with_a_citation_into_it(tmp_path: Path) -> None:
    folder = tmp_path / "notebooks"
    folder.mkdir()
    (folder / "lora.ipynb").write_text(written(NOTEBOOK), encoding="utf-8")
    (folder / ".ipynb_checkpoints").mkdir()  # Jupyter's autosaved copy: in a dot folder, not read twice
    (folder / ".ipynb_checkpoints" / "lora-checkpoint.ipynb").write_text(written(NOTEBOOK), encoding="utf-8")
    bot = Assistant(Settings(home=tmp_path / "home", knowledge=(folder,), model="extractive"), auto_index=False)
    assert bot.index(progress=False).entries == 3
    answer = bot.ask("What accuracy does the LoRA adapter reach?")
    assert not answer.refused, answer.text
    assert "71.3%" in answer.text and "doc:lora.ipynb#results" in answer.text
