"""PDF files as documents: a section per page, read with pypdf.

A page is the unit a reader of a PDF cites, so each page is a section: its heading is the outline
(bookmark) entry that starts on it when the PDF has an outline, else "Page N", and its anchor is
`page-N` either way (an outline title can repeat; a page number is what the card shows). The title is
the PDF's metadata title, else the file name. A page's text has a heading, a list item or a paragraph
a line (`page_text`), as other documents' sections have.

A PDF that is encrypted, damaged or has no text layer at all (a scan) is a `PdfProblem` with a
one-line reason, whatever pypdf raised; pages without text inside an otherwise readable PDF are left
out. A PDF protected only against editing (an owner password, no password to open it) is read; one
encrypted with AES needs the `cryptography` package, and says so when it is missing.

Reading is bounded, and each bound that cut something is a note: MAX_PAGES pages, MAX_STREAM_BYTES
of decoded content and MAX_STREAM_TOKENS content operators and operands per stream (a page whose
content inflates to 70 MB is left out, not parsed for minutes), MAX_OUTLINE_ITEMS outline entries,
and READ_SECONDS for the whole file (the pages after it are left out).
"""

from __future__ import annotations

import contextlib
import logging
import re
import time
from collections.abc import Iterator
from io import BytesIO
from typing import Any

from assistant.knowledge.documents import READ_SECONDS, Document, Section

MAX_PAGES = 2000  # a larger PDF is read up to here (a note says so)
MAX_STREAM_BYTES = 8_000_000  # decoded bytes of one stream (a page's content); pypdf's own bound is 75 MB
MAX_STREAM_TOKENS = 250_000  # operators and operands parsed in one content stream (pypdf's: 2,000,000)
MAX_OUTLINE_ITEMS = 10_000  # outline (bookmark) entries looked at
NEEDS_CRYPTOGRAPHY = (
    "encrypted PDF (AES) - reading it needs the cryptography package: pip install cryptography "
    "(or save a copy without a password)"
)


class PdfProblem(Exception):
    """Why a PDF gives no text, in words a user can act on."""


@contextlib.contextmanager
def bounded_pypdf() -> Iterator[None]:
    """pypdf with this reader's bounds on decoding and parsing, for this thread only (pypdf 7
    keeps its configuration in a context variable; an older one keeps its own, larger, bounds)."""
    try:
        from pypdf import apply_configuration  # type: ignore[attr-defined,unused-ignore]
    except ImportError:
        yield
        return
    limits: dict[str, Any] = {
        "zlib_maximum_output_length": MAX_STREAM_BYTES,
        "lzw_maximum_output_length": MAX_STREAM_BYTES,
        "run_length_maximum_output_length": MAX_STREAM_BYTES,
        "brotli_maximum_output_length": MAX_STREAM_BYTES,
        "array_based_stream_maximum_output_length": MAX_STREAM_BYTES,
        "stream_parsing_work_maximum_count": MAX_STREAM_TOKENS,
    }
    with contextlib.ExitStack() as stack:
        with contextlib.suppress(TypeError):  # a pypdf that names its bounds otherwise keeps its own
            stack.enter_context(apply_configuration(None, **limits))
        yield


def is_limit(error: BaseException) -> bool:
    from pypdf.errors import LimitReachedError

    return isinstance(error, LimitReachedError)


def is_missing_dependency(error: BaseException) -> bool:
    from pypdf.errors import DependencyError

    return isinstance(error, DependencyError)


def cannot_read(error: BaseException) -> PdfProblem:
    """The one-line reason for an error pypdf raised while opening a PDF, whatever its type."""
    if is_missing_dependency(error):
        if "cryptography" in str(error) or "AES" in str(error):
            return PdfProblem(NEEDS_CRYPTOGRAPHY)
        return PdfProblem(f"the PDF needs a package that is not installed ({error})")
    if isinstance(error, NotImplementedError):
        if "encrypt" in str(error).lower():
            return PdfProblem(f"encrypted PDF ({error}) - save a copy without a password")
        return PdfProblem(f"the PDF uses what its reader does not support ({error}) - save it again as PDF")
    if is_limit(error):
        return PdfProblem(f"the PDF is over a bound of its reader ({error}) - is the file complete?")
    message = " ".join(str(error).split())[:200]
    return PdfProblem(f"cannot read the PDF ({type(error).__name__}: {message}) - is the file complete?")


def outline_titles(reader: Any) -> dict[int, str]:
    """1-based page number -> the first outline title that points at it (nested entries flattened)."""
    titles: dict[int, str] = {}
    seen = 0

    def walk(items: Any) -> None:
        nonlocal seen
        for item in items:
            seen += 1
            if seen > MAX_OUTLINE_ITEMS:
                return
            if isinstance(item, list):
                walk(item)
                continue
            try:
                page = reader.get_destination_page_number(item) + 1
            except Exception:  # an outline entry pointing nowhere: the page keeps "Page N"
                continue
            title = " ".join(str(getattr(item, "title", "") or "").split())
            if title and page not in titles:
                titles[page] = title

    try:
        walk(reader.outline)
    except Exception:  # a damaged outline: pages are still read
        return {}
    return titles


