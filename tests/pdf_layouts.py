"""Two PDF layouts the PDF tests share (a harness, not tests): a manual with an outline's
worth of headings (MANUAL) and an SEC filing with a running header, a table of contents, parts
and items (FILING); and ``sections``, what the tests compare a loaded PDF by."""

from __future__ import annotations

from chop_rag.reading.documents import SourceDocument
from tests.pdfs import BODY, BOLD, LARGE

MANUAL = [
    [("Blender B3 Manual", LARGE), ("Welcome to your blender.", BODY)],
    [("Safety", BOLD), ("Keep fingers out.", BODY), ("Cleaning", BOLD), ("Rinse the jar.", BODY)],
    [("Dry the jar before storing it.", BODY)],
]

HEADER = ("Acme Corp Annual Report", BOLD)  # a running header: on every page, never a heading

FILING = [
    [
        HEADER,
        ("TABLE OF CONTENTS", BOLD),
        ("PART I 2", BOLD),
        ("Item 1. Business 2", BODY),
        ("Item 1A. Risk Factors 3", BODY),
        ("PART II 4", BOLD),
        ("Item 7. Management Discussion and Analysis 4", BODY),
        ("Page 1", BOLD),
    ],
    [
        HEADER,
        ("PART I", BOLD),
        ("Item 1. Business", BOLD),
        ("We make anvils.", BODY),
        ("Products", BOLD),
        ("Anvils and rockets.", BODY),
        ("Total 2022 2023", BOLD),  # a table row, not a heading
        ("Page 2", BOLD),
    ],
    [
        HEADER,
        ("More about our products.", BODY),
        ("Item 1A. Risk Factors", BOLD),
        ("Item 7 of this report discusses demand, which may fall.", BODY),  # a reference
        ("Rocket Supply", LARGE),
        ("Rockets may be late.", BODY),
        ("Page 3", BOLD),
    ],
    [
        HEADER,
        ("PART II", BOLD),
        ("Item 7. Management Discussion and Analysis", BOLD),
        ("Our results depend on the supply of rockets and anvils, which we buy from", BOLD),
        ("several vendors under long-term contracts with fixed prices.", BOLD),
        ("Sales grew.", BODY),
        ("Page 4", BOLD),
    ],
]


def sections(doc: SourceDocument) -> list[tuple[int, str | None, str]]:
    """(page, heading path, first line) of every span, in document order."""
    return [
        (
            span["meta"]["page"],
            span["meta"].get("heading"),
            doc["text"][span["start"] : span["end"]].split("\n")[0],
        )
        for span in doc["spans"]
    ]
