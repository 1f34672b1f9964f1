"""Small PDFs written by the tests: pages of text (Helvetica), an optional outline, encryption.

The page content is written by hand (a PDF is a few objects and a cross-reference table); pypdf,
the reader under test, only adds the outline and the encryption, as any PDF tool would.
"""

from __future__ import annotations

from io import BytesIO
from pathlib import Path


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def pdf_bytes(pages: list[list[str]], title: str | None = None) -> bytes:
    """A PDF with one page per item, each a list of text lines (an empty list: a page without text)."""
    objects: list[bytes] = []
    page_ids = [4 + 2 * i for i in range(len(pages))]
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    kids = " ".join(f"{pid} 0 R" for pid in page_ids)
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode())
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    for page_id, lines in zip(page_ids, pages, strict=True):
        ops = ["BT", "/F1 12 Tf", "14 TL", "72 720 Td"]
        for line in lines:
            ops += [f"({_escape(line)}) Tj", "T*"]
        ops.append("ET")
        stream = "\n".join(ops).encode("latin-1") if lines else b""
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
            f"/Contents {page_id + 1} 0 R >>".encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    out = BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    info = ""
    if title:
        info = f" /Info {len(objects) + 1} 0 R"
    trailer = f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R{info} >>\nstartxref\n{xref}\n%%EOF\n"
    data = out.getvalue() + trailer.encode()
    if title:  # rewrite through pypdf so the metadata is a proper object
        from pypdf import PdfReader, PdfWriter

        writer = PdfWriter(clone_from=PdfReader(BytesIO(out.getvalue() + trailer.replace(info, "").encode())))
        writer.add_metadata({"/Title": title})
        buffer = BytesIO()
        writer.write(buffer)
        data = buffer.getvalue()
    return data


def write_pdf(
    path: Path,
    pages: list[list[str]],
    *,
    title: str | None = None,
    outline: dict[int, str] | None = None,
    password: str | None = None,
) -> Path:
    """Write a PDF; `outline` maps 1-based page numbers to bookmark titles; `password` encrypts it."""
    data = pdf_bytes(pages, title)
    if outline or password:
        from pypdf import PdfReader, PdfWriter

        writer = PdfWriter(clone_from=PdfReader(BytesIO(data)))
        for page, name in (outline or {}).items():
            writer.add_outline_item(title=name, page_number=page - 1)
        if password:
            writer.encrypt(user_password=password, owner_password=password + "-owner", algorithm="RC4-128")
        buffer = BytesIO()
        writer.write(buffer)
        data = buffer.getvalue()
    path.write_bytes(data)
    return path
