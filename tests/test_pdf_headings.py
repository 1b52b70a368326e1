"""PDF headings: every span of a PDF carries its page and the heading path of the text under it,
from the outline (bookmarks) when the file has one, else from the layout (fonts, SEC items)."""

from __future__ import annotations

from pathlib import Path

from chop_rag.reading.documents import SourceDocument, span_meta_at
from chop_rag.reading.loaders import load_file
from tests.pdf_layouts import FILING, MANUAL, sections
from tests.pdfs import BODY, BOLD, LARGE, OTHER, make_styled_pdf, with_outline


def load(tmp_path: Path, data: bytes) -> SourceDocument:
    path = tmp_path / "report.pdf"
    path.write_bytes(data)
    [doc] = load_file(path)
    return doc


# ------------------------------------------------------- outline (MANUAL: tests/pdf_layouts.py)


def test_outline_gives_heading_paths_split_where_each_title_stands(tmp_path: Path) -> None:
    data = with_outline(
        make_styled_pdf(MANUAL),
        [("Introduction", 0, []), ("Care", 1, [("Safety", 1), ("Cleaning", 1)])],
    )
    doc = load(tmp_path, data)
    assert sections(doc) == [
        (1, "Introduction", "Blender B3 Manual"),
        (2, "Care > Safety", "Safety"),
        (2, "Care > Cleaning", "Cleaning"),
        (3, "Care > Cleaning", "Dry the jar before storing it."),  # the section goes on
    ]
    # The text is what it was before headings existed: pages joined by a blank line.
    assert doc["text"] == (
        "Blender B3 Manual\nWelcome to your blender.\n\n"
        "Safety\nKeep fingers out.\nCleaning\nRinse the jar.\n\n"
        "Dry the jar before storing it."
    )


def test_a_chunk_gets_its_pages_and_the_heading_it_starts_under(tmp_path: Path) -> None:
    data = with_outline(make_styled_pdf(MANUAL), [("Care", 1, [("Cleaning", 1)])])
    doc = load(tmp_path, data)
    start = doc["text"].index("Rinse the jar.")
    end = doc["text"].index("storing")
    assert span_meta_at(doc["spans"], start, end) == {
        "pages": [2, 3],
        "heading": "Care > Cleaning",
        "headings": ["Care > Cleaning"],
    }
    first_page = span_meta_at(doc["spans"], 0, 10)
    assert first_page == {"pages": [1]}  # before the first bookmark: no heading


def test_outline_wins_over_layout(tmp_path: Path) -> None:
    data = with_outline(make_styled_pdf(MANUAL), [("Everything", 0, [])])
    doc = load(tmp_path, data)
    assert {span["meta"].get("heading") for span in doc["spans"]} == {"Everything"}


# -------------------------------------------------------- layout (FILING: tests/pdf_layouts.py)


def test_layout_headings_nest_parts_items_larger_fonts_and_bold_lines(tmp_path: Path) -> None:
    doc = load(tmp_path, make_styled_pdf(FILING))
    business = "PART I > Item 1. Business"
    risks = "PART I > Item 1A. Risk Factors"
    mdna = "PART II > Item 7. Management Discussion and Analysis"
    assert sections(doc) == [
        (1, None, "Acme Corp Annual Report"),  # the contents page heads nothing
        (2, None, "Acme Corp Annual Report"),
        (2, "PART I", "PART I"),
        (2, business, "Item 1. Business"),
        (2, f"{business} > Products", "Products"),
        (3, f"{business} > Products", "Acme Corp Annual Report"),
        (3, risks, "Item 1A. Risk Factors"),
        (3, f"{risks} > Rocket Supply", "Rocket Supply"),
        (4, f"{risks} > Rocket Supply", "Acme Corp Annual Report"),
        (4, "PART II", "PART II"),
        (4, mdna, "Item 7. Management Discussion and Analysis"),  # a bold paragraph is text
    ]


def test_a_page_crowded_with_bold_lines_gives_no_headings(tmp_path: Path) -> None:
    form = [(f"Box {name} checked", BOLD) for name in "ABCDEFGHIJKLMN"]
    doc = load(tmp_path, make_styled_pdf([form, [("Notes", BOLD), ("Plain text.", BODY)]]))
    assert sections(doc) == [(1, None, "Box A checked"), (2, "Notes", "Notes")]


def test_a_pdf_in_one_font_keeps_one_span_per_page(tmp_path: Path) -> None:
    doc = load(tmp_path, make_styled_pdf([[("Intro", BODY), ("Text.", BODY)], [("More.", BODY)]]))
    assert sections(doc) == [(1, None, "Intro"), (2, None, "More.")]


def test_current_report_items_head_their_sections(tmp_path: Path) -> None:
    form_8k = [
        [("FORM 8-K", LARGE), ("Item 2.02 Results of Operations.", BOLD), ("Sales grew.", BODY)],
        [("Item 9.01 Financial Statements and Exhibits.", BOLD), ("Exhibit 99.1", BOLD)],
    ]
    doc = load(tmp_path, make_styled_pdf(form_8k))
    assert sections(doc) == [
        (1, "FORM 8-K", "FORM 8-K"),
        (1, "Item 2.02 Results of Operations.", "Item 2.02 Results of Operations."),
        (
            2,
            "Item 9.01 Financial Statements and Exhibits.",
            "Item 9.01 Financial Statements and Exhibits.",
        ),
        (2, "Item 9.01 Financial Statements and Exhibits. > Exhibit 99.1", "Exhibit 99.1"),
    ]


def test_items_set_in_another_font_are_headings_even_when_no_font_is_named_bold(
    tmp_path: Path,
) -> None:
    filing = [
        [("PART I", OTHER), ("Item 1 - Business", OTHER), ("We bake bread.", BODY)],
        [("Item 1A - Risk Factors", OTHER), ("Wheat may cost more.", BODY)],
        [("Item 1A - Risk Factors, as described above, may change.", BODY)],  # body text
    ]
    doc = load(tmp_path, make_styled_pdf(filing))
    assert sections(doc) == [
        (1, "PART I", "PART I"),
        (1, "PART I > Item 1 - Business", "Item 1 - Business"),
        (2, "PART I > Item 1A - Risk Factors", "Item 1A - Risk Factors"),
        (
            3,
            "PART I > Item 1A - Risk Factors",
            "Item 1A - Risk Factors, as described above, may change.",
        ),
    ]
