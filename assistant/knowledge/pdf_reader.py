"""PDF files as documents: a section per page, read with pypdf.

A page is the unit a reader of a PDF cites, so each page is a section: its heading is the outline
(bookmark) entry that starts on it when the PDF has an outline, else "Page N", and its anchor is
`page-N` either way (an outline title can repeat; a page number is what the card shows). The title is
the PDF's metadata title, else the file name.

A PDF that is encrypted, damaged or has no text layer at all (a scan) is a `PdfProblem` with a
one-line reason; pages without text inside an otherwise readable PDF are left out.
"""

from __future__ import annotations

import logging
from io import BytesIO
from typing import Any

from assistant.knowledge.documents import Document, Section

MAX_PAGES = 2000  # a larger PDF is read up to here (the problem says so)


class PdfProblem(Exception):
    """Why a PDF gives no text, in words a user can act on."""


def outline_titles(reader: Any) -> dict[int, str]:
    """1-based page number -> the first outline title that points at it (nested entries flattened)."""
    titles: dict[int, str] = {}

    def walk(items: Any) -> None:
        for item in items:
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


def read_pdf(data: bytes) -> tuple[Document, int]:
    """The document and the number of pages that had no text; `PdfProblem` when none can be read."""
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # its warnings about odd files are not the user's
    try:
        reader = PdfReader(BytesIO(data))
        if reader.is_encrypted:
            try:
                if not reader.decrypt(""):
                    raise PdfProblem("encrypted PDF - save a copy without a password")
            except NotImplementedError as error:
                raise PdfProblem(f"encrypted PDF ({error}) - save a copy without a password") from None
        pages = reader.pages
        count = len(pages)
    except PdfProblem:
        raise
    except (PdfReadError, ValueError, KeyError, TypeError, OSError) as error:
        raise PdfProblem(f"cannot read the PDF ({type(error).__name__}: {error}) - is the file complete?") from None
    titles = outline_titles(reader)
    metadata_title = ""
    try:
        metadata = reader.metadata
        metadata_title = str(metadata.get("/Title") or "") if metadata is not None else ""
    except Exception:  # damaged metadata: the file name titles it
        metadata_title = ""
    sections: list[Section] = []
    empty = 0
    for number in range(1, min(count, MAX_PAGES) + 1):
        try:
            text = pages[number - 1].extract_text() or ""
        except Exception:  # one damaged page: the others still read
            text = ""
        if not text.strip():
            empty += 1
            continue
        heading = titles.get(number) or f"Page {number}"
        sections.append(Section(heading, text, number, page=number, anchor=f"page-{number}"))
    if not sections:
        raise PdfProblem("no text in the PDF (a scan?) - run OCR on it first, e.g. ocrmypdf")
    return Document(metadata_title, sections), empty
