"""Document identity: cards read from files, and questions resolved to documents without an LLM."""

from __future__ import annotations

from datetime import date

import pytest

from chop.identity import (
    complete_periods,
    entity_aliases,
    identity_from_file_name,
    identity_from_text,
    label,
    merge_cards,
    read_question,
    resolve,
    user_card,
)

TEN_K_COVER = """UNITED STATES SECURITIES AND EXCHANGE CO MMISSION Washington, D.C. 20549
FORM 10-K ☒ ANNUAL REPORT PURS UANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT
OF 1934 For the fiscal year ended January 30 , 2021 OR ☐ TRANSITION REPORT
Commission file number 1-4321 ACME WIDGETS CO., INC. (Exact name of registrant as specified
in its charter) Delaware 41-0000000"""

TEN_Q_COVER = """FORM 10-Q QUARTERLY REPORT PURSUANT TO SECTION 13 OR 15(d) For the quarterly period
ended December 31, 2022 Commission File Number 001-0000 ZENITH PACKAGING PLC (Exact name of
Registrant as specified in its charter) ... Three Months Ended ... Six Months Ended"""

EIGHT_K_COVER = """FORM 8-K CURRENT REPORT Date of Report (Date of earliest event reported): July 1,
2022 (June 30, 2022) ZENITH PACKAGING PLC (Exact name of registrant as specified in its charter)"""

PRESS_RELEASE = """Exhibit 99.1 ACME WIDGETS REPORTS FOURTH QUARTER AND FULL YEAR 2022 RESULTS
MINNEAPOLIS, March 2, 2023 -- Acme Widgets Co., Inc. (NYSE: ACW) today announced results for
the fourth quarter ended January 28, 2023 ("Q4 FY23")."""


def test_a_10k_cover_gives_company_form_and_fiscal_year_despite_split_words() -> None:
    card = identity_from_text(TEN_K_COVER)
    assert card["kind"] == "10-K"
    assert card["entity"] == "Acme Widgets Co., Inc."
    assert card["fiscal_year"] == 2021 and card["period_end"] == "2021-01-30"
    assert label(merge_cards(card)) == "Acme Widgets 10-K FY2021"


def test_a_10q_cover_gives_the_quarter_and_a_sibling_annual_report_the_fiscal_year() -> None:
    quarterly = merge_cards(identity_from_text(TEN_Q_COVER))
    assert quarterly["kind"] == "10-Q" and quarterly["fiscal_quarter"] == 2
    assert "fiscal_year" not in quarterly  # December is not the fiscal year's end everywhere
    annual = merge_cards(
        {"kind": "10-K", "entity": "Zenith Packaging PLC", "period_end": "2022-06-30",
         "fiscal_year": 2022}
    )  # fmt: skip
    cards = {"q": dict(quarterly), "k": dict(annual)}
    complete_periods(cards)
    assert cards["q"]["fiscal_year"] == 2023  # the year that ends June 30, 2023


def test_an_8k_and_a_press_release_are_dated_and_named() -> None:
    current = identity_from_text(EIGHT_K_COVER)
    assert current["kind"] == "8-K" and current["date"] == "2022-07-01"
    release = merge_cards(identity_from_text(PRESS_RELEASE))
    assert release["kind"] == "earnings release"
    assert (release["fiscal_year"], release["fiscal_quarter"]) == (2023, 4)
    assert "ACW" in release["aliases"]


def test_file_names_carry_period_and_form() -> None:
    card = identity_from_file_name("/data/ACME_2023Q2_10Q.pdf")
    assert (card["kind"], card["fiscal_year"], card["fiscal_quarter"]) == ("10-Q", 2023, 2)
    assert identity_from_file_name("ACME_8K_dated-2022-07-01.pdf")["date"] == "2022-07-01"
    assert "fiscal_year" not in identity_from_file_name("Galaxy_S10.json")


def test_what_a_user_sets_wins_and_unknown_fields_are_refused() -> None:
    card = merge_cards(user_card({"fiscal_year": "2020"}), identity_from_text(TEN_K_COVER))
    assert card["fiscal_year"] == 2020 and card["sources"]["fiscal_year"] == "user"
    with pytest.raises(ValueError, match="unknown identity field"):
        user_card({"colour": "red"})


