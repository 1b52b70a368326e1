"""Headings for PDF text: from the outline (bookmarks) when a file has one, else from layout.

A PDF keeps no headings as such, so the loader recovers them the way a reader would:
- the outline, when present, is the author's own table of contents (depth → level);
- otherwise each line's font: lines set larger than the body text, or short lines set all
  in bold, and the "PART II" / "Item 7." lines that structure SEC 10-K and 10-Q filings.

The pages and their line fonts come from a page reader, which hands each line's font to
`add_line`: PDFium's (chop_rag.reading.loaders.pdf_pdfium, the default, native code) or pypdf's
(chop_rag.reading.loaders.pdf_pypdf, the fallback, pure Python). Reading fonts costs pypdf no
measurable time (the 40 FinanceBench filings, 4,534 pages: 357 CPU s without; 351 and 361 with);
pdfminer.six and pdfplumber took 0.19 and 0.32 CPU s per page against pypdf's 0.12-0.14.

Junk is guarded against: lines repeated on many pages (running headers and footers,
"Table of Contents" links), table-of-contents pages, long lines, numbers and table rows.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from chop_rag.reading.documents import Span

__all__ = [
    "BOLD_WEIGHT",
    "Heading",
    "LineFont",
    "OutlineEntry",
    "ParsedPdf",
    "PdfPage",
    "add_line",
    "bold_name",
    "layout_headings",
    "outline_headings",
    "page_spans",
]

# Levels: outline depth; or PART > Item > larger font (by size rank) > bold body-size line.
PART_LEVEL = 1
ITEM_LEVEL = 2
FONT_LEVEL = 3

_MAX_HEADING_CHARS = 150  # a longer line is a sentence, not a heading
_MAX_FONT_HEADING_CHARS = 100
_MAX_BOLD_HEADING_CHARS = 80
_MAX_HEADING_WORDS = 14
_MAX_HEADINGS_PER_PAGE = 12  # more than this on one page is a contents list or a form
_REPEATED_MIN_PAGES = 3  # a line on this many pages and this share of them is a running
_REPEATED_SHARE = 0.15  # header or footer, not a heading
_LARGER = 1.15  # a heading by size is set at least this much larger than the body
BOLD_WEIGHT = 600  # a font descriptor's /FontWeight from which a face counts as bold

_PART = re.compile(r"^PART\s+(?:IV|I{1,3})\b(?![,'’])(?:\s*[.:—–-])*\s*(?P<rest>.*)$", re.I)
_ITEM = re.compile(  # "Item 7." in a 10-K or 10-Q, "Item 2.02" in an 8-K
    r"^ITEM\s+\d{1,2}(?:[A-C]|\.\d\d)?\b(?![,'’])(?:\s*[.:—–-])*\s*(?P<rest>.*)$", re.I
)
_TRAILING_PAGE_NUMBER = re.compile(r"(?:\s|\.{2,})(?:[A-Z]-)?\d{1,3}$")
_PAGE_NUMBER = re.compile(
    r"^(?:page\s+)?[-–(]?\s*(?:[A-Z]-)?\d{1,4}\s*[-–)]?(?:\s*(?:of|/)\s*\d{1,4})?$", re.IGNORECASE
)
_NEVER_HEADINGS = frozenset({"table of contents", "contents", "index", "continued", "(continued)"})
_BOLD_NAME = re.compile(r"bold|black|heavy|semibold|demi|,b$", re.IGNORECASE)
_CONTINUED = re.compile(r"(?:[,&]|\b(?:of|and|the|for|to|in|on|with|or|by|about|from))$", re.I)
_NUMBER_TOKEN = re.compile(r"^[($€£-]*\d[\d,.%)]*$")


@dataclass(frozen=True)
class LineFont:
    """The font most of a line is set in: effective size in points, bold or not, its name."""

    size: float
    bold: bool
    name: str = ""


@dataclass
class PdfPage:
    """One page's text (normalised by the caller) and the font of each distinct line."""

    number: int  # 1-based, as in {"page": N}
    text: str
    fonts: dict[str, LineFont] = field(default_factory=dict)  # keyed by _line_key(line)
    chars_by_face: Counter[tuple[float, str]] = field(default_factory=Counter)  # (size, name)


OutlineEntry = tuple[int, int, str]  # (page index, 0-based; depth, 0 at the top; title)


