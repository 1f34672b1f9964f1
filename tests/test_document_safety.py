"""Your documents, safe: a file that cannot be read is listed and the rest indexed; nothing outside the
folder is read through a link; every file's reading and chunking is bounded, and a cut is a note.

Through the CLI as a user types it (real MiniLM, real Chroma, the extractive model), or through
`load_corpus` where only what is read matters. The hostile files are made here (tests/pdf_fixture.py).
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import pytest
from pdf_fixture import (
    aes_protected_pdf,
    inflating_pdf,
    long_pdf,
    mutated_pdf,
    number_trailer_pdf,
    pdf_bytes,
    self_pages_pdf,
    unknown_handler_pdf,
    write_pdf,
)

from assistant import Assistant, Settings
from assistant.cli.commands import main
from assistant.index.chroma_index import Index
from assistant.knowledge.corpus import load_corpus
from assistant.knowledge.documents import MAX_ANCHOR_CHARS, MAX_HEADING_CHARS, document_id
from assistant.text import MAX_SYMBOL_RUN

QUOTA = "# GPU quota\n\nEach research team may use 64 H100 GPUs at once, and the quota resets every Monday.\n"
SECRET = "ZX9QSECRETKEYVALUE"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty home for the CLI, the real encoder, the extractive model; no other setting of this machine."""
    for key in [k for k in os.environ if k.startswith(("ASSISTANT_", "OPENAI_"))]:
        monkeypatch.delenv(key)
    home = tmp_path / "home"
    monkeypatch.setenv("ASSISTANT_HOME", str(home))
    monkeypatch.setenv("ASSISTANT_MODEL", "extractive")
    return home


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err, out + err
    return code, out, err


def listed(err: str, prefix: str = "skipped ") -> dict[str, str]:
    """File name -> reason, from the lines `assistant index` prints (`skipped <path>:<line>: <reason>`)."""
    found = {}
    for line in err.splitlines():
        if line.startswith(prefix):
            path, _, reason = line[len(prefix) :].partition(": ")
            found[Path(path.rsplit(":", 1)[0]).name] = reason
    return found


def has_cryptography() -> bool:
    try:
        import cryptography  # noqa: F401
    except ImportError:
        return False
    return True


# --- 1. a file that cannot be read stops nothing -----------------------------------------------------


