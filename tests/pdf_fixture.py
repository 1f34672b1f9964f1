"""Small PDFs written by the tests: pages of text (Helvetica), an optional outline, encryption.

The page content is written by hand (a PDF is a few objects and a cross-reference table); pypdf,
the reader under test, only adds the outline and the encryption, as any PDF tool would.
"""

from __future__ import annotations

from io import BytesIO
from pathlib import Path


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def _assemble(objects: list[bytes]) -> bytes:
    """Numbered objects (1 is the catalog), a cross-reference table and a trailer."""
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
    out.write(f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode())
    return out.getvalue()


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
    data = _assemble(objects)
    if title:  # rewrite through pypdf so the metadata is a proper object
        from pypdf import PdfReader, PdfWriter

        writer = PdfWriter(clone_from=PdfReader(BytesIO(data)))
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


# --- hostile PDFs: each as a person gets one, made here ----------------------------------------------


def text_stream(lines: list[str]) -> bytes:
    ops = ["BT", "/F1 12 Tf", "14 TL", "72 720 Td", *(f"({_escape(line)}) Tj T*" for line in lines), "ET"]
    return "\n".join(ops).encode("latin-1")


def pdf_of_streams(contents: list[bytes], shared: bool = False) -> bytes:
    """A page per content stream, each stored compressed (FlateDecode), as PDF writers store them.
    `shared`: every page after the first shows the second stream (a long PDF for a few bytes a page)."""
    import zlib

    streams = contents[:2] if shared else contents
    pages = len(contents)
    first_stream = 4 + pages  # objects: catalog, pages, font, the pages, then the streams
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>"]
    kids = " ".join(f"{4 + i} 0 R" for i in range(pages))
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>".encode())
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    for i in range(pages):
        stream = first_stream + (min(i, 1) if shared else i)
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
            f"/Contents {stream} 0 R >>".encode()
        )
    for raw in streams:
        packed = zlib.compress(raw, 9)
        objects.append(b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(packed) + packed + b"\nendstream")
    return _assemble(objects)


def inflating_pdf(path: Path, megabytes: int, text: str) -> Path:
    """Page 1 inflates to `megabytes` MB of content (a few KB on disk); page 2 holds `text`."""
    return _write(path, pdf_of_streams([b" " * (megabytes * 1_000_000), text_stream([text])]))


def long_pdf(path: Path, pages: int, text: str) -> Path:
    """`pages` pages: the first holds `text`, every other one the same empty stream (a few bytes a page)."""
    return _write(path, pdf_of_streams([text_stream([text]), *[b""] * (pages - 1)], shared=True))


def aes_protected_pdf(path: Path, text: str) -> Path:
    """A "protected" report: AES-256, an owner password, no password to open it (user password "").

    pypdf's writer encrypts with AES only when the `cryptography` package is installed; without it the
    same encryption dictionary is written by hand (its keys do not matter: a reader without AES support
    stops before checking them, as it does on a real one)."""
    from pypdf import PdfReader, PdfWriter
    from pypdf.errors import DependencyError

    data = pdf_bytes([[text]])
    try:
        writer = PdfWriter(clone_from=PdfReader(BytesIO(data)))
        writer.encrypt(user_password="", owner_password="owner-only", algorithm="AES-256")
        buffer = BytesIO()
        writer.write(buffer)
        return _write(path, buffer.getvalue())
    except DependencyError:
        pass
    encrypt = (
        "/Encrypt << /Filter /Standard /V 5 /R 6 /Length 256 /P -4 "
        f"/O <{'11' * 48}> /U <{'22' * 48}> /OE <{'33' * 32}> /UE <{'44' * 32}> /Perms <{'55' * 16}> "
        "/CF << /StdCF << /CFM /AESV3 /AuthEvent /DocOpen /Length 32 >> >> /StmF /StdCF /StrF /StdCF >> "
        f"/ID [<{'ab' * 16}> <{'ab' * 16}>]"
    )
    return _write(path, data.replace(b"/Root 1 0 R", b"/Root 1 0 R " + encrypt.encode()))


def unknown_handler_pdf(path: Path, text: str) -> Path:
    """Encrypted by a security handler pypdf does not implement (it raises NotImplementedError)."""
    return _write(path, pdf_bytes([[text]]).replace(b"/Root 1 0 R", b"/Root 1 0 R /Encrypt << /Filter /FooSec /V 1 >>"))


def number_trailer_pdf(path: Path, text: str) -> Path:
    """A trailer that starts with a number where its dictionary belongs (pypdf raises AttributeError)."""
    return _write(path, pdf_bytes([[text]]).replace(b"trailer\n<<", b"trailer\n5 <<"))


def self_pages_pdf(path: Path, text: str) -> Path:
    """The page tree object is a reference to itself (pypdf raises AttributeError)."""
    data = pdf_bytes([[text]])
    tree = b"<< /Type /Pages /Kids [4 0 R] /Count 1 >>"
    return _write(path, data.replace(tree, b"2 0 R".ljust(len(tree))))


def mutated_pdf(base: bytes, seed: int) -> bytes:
    """`base` with 1 to 8 random edits (bytes set, cut or inserted, PDF keywords inserted): a fuzzed file."""
    import random

    rng = random.Random(seed)
    data = bytearray(base)
    keywords = [
        b"/Outlines",
        b" 0 R",
        b"/Kids [",
        b"<<",
        b">>",
        b"999999999",
        b"-1",
        b"/Encrypt 3 0 R",
        b"/Count 99999999",
    ]
    for _ in range(rng.randint(1, 8)):
        roll = rng.random()
        at = rng.randrange(len(data))
        if roll < 0.4:
            data[at] = rng.randrange(256)
        elif roll < 0.6:
            del data[at : at + rng.randint(1, 20)]
        elif roll < 0.8:
            data[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 10)))
        else:
            data[at:at] = rng.choice(keywords)
    return bytes(data)


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path