@dataclass
class ParsedPdf:
    """What a page reader (chop_rag.reading.loaders.pdf_pdfium, chop_rag.reading.loaders.pdf_pypdf)
    found in a PDF: its pages, the 1-based numbers of pages it could not read, its outline in
    outline order (empty when it has none or it is damaged) and its metadata title (raw, maybe
    junk)."""

    pages: list[PdfPage]
    failed: list[int] = field(default_factory=list)
    outline: list[OutlineEntry] = field(default_factory=list)
    title: str = ""
    parser: str = ""


def read_document(
    parser: str,
    page_count: int,
    read_page: Callable[[int], PdfPage],
    outline: Callable[[], list[OutlineEntry]],
    title: Callable[[], str],
) -> ParsedPdf:
    """A PDF as ``parser`` reads it: pages by number (1-based), the outline, the title. A page
    that fails to read is kept empty and listed in ``failed``, so one broken page loses no
    other; a damaged outline costs only the bookmarks, a damaged title only the title."""
    parsed = ParsedPdf(pages=[], parser=parser)
    for number in range(1, page_count + 1):
        try:
            parsed.pages.append(read_page(number))
        except Exception:  # whatever a damaged page provokes in the parser
            parsed.pages.append(PdfPage(number=number, text=""))
            parsed.failed.append(number)
    try:
        parsed.outline = outline()
    except Exception:
        parsed.outline = []
    try:
        parsed.title = title()
    except Exception:
        parsed.title = ""
    return parsed


@dataclass(frozen=True)
class Heading:
    """A heading found on a page: the line it starts at, its level, and its text."""

    page: int  # 1-based
    line: int  # index into the page's text.split("\n")
    level: int
    title: str


# --------------------------------------------------------------------------- line fonts


def add_line(page: PdfPage, line: str, faces: Sequence[tuple[int, float, bool, str]]) -> None:
    """Record the font of one line of the page: ``faces`` are the (non-space characters,
    effective size, bold, font name) of its runs. The line's font is the (size, name) most of
    its characters are set in, bold when at least 90% of them are; the first font recorded
    for a line's text is kept. Each page reader (pypdf's, PDFium's) feeds its lines here."""
    weights: Counter[tuple[float, str]] = Counter()
    bold_chars = 0
    chars = 0
    for n, size, bold, name in faces:
        weights[(size, name)] += n
        chars += n
        bold_chars += n if bold else 0
    if not chars:
        return
    page.chars_by_face.update(weights)
    key = _line_key(line)
    (size, name), _count = weights.most_common(1)[0]
    page.fonts.setdefault(key, LineFont(size, bold_chars >= 0.9 * chars, name))


def bold_name(font_name: str) -> bool:
    """A bold face by its name ("ABCDEF+Arial-BoldMT", "Times,Bold"), subset prefix aside."""
    return bool(_BOLD_NAME.search(font_name.split("+")[-1]))


def _line_key(line: str) -> str:
    return " ".join(line.split())


# --------------------------------------------------------------------------- outline


def outline_headings(entries: Sequence[OutlineEntry], pages: Sequence[PdfPage]) -> list[Heading]:
    """The outline's entries (in outline order, as each page reader finds them) placed on
    their pages, at the line that shows their title.

    An entry whose title is not found on its page starts at the top of that page (or after
    the previous entry on the same page). Levels follow depth; within one depth a "Part"
    entry ranks above its neighbours, so a flat 10-K outline still nests Items in Parts.
    """
    placed: list[tuple[int, int, str]] = []  # (page index, level, title)
    for index, depth, raw_title in entries:
        title = " ".join(raw_title.split())
        if title and 0 <= index < len(pages):
            rank = 0 if _PART.match(title) else 1
            placed.append((index, depth * 2 + rank, title))
    placed.sort(key=lambda entry: entry[0])  # stable: outline order within a page
    headings: list[Heading] = []
    for index, level, title in placed:
        page = pages[index]
        lines = page.text.split("\n")
        after = headings[-1].line if headings and headings[-1].page == page.number else 0
        line = _find_title(lines, title, after)
        headings.append(Heading(page.number, after if line is None else line, level, title))
    return headings


def _find_title(lines: list[str], title: str, start: int) -> int | None:
    wanted = _letters(title)
    if not wanted:
        return None
    for i in range(start, len(lines)):
        have = _letters(lines[i])
        if have and (have.startswith(wanted) or (wanted.startswith(have) and len(have) >= 12)):
            return i
    return None


def _letters(text: str) -> str:
    return "".join(ch for ch in text.casefold() if ch.isalnum())


# --------------------------------------------------------------------------- layout


