"""PDF page readers: PDFium (chop_rag.reading.loaders.pdf_pdfium, the default) and pypdf
(chop_rag.reading.loaders. pdf_pypdf, the fallback) give the same pages, words, titles and heading
paths; PDFium's text is repaired where it runs lines on or joins a hyphenated word; pypdf takes over
where PDFium cannot open a file or fails on a page."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NoReturn

import pypdfium2 as pdfium
import pytest

from chop_rag.reading.documents import SourceDocument
from chop_rag.reading.loaders import LoadError, load_file, pdf_pdfium
from chop_rag.reading.loaders import pdf as pdf_loader
from chop_rag.reading.loaders.pdf import PARSERS, Parser, load_pdf, parse_pdf
from chop_rag.reading.pdf_layout import PdfPage, read_document
from tests.pdf_layouts import FILING, MANUAL, sections
from tests.pdfs import (
    BODY,
    BOLD,
    LARGE,
    OTHER,
    encrypt_pdf,
    literal,
    make_pdf,
    make_styled_pdf,
    ops_pdf,
    with_outline,
)


def load(tmp_path: Path, data: bytes, parser: Parser) -> SourceDocument:
    path = tmp_path / parser / "report.pdf"
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(data)
    return load_pdf(path, 50, parser)


def page_words(doc: SourceDocument) -> dict[int, list[str]]:
    words: dict[int, list[str]] = {}
    for span in doc["spans"]:
        text = doc["text"][span["start"] : span["end"]]
        words.setdefault(span["meta"]["page"], []).extend(re.findall(r"\w+", text))
    return words


FORM_8K = [
    [("FORM 8-K", LARGE), ("Item 2.02 Results of Operations.", BOLD), ("Sales grew.", BODY)],
    [("Item 9.01 Financial Statements and Exhibits.", BOLD), ("Exhibit 99.1", BOLD)],
]
OTHER_FONT = [
    [("PART I", OTHER), ("Item 1 - Business", OTHER), ("We bake bread.", BODY)],
    [("Item 1A - Risk Factors", OTHER), ("Wheat may cost more.", BODY)],
]
FIXTURES = {
    "outline": with_outline(
        make_styled_pdf(MANUAL),
        [("Introduction", 0, []), ("Care", 1, [("Safety", 1), ("Cleaning", 1)])],
    ),
    "filing": make_styled_pdf(FILING),
    "8-K": make_styled_pdf(FORM_8K),
    "fonts named F1": make_styled_pdf(OTHER_FONT),
    "plain": make_pdf(["Page one\nsecond line", "", "Page three"], title="Blender B3"),
}


@pytest.mark.parametrize("name", list(FIXTURES))
def test_pdfium_and_pypdf_give_the_same_pages_words_title_and_headings(
    tmp_path: Path, name: str
) -> None:
    data = FIXTURES[name]
    assert parse_pdf(data).parser == "pdfium", "PDFium reads it: no fallback"
    docs = {parser: load(tmp_path, data, parser) for parser in PARSERS}
    pdfium_doc, pypdf_doc = docs["pdfium"], docs["pypdf"]
    assert sections(pdfium_doc) == sections(pypdf_doc)
    assert page_words(pdfium_doc) == page_words(pypdf_doc)
    assert pdfium_doc["title"] == pypdf_doc["title"]
    assert pdfium_doc["metadata"]["pages"] == pypdf_doc["metadata"]["pages"]


def test_pdfium_is_the_default_parser_of_the_loader(tmp_path: Path) -> None:
    path = tmp_path / "report.pdf"
    path.write_bytes(FIXTURES["filing"])
    assert load_file(path) == [load_pdf(path, 50, "pdfium")]


# --------------------------------------------------------------------------- PDFium's repairs


def small_type_page(lines: list[tuple[str, str]]) -> list[str]:
    """A page set like some 10-Ks: each line its own text object in 384-unit type scaled to
    about 4.4 points by the CTM, and a line holding one space between paragraphs. PDFium
    runs such lines on into one."""
    ops = ["q 0.3634943 0 0 -0.3634943 17.44773 774.2429 cm"]
    y = 1088
    for text, font in lines:
        ops.append(
            f"q 0.03125 0 0 0.03125 0 0 cm q 1 0 0 -1 0 {y} cm "
            f"BT /{font} 384 Tf ({literal(text)}) Tj ET Q Q"
        )
        y += 384
    return [*ops, "Q"]


SMALL_TYPE = [
    ("PART I", "F2"),
    (" ", "F1"),
    ("Item 1. Business.", "F2"),
    (" ", "F1"),
    ("Unless the context otherwise requires, we and us mean the company and", "F1"),
    ("its subsidiaries, and our websites are named in this report only as", "F1"),
    ("inactive references; the information on them is not part of it, nor is", "F1"),
    ("it incorporated here by reference to any of the websites of the company.", "F1"),
    (" ", "F1"),
    ("Description of Business", "F2"),
    (" ", "F1"),
    ("We were incorporated in the state of Minnesota in 1966 and sell", "F1"),
    ("consumer electronics in stores and online in the United States, Canada", "F1"),
    ("and, until we sold our stores there, Mexico.", "F1"),
]


def test_lines_pdfium_runs_on_are_cut_where_each_line_starts(tmp_path: Path) -> None:
    data = ops_pdf([small_type_page(SMALL_TYPE)])
    raw = pdfium.PdfDocument(data)[0].get_textpage().get_text_range()
    assert "Item 1. Business. Unless" in raw, "the premise: PDFium alone runs the lines on"
    docs = {parser: load(tmp_path, data, parser) for parser in PARSERS}
    assert sections(docs["pdfium"]) == [
        (1, "PART I", "PART I"),
        (1, "PART I > Item 1. Business.", "Item 1. Business."),
        (1, "PART I > Item 1. Business. > Description of Business", "Description of Business"),
    ]
    assert sections(docs["pdfium"]) == sections(docs["pypdf"])
    assert page_words(docs["pdfium"]) == page_words(docs["pypdf"])
    lines = docs["pdfium"]["text"].split("\n")
    assert lines[:3] == ["PART I", "", "Item 1. Business."], "paragraph space: an empty line"
    assert lines[4:6] == [text for text, _ in SMALL_TYPE[4:6]]


def test_a_word_pdfium_joins_over_a_line_end_keeps_its_hyphen(tmp_path: Path) -> None:
    lines = ["Borrowings of short-", "term debt rose in the year.", "Nothing else changed."]
    ops = [f"BT /F1 10 Tf 72 {700 - 12 * n} Td ({text}) Tj ET" for n, text in enumerate(lines)]
    doc = load(tmp_path, ops_pdf([ops]), "pdfium")
    assert doc["text"] == "Borrowings of short-term\ndebt rose in the year.\nNothing else changed."


def test_a_bold_run_in_head_is_a_line_and_a_heading_of_its_own(tmp_path: Path) -> None:
    ops = [
        "BT /F1 10 Tf 72 720 Td (Our debt grew this year.) Tj ET",
        "BT /F2 10 Tf 72 700 Td (Interest expense.) Tj /F1 10 Tf "
        "( Interest expense was $800 million in 2021.) Tj 0 -12 Td (It rose with the debt.) Tj ET",
    ]
    doc = load(tmp_path, ops_pdf([ops]), "pdfium")
    assert doc["text"].split("\n")[1:3] == [
        "Interest expense.",
        "Interest expense was $800 million in 2021.",
    ]
    assert sections(doc)[1:] == [(1, "Interest expense.", "Interest expense.")]


def test_turned_text_is_not_cut_into_lines(tmp_path: Path) -> None:
    body = [
        f"BT /F1 10 Tf 72 {700 - 12 * n} Td (Body line {n} of the page.) Tj ET" for n in range(4)
    ]
    turned = "BT /F1 10 Tf 0 -1 1 0 500 700 Tm (Reading down the margin of the page) Tj ET"
    doc = load(tmp_path, ops_pdf([[*body, turned]]), "pdfium")
    assert "Reading down the margin of the page" in doc["text"].split("\n")


# --------------------------------------------------------------------------- fallback to pypdf


def test_pypdf_reads_what_pdfium_cannot_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def cannot(data: bytes) -> None:
        raise pdf_pdfium.PdfiumUnreadable("Failed to load document (PDFium: Data format error)")

    monkeypatch.setattr(pdf_loader, "read_pdfium", cannot)
    assert parse_pdf(FIXTURES["filing"]).parser == "pypdf"
    fallen = load(tmp_path, FIXTURES["filing"], "pdfium")
    assert sections(fallen) == sections(load(tmp_path, FIXTURES["filing"], "pypdf"))


def test_pypdf_reads_the_file_again_when_pdfium_fails_on_a_page(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    read_page = pdf_pdfium._read_page

    def fails_on_page_2(pdf: pdfium.PdfDocument, index: int) -> object:
        if index == 1:
            raise RuntimeError("broken page")
        return read_page(pdf, index)

    monkeypatch.setattr(pdf_pdfium, "_read_page", fails_on_page_2)
    parsed = parse_pdf(FIXTURES["filing"])
    assert parsed.parser == "pypdf" and not parsed.failed
    assert "We make anvils." in parsed.pages[1].text


def test_files_neither_reader_opens_keep_pypdfs_reasons(tmp_path: Path) -> None:
    cases = {
        "locked.pdf": (encrypt_pdf(make_pdf(["secret"]), user_password="pw"), "encrypted PDF"),
        "cut.pdf": (make_pdf(["Some text", "More text"])[:60], "unreadable PDF: "),
        "scan.pdf": (make_pdf(["", ""]), "PDF has no extractable text (scanned?)"),
    }
    for name, (data, reason) in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        with pytest.raises(LoadError) as caught:
            load_pdf(path, 50)
        assert str(caught.value).startswith(reason), (name, str(caught.value))


def test_pdfs_load_alike_from_many_threads_at_once(tmp_path: Path) -> None:
    """PDFium is not thread-safe: the reader takes one document at a time."""
    paths = []
    for name, data in FIXTURES.items():
        paths.append(tmp_path / f"{name}.pdf")
        paths[-1].write_bytes(data)
    alone = [load_pdf(path, 50) for path in paths]
    with ThreadPoolExecutor(max_workers=8) as pool:
        together = list(pool.map(lambda path: load_pdf(path, 50), paths * 4))
    assert together == alone * 4


def test_a_page_outline_or_title_that_fails_to_read_loses_only_itself() -> None:
    def page(number: int) -> PdfPage:
        if number == 2:
            raise RuntimeError("broken page")
        return PdfPage(number=number, text=f"page {number}")

    def damaged() -> NoReturn:
        raise ValueError("damaged")

    parsed = read_document("either", 3, page, damaged, damaged)
    assert [(p.number, p.text) for p in parsed.pages] == [(1, "page 1"), (2, ""), (3, "page 3")]
    assert (parsed.failed, parsed.outline, parsed.title, parsed.parser) == ([2], [], "", "either")
