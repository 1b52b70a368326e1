"""Small valid PDFs made in the tests (offsets computed), and pypdf's edits of them (a
harness, not tests; the layouts two test modules share are in tests/pdf_layouts.py)."""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence

from pypdf import PdfReader, PdfWriter

BODY, BOLD, LARGE, OTHER = "body", "bold", "large", "other font"
Line = tuple[str, str]  # (text, style)


def literal(text: str) -> str:
    """``text`` as a PDF string literal's content."""
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def page_object(content_id: int, resources: str) -> bytes:
    return (
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        f"/Resources {resources} /Contents {content_id} 0 R >>"
    ).encode()


def stream_object(ops: list[str]) -> bytes:
    stream = "\n".join(ops).encode("latin-1")
    return b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream"


def pdf_file(objects: dict[int, bytes], trailer: str = "") -> bytes:
    """The objects (numbered from 1, catalog first) as a PDF file with its cross-reference
    table; ``trailer`` adds entries to the trailer dictionary."""
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets: dict[int, int] = {}
    for number in sorted(objects):
        offsets[number] = len(out)
        out += b"%d 0 obj\n" % number + objects[number] + b"\nendobj\n"
    size = max(objects) + 1
    xref_at = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % size
    for number in range(1, size):
        out += b"%010d 00000 n \n" % offsets[number]
    out += f"trailer\n<< /Size {size} /Root 1 0 R{trailer} >>\n".encode()
    out += b"startxref\n%d\n%%%%EOF\n" % xref_at
    return bytes(out)


def make_pdf(pages: list[str], title: str | None = None) -> bytes:
    """A minimal valid PDF (Helvetica text, one content stream per page)."""
    page_ids = [4 + 2 * i for i in range(len(pages))]
    objects: dict[int, bytes] = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        2: (
            f"<< /Type /Pages /Kids [{' '.join(f'{p} 0 R' for p in page_ids)}] "
            f"/Count {len(pages)} >>"
        ).encode(),
        3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    }
    for page_id, text in zip(page_ids, pages, strict=True):
        ops = ["BT", "/F1 12 Tf", "14 TL", "72 720 Td"]
        for n, line in enumerate(text.split("\n") if text else []):
            ops.append(("T* " if n else "") + f"({literal(line)}) Tj")
        ops.append("ET")
        objects[page_id] = page_object(page_id + 1, "<< /Font << /F1 3 0 R >> >>")
        objects[page_id + 1] = stream_object(ops)
    if title is None:
        return pdf_file(objects)
    info_id = max(objects) + 1
    objects[info_id] = f"<< /Title ({literal(title)}) >>".encode("latin-1")
    return pdf_file(objects, trailer=f" /Info {info_id} 0 R")


def fonts_and_pages(page_count: int, fonts: Sequence[str]) -> tuple[dict[int, bytes], list[int]]:
    """Catalog (1), page tree (2), the Type1 ``fonts`` as /F1, /F2 ... (3 on), their resource
    dictionary after them, and the ids left for each page and its content stream."""
    resources = 3 + len(fonts)
    page_ids = [resources + 1 + 2 * i for i in range(page_count)]
    kids = " ".join(f"{p} 0 R" for p in page_ids)
    objects: dict[int, bytes] = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        2: f"<< /Type /Pages /Kids [{kids}] /Count {page_count} >>".encode(),
    }
    for number, font in enumerate(fonts, start=3):
        objects[number] = f"<< /Type /Font /Subtype /Type1 /BaseFont /{font} >>".encode()
    names = " ".join(f"/F{n - 2} {n} 0 R" for n in range(3, resources))
    objects[resources] = f"<< /Font << {names} >> >>".encode()
    return objects, page_ids


def pdf_of_pages(fonts: Sequence[str], pages: list[list[str]]) -> bytes:
    """A small valid PDF of content-stream operators, one list per page, over ``fonts``."""
    objects, page_ids = fonts_and_pages(len(pages), fonts)
    for page_id, ops in zip(page_ids, pages, strict=True):
        objects[page_id] = page_object(page_id + 1, f"{3 + len(fonts)} 0 R")
        objects[page_id + 1] = stream_object(ops)
    return pdf_file(objects)


def make_styled_pdf(pages: list[list[Line]]) -> bytes:
    """A small valid PDF whose lines are set in Helvetica 10 (body), Helvetica-Bold 10,
    Helvetica-Bold 16 scaled from 8 by the text matrix (so only the effective size is large),
    or Courier 10 (a font whose name does not say bold)."""
    fonts = {BODY: "/F1 10 Tf", BOLD: "/F2 10 Tf", LARGE: "/F2 8 Tf", OTHER: "/F3 10 Tf"}
    streams: list[list[str]] = []
    for lines in pages:
        ops: list[str] = []
        y = 740
        for text, style in lines:
            scale = 2 if style == LARGE else 1
            y -= 14 * scale
            ops.append(f"BT {fonts[style]} {scale} 0 0 {scale} 72 {y} Tm ({literal(text)}) Tj ET")
        streams.append(ops)
    return pdf_of_pages(("Helvetica", "Helvetica-Bold", "Courier"), streams)


def ops_pdf(pages: list[list[str]]) -> bytes:
    """A small valid PDF of content-stream operators as given, one list per page: /F1 is
    Helvetica, /F2 Helvetica-Bold."""
    return pdf_of_pages(("Helvetica", "Helvetica-Bold"), pages)


def rewritten(data: bytes, edit: Callable[[PdfWriter], object]) -> bytes:
    """The PDF as pypdf writes it again after ``edit``."""
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    edit(writer)
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def encrypt_pdf(data: bytes, user_password: str) -> bytes:
    return rewritten(
        data, lambda w: w.encrypt(user_password=user_password, owner_password="owner-secret")
    )


def with_outline(data: bytes, outline: list[tuple[str, int, list[tuple[str, int]]]]) -> bytes:
    """The PDF with bookmarks added: (title, page index, [(child title, page index)])."""

    def add(writer: PdfWriter) -> None:
        for title, page, children in outline:
            parent = writer.add_outline_item(title=title, page_number=page)
            for child, child_page in children:
                writer.add_outline_item(title=child, page_number=child_page, parent=parent)

    return rewritten(data, add)
