"""reStructuredText pages (a Sphinx project's docs) read as documents: sections by their titles, code and
tables kept whole, Sphinx's directives and roles read as the site shows them, nothing outside the page."""

from __future__ import annotations

from pathlib import Path

import pytest

from assistant import Assistant, Settings
from assistant.knowledge import rst_reader
from assistant.knowledge.corpus import load_corpus
from assistant.knowledge.rst_reader import read_rst

PAGE = """\
.. _install:

.. This comment is not the page's text.

Installation
============

Flowline runs on Linux. See :ref:`the quick start <quickstart>` and :class:`~flowline.engine.Engine`.

.. toctree::
   :maxdepth: 2

   usage

Requirements
------------

- Python 3.9 or newer
- A CUDA 12 driver

.. note::
   The wheel bundles its own NCCL.

.. code-block:: bash
   :caption: Install from PyPI

   pip install flowline
   flowline --check-build

.. versionadded:: 0.4
   The ``--offline`` flag.

Settings
--------

.. list-table:: Options
   :header-rows: 1

   * - Name
     - Default
   * - ``num_workers``
     - 4

``max_batch``
   Largest batch the server forms. Defaults to 32.

GPU workers
~~~~~~~~~~~

>>> import flowline
>>> flowline.gpus()
8

.. automodule:: flowline.engine
   :members:
"""


def test_sections_code_tables_and_callouts_read_as_the_site_shows_them() -> None:
    document = read_rst(PAGE)
    assert document.title == "Installation"
    by_heading = {section.heading: section for section in document.sections}
    assert set(by_heading) == {"", "Requirements", "Settings", "Settings › GPU workers"}
    opening = by_heading[""].text
    assert opening == "Flowline runs on Linux. See the quick start and Engine."  # roles are their words
    assert by_heading[""].line == 5 and by_heading["Requirements"].line == 15  # the title's own line
    requirements = by_heading["Requirements"].text
    assert "Python 3.9 or newer\nA CUDA 12 driver\nNote: The wheel bundles its own NCCL." in requirements
    assert "Install from PyPI\n```bash\npip install flowline\nflowline --check-build\n```" in requirements
    assert "New in version 0.4: The --offline flag." in requirements
    settings = by_heading["Settings"].text
    assert "```table\n| Name | Default |\n| num_workers | 4 |\n```" in settings
    assert "max_batch: Largest batch the server forms. Defaults to 32." in settings
    assert "```pycon\n>>> import flowline\n>>> flowline.gpus()\n8\n```" in by_heading["Settings › GPU workers"].text
    every = "\n".join(section.text for section in document.sections)
    for hidden in ("usage", "maxdepth", "members", "comment", "automodule", ".. ", ":class:", ":ref:"):
        assert hidden not in every, hidden


def test_a_page_reads_nothing_outside_itself(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a docutils.conf where the sync runs would turn file insertion back on, were config files read
    (tmp_path / "docutils.conf").write_text("[general]\nfile_insertion_enabled: yes\nraw_enabled: yes\n")
    monkeypatch.chdir(tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text("the database password is hunter2\n", encoding="utf-8")
    page = (
        f"Notes\n=====\n\nOur notes.\n\n.. include:: {secret}\n\n.. raw:: html\n\n   <script>steal()</script>\n\n"
        f".. csv-table:: Hosts\n   :file: {secret}\n\nThe end.\n"
    )
    document = read_rst(page)
    every = "\n".join(section.text for section in document.sections)
    assert "Our notes." in every and "The end." in every
    assert "hunter2" not in every and "steal" not in every
    assert "include::" not in every and "csv-table" not in every  # no directive shown as text either


def test_a_page_too_large_for_the_parser_is_read_as_plain_text(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rst_reader, "MAX_RST_CHARS", 100)
    notes: list[str] = []
    document = read_rst(PAGE, notes)
    every = "\n".join(section.text for section in document.sections)
    assert "Flowline runs on Linux." in every  # nothing the user had is lost
    assert notes == ["over 100 characters: read as plain text, not as reStructuredText"]


def test_an_rst_folder_is_indexed_and_answered_with_its_code(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "install.rst").write_text(PAGE, encoding="utf-8")
    corpus = load_corpus([folder])
    assert not corpus.problems, corpus.problems  # an .rst file is knowledge, not "not a knowledge file"
    bot = Assistant(Settings(home=tmp_path / "home", knowledge=(folder,), model="extractive"), auto_index=False)
    assert bot.index(progress=False).entries == 4
    answer = bot.ask("How do I install flowline from PyPI?")
    assert not answer.refused, answer.text
    assert "pip install flowline" in answer.text and "doc:install.rst#requirements" in answer.text


def test_a_page_nested_past_what_docutils_reads_is_read_as_plain_text() -> None:
    nested = "\n\n".join(("  " * depth) + f"level{depth}" for depth in range(400))  # a block quote in each
    notes: list[str] = []
    document = read_rst(f"Deep\n====\n\n{nested}\n", notes)
    every = "\n".join(section.text for section in document.sections)
    assert "level0" in every and "level399" in every  # the sync goes on, and nothing the page said is lost
    assert notes == ["docutils could not read it (RecursionError): read as plain text, not as reStructuredText"]


def test_a_page_that_only_includes_or_builds_an_api_reference_says_so(tmp_path: Path) -> None:
    """Sphinx projects keep `install_include.rst` beside `install.rst` for the site's navigation and an `api.rst`
    of autodoc directives; each was skipped as "no text in the document", which reads like a reader's fault."""
    (tmp_path / "install.rst").write_text(PAGE, encoding="utf-8")
    (tmp_path / "install_include.rst").write_text(
        ".. include:: ./install.rst\n   :start-after: marker-start\n   :end-before: marker-end\n", encoding="utf-8"
    )
    (tmp_path / "api.rst").write_text("API\n===\n\n.. automodule:: flowline.engine\n   :members:\n", encoding="utf-8")
    (tmp_path / "empty.md").write_text("<!-- nothing yet -->\n", encoding="utf-8")
    said = {Path(p.path).name: str(p) for p in load_corpus([tmp_path]).problems}
    assert said["install_include.rst"].endswith(
        "install_include.rst: no text of its own: it only includes ./install.rst, which is indexed on its own if "
        "the knowledge folder holds it - nothing to index"
    ), said
    assert "its API reference is built from the code (automodule), which is not read" in said["api.rst"], said
    assert said["empty.md"].endswith("empty.md: no text in the document - nothing to index"), said
    assert "install.rst" not in said
