"""PDF: text per page, spans with the page and, from the outline or the layout, the heading
path; the title from the metadata unless it is junk. Pages are read by pypdf
(chop.loaders.pdf_pypdf) and turned into headings by chop.pdf_layout.
"""

from __future__ import annotations

import re
from pathlib import Path

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
from chop.loaders.pdf_pypdf import read_pypdf
from chop.pdf_layout import Heading, ParsedPdf, layout_headings, outline_headings, page_spans

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
    parsed, headings = read_pdf(data)
    text, spans = page_spans(parsed.pages, headings)
    title = _pdf_title(parsed.title) or clean_title(path.stem)
    doc = file_document(path, title, text, "pdf", spans)
    doc["metadata"]["pages"] = len(parsed.pages)
    if parsed.failed:
        doc["metadata"]["unreadable_pages"] = parsed.failed
    return doc


def read_pdf(data: bytes) -> tuple[ParsedPdf, list[Heading]]:
    """The file's pages (text normalised) and their headings; LoadError when it has no text."""
    parsed = read_pypdf(data)
    pages = parsed.pages
    for page in pages:
        page.text = normalize_text(page.text)
    if not any(page.text.strip() for page in pages):
        if parsed.failed and len(parsed.failed) == len(pages):
            raise LoadError("unreadable PDF: text extraction failed on every page")
        raise LoadError("PDF has no extractable text (scanned?)")
    return parsed, _pdf_headings(parsed)


def _pdf_headings(parsed: ParsedPdf) -> list[Heading]:
    """The outline's headings when the file has a usable outline, else the layout's."""
    try:
        headings = outline_headings(parsed.outline, parsed.pages)
    except Exception:  # a damaged outline only costs the bookmarks; the layout still speaks
        headings = []
    return headings or layout_headings(parsed.pages)


def _pdf_title(raw: str) -> str:
    """The /Title from metadata unless it is missing or junk ("Microsoft Word - x.doc")."""
    title = " ".join(clean_chars(raw).split())
    if not re.search(r"\w", title) or title.lower() in _JUNK_TITLES:
        return ""
    if _JUNK_TITLE_PREFIX.search(title) or is_identifier(title):
        return ""  # an SEC accession number ("0000764478-23-000006") names no document
    return title
