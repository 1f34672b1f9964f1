"""A team's own notes as knowledge: Markdown, a text runbook, an HTML page and a PDF, written here.

Real readers (markdown-it-py, the standard HTML parser, pypdf), the real encoder and a real Chroma.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pdf_fixture import write_pdf

from assistant import Assistant, Settings
from assistant.knowledge.corpus import load_corpus
from assistant.knowledge.html_reader import read_html
from assistant.knowledge.markdown_reader import read_markdown
from assistant.knowledge.text_reader import read_text_document
from ui.cards import entry_card

HANDBOOK = """---
title: GPU cluster handbook
---

Our cluster has 32 nodes with 8 A100 GPUs each, shared by four research teams.

## Scheduling

Jobs go through Slurm. Request a whole node with `sbatch --gres=gpu:8`.

### Priorities

Research jobs run at priority 10 and batch jobs at priority 1, so research preempts batch.

## Storage

Checkpoints live on the scratch file system, which is wiped after 30 days.

### Priorities

Each team may keep 2 TB on the project file system; scratch has no quota.
"""

RUNBOOK = """Draining a node

Before maintenance, drain the node so that no new jobs land on it.
Run scontrol update nodename=gpu07 state=drain reason=maint and wait for running jobs to end.

Returning a node

After maintenance, resume the node with state=resume and check that nvidia-smi lists all 8 GPUs.
"""

STATUS_PAGE = """<!doctype html>
<html><head><title>Cluster status page</title><style>h2 { color: red }</style></head>
<body><h1>Cluster status page</h1><p>Updated every hour by the monitoring job.</p>
<h2>Known issues</h2>
<ul><li>Node gpu12 has a flaky NVLink bridge and is kept out of multi-GPU jobs.</li>
<li>InfiniBand on rack 3 drops packets under heavy all-reduce traffic.</li></ul>
<h2>Contacts</h2><p>Page the on-call infrastructure engineer through the incident channel.</p>
<script>document.write("not text")</script></body></html>
"""

REPORT_PAGES = [
    ["Quarterly cluster report", "Average GPU utilisation was 71 percent over the quarter."],
    [],  # a page without a text layer (a scanned figure)
    ["Hardware failures", "Three nodes lost ECC memory and two power supplies failed."],
]


def write_wiki(folder: Path) -> Path:
    """Five notes as a team keeps them: nested Markdown, a text runbook, an HTML page, a PDF report."""
    (folder / "runbooks").mkdir(parents=True)
    (folder / "handbook.md").write_text(HANDBOOK, encoding="utf-8")
    (folder / "runbooks" / "drain.txt").write_text(RUNBOOK, encoding="utf-8")
    (folder / "status.html").write_text(STATUS_PAGE, encoding="utf-8")
    write_pdf(folder / "report.pdf", REPORT_PAGES, title="Q3 cluster report", outline={3: "Hardware failures"})
    return folder


@pytest.fixture
def wiki(tmp_path: Path) -> Path:
    return write_wiki(tmp_path / "wiki")


def wiki_assistant(wiki: Path, home: Path) -> Assistant:
    bot = Assistant(Settings(home=home, knowledge=(wiki,), model="extractive"), auto_index=False)
    bot.index(progress=False)
    return bot


# --- readers -------------------------------------------------------------------------------


def test_markdown_sections_follow_the_headings_with_their_parents() -> None:
    document = read_markdown(HANDBOOK)
    assert document.title == "GPU cluster handbook"
    headings = [s.heading for s in document.sections]
    assert headings == ["", "Scheduling", "Scheduling › Priorities", "Storage", "Storage › Priorities"]
    assert "sbatch --gres=gpu:8" in document.sections[1].text  # code kept as written
    assert document.sections[2].line == 11  # lines count the front matter


def test_html_sections_skip_scripts_and_styles() -> None:
    document = read_html(STATUS_PAGE)
    assert document.title == "Cluster status page"
    assert [s.heading for s in document.sections] == ["", "Known issues", "Contacts"]
    issues = document.sections[1].text
    assert "flaky NVLink bridge" in issues and "rack 3" in issues
    assert all("not text" not in s.text and "color" not in s.text for s in document.sections)


@pytest.mark.parametrize(
    ("text", "headings"),
    [
        (RUNBOOK, ["", "Returning a node"]),  # the first line titles the note
        ("Setup\n=====\n\nInstall the driver.\n\nUsage\n-----\n\nRun it.\n", ["", "Usage"]),
        ("# Notes\n\nfirst.\n\n## Second part\n\nmore.\n", ["", "Second part"]),
    ],
)
def test_text_notes_are_split_where_people_put_headings(text: str, headings: list[str]) -> None:
    assert [s.heading for s in read_text_document(text).sections] == headings


def test_text_without_headings_is_grouped_and_anchored_by_first_words() -> None:
    paragraphs = [f"Paragraph {n} says something about the cluster. " * 12 for n in range(6)]
    document = read_text_document("\n\n".join(paragraphs))
    assert len(document.sections) >= 2
    anchors = [s.anchor for s in document.sections]
    assert anchors[0] == "paragraph-0-says-something-about-the" and len(set(anchors)) == len(anchors)


# --- entries ------------------------------------------------------------------------------


def test_every_format_becomes_titled_sections_with_stable_ids(wiki: Path) -> None:
    corpus = load_corpus([wiki])
    titles = {e.id: e.title for e in corpus.entries.values()}
    assert titles == {
        "doc:handbook.md#top": "GPU cluster handbook",
        "doc:handbook.md#scheduling": "GPU cluster handbook › Scheduling",
        "doc:handbook.md#scheduling-priorities": "GPU cluster handbook › Scheduling › Priorities",
        "doc:handbook.md#storage": "GPU cluster handbook › Storage",
        "doc:handbook.md#storage-priorities": "GPU cluster handbook › Storage › Priorities",
        "doc:runbooks/drain.txt#top": "Draining a node",
        "doc:runbooks/drain.txt#returning-a-node": "Draining a node › Returning a node",
        "doc:status.html#top": "Cluster status page",
        "doc:status.html#known-issues": "Cluster status page › Known issues",
        "doc:status.html#contacts": "Cluster status page › Contacts",
        "doc:report.pdf#page-1": "Q3 cluster report › Page 1",
        "doc:report.pdf#page-3": "Q3 cluster report › Hardware failures",
    }
    assert all(e.kind == "document" for e in corpus.entries.values())
    failures = corpus.entries["doc:report.pdf#page-3"]
    assert failures.fields["page"] == 3 and failures.fields["document"] == "Q3 cluster report"
    assert corpus.notes == [
        f"{(wiki / 'report.pdf').as_posix()}: 1 page(s) without text left out (scanned pages need OCR)"
    ]
    assert corpus.problems == []


def test_ids_do_not_move_when_another_section_is_edited(wiki: Path) -> None:
    before = load_corpus([wiki]).entries
    handbook = wiki / "handbook.md"
    handbook.write_text(HANDBOOK.replace("## Scheduling", "## Preface\n\nRead this first.\n\n## Scheduling"), "utf-8")
    after = load_corpus([wiki]).entries
    assert set(after) - set(before) == {"doc:handbook.md#preface"}
    assert all(after[i].text == before[i].text for i in before)


def test_unreadable_files_are_listed_with_the_reason(wiki: Path) -> None:
    write_pdf(wiki / "scan.pdf", [[], []])
    write_pdf(wiki / "locked.pdf", [["secret numbers"]], password="hunter2")
    (wiki / "broken.pdf").write_bytes(b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog")
    (wiki / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    (wiki / "binary.md").write_bytes(b"\x00\x01\x02 not text")
    problems = {Path(p.path).name: p.message for p in load_corpus([wiki]).problems}
    assert problems["scan.pdf"].startswith("no text in the PDF (a scan?)")
    assert problems["locked.pdf"].startswith("encrypted PDF")
    assert problems["broken.pdf"].startswith("cannot read the PDF")
    assert problems["logo.png"].startswith(
        "not a knowledge file - expected .txt, .jsonl, .md, .rst, .ipynb, .html or .pdf"
    )
    assert problems["binary.md"] == "binary file - expected UTF-8 text"


def test_an_ignore_file_leaves_a_packs_own_readme_out(wiki: Path) -> None:
    (wiki / "README.md").write_text("# About this folder\n\nNot knowledge.\n", "utf-8")
    (wiki / ".assistantignore").write_text("# docs about the folder\nREADME.md\n", "utf-8")
    corpus = load_corpus([wiki])
    assert not any(e.id.startswith("doc:README.md") for e in corpus.entries.values())
    assert corpus.ignored == 1 and corpus.problems == []


# --- index and answers ----------------------------------------------------------------------


def test_an_edited_section_is_embedded_again_alone(wiki: Path, tmp_path: Path) -> None:
    bot = wiki_assistant(wiki, tmp_path / "home")
    unchanged = bot.index(progress=False)
    assert (unchanged.added, unchanged.updated, unchanged.removed, unchanged.embedded_chunks) == (0, 0, 0, 0)
    handbook = wiki / "handbook.md"
    handbook.write_text(HANDBOOK.replace("wiped after 30 days", "wiped after 14 days"), "utf-8")
    report = bot.index(progress=False)
    assert (report.added, report.updated, report.removed, report.unchanged) == (0, 1, 0, 11)
    assert report.embedded_chunks == len(bot._index.entries["doc:handbook.md#storage"].chunks)
    assert "14 days" in (bot.entry("doc:handbook.md#storage") or pytest.fail()).text


@pytest.mark.parametrize(
    ("question", "cited"),
    [
        ("How long do checkpoints stay on scratch before they are wiped?", "doc:handbook.md#storage"),
        ("How do I drain a GPU node before maintenance?", "doc:runbooks/drain.txt#top"),
        ("Which node has a flaky NVLink bridge?", "doc:status.html#known-issues"),
        ("How many nodes lost ECC memory last quarter?", "doc:report.pdf#page-3"),
    ],
)
def test_answers_cite_the_section_that_says_it(wiki: Path, tmp_path: Path, question: str, cited: str) -> None:
    bot = wiki_assistant(wiki, tmp_path / "home")
    answer = bot.ask(question)
    assert not answer.refused, answer.text
    assert cited in [c.entry_id for c in answer.citations], (answer.text, [c.entry_id for c in answer.citations])
    assert all(c.supported for c in answer.citations if c.entry_id == cited)


def test_the_card_shows_the_document_section_and_page(wiki: Path) -> None:
    entry = load_corpus([wiki]).entries["doc:report.pdf#page-3"]
    html = entry_card(entry, "Three nodes lost ECC memory", number=1)
    assert "Q3 cluster report › Hardware failures" in html
    for label, value in (("Document", "Q3 cluster report"), ("Section", "Hardware failures"), ("Page", "3")):
        assert f'<div class="card-label">{label}</div><div>{value}</div>' in html
    assert "report.pdf" in html and "<mark>Three nodes lost ECC memory</mark>" in html


def test_the_ui_header_counts_document_sections(wiki: Path, tmp_path: Path) -> None:
    from ui.header import knowledge_line

    status = wiki_assistant(wiki, tmp_path / "home").status()
    assert (status.concepts, status.papers, status.documents) == (0, 0, 12)
    line = knowledge_line(status)
    assert "12 document sections" in line and "not indexed yet" not in line


PLAN_PAGE = [
    "Kestrel H100 Expansion: Hardware Plan",
    "Revision 3, 2025-07-09. Author: Tomasz Wojcik.",
    "2. Delivery schedule",
    "Pilot (batch 0): 8 nodes, 64 GPUs. Delivered 2025-03-10, in production 2025-03-24.",
    "Batch 1: 24 nodes, 192 GPUs. Delivery 2025-07-21. Burn-in 2 weeks.",
    "    In production 2025-08-04. Racks B07-B10.",
    "Batch 2: 16 nodes, 128 GPUs. Delivery 2025-09-22. Burn-in 2 weeks.",
    "    In production 2025-10-06. Racks B11-B13.",
    "3. Burn-in",
    "Each node runs the burn-in suite for 14 days before it is labelled and added to the",
    "queue, and a node with any Xid 48, 63, 74 or 79 error during burn-in goes back to",
    "the vendor for a replacement board.",
    "8. Risks",
    "- Batch 2 slips again: the vendor has moved it once already.",
    "- Power feeds for B11-B12 late: batch 2 could not be racked on arrival.",
]


def test_a_pdf_page_keeps_its_headings_items_and_paragraphs_a_line_each(tmp_path: Path) -> None:
    """pypdf gives a page's lines where the layout wrapped them; they were joined into one run, so "2. Delivery
    schedule" ran into its first sentence, and "In production 2025-10-06." stood apart from batch 2, whose
    date it is. A wrapped line runs on, an indented one continues its item, a heading or item starts a line."""
    write_pdf(tmp_path / "plan.pdf", [PLAN_PAGE], title="Hardware plan")
    (entry,) = load_corpus([tmp_path]).entries.values()
    assert entry.text.splitlines() == [
        "Kestrel H100 Expansion: Hardware Plan",
        "Revision 3, 2025-07-09. Author: Tomasz Wojcik.",
        "2. Delivery schedule",
        "Pilot (batch 0): 8 nodes, 64 GPUs. Delivered 2025-03-10, in production 2025-03-24.",
        "Batch 1: 24 nodes, 192 GPUs. Delivery 2025-07-21. Burn-in 2 weeks. In production 2025-08-04. Racks B07-B10.",
        "Batch 2: 16 nodes, 128 GPUs. Delivery 2025-09-22. Burn-in 2 weeks. In production 2025-10-06. Racks B11-B13.",
        "3. Burn-in",
        "Each node runs the burn-in suite for 14 days before it is labelled and added to the queue, and a node with "
        "any Xid 48, 63, 74 or 79 error during burn-in goes back to the vendor for a replacement board.",
        "8. Risks",
        "- Batch 2 slips again: the vendor has moved it once already.",
        "- Power feeds for B11-B12 late: batch 2 could not be racked on arrival.",
    ]


def test_a_pdf_page_that_opens_mid_sentence_reads() -> None:
    """A page can open with the lower-case end of the last page's sentence: it is the page's first line."""
    from assistant.knowledge.pdf_reader import page_text

    assert page_text("continued from the last page.\n1. Next part\nText of it.") == (
        "continued from the last page.\n1. Next part\nText of it."
    )
    assert page_text("") == ""
