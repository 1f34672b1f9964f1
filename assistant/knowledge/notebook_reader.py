"""Jupyter notebooks (`.ipynb`) as documents: the Markdown cells read as Markdown, code cells as code blocks.

A team's tutorials, runbooks and experiment write-ups are often notebooks. Their Markdown cells are read
by the Markdown reader, so a heading in a cell starts a section ("Setup › Install"); a code cell is a code
block in the notebook's language, and what it printed (a stream, a result's plain text) a block of its
own after it, its first OUTPUT_LINES lines (OUTPUT_CHARS characters): a training log or a progress bar
goes on for pages. Images, HTML and widget outputs are what a page shows, not words, and are left out, as
are raw cells. A notebook new to a followed folder is "new" to the index's fingerprints, so the next start
syncs it.

A section's line is the notebook file's line where that text's cell source is, as the JSON holds it (one
source line a JSON line in the format Jupyter writes), so a citation points into the file. The notebook
format 4 is read (Jupyter's since 2015); an older one or a file that is no notebook is a problem that
names the fix, and the sync goes on.
"""

from __future__ import annotations

import json
from typing import Any

from assistant.blocks import fenced
from assistant.knowledge.documents import Document, Section

OUTPUT_LINES = 20  # lines of a cell's printed output kept after its code
OUTPUT_CHARS = 2_000  # and characters of them
OUTPUT_INFO = "output"  # the info string of a printed output's block


class NotebookProblem(ValueError):
    """A file that cannot be read as a notebook; its message is the problem's."""


def read_notebook(text: str, notes: list[str] | None = None) -> Document:
    """The document of a notebook; `notes` gets a line when reading stopped early (`read_markdown`)."""
    from assistant.knowledge.markdown_reader import read_markdown  # markdown-it: only to read Markdown

    try:
        notebook = json.loads(text)
    except json.JSONDecodeError as error:
        raise NotebookProblem(
            f"not a notebook: invalid JSON at line {error.lineno} - save it again from Jupyter"
        ) from None
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        major = notebook.get("nbformat") if isinstance(notebook, dict) else None
        if isinstance(major, int) and major < 4:
            raise NotebookProblem(
                f"notebook format {major}: convert it with `jupyter nbconvert --to notebook --nbformat 4`"
            )
        raise NotebookProblem("not a notebook: no list of cells - save it again from Jupyter")
    language = notebook_language(notebook)
    markdown: list[str] = []
    file_lines: list[int] = []  # for each line of `markdown`, the notebook file's line it comes from
    finder = SourceFinder(text)
    for cell in notebook["cells"]:
        if not isinstance(cell, dict):
            continue
        source = cell_text(cell.get("source"))
        if not source.strip():
            continue
        at = finder.line_of(cell.get("source"))
        kind = cell.get("cell_type")
        if kind == "markdown":
            lines = source.split("\n")
        elif kind == "code":
            lines = fenced(language, source.rstrip("\n").split("\n")).split("\n")
            printed = printed_text(cell.get("outputs"))
            if printed:
                lines += fenced(OUTPUT_INFO, printed).split("\n")
        else:  # a raw cell: what nbconvert passes through untouched, not the notebook's text
            continue
        markdown += [*lines, ""]
        file_lines += [at + n for n in range(len(lines))] + [at + len(lines)]
    document = read_markdown("\n".join(markdown), notes)
    sections = [
        Section(s.heading, s.text, file_lines[min(s.line, len(file_lines)) - 1] if file_lines else 1)
        for s in document.sections
    ]
    return Document(document.title, sections)


def notebook_language(notebook: dict[str, Any]) -> str:
    """The language of its code cells: the kernel's, else the language info's, else Python."""
    metadata = notebook.get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    kernel, info = metadata.get("kernelspec"), metadata.get("language_info")
    for name in (
        kernel.get("language") if isinstance(kernel, dict) else None,
        info.get("name") if isinstance(info, dict) else None,
    ):
        if isinstance(name, str) and name.strip():
            return name.strip().lower()
    return "python"


def cell_text(source: Any) -> str:
    """A cell's source: a list of lines (each with its newline) or one string."""
    if isinstance(source, list):
        return "".join(part for part in source if isinstance(part, str))
    return source if isinstance(source, str) else ""


def printed_text(outputs: Any) -> list[str]:
    """What a code cell printed: its streams and the plain text of its results, the first OUTPUT_LINES
    lines and OUTPUT_CHARS characters, then "…" when there were more."""
    lines: list[str] = []
    for output in outputs if isinstance(outputs, list) else []:
        if not isinstance(output, dict):
            continue
        if output.get("output_type") == "stream":
            text = cell_text(output.get("text"))
        elif output.get("output_type") in ("execute_result", "display_data"):
            data = output.get("data")
            text = cell_text(data.get("text/plain")) if isinstance(data, dict) else ""
        else:  # an error's traceback is ANSI-coloured frames; its name and message are in the last line
            text = f"{output.get('ename', '')}: {output.get('evalue', '')}" if output.get("ename") else ""
        lines += [line.rstrip() for line in text.rstrip("\n").split("\n") if line.strip()]
    kept: list[str] = []
    for line in lines[:OUTPUT_LINES]:
        if sum(len(k) for k in kept) + len(line) > OUTPUT_CHARS:  # one endless line (minified JSON, a progress bar)
            kept.append(line[: max(0, OUTPUT_CHARS - sum(len(k) for k in kept))])
            return [*kept, "…"]
        kept.append(line)
    return [*kept, "…"] if len(lines) > OUTPUT_LINES else kept


class SourceFinder:
    """The file line of each cell's source, found in order: the JSON text of its first line, searched from
    where the last cell's was found."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.position = 0

    def line_of(self, source: Any) -> int:
        first = source[0] if isinstance(source, list) and source else source
        if isinstance(first, str) and first:
            found = self.text.find(json.dumps(first, ensure_ascii=False), self.position)
            if found < 0:
                found = self.text.find(json.dumps(first), self.position)  # written with \\u escapes
            if found >= 0:
                self.position = found
        return self.text.count("\n", 0, self.position) + 1
