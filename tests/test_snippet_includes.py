"""MkDocs' snippet includes (`--8<-- "install.inc.md:requirements"`) read as the site shows them: the included
text in the page, cited as the page; only files the folder's own sync reads can be included."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from assistant import Assistant, Settings
from assistant.index.chroma_index import Index
from assistant.knowledge import corpus as corpus_module
from assistant.knowledge import snippets
from assistant.knowledge.corpus import load_corpus

PAGE = """\
---
title: GPU installation
---
vLLM runs on the following GPUs.

## Requirements

=== "NVIDIA CUDA"

    --8<-- "docs/installation/gpu.cuda.inc.md:requirements"

=== "AMD ROCm"

    --8<-- "gpu.rocm.inc.md"

## Build from source

--8<-- "installation/gpu.cuda.inc.md:build"

## Verify

Run `python -c "import vllm"`.
"""

CUDA = """\
# --8<-- [start:requirements]

- GPU: compute capability 7.0 or higher (V100, T4, A100, H100)

# --8<-- [end:requirements]
# --8<-- [start:build]

Build with `pip install -e .` in a fresh environment.

# --8<-- [end:build]
"""


def folder_with_snippets(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    (docs / "installation").mkdir(parents=True)
    (docs / "installation" / "gpu.md").write_text(PAGE, encoding="utf-8")
    (docs / "installation" / "gpu.cuda.inc.md").write_text(CUDA, encoding="utf-8")
    (docs / "installation" / "gpu.rocm.inc.md").write_text("- GPU: MI300 (gfx942)\n- ROCm 6.3\n", encoding="utf-8")
    return docs


def test_an_included_part_is_text_of_the_page_and_its_file_is_not_indexed_alone(tmp_path: Path) -> None:
    """The page's Requirements section was two tab names and the text was cited as `gpu.cuda.inc.md`, a file
    the site never shows as a page."""
    docs = folder_with_snippets(tmp_path)
    corpus = load_corpus([docs])
    by_heading = {entry.fields["section"]: entry for entry in corpus.entries.values()}
    requirements = by_heading["Requirements"]
    assert requirements.id == "doc:installation/gpu.md#requirements"
    assert "compute capability 7.0 or higher" in requirements.text and "MI300 (gfx942)" in requirements.text
    assert "8<" not in requirements.text and "start:" not in requirements.text
    assert "pip install -e ." in by_heading["Build from source"].text
    assert requirements.source.endswith("gpu.md:6") and by_heading["Verify"].source.endswith("gpu.md:20")
    assert {entry.fields["path"] for entry in corpus.entries.values()} == {str(docs / "installation" / "gpu.md")}
    said = "\n".join(corpus.notes)
    page, snippet = docs / "installation" / "gpu.md", docs / "installation" / "gpu.cuda.inc.md"
    assert f"{snippet}: read where {page} includes it, not on its own" in said


def test_only_the_folders_own_knowledge_files_can_be_included(tmp_path: Path) -> None:
    """The page names the path; the include is looked up among the files the sync lists, never opened."""
    secret = tmp_path / "secret.md"
    secret.write_text("the root password is hunter2\n", encoding="utf-8")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "private").mkdir()
    (docs / "private" / "keys.md").write_text("api key sk-live-123\n", encoding="utf-8")
    (docs / ".assistantignore").write_text("private/\n", encoding="utf-8")
    (docs / "linked.md").symlink_to(secret)
    (docs / "example.yaml").write_text("replicas: 3\n", encoding="utf-8")
    (docs / "page.md").write_text(
        f'# Page\n\nBefore.\n\n--8<-- "{secret}"\n--8<-- "../secret.md"\n--8<-- "linked.md"\n'
        '--8<-- "private/keys.md"\n--8<-- "example.yaml"\n\nAfter.\n',
        encoding="utf-8",
    )
    (docs / "only.md").write_text(f'--8<-- "{secret}"\n', encoding="utf-8")
    corpus = load_corpus([docs])
    text = "\n".join(entry.text for entry in corpus.entries.values())
    assert "Before." in text and "After." in text
    assert "hunter2" not in text and "sk-live" not in text and "replicas" not in text and "8<" not in text
    said = {Path(problem.path).name: problem.message for problem in corpus.problems}
    assert said["only.md"].startswith(f"no text of its own: it only includes {secret}"), said


def test_pages_that_include_each_other_are_both_read_once(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text('# A\n\nText of a.\n\n--8<-- "b.md"\n', encoding="utf-8")
    (docs / "b.md").write_text('# B\n\nText of b.\n\n--8<-- "a.md"\n\n--8<-- "b.md"\n', encoding="utf-8")
    (docs / "lines.md").write_text('# Lines\n\n--8<-- "c.txt:2:3"\n', encoding="utf-8")
    (docs / "c.txt").write_text("one\ntwo\nthree\nfour\n", encoding="utf-8")
    corpus = load_corpus([docs])
    a = "\n".join(entry.text for entry in corpus.entries.values() if entry.id.startswith("doc:a.md#"))
    assert a.count("Text of a.") == 1 and a.count("Text of b.") == 1, a  # b.md's include of a.md left out there
    assert {entry.fields["path"] for entry in corpus.entries.values()} == {
        str(docs / "a.md"),
        str(docs / "b.md"),
        str(docs / "lines.md"),
    }
    lines = corpus.entries["doc:lines.md#top"].text
    assert "two" in lines and "three" in lines and "one" not in lines and "four" not in lines, lines


def test_an_edited_snippet_is_answered_from_the_page_after_the_next_sync(tmp_path: Path) -> None:
    docs = folder_with_snippets(tmp_path)
    settings = Settings(home=tmp_path / "home", knowledge=(docs,), model="extractive")
    bot = Assistant(settings, auto_index=False)
    bot.index(progress=False)
    answer = bot.ask("Which ROCm version is required?")
    assert "ROCm 6.3" in answer.text and "doc:installation/gpu.md#requirements" in answer.text, answer.text
    assert "inc.md" not in answer.text  # cited as the page that shows it
    snippet = docs / "installation" / "gpu.rocm.inc.md"
    snippet.write_text("- GPU: MI300 (gfx942)\n- ROCm 6.4 or newer\n", encoding="utf-8")
    os.utime(snippet, ns=(snippet.stat().st_atime_ns, snippet.stat().st_mtime_ns + 10**9))
    assert Index(settings).sync(progress=False).updated == 1
    again = Assistant(settings).ask("Which ROCm version is required?")
    assert "ROCm 6.4 or newer" in again.text and "doc:installation/gpu.md#requirements" in again.text, again.text
    assert "inc.md" not in again.text


def test_a_page_grows_by_a_bounded_amount_however_often_it_includes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each part is read once and the page takes MAX_INCLUDED_CHARS of included text at most: 5,000 includes
    of one file read the file once, and only the first ones fit."""
    monkeypatch.setattr(snippets, "MAX_INCLUDED_CHARS", 1_000)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "part.md").write_text("Shared sentence about quotas. " * 10 + "\n", encoding="utf-8")
    (docs / "page.md").write_text("# Page\n\n" + '--8<-- "part.md"\n\n' * 5_000, encoding="utf-8")
    reads: list[Path] = []
    real = corpus_module.read_text

    def counted(path: Path, *args: object, **kwargs: object) -> str | None:
        reads.append(path)
        return real(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(corpus_module, "read_text", counted)
    corpus = load_corpus([docs])
    page = corpus.entries["doc:page.md#top"].text
    assert page.count("Shared sentence about quotas.") == 30, page.count("Shared sentence")  # 3 x 300 characters
    assert reads.count(docs / "part.md") == 2  # once as itself, once for the page's 5,000 includes


def test_an_indented_part_is_taken_out_of_its_indentation(tmp_path: Path) -> None:
    """PaddleScience's README nests its install commands in an HTML list; its docs include that part into a content
    tab, where the part's own eight spaces read it as indented code showing the fence as text."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "README.md").write_text(
        "# Tool\n\n<details>\n\n        <!-- --8<-- [start:git_install] -->\n        ``` shell\n"
        "        git clone https://example.org/tool.git\n        ```\n        <!-- --8<-- [end:git_install] -->\n",
        encoding="utf-8",
    )
    (docs / "index.md").write_text(
        '# Home\n\n## Install\n\n=== "From source"\n\n    --8<--\n    ./README.md:git_install\n    --8<--\n',
        encoding="utf-8",
    )
    install = load_corpus([docs]).entries["doc:index.md#install"].text
    assert "```shell\ngit clone https://example.org/tool.git\n```" in install, install