def test_protected_and_damaged_pdfs_are_listed_with_a_reason_and_the_rest_is_indexed(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "reports"
    folder.mkdir()
    (folder / "quota.md").write_text(QUOTA, "utf-8")
    aes_protected_pdf(folder / "protected.pdf", "The protected report says revenue grew 12 percent.")
    unknown_handler_pdf(folder / "handler.pdf", "Locked by a handler pypdf does not know.")
    number_trailer_pdf(folder / "trailer.pdf", "A trailer that is a number.")
    self_pages_pdf(folder / "pages.pdf", "A page tree that is itself.")
    (folder / "truncated.pdf").write_bytes(pdf_bytes([["Cut off in the middle of the download."]])[:300])

    code, out, err = run(capsys, "index", str(folder))
    assert code == 0, err
    skipped = listed(err)
    damaged = {"handler.pdf", "trailer.pdf", "pages.pdf", "truncated.pdf"}
    assert set(skipped) == damaged | (set() if has_cryptography() else {"protected.pdf"}), err
    assert all(" - " in reason for reason in skipped.values()), skipped  # a reason, then what to do
    assert skipped["handler.pdf"].startswith("encrypted PDF")
    assert skipped["truncated.pdf"].startswith("cannot read the PDF")
    entries = set(Index(Settings(home=home)).entries)
    assert "doc:quota.md#top" in entries
    if has_cryptography():  # an owner password only: nothing is needed to open it, so it is read
        assert "doc:protected.pdf#page-1" in entries
    else:
        assert "pip install cryptography" in skipped["protected.pdf"], skipped["protected.pdf"]

    code, out, err = run(capsys, "ask", "How many H100 GPUs may each research team use?", "--json")
    assert code == 0, err
    assert [c["entry_id"] for c in json.loads(out)["citations"]][:1] == ["doc:quota.md#top"], out

    code, out, _ = run(capsys, "doctor")  # not healthy while files are left out: each is named
    assert code == 1 and "the index is healthy" not in out, out
    named = {Path(line.split(": ", 2)[2].split(":")[0]).name for line in out.splitlines() if "skipped:" in line}
    assert named >= damaged, out


def test_fuzzed_pdfs_are_read_or_listed_and_never_stop_the_rest(tmp_path: Path) -> None:
    base = write_pdf(
        tmp_path / "base.pdf",
        [
            ["Quarterly report", "Average GPU utilisation was 71 percent."],
            ["Hardware failures", "Three nodes lost ECC memory."],
        ],
        title="Q3",
        outline={1: "Intro", 2: "Failures"},
    ).read_bytes()
    folder = tmp_path / "fuzzed"
    folder.mkdir()
    (folder / "quota.md").write_text(QUOTA, "utf-8")
    names = set()
    for seed in range(240):
        name = f"fuzzed-{seed:03d}.pdf"
        (folder / name).write_bytes(mutated_pdf(base, seed))
        names.add(name)
    corpus = load_corpus([folder])
    assert "doc:quota.md#top" in corpus.entries
    read = {Path(str(e.fields["path"])).name for e in corpus.entries.values()}
    problems = {Path(p.path).name: p.message for p in corpus.problems}
    assert names <= read | set(problems)
    assert all("\n" not in message and " - " in message for message in problems.values()), problems


# --- 2. links ----------------------------------------------------------------------------------------


def test_a_link_out_of_the_folder_is_listed_and_its_file_never_read(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outside = tmp_path / "dot-aws"
    outside.mkdir()
    (outside / "credentials").write_text(f"[default]\naws_secret_access_key = {SECRET}\n", "utf-8")
    folder = tmp_path / "notes"
    (folder / "docs").mkdir(parents=True)
    (folder / "docs" / "backup.md").write_text(
        "# Backups\n\nThe nightly backup of the GPU cluster runs at 02:00 and keeps 14 days of snapshots.\n", "utf-8"
    )
    (folder / "creds.txt").symlink_to(outside / "credentials")  # creds.txt -> ~/.aws/credentials
    (folder / "up").symlink_to(outside, target_is_directory=True)  # a folder link out: never walked
    (folder / "through-up.txt").symlink_to("up/credentials")  # a file link by way of that folder link
    (folder / "dotdot.txt").symlink_to("../dot-aws/credentials")  # relative, out through ..
    (folder / "alias.md").symlink_to("docs/backup.md")  # stays inside: read

    code, out, err = run(capsys, "index", str(folder))
    assert code == 0, err
    skipped = listed(err)
    assert set(skipped) == {"creds.txt", "through-up.txt", "dotdot.txt", "up"}, err
    assert all("not followed" in reason for reason in skipped.values()), skipped
    assert all("ASSISTANT_FOLLOW_LINKS=on" in skipped[name] for name in ("creds.txt", "through-up.txt", "dotdot.txt"))
    index = Index(Settings(home=home))
    assert {"doc:alias.md#top", "doc:docs/backup.md#top"} <= set(index.entries)
    assert not any(SECRET in item.entry.text for item in index.entries.values())
    code, out, err = run(capsys, "ask", "What is the aws secret access key?", "--json")
    assert code == 0 and SECRET not in out + err

    # a file named on the command line that is itself a link out of its folder
    code, out, err = run(capsys, "index", str(folder / "creds.txt"), "--yes")
    assert code == 0, err
    assert "not followed" in listed(err)["creds.txt"]
    assert not any(SECRET in item.entry.text for item in Index(Settings(home=home)).entries.values())

    # ASSISTANT_FOLLOW_LINKS=on reads links to files; a folder link is still not walked
    assert Settings.from_env({"ASSISTANT_FOLLOW_LINKS": "on"}).follow_links is True
    assert Settings.from_env({}).follow_links is False
    followed = load_corpus([folder], follow_links=True)
    read = {Path(str(e.fields["path"])).name for e in followed.entries.values() if SECRET in e.text}
    assert read == {"creds.txt", "through-up.txt", "dotdot.txt"}
    assert [Path(p.path).name for p in followed.problems] == ["up"]


# --- 3. bounded reading and chunking -------------------------------------------------------------------

PROSE = "The scheduler drains a node before maintenance and resumes it after the GPU check. " * 14


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("rules.txt", "=" * 300 + "\n\n" + PROSE),  # 1.4 KB opening with a rule of 300 `=`
        ("angles.txt", "<" * 5000 + "\n"),  # 5 KB of `<`
        ("spaced.txt", "# Backups" + " " * 20_000 + "nightly\n\n" + PROSE),  # a heading with a long run of spaces
        ("front.md", "---\ntitle: Runbook" + " " * 600_000 + "x\n---\n\n" + PROSE),  # front matter likewise
    ],
)
def test_a_punctuation_file_indexes_into_a_few_chunks(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, text: str
) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / name).write_text(text, "utf-8")
    code, out, err = run(capsys, "index", str(folder), "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["entries"] >= 1 and report["chunks"] < 30, report
    if "=" * 300 in text or "<" * 5000 in text:  # the run was cut, and the file says so
        assert any(f"over {MAX_SYMBOL_RUN} punctuation characters shortened" in n for n in report["notes"]), report


def test_pdf_pages_over_the_bounds_are_left_out_with_a_note(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "reports"
    folder.mkdir()
    inflating_pdf(folder / "inflating.pdf", 70, "The second page says the cluster was 71 percent busy.")
    long_pdf(folder / "long.pdf", 2001, "The first page of a very long manual.")
    code, _out, err = run(capsys, "index", str(folder))
    assert code == 0, err
    notes = listed(err, "note: ")
    assert "over the reader's bounds" in notes["inflating.pdf"], err
    assert "2,001 pages: pages after 2,000 left out" in err, err
    entries = set(Index(Settings(home=home)).entries)
    assert {"doc:inflating.pdf#page-2", "doc:long.pdf#page-1"} <= entries


def test_a_1_mb_heading_gives_a_short_stable_id_and_a_note(tmp_path: Path) -> None:
    folder = tmp_path / "wiki"
    folder.mkdir()
    words = " ".join(f"word{n}" for n in range(120_000))  # about 1 MB
    (folder / "long.md").write_text(
        f"# {words} first\n\nThe first section.\n\n# {words} second\n\nThe second section.\n", "utf-8"
    )
    corpus = load_corpus([folder])
    ids = sorted(corpus.entries)
    assert len(ids) == 2 and all(len(i) <= len("doc:long.md#") + MAX_ANCHOR_CHARS for i in ids), ids
    assert ids == sorted(load_corpus([folder]).entries)  # the same on every sync
    assert all(len(e.title) <= 2 * MAX_HEADING_CHARS + 3 for e in corpus.entries.values())
    assert any("heading(s) over" in note for note in corpus.notes), corpus.notes


# --- 5. file names in any script ---------------------------------------------------------------------

NAMED = {  # file name -> (its text, a question it answers)
    "заметки.md": ("The staging cluster has 12 nodes with A10 GPUs.", "How many nodes does the staging cluster have?"),
    "отчёт.md": ("The quarterly report counted 431 failed jobs.", "How many failed jobs did the report count?"),
    "日本.md": (
        "The Tokyo office runs its inference service on L4 GPUs, and the service answers within 80 ms.",
        "Which GPUs does the Tokyo office run its inference service on?",
    ),
}


def test_files_named_in_cyrillic_or_japanese_are_documents_of_their_own_and_cited(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    for name, (text, _) in NAMED.items():
        (folder / name).write_text(f"{text}\n", "utf-8")
    bot = Assistant(Settings(home=tmp_path / "home", knowledge=(folder,), model="extractive"), auto_index=False)
    report = bot.index(progress=False)
    ids = {name: document_id(name, "top") for name in NAMED}
    assert len(set(ids.values())) == 3 and report.entries == 3 and not report.skipped, (ids, report.skipped)
    assert all(i.isascii() and not any(c in i for c in " []()") for i in ids.values()), ids
    for name, (_, question) in NAMED.items():
        answer = bot.ask(question)
        assert [c.entry_id for c in answer.citations][:1] == [ids[name]], (name, answer.text, answer.citations)
        assert f"[{ids[name]}]" in answer.text


def test_allowed_links_are_indexed_and_the_index_stays_current(tmp_path: Path) -> None:
    """With ASSISTANT_FOLLOW_LINKS on, a sync reads a link out of the folder, and the next start does not
    see it as a new file (the sync and the freshness check walk the folder the same way)."""
    outside = tmp_path / "shared"
    outside.mkdir()
    (outside / "oncall.md").write_text("# On-call\n\nThe on-call rotation changes every Monday at 09:00.\n", "utf-8")
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "readme.md").write_text("# Notes\n\nTeam notes about the cluster and its rotations.\n", "utf-8")
    (folder / "oncall.md").symlink_to(outside / "oncall.md")
    settings = Settings(home=tmp_path / "home", knowledge=(folder,), follow_links=True)
    index = Index(settings)
    index.sync(progress=False)
    assert "doc:oncall.md#top" in index.entries
    assert index.stale_reason() is None
    assert Index(replace(settings, follow_links=False)).stale_reason() is not None  # the link now counts as gone
