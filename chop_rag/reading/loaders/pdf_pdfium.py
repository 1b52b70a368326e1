"""The PDFium page reader (pypdfium2: PDFium's C library, BSD/Apache licensed), the default
for PDFs: the same pages, line fonts, outline and title that chop_rag.reading.pdf_layout turns into
headings, at native speed (about 7 ms a page on SEC filings, against pypdf's 100 ms).

PDFium lays the page's characters out into lines in C. Fonts are read per line, not per
character (a Python call per character would cost more than the text): the first, middle
and last word of a line are looked up (effective size = font size × the vertical scale of
the character's matrix; the font's name; bold by name or by a /FontWeight of 600 and more),
and only a line whose three disagree is looked up word by word. Each word then weighs by its
characters, as pypdf's runs do.

Where PDFium's text differs from what the layout needs, it is repaired from the characters'
positions, at one or two calls per line:
- a line PDFium runs on over line breaks it missed (filings set in small type, a line of one
  space between paragraphs) is cut before each word that starts lower and not further right;
- an empty line stands where a line sits lower than the page's usual pitch by half again
  (the space above a heading or a paragraph), as in pypdf's text;
- a bold run-in head ("Interest expense. Interest expense was ...") gets a line of its own;
- a hyphen PDFium joins over a line end is kept ("short-term").
Known loss: PDFium drops one of two identical glyphs drawn as separate, kerned text objects
("Dif erentiated"): 175 words of 2.4 million in the 40 FinanceBench dev filings.

PDFium is not thread-safe: one document is read at a time per process
(chop_rag.reading.loaders.workers parses batches in processes, so that costs nothing there).
"""

from __future__ import annotations

import ctypes
import itertools
import logging
import math
import re
import threading

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from chop_rag.reading.pdf_layout import (
    BOLD_WEIGHT,
    OutlineEntry,
    ParsedPdf,
    PdfPage,
    add_line,
    bold_name,
    read_document,
)

logging.getLogger("pypdfium2").setLevel(logging.ERROR)  # a circular outline is worked around

_LOCK = threading.Lock()
_SAME_LINE_PT = 1.0  # baselines closer than this (points) are one line
_UPRIGHT = 0.01  # radians: a character turned less than this stands upright
_PARAGRAPH_GAP = 1.5  # a drop this many usual line pitches opens a paragraph
_MIN_PITCHES = 3  # fewer line pitches than this on a page tell no usual pitch
_MAX_RUN_IN_CHARS = 80  # a longer bold opening is a bold sentence, not a run-in head
_NO_CHAR = "\ufffe"  # PDFium's mark of a glyph without a character, and of a hyphen it joined
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_WORD = re.compile(r"\S+")
_MAX_OUTLINE_DEPTH = 15
# PDFium's weight is the descriptor's /FontWeight (100, ..., 900) where it has one, else a
# guess from the stem width (/StemV) that calls TimesNewRomanPS-ItalicMT bold (610) and
# TimesNewRomanPS-BoldMT not (415): only a /FontWeight counts, as with pypdf.
_BOLD_WEIGHTS = frozenset(range(BOLD_WEIGHT, 1000, 100))

Face = tuple[float, bool, str]  # (effective size, bold, font name)


class PdfiumUnreadable(Exception):
    """PDFium could not open or read the file; the caller falls back to pypdf."""


def read_pdfium(data: bytes) -> ParsedPdf:
    """Every page's text and line fonts, the outline and the title, read by PDFium. Raises
    PdfiumUnreadable when PDFium cannot open the file (damaged, encrypted)."""
    with _LOCK:
        try:
            pdf = pdfium.PdfDocument(data)
        except Exception as err:  # PdfiumError and whatever a damaged file provokes
            raise PdfiumUnreadable(str(err)) from None
        try:
            return _read_document(pdf)
        finally:
            pdf.close()


def _read_document(pdf: pdfium.PdfDocument) -> ParsedPdf:
    return read_document(
        "pdfium",
        len(pdf),
        lambda number: _read_page(pdf, number - 1),
        lambda: _outline(pdf),
        lambda: pdf.get_metadata_value("Title"),
    )


