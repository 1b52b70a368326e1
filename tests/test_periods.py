"""Periods as filings and questions write them (chop_rag.text.periods), read the same on both sides.

Each phrasing is one a user or a filing writes; none is taken from a benchmark question."""

from __future__ import annotations

from datetime import date

import pytest

from chop_rag.labelling.identity import identity_from_file_name, identity_from_text
from chop_rag.questions.facts import read_question
from chop_rag.text.periods import Period, bare_years, first_quarter, periods


def read(text: str) -> list[str]:
    return [str(p) for p in periods(text)]


@pytest.mark.parametrize(
    "text",
    [
        "Q1 FY23",
        "Q1 FY2023",
        "Q1 of FY2023",
        "Q1 fiscal 2023",
        "Q1 of fiscal year 2023",
        "FY2023Q1",
        "FY23 Q1",
        "FY2023-Q1",
        "fiscal 2023 first quarter",
        "1Q23",
        "1Q 2023",
        "1Q'23",
        "Q1'2023",
        "Q1’23",
        "Q12023",
        "Q1 2023",
        "Q1-2023",
        "Q1/2023",
        "2023 Q1",
        "2023Q1",
        "first quarter of 2023",
        "first quarter 2023",
        "first fiscal quarter of 2023",
        "1st quarter of fiscal 2023",
        "the first quarter of fiscal year 2023",
        "First Quarter Fiscal 2023",
        "first quarter, 2023",
    ],
)
def test_every_common_way_to_write_a_first_quarter_reads_as_q1_fy2023(text: str) -> None:
    assert read(f"What was revenue in {text}?") == ["Q1 FY2023"]


@pytest.mark.parametrize(
    ("text", "quarter"),
    [
        ("Q2'2023", 2), ("Q22023", 2), ("Q2 2023", 2), ("second quarter of 2023", 2),
        ("3Q22", 3), ("Q3 FY22", 3), ("third fiscal quarter of 2022", 3),
        ("fourth quarter and full year 2022", 4), ("Q4 FY22", 4),
    ],
)  # fmt: skip
def test_quarters_are_read_with_their_own_number(text: str, quarter: int) -> None:
    (period,) = periods(text)
    assert period.fiscal_quarter == quarter and period.fiscal_year in (2022, 2023)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("H1 2023", "Q2 FY2023"), ("1H23", "Q2 FY2023"), ("H1 FY23", "Q2 FY2023"),
        ("first half of 2023", "Q2 FY2023"), ("the first half of fiscal 2023", "Q2 FY2023"),
        ("FY2023 H1", "Q2 FY2023"), ("second half of 2022", "Q4 FY2022"), ("2H22", "Q4 FY2022"),
        ("first nine months of 2023", "Q3 FY2023"),
    ],
)  # fmt: skip
def test_a_half_is_read_as_the_report_that_covers_it(text: str, expected: str) -> None:
    assert read(text) == [expected]


def test_a_span_that_ends_on_a_date_is_that_date() -> None:
    assert periods("for the six months ended June 30, 2023") == [Period(day=date(2023, 6, 30))]
    assert periods("nine months ended 30 September 2022") == [Period(day=date(2022, 9, 30))]
    assert periods("three months ended 2023-03-31") == [Period(day=date(2023, 3, 31))]


@pytest.mark.parametrize(
    ("text", "year"),
    [("FY2022", 2022), ("FY 2022", 2022), ("FY22", 2022), ("FY'22", 2022), ("fiscal 2022", 2022),
     ("fiscal year 2022", 2022), ("the 2022 fiscal year", 2022), ("the 2021 fiscal period", 2021)],
)  # fmt: skip
def test_fiscal_years_are_read_with_any_prefix(text: str, year: int) -> None:
    assert periods(f"debt in {text}") == [Period(year)]


def test_what_is_not_a_period_is_not_read_as_one() -> None:
    assert periods("its 10-Q and 8-K filings") == []
    assert periods("Q4 stores 23") == [], "a bare two-digit number is no year"
    assert periods("a $2023 million charge") == []
    assert periods("as of 2022") == [] and bare_years("as of 2022") == [2022]
    assert bare_years("Q2 2023 and the 2021 fiscal period") == []


def test_comparisons_name_each_period_in_order() -> None:
    assert read("between FY2021 and fiscal 2022, and in Q2 of FY2023") == [
        "FY2021", "FY2022", "Q2 FY2023"
    ]  # fmt: skip
    assert read("from Q2'2022 to 2Q23") == ["Q2 FY2022", "Q2 FY2023"]


def test_a_release_headline_is_read_by_the_same_rules_as_a_question() -> None:
    lead = "ACME REPORTS SECOND QUARTER FISCAL 2024 RESULTS. MINNEAPOLIS, Aug 29, 2023 -- Acme"
    card = identity_from_text(lead)
    assert (card["kind"], card["fiscal_year"], card["fiscal_quarter"]) == (
        "earnings release", 2024, 2
    )  # fmt: skip
    question = read_question("Acme's cash in the second quarter of fiscal 2024?").periods
    assert question == [Period(card["fiscal_year"], card["fiscal_quarter"])]


def test_a_fiscal_quarter_wins_over_a_headline_year() -> None:
    text = "FOURTH QUARTER AND FULL YEAR 2022 RESULTS for the quarter ended Jan 28, 2023 (Q4 FY23)"
    assert first_quarter(text, fiscal=True) == Period(2023, 4)
    assert first_quarter(text) == Period(2022, 4)


@pytest.mark.parametrize(
    ("name", "year", "quarter"),
    [("ACME_2023Q2_10Q.pdf", 2023, 2), ("ACME_Q2_2023_10Q.pdf", 2023, 2),
     ("ACME_FY23Q3_10Q.pdf", 2023, 3), ("ACME_1Q23_EARNINGS.pdf", 2023, 1)],
)  # fmt: skip
def test_file_names_are_read_by_the_same_rules(name: str, year: int, quarter: int) -> None:
    card = identity_from_file_name(name)
    assert (card["fiscal_year"], card["fiscal_quarter"]) == (year, quarter)