def layout_headings(pages: Sequence[PdfPage]) -> list[Heading]:
    """Headings from fonts and SEC item lines, with running headers and contents pages dropped."""
    body, body_font = _body_face(pages)
    if body <= 0:
        return []
    per_page: list[list[Heading]] = []
    for page in pages:
        lines = page.text.split("\n")
        if _is_contents_page(lines):
            per_page.append([])
            continue
        per_page.append(_page_candidates(page, lines, body, body_font))

    repeated = _repeated_lines(pages)
    sizes = sorted(
        {h.level for found in per_page for h in found if h.level < 0}
    )  # larger fonts, stored as -size until ranked
    rank = {level: FONT_LEVEL + i for i, level in enumerate(sizes)}
    bold_level = FONT_LEVEL + len(sizes)
    headings: list[Heading] = []
    for found in per_page:
        kept = [h for h in found if _shape(h.title) not in repeated]
        if len(kept) > _MAX_HEADINGS_PER_PAGE:
            continue
        for h in kept:
            level = rank.get(h.level, bold_level) if h.level <= 0 else h.level
            headings.append(Heading(h.page, h.line, level, h.title))
    return headings


def _page_candidates(page: PdfPage, lines: list[str], body: float, body_font: str) -> list[Heading]:
    """Heading lines of one page. Consecutive lines set in the same emphasised font form one
    block judged as a whole: a two-line title is one heading, a bold sentence or a bold
    table header spread over lines is too long to be one. A Part/Item line stands alone.

    Levels here: PART_LEVEL, ITEM_LEVEL, -2×size for a larger font, 0 for bold body text.
    """
    keys = [_line_key(line) for line in lines]
    found: list[Heading] = []
    i = 0
    while i < len(keys):
        font = page.fonts.get(keys[i])
        if not keys[i] or font is None:
            i += 1
            continue
        level = _sec_level(keys[i], font, body, body_font)
        if level is not None:
            start, title = i, keys[i]
            i += 1
            while (  # "ITEM 5. MARKET FOR ... PURCHASES OF" / "EQUITY SECURITIES"
                _CONTINUED.search(title)
                and i < len(keys)
                and page.fonts.get(keys[i]) == font
                and len(title) + len(keys[i]) < _MAX_HEADING_CHARS
            ):
                title = f"{title} {keys[i]}"
                i += 1
            found.append(Heading(page.number, start, level, title))
            continue
        end = i + 1
        if _emphasised(font, body):
            while (
                end < len(keys)
                and keys[end]
                and page.fonts.get(keys[end]) == font
                and _sec_level(keys[end], font, body, body_font) is None
            ):
                end += 1
        title = " ".join(keys[i:end])
        level = _font_level(title, font, body)
        if level is not None:
            found.append(Heading(page.number, i, level, title))
        i = end
    return found


def _emphasised(font: LineFont, body: float) -> bool:
    return font.bold or _larger(font, body)


def _larger(font: LineFont, body: float) -> bool:
    return font.size >= body * _LARGER and font.size >= body + 1


def _sec_level(text: str, font: LineFont, body: float, body_font: str) -> int | None:
    """PART_LEVEL or ITEM_LEVEL for an emphasised "PART II" / "Item 7. Title" line: bold,
    larger, in capitals, or in a font other than the body's (some filings name their fonts
    "F1", "F2", so bold cannot be told from the name)."""
    if len(text) > _MAX_HEADING_CHARS or font.size < body * 0.95:
        return None
    for pattern, level in ((_PART, PART_LEVEL), (_ITEM, ITEM_LEVEL)):
        found = pattern.match(text)
        if found:
            rest = found.group("rest")
            if rest and not rest[0].isupper() and rest[0] not in '[("“':
                return None  # "Item 7 of this report ..." is a reference, not a heading
            if _TRAILING_PAGE_NUMBER.search(text):
                return None  # a contents entry
            distinct = font.name != body_font
            return level if _emphasised(font, body) or _is_upper(text) or distinct else None
    return None