def test_company_aliases_are_what_people_write() -> None:
    assert entity_aliases("Best Buy Co., Inc.") == ["Best Buy"]
    assert "MGM" in entity_aliases("MGM Resorts International")
    assert {"J&J", "JnJ"} <= set(entity_aliases("Johnson & Johnson"))


def test_questions_name_periods_in_many_ways() -> None:
    periods = read_question("Change between FY2021 and fiscal 2022, and in Q2 of FY2023?").periods
    assert {(p.fiscal_year, p.fiscal_quarter) for p in periods} == {
        (2021, None), (2022, None), (2023, 2)
    }  # fmt: skip
    assert read_question("as of May 26, 2023").periods[0].day == date(2023, 5, 26)
    assert read_question("the 8k dated 1st July 2022").periods[0].day == date(2022, 7, 1)
    assert read_question("H1 FY23 cash").periods[0].fiscal_quarter == 2
    assert read_question("in its latest 10-Q").kinds == ["10-Q"]


MANUALS = {
    name: {"model": name}
    for name in ["Galaxy Note 10", "Galaxy Note 10+", "Galaxy S9", "Galaxy S9+", "Galaxy S7",
                 "Galaxy S7 Edge", "Galaxy Tab A 10.1", "Galaxy Z Flip"]
}  # fmt: skip


@pytest.mark.parametrize(
    ("question", "document"),
    [
        ("How do I charge my Note10?", "Galaxy Note 10"),
        ("galaxy note-10 plus battery", "Galaxy Note 10+"),
        ("S9 Plus camera", "Galaxy S9+"),
        ("S9 camera", "Galaxy S9"),
        ("Galaxy S7 battery", "Galaxy S7"),
        ("my s7 edge screen", "Galaxy S7 Edge"),
        ("Tab A 10.1 wifi", "Galaxy Tab A 10.1"),
        ("z flip hinge", "Galaxy Z Flip"),
    ],
)
def test_model_names_match_however_they_are_written(question: str, document: str) -> None:
    assert resolve(question, MANUALS).doc_ids == [document]


FILINGS = {
    f"acme-{year}": {"kind": "10-K", "entity": "Acme Widgets Co., Inc.",
                     "aliases": ["Acme Widgets"], "fiscal_year": year}
    for year in (2021, 2022, 2023)
} | {
    "acme-q": {"kind": "10-Q", "entity": "Acme Widgets Co., Inc.", "aliases": ["Acme Widgets"],
               "fiscal_year": 2024, "fiscal_quarter": 2},
    "zenith-2022": {"kind": "10-K", "entity": "Zenith Packaging PLC", "aliases": ["Zenith"],
                    "fiscal_year": 2022},
}  # fmt: skip


def test_a_filing_question_resolves_by_company_and_latest_period() -> None:
    assert resolve("Acme Widgets revenue in FY2022?", FILINGS).doc_ids == ["acme-2022"]
    compared = resolve("Did Acme Widgets margins grow between FY2021 and FY2023?", FILINGS)
    assert compared.doc_ids == ["acme-2023"]  # the latest report holds both years
    assert resolve("Acme Widgets stores in Q2 of FY2024?", FILINGS).doc_ids == ["acme-q"]
    assert resolve("What does Zenith make?", FILINGS).doc_ids == ["zenith-2022"]
    latest = resolve("What industry is Acme Widgets in?", FILINGS)
    assert latest.doc_ids == ["acme-2023"], "no period named: the latest annual report"
    assert latest.secondary == ["acme-q"], "later quarterly reports stay candidates"


def test_a_fiscal_year_is_answered_from_its_annual_report_before_its_earnings_release() -> None:
    filings = FILINGS | {
        "acme-2023-q4": {"kind": "earnings release", "entity": "Acme Widgets",
                         "fiscal_year": 2023, "fiscal_quarter": 4},
    }  # fmt: skip
    year = resolve("Did Acme Widgets grow its gross margin in FY2023?", filings)
    assert (year.doc_ids, year.secondary) == (["acme-2023"], ["acme-2023-q4"])
    release = resolve("What did the Acme Widgets earnings release say for FY2023?", filings)
    assert (release.doc_ids, release.secondary) == (["acme-2023-q4"], [])


def test_a_period_no_document_covers_is_reported() -> None:
    resolution = resolve("Acme Widgets revenue in FY2030?", FILINGS)
    assert resolution.unknown == "FY2030"
