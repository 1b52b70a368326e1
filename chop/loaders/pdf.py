"""PDF: text per page, spans with the page and, from the outline or the layout, the heading
path; the title from the metadata unless it is junk."""

from __future__ import annotations

import logging
import re
from io import BytesIO
from pathlib import Path

from pypdf import PasswordType, PdfReader
from pypdf.errors import DependencyError

from chop.documents import SourceDocument
from chop.identity import is_identifier
from chop.loaders.common import (
    LoadError,
    clean_chars,
    clean_title,
    file_document,
    normalize_text,
    read_bytes,
)
from chop.pdf_layout import (
    Heading,
    PdfPage,
    layout_headings,
    outline_headings,
    page_spans,
    read_page,
)

# pypdf logs damage it works around ("EOF marker not found") without naming the file; an
# unreadable PDF is reported once, with its path, as a skipped file instead.
logging.getLogger("pypdf").setLevel(logging.ERROR)

_JUNK_TITLES = frozenset(
    {"untitled", "untitled document", "no title", "title", "document", "unknown", "none", "null"}
)
_JUNK_TITLE_PREFIX = re.compile(
    r"^(?:microsoft (?:word|powerpoint|excel)|untitled)\b|"
    r"^united states securities and exchange commission$|"  # the regulator's heading
    r"\.(?:docx?|pdf|pptx?|xlsx?|rtf|odt|indd|qxd|tex|dvi|tmp|txt|html?)$",
    re.IGNORECASE,
)


def load_pdf(path: Path, max_file_mb: int) -> SourceDocument:
    """Text per page joined by blank lines; spans carry the page (1-based) and, where the
    outline or the layout shows one, the heading path: {"page": N, "heading": "A > B"}."""
    data = read_bytes(path, max_file_mb)
    if b"%PDF" not in data[:1024]:
        raise LoadError("unreadable PDF: no %PDF header")
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
        raise LoadError(f"unreadable PDF: {_pdf_reason(err)}") from None
    if not pages:
        raise LoadError("unreadable PDF: no pages")

    pdf_pages: list[PdfPage] = []
    failed: list[int] = []
    for number, page in enumerate(pages, start=1):
        try:
            pdf_page = read_page(page, number)
        except Exception:  # one broken page should not lose the others
            pdf_page = PdfPage(number=number, text="")
            failed.append(number)
        pdf_page.text = normalize_text(pdf_page.text)
        pdf_pages.append(pdf_page)
    if not any(page.text.strip() for page in pdf_pages):
        if failed and len(failed) == len(pages):
            raise LoadError("unreadable PDF: text extraction failed on every page")
        raise LoadError("PDF has no extractable text (scanned?)")
    text, spans = page_spans(pdf_pages, _pdf_headings(reader, pdf_pages))

    doc = file_document(path, _pdf_title(reader) or clean_title(path.stem), text, "pdf", spans)
    doc["metadata"]["pages"] = len(pages)
    if failed:
        doc["metadata"]["unreadable_pages"] = failed
    return doc


def _pdf_headings(reader: PdfReader, pages: list[PdfPage]) -> list[Heading]:
    """The outline's headings when the file has a usable outline, else the layout's."""
    try:
        headings = outline_headings(reader, pages)
    except Exception:  # a damaged outline only costs the bookmarks; the layout still speaks
        headings = []
    return headings or layout_headings(pages)


def _pdf_title(reader: PdfReader) -> str:
    """The /Title from metadata unless it is missing or junk ("Microsoft Word - x.doc")."""
    try:
        meta = reader.metadata
        raw = meta.title if meta is not None else None
    except Exception:
        return ""
    if not isinstance(raw, str):
        return ""
    title = " ".join(clean_chars(raw).split())
    if not re.search(r"\w", title) or title.lower() in _JUNK_TITLES:
        return ""
    if _JUNK_TITLE_PREFIX.search(title) or is_identifier(title):
        return ""  # an SEC accession number ("0000764478-23-000006") names no document
    return title


def _pdf_reason(err: Exception) -> str:
    message = str(err).strip() or type(err).__name__
    return message[0].lower() + message[1:] if message[:2].istitle() else message