def _font_level(text: str, font: LineFont, body: float) -> int | None:
    """-2×size for a short line set larger than the body, 0 for a short bold one, else None."""
    if font.size < body * 0.95 or not _emphasised(font, body):
        return None  # smaller than the body: footnotes, table cells, captions
    limit = _MAX_FONT_HEADING_CHARS if _larger(font, body) else _MAX_BOLD_HEADING_CHARS
    if len(text) > limit or text.casefold() in _NEVER_HEADINGS or _PAGE_NUMBER.match(text):
        return None
    words = text.split()
    letters = sum(ch.isalpha() for ch in text)
    if len(words) > _MAX_HEADING_WORDS or letters < 3 or letters < 0.5 * len(text.replace(" ", "")):
        return None  # too long, or mostly numbers ("Jersey 001-38932 98-1455367")
    if not (text[0].isupper() or text[0].isdigit()) or text.endswith((",", ";")):
        return None
    if text.endswith(":") and not _larger(font, body):  # a run-in label ("Denominator:")
        return None
    if sum(1 for word in words if _NUMBER_TOKEN.match(word)) > 1 or "$" in text:
        return None  # a table row
    if _TRAILING_PAGE_NUMBER.search(text) and len(words) > 1:
        return None  # a contents entry
    return -int(font.size * 2) if _larger(font, body) else 0


def _is_upper(text: str) -> bool:
    letters = [ch for ch in text if ch.isalpha()]
    return len(letters) >= 3 and all(ch.isupper() for ch in letters)


def _is_contents_page(lines: list[str]) -> bool:
    """A page made mostly of Part/Item lines or "title … page number" lines is a contents
    page: its entries are not the headings of its own text."""
    entries = 0
    filled = 0
    for raw in lines:
        text = _line_key(raw)
        if not text:
            continue
        filled += 1
        words = text.split()
        numbers = sum(1 for word in words if _NUMBER_TOKEN.match(word))
        if (
            _PART.match(text)
            or _ITEM.match(text)
            or (numbers == 1 and _TRAILING_PAGE_NUMBER.search(text) and len(words) > 1)
        ):
            entries += 1
    return entries >= 5 and entries >= 0.6 * filled


def _body_face(pages: Sequence[PdfPage]) -> tuple[float, str]:
    """The (size, font name) most characters of the document are set in."""
    total: Counter[tuple[float, str]] = Counter()
    for page in pages:
        total.update(page.chars_by_face)
    return total.most_common(1)[0][0] if total else (0.0, "")


def _shape(text: str) -> str:
    """A line with its numbers blanked, so "Page 3" and "Page 4" count as one repeated line."""
    return re.sub(r"\d+", "#", text.casefold())


def _repeated_lines(pages: Sequence[PdfPage]) -> set[str]:
    """Lines that appear on many pages: running headers and footers."""
    seen: Counter[str] = Counter()
    for page in pages:
        seen.update({_shape(_line_key(line)) for line in page.text.split("\n") if line.strip()})
    threshold = max(_REPEATED_MIN_PAGES, math.ceil(_REPEATED_SHARE * len(pages)))
    return {shape for shape, count in seen.items() if count >= threshold}


# --------------------------------------------------------------------------- spans


def page_spans(pages: Sequence[PdfPage], headings: Sequence[Heading]) -> tuple[str, list[Span]]:
    """The pages' texts joined by blank lines, and spans that each carry the page and the
    heading path over them. A page is split at each heading on it; text before the first
    heading on a page continues the previous page's section."""
    by_page: dict[int, list[Heading]] = {}
    for heading in headings:
        by_page.setdefault(heading.page, []).append(heading)
    trail: list[tuple[int, str]] = []
    pieces: list[str] = []
    spans: list[Span] = []
    offset = 0
    for page in pages:
        if not page.text.strip():
            continue
        if pieces:
            offset += 2
        lines = page.text.split("\n")
        starts = [0]
        for text in lines[:-1]:
            starts.append(starts[-1] + len(text) + 1)
        cuts: list[tuple[int, str | None]] = [(0, _path(trail))]
        for heading in sorted(by_page.get(page.number, []), key=lambda h: h.line):
            while trail and trail[-1][0] >= heading.level:
                trail.pop()
            trail.append((heading.level, heading.title))
            if cuts[-1][0] == heading.line:
                cuts[-1] = (heading.line, _path(trail))  # same line: the deeper entry wins
            else:
                cuts.append((heading.line, _path(trail)))
        for n, (line, path) in enumerate(cuts):
            stop = cuts[n + 1][0] if n + 1 < len(cuts) else len(lines)
            chunk = "\n".join(lines[line:stop]).rstrip()
            body = chunk.lstrip("\n")
            lead = len(chunk) - len(body)
            if not body.strip():
                continue
            start = offset + starts[line] + lead
            meta: dict[str, Any] = {"page": page.number}
            if path:
                meta["heading"] = path
            spans.append(Span(start=start, end=start + len(body), meta=meta))
        pieces.append(page.text)
        offset += len(page.text)
    return "\n\n".join(pieces), spans


def _path(trail: list[tuple[int, str]]) -> str | None:
    return " > ".join(title for _level, title in trail) or None
