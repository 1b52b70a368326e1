"""PDF: text per page, spans with the page and, from the outline or the layout, the heading
path; the title from the metadata unless it is junk.

Pages are read by PDFium (chop_rag.reading.loaders.pdf_pdfium, native code); pypdf
(chop_rag.reading.loaders.pdf_pypdf, pure Python) reads the files PDFium cannot open, fails on, or
finds no text in, and words the reason a file is unreadable. Both give chop_rag.reading.pdf_layout
the same pages and line fonts.

On the 40 FinanceBench dev filings (4,534 pages; bench/studies/pdf_parsers.py, both in one process,
one core, a busy 2-core machine) PDFium reads 133 pages per CPU second (99 per wall second)
against pypdf's 10 (7.7), 13 times as fast: load_paths parses all 40 in 34 s of wall time
with a worker per core, where an ingest spent 205 s parsing them with pypdf. Page counts
agree on all 40 files; of the 37 FinanceBench evidence pages PDFium holds 24 evidence texts
word for word on their page and pypdf 22, and 96.1% of the evidence words against 95.8%
(pypdf breaks words in some filings: "administrave", "thecompany"). PDFium finds 89% of
pypdf's headings (same page; 81% with the very same title) and more of its own (6,082
against 5,441; pypdf's own are mostly fragments of lines).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from chop_rag.reading.documents import SourceDocument
from chop_rag.reading.loaders.common import (
    LoadError,
    clean_chars,
    clean_title,
    file_document,
    normalize_text,
    read_bytes,
)
from chop_rag.reading.loaders.pdf_pdfium import PdfiumUnreadable, read_pdfium
from chop_rag.reading.loaders.pdf_pypdf import read_pypdf
from chop_rag.reading.pdf_layout import (
    Heading,
    ParsedPdf,
    layout_headings,
    outline_headings,
    page_spans,
)
from chop_rag.text.names import is_identifier

Parser = Literal["pdfium", "pypdf"]
PARSERS: tuple[Parser, ...] = ("pdfium", "pypdf")
DEFAULT_PARSER: Parser = "pdfium"

_JUNK_TITLES = frozenset(
    {"untitled", "untitled document", "no title", "title", "document", "unknown", "none", "null"}
)
_JUNK_TITLE_PREFIX = re.compile(
    r"^(?:microsoft (?:word|powerpoint|excel)|untitled)\b|"
    r"^united states securities and exchange commission$|"  # the regulator's heading
    r"\.(?:docx?|pdf|pptx?|xlsx?|rtf|odt|indd|qxd|tex|dvi|tmp|txt|html?)$",
    re.IGNORECASE,
)


def load_pdf(path: Path, max_file_mb: int, parser: Parser = DEFAULT_PARSER) -> SourceDocument:
    """Text per page joined by blank lines; spans carry the page (1-based) and, where the
    outline or the layout shows one, the heading path: {"page": N, "heading": "A > B"}.
    ``parser`` "pypdf" skips PDFium (bench/studies/pdf_parsers.py compares the two)."""
    data = read_bytes(path, max_file_mb)
    if b"%PDF" not in data[:1024]:
        raise LoadError("unreadable PDF: no %PDF header")
    parsed, headings = read_pdf(data, parser)
    text, spans = page_spans(parsed.pages, headings)
    title = _pdf_title(parsed.title) or clean_title(path.stem)
    doc = file_document(path, title, text, "pdf", spans)
    doc["metadata"]["pages"] = len(parsed.pages)
    if parsed.failed:
        doc["metadata"]["unreadable_pages"] = parsed.failed
    return doc


def read_pdf(data: bytes, parser: Parser = DEFAULT_PARSER) -> tuple[ParsedPdf, list[Heading]]:
    """The file's pages (text normalised) and their headings; LoadError when it has no text."""
    parsed = parse_pdf(data, parser)
    pages = parsed.pages
    for page in pages:
        page.text = normalize_text(page.text)
    if not any(page.text.strip() for page in pages):
        if parsed.failed and len(parsed.failed) == len(pages):
            raise LoadError("unreadable PDF: text extraction failed on every page")
        raise LoadError("PDF has no extractable text (scanned?)")
    return parsed, _pdf_headings(parsed)


def parse_pdf(data: bytes, parser: Parser = DEFAULT_PARSER) -> ParsedPdf:
    """The pages, outline and title by PDFium, or by pypdf where PDFium cannot open the file,
    fails on a page or finds no text at all (pypdf then says why, or reads it after all)."""
    if parser == "pdfium":
        try:
            parsed = read_pdfium(data)
        except PdfiumUnreadable:
            pass
        else:
            if not parsed.failed and any(page.text.strip() for page in parsed.pages):
                return parsed
    return read_pypdf(data)


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