def read_pdf(data: bytes) -> tuple[Document, list[str]]:
    """The document and notes on what was left out (pages without text, pages over a bound);
    `PdfProblem` when no page can be read. Nothing else escapes: any error pypdf raises is a reason."""
    logging.getLogger("pypdf").setLevel(logging.ERROR)  # its warnings about odd files are not the user's
    with bounded_pypdf():
        try:
            return _read(data)
        except PdfProblem:
            raise
        except RecursionError:
            raise PdfProblem("cannot read the PDF (its objects nest too deep) - is the file complete?") from None
        except Exception as error:  # pypdf raises many types on damaged files; none may stop a sync
            raise cannot_read(error) from None


SHORT_LINE = 0.8  # of the page's full line width: a line shorter than this ends its paragraph
# a line that starts a list item or a numbered heading ("- Batch 2 slips", "2. Delivery schedule", "b) ...")
ITEM_START = re.compile(r"^(?:[-*+•‣▪]|\d+(?:\.\d+)*[.)]|[a-z][.)])\s+")
# a labelled line ("Date: 2025-06-30", "Batch 1: 24 nodes"): a new one after a line that ended a sentence
LABEL_START = re.compile(r"^[A-Z][\w .()/-]{0,30}:\s")
SENTENCE_END = (".", "!", "?", ":", ")")


def page_text(text: str) -> str:
    """A page's text as other documents' sections hold theirs: a paragraph, a list item or a heading a line.

    pypdf gives the lines where the layout wrapped them. A line runs on into the next when it fills the page's
    width (a wrapped line: at least SHORT_LINE of the width most lines reach), when the next is indented
    under it (an item's continuation) or when it ends mid-sentence and the next goes on in lower case,
    unless the next starts a list item or a numbered heading, or is a labelled line after a finished
    sentence. Joined into one run, as pages were, "2. Delivery schedule" ran into its first sentence and
    each item's date lost the item it belongs to."""
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    if not lines:
        return ""
    widths = sorted(len(line.strip()) for line in lines)
    full = widths[(len(widths) * 9) // 10]
    out: list[str] = []
    wrapped = False
    for raw in lines:
        line = " ".join(raw.split())
        if out and runs_on(out[-1], raw, line, wrapped):
            out[-1] = f"{out[-1]} {line}"
        else:
            out.append(line)
        wrapped = len(line) >= SHORT_LINE * full
    return "\n".join(out)


def runs_on(before: str, raw: str, line: str, wrapped: bool) -> bool:
    """Does the page's `line` (`raw` as extracted) go on from the text `before` it (`page_text`)?"""
    finished = before.endswith(SENTENCE_END)
    if ITEM_START.match(line) or (LABEL_START.match(line) and finished):
        return False
    return wrapped or raw[:1].isspace() or (line[:1].islower() and not finished)


def _read(data: bytes) -> tuple[Document, list[str]]:
    from pypdf import PdfReader

    started = time.monotonic()
    try:
        reader = PdfReader(BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise PdfProblem("encrypted PDF - save a copy without a password")
        pages = reader.pages
        count = len(pages)
    except PdfProblem:
        raise
    except Exception as error:
        raise cannot_read(error) from None
    titles = outline_titles(reader)
    metadata_title = ""
    try:
        metadata = reader.metadata
        metadata_title = str(metadata.get("/Title") or "") if metadata is not None else ""
    except Exception:  # damaged metadata: the file name titles it
        metadata_title = ""
    sections: list[Section] = []
    notes: list[str] = []
    empty = 0
    over: list[int] = []  # pages whose content is over a bound
    for number in range(1, min(count, MAX_PAGES) + 1):
        if time.monotonic() - started > READ_SECONDS:
            last = min(count, MAX_PAGES)
            notes.append(f"read for over {READ_SECONDS:.0f} s: pages {number:,}-{last:,} left out - split the PDF")
            break
        try:
            text = pages[number - 1].extract_text() or ""
        except Exception as error:
            if is_missing_dependency(error) and reader.is_encrypted:
                raise cannot_read(error) from None  # every page would fail the same way
            if is_limit(error):
                over.append(number)
                continue
            text = ""  # one damaged page: the others still read
        if not text.strip():
            empty += 1
            continue
        heading = titles.get(number) or f"Page {number}"
        sections.append(Section(heading, page_text(text), number, page=number, anchor=f"page-{number}"))
    if not sections:
        if over:
            raise PdfProblem(
                f"every page is over the reader's bounds ({MAX_STREAM_BYTES // 1_000_000} MB decoded, "
                f"{MAX_STREAM_TOKENS:,} operators per page) - no text read"
            )
        raise PdfProblem("no text in the PDF (a scan?) - run OCR on it first, e.g. ocrmypdf")
    if empty:
        notes.insert(0, f"{empty} page(s) without text left out (scanned pages need OCR)")
    if over:
        shown = ", ".join(map(str, over[:5])) + (f" and {len(over) - 5:,} more" if len(over) > 5 else "")
        notes.append(
            f"page(s) {shown} over the reader's bounds ({MAX_STREAM_BYTES // 1_000_000} MB decoded, "
            f"{MAX_STREAM_TOKENS:,} operators per page) left out"
        )
    if count > MAX_PAGES:
        notes.append(f"the PDF has {count:,} pages: pages after {MAX_PAGES:,} left out - split the PDF")
    return Document(metadata_title, sections), notes