def _outline(pdf: pdfium.PdfDocument) -> list[OutlineEntry]:
    entries: list[OutlineEntry] = []
    for bookmark in pdf.get_toc(max_depth=_MAX_OUTLINE_DEPTH):
        dest = bookmark.get_dest()
        index = dest.get_index() if dest is not None else None
        if index is not None:
            entries.append((index, bookmark.level, bookmark.get_title()))
    return entries


def _read_page(pdf: pdfium.PdfDocument, index: int) -> PdfPage:
    page = pdf.get_page(index)
    try:
        textpage = page.get_textpage()
        try:
            return _LineReader(textpage).page(index + 1)
        finally:
            textpage.close()
    finally:
        page.close()


class _LineReader:
    """One text page's lines and, per line, the font most of its words are set in."""

    def __init__(self, textpage: pdfium.PdfTextPage) -> None:
        self.textpage = textpage  # held: PDFium frees the text page with this object
        self.raw = textpage.raw
        self.text = textpage.get_text_range()
        self.aligned = len(self.text) == pdfium_c.FPDFText_CountChars(self.raw)
        if _NO_CHAR in self.text:
            self.text = self._hyphens(self.text)
        self.matrix = pdfium_c.FS_MATRIX()
        self.flags = ctypes.c_int()
        self.x, self.y = ctypes.c_double(), ctypes.c_double()
        self.name = ctypes.create_string_buffer(128)
        self.bold_names: dict[bytes, tuple[str, bool]] = {}

    def _hyphens(self, text: str) -> str:
        """PDFium joins a word hyphenated over a line end ("short-", "term") and marks the
        hyphen U+FFFE, as it marks a glyph that maps to no character: the hyphen is put back
        ("short-term", as printed), the unmapped glyphs are dropped where lines are cut."""
        chars = list(text)
        for found in re.finditer(_NO_CHAR, text):
            char = self._char(found.start())
            if char >= 0 and pdfium_c.FPDFText_IsHyphen(self.raw, char) == 1:
                chars[found.start()] = "-"
        return "".join(chars)

    def page(self, number: int) -> PdfPage:
        lines: list[tuple[str, float | None]] = []  # (text, baseline height or None)
        result = PdfPage(number=number, text="")
        start = 0
        for brk in [*_LINE_BREAK.finditer(self.text), None]:
            end = brk.start() if brk is not None else len(self.text)
            words = [
                (w.start(), w.end() - w.start()) for w in _WORD.finditer(self.text, start, end)
            ]
            cuts: list[tuple[int, float | None]] = (
                self._visual_lines(words) if words else [(start, None)]
            )
            cuts[0] = (start, cuts[0][1])
            for i, (cut, height) in enumerate(cuts):
                stop = cuts[i + 1][0] if i + 1 < len(cuts) else end
                own = [word for word in words if cut <= word[0] < stop]
                faces = self._faces(own) if own else []
                run_in = self._run_in(own, faces)
                if run_in:  # "Interest expense. Interest expense was ...": the head alone
                    head = self._piece(cut, own[run_in][0]).rstrip(" ")
                    lines.append((head, height))
                    add_line(result, head, faces[:run_in])
                    cut, faces = own[run_in][0], faces[run_in:]
                line = self._piece(cut, stop)
                lines.append((line.rstrip(" ") if stop < end else line, height))
                if faces:
                    add_line(result, line, faces)
            if brk is not None:
                start = brk.end()
        result.text = "\n".join(_with_paragraph_gaps(lines))
        return result

    def _piece(self, start: int, stop: int) -> str:
        return self.text[start:stop].replace(_NO_CHAR, "")

    def _visual_lines(self, words: list[tuple[int, int]]) -> list[tuple[int, float | None]]:
        """Where each line starts, and the height of its first word's baseline.

        PDFium's line can run on over a line break it missed (some filings set in small
        type: a heading and the paragraph under it come out as one line); it is cut before
        each word that begins lower on the page and not to the right of the word before it.
        Only a line whose first and last words stand at different heights is looked into."""
        first = self._origin(words[0][0])
        if first is None or not self._upright(words[0][0]):
            return [(words[0][0], None)]  # turned text: its lines do not run left to right
        if len(words) < 2:
            return [(words[0][0], first[1])]
        last = self._origin(words[-1][0])
        if last is None or abs(first[1] - last[1]) <= _SAME_LINE_PT:
            return [(words[0][0], first[1])]
        cuts: list[tuple[int, float | None]] = [(words[0][0], first[1])]
        before = first
        for at, _n in words[1:]:
            here = self._origin(at)
            if here is None:
                continue
            if here[1] < before[1] - _SAME_LINE_PT and here[0] < before[0] + _SAME_LINE_PT:
                cuts.append((at, here[1]))
            before = here
        return cuts

    def _origin(self, text_index: int) -> tuple[float, float] | None:
        char = self._char(text_index)
        if char < 0 or not pdfium_c.FPDFText_GetCharOrigin(
            self.raw, char, ctypes.byref(self.x), ctypes.byref(self.y)
        ):
            return None
        return (self.x.value, self.y.value)

    def _upright(self, text_index: int) -> bool:
        angle = pdfium_c.FPDFText_GetCharAngle(self.raw, self._char(text_index))
        return 0 <= angle < _UPRIGHT or angle > 2 * math.pi - _UPRIGHT

    def _char(self, text_index: int) -> int:
        if self.aligned:
            return text_index
        return int(pdfium_c.FPDFText_GetCharIndexFromTextIndex(self.raw, text_index))

    def _faces(self, words: list[tuple[int, int]]) -> list[tuple[int, float, bool, str]]:
        """(characters, size, bold, name) of the line's words: one entry for the whole line
        when its first, middle and last word share a face, else one per word."""
        ends = {self._face(words[0][0]), self._face(words[-1][0])}
        if len(words) > 2:
            ends.add(self._face(words[len(words) // 2][0]))
        if len(ends) == 1:
            size, bold, name = ends.pop()
            return [(sum(n for _, n in words), size, bold, name)]
        return [(n, *self._face(at)) for at, n in words]

    def _run_in(
        self, words: list[tuple[int, int]], faces: list[tuple[int, float, bool, str]]
    ) -> int:
        """The index of the first word after a run-in head (bold words that open a line and
        end with a full stop, the rest of the line not bold), or 0 when the line has none.
        pypdf's text gives such a head a line of its own; the layout then sees a heading."""
        if len(faces) < 2 or len(faces) != len(words):
            return 0
        bold = [face[2] for face in faces]
        body = bold.index(False) if False in bold else 0
        if not body or any(bold[body:]):
            return 0
        end = words[body - 1][0] + words[body - 1][1]
        if self.text[end - 1] != "." or end - words[0][0] > _MAX_RUN_IN_CHARS:
            return 0
        return body

    def _face(self, text_index: int) -> Face:
        raw = self.raw
        char = self._char(text_index)
        if char < 0:
            return (0.0, False, "")
        size = pdfium_c.FPDFText_GetFontSize(raw, char)
        matrix = self.matrix
        if pdfium_c.FPDFText_GetMatrix(raw, char, ctypes.byref(matrix)):
            size *= math.hypot(matrix.c, matrix.d)
        length = pdfium_c.FPDFText_GetFontInfo(
            raw, char, self.name, len(self.name), ctypes.byref(self.flags)
        )
        raw_name = self.name.value if 0 < length <= len(self.name) else b""
        known = self.bold_names.get(raw_name)
        if known is None:
            name = raw_name.decode("utf-8", "replace")
            known = self.bold_names[raw_name] = (name, bold_name(name))
        name, bold = known
        if not bold:
            bold = pdfium_c.FPDFText_GetFontWeight(raw, char) in _BOLD_WEIGHTS
        return (round(size * 2) / 2, bold, name)


def _with_paragraph_gaps(lines: list[tuple[str, float | None]]) -> list[str]:
    """The lines, with an empty line where the next one stands lower than the page's usual
    line pitch by half as much again (a paragraph's or a heading's space above it), as
    pypdf's text has: the layout's headings end at an empty line."""
    drops = sorted(
        before - here
        for (_, before), (_, here) in itertools.pairwise(lines)
        if before is not None and here is not None and before - here > _SAME_LINE_PT
    )
    if len(drops) < _MIN_PITCHES:
        return [text for text, _ in lines]
    gap = drops[len(drops) // 2] * _PARAGRAPH_GAP
    out: list[str] = []
    previous: float | None = None
    for text, height in lines:
        if previous is not None and height is not None and previous - height > gap and out[-1]:
            out.append("")
        out.append(text)
        previous = height if height is not None else previous
    return out
