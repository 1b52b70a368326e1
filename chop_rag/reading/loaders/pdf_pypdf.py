"""The pypdf page reader: the fallback for files PDFium cannot open or read (see
chop_rag.reading.loaders.pdf). Pure Python, 0.12-0.14 CPU s a page on SEC filings.

The fonts come from pypdf's own extraction: `extract_text(visitor_text=...)` reports every
text run with its font and matrices during the one extraction, so the text is unchanged by
reading them (the 40 FinanceBench filings, 4,534 pages: 357 CPU s without fonts; 351 and 361
in two runs with).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from io import BytesIO
from typing import Any

from pypdf import PasswordType, PdfReader
from pypdf.errors import DependencyError
from pypdf.generic import Destination

from chop_rag.reading.loaders.common import LoadError
from chop_rag.reading.pdf_layout import (
    BOLD_WEIGHT,
    OutlineEntry,
    ParsedPdf,
    PdfPage,
    add_line,
    bold_name,
    read_document,
)

# pypdf logs damage it works around ("EOF marker not found") without naming the file; an
# unreadable PDF is reported once, with its path, as a skipped file instead.
logging.getLogger("pypdf").setLevel(logging.ERROR)


def read_pypdf(data: bytes) -> ParsedPdf:
    """Every page's text and line fonts, the outline and the title, read by pypdf. Raises
    LoadError when the file cannot be opened (damaged, encrypted, no pages)."""
    try:
        reader = PdfReader(BytesIO(data))
        if reader.is_encrypted and reader.decrypt("") == PasswordType.NOT_DECRYPTED:
            raise LoadError("encrypted PDF")
        pages = list(reader.pages)
    except LoadError:
        raise
    except DependencyError:
        raise LoadError("encrypted PDF (needs the 'cryptography' package to open)") from None
    except Exception as err:  # pypdf raises many kinds on damaged files
        raise LoadError(f"unreadable PDF: {pdf_reason(err)}") from None
    if not pages:
        raise LoadError("unreadable PDF: no pages")
    return read_document(
        "pypdf",
        len(pages),
        lambda number: read_page(pages[number - 1], number),
        lambda: pypdf_outline(reader),
        lambda: _title(reader),
    )


def pdf_reason(err: Exception) -> str:
    message = str(err).strip() or type(err).__name__
    return message[0].lower() + message[1:] if message[:2].istitle() else message


def _title(reader: PdfReader) -> str:
    try:
        meta = reader.metadata
        raw = meta.title if meta is not None else None
    except Exception:
        return ""
    return raw if isinstance(raw, str) else ""


def read_page(page: Any, number: int) -> PdfPage:
    """Extract a page's text and, in the same pass, the font of each text run."""
    runs: list[tuple[str, float, bool, str]] = []
    faces: dict[int, tuple[bool, str]] = {}

    def visit(text: str, cm: Sequence[float], tm: Sequence[float], font: Any, size: Any) -> None:
        if not text:
            return
        key = id(font)
        if key not in faces:
            faces[key] = (_is_bold(font), _font_name(font))
        bold, name = faces[key]
        runs.append((text, _effective_size(cm, tm, size), bold, name))

    text = page.extract_text(visitor_text=visit) or ""
    result = PdfPage(number=number, text=text)
    if "".join(run[0] for run in runs) != text:
        return result  # runs do not line up with the text (form XObjects): no font hints
    line_runs: list[tuple[str, float, bool, str]] = []
    for run_text, size, bold, name in runs:
        parts = run_text.split("\n")
        for i, part in enumerate(parts):
            if i:
                _add_line(result, line_runs)
                line_runs = []
            if part:
                line_runs.append((part, size, bold, name))
    _add_line(result, line_runs)
    return result


def _add_line(page: PdfPage, runs: list[tuple[str, float, bool, str]]) -> None:
    line = "".join(run[0] for run in runs)
    add_line(page, line, [(_visible(text), size, bold, name) for text, size, bold, name in runs])


def _visible(text: str) -> int:
    return sum(1 for ch in text if not ch.isspace())


def _effective_size(cm: Sequence[float], tm: Sequence[float], size: Any) -> float:
    """Font size × the vertical scale of text matrix × CTM, to the nearest half point."""
    try:
        c = tm[2] * cm[0] + tm[3] * cm[2]
        d = tm[2] * cm[1] + tm[3] * cm[3]
        return round(float(size) * math.hypot(c, d) * 2) / 2
    except (TypeError, ValueError, IndexError):
        return 0.0


def _font_name(font: Any) -> str:
    try:
        return str(font.get("/BaseFont", "")) if font is not None else ""
    except Exception:
        return ""


def _is_bold(font: Any) -> bool:
    """Bold by the font's name ("Arial-BoldMT", "Times,Bold") or its descriptor's weight."""
    try:
        if font is None:
            return False
        if bold_name(str(font.get("/BaseFont", ""))):
            return True
        descriptor = font.get("/FontDescriptor")
        weight = descriptor.get_object().get("/FontWeight") if descriptor is not None else None
        return weight is not None and float(weight) >= BOLD_WEIGHT
    except Exception:  # a damaged font dictionary only loses the hint
        return False


def pypdf_outline(reader: PdfReader) -> list[OutlineEntry]:
    """pypdf's outline as entries: (page index, depth, title), in outline order."""
    entries: list[OutlineEntry] = []

    def walk(items: Sequence[Any], depth: int) -> None:
        for item in items:
            if isinstance(item, list):
                walk(item, depth + 1)
            elif isinstance(item, Destination):
                index = reader.get_destination_page_number(item)
                if index is not None:
                    entries.append((index, depth, str(item.title or "")))

    walk(reader.outline, 0)
    return entries
