"""A question about a quarter, in any spelling, is answered from that quarter's report, for
any fiscal calendar: the quarter is read from the question (chop_rag.text.periods) and matched
to the quarterly reports by their cards, else by the day their quarter ended. The companies
are invented; their fiscal years end in December, January, June and September."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

import pytest

from chop_rag.labelling.cards import DocumentCard
from chop_rag.questions.filings import covering
from chop_rag.text.periods import periods, quarter_fiscal_year

SPELLINGS = ["Q2'2023", "Q2 2023", "second quarter of 2023", "2023Q2", "Q2 FY23", "2Q23",
             "the second quarter of fiscal 2023", "FY2023 Q2"]  # fmt: skip


@pytest.mark.parametrize("written", SPELLINGS)
def test_every_spelling_of_a_quarter_is_the_same_quarter(written: str) -> None:
    (period,) = periods(f"As of {written}, is Ostrava Pharma spinning off its consumer unit?")
    assert (period.fiscal_year, period.fiscal_quarter) == (2023, 2)


@pytest.mark.parametrize(
    ("quarter_end", "quarter", "fiscal_year"),
    [
        (date(2023, 7, 2), 2, 2023),  # December year, 52/53 weeks: ends January 1, 2024
        (date(2023, 7, 29), 2, 2024),  # year ending about February 3, 2024: fiscal 2024
        (date(2022, 12, 31), 2, 2023),  # year ending June 30, 2023
        (date(2024, 3, 30), 2, 2024),  # year ending late September 2024
        (date(2023, 9, 30), 3, 2023),
    ],
)
def test_a_quarters_fiscal_year_follows_from_the_day_it_ended(
    quarter_end: date, quarter: int, fiscal_year: int
) -> None:
    assert quarter_fiscal_year(quarter_end, quarter) == fiscal_year


OSTRAVA_10Q = DocumentCard(
    "ostrava-10q",
    kind="10-Q",
    entity="Ostrava Pharma",
    fiscal_year=2022,
    fiscal_quarter=2,
    period_end=date(2023, 7, 2),
)  # its card took the year of the annual report its cover mentions
OSTRAVA_10K = DocumentCard(
    "ostrava-10k", kind="10-K", entity="Ostrava Pharma", fiscal_year=2022,
    period_end=date(2022, 12, 31),
)  # fmt: skip


@pytest.mark.parametrize("written", SPELLINGS)
def test_a_quarter_is_covered_by_its_report_even_where_its_card_names_another_year(
    written: str,
) -> None:
    (period,) = periods(f"As of {written}, is Ostrava Pharma spinning off its consumer unit?")
    reference, _secondary, rule = covering(period, [OSTRAVA_10Q, OSTRAVA_10K])
    assert reference == ["ostrava-10q"], rule


def test_a_calendar_quarter_finds_the_report_of_a_quarter_ending_weeks_later() -> None:
    retailer = DocumentCard(
        "brightwell-10q", kind="10-Q", entity="Brightwell Stores", fiscal_year=2024,
        fiscal_quarter=2, period_end=date(2023, 7, 29),
    )  # fmt: skip
    (period,) = periods("What were Brightwell's net sales in Q2 2023?")
    assert covering(period, [retailer])[0] == ["brightwell-10q"]


def test_a_quarter_no_report_covers_is_still_not_covered() -> None:
    (period,) = periods("What were Ostrava Pharma's sales in Q4 2019?")
    assert covering(period, [OSTRAVA_10Q, OSTRAVA_10K]) == ([], [], "")


def test_a_question_about_the_quarter_resolves_to_its_report_and_is_not_declined() -> None:
    from chop_rag.questions.facts import read_question
    from chop_rag.questions.matching import resolve

    cards = [
        replace(OSTRAVA_10Q, names=("Ostrava Pharma",)),
        replace(OSTRAVA_10K, names=("Ostrava Pharma",)),
    ]
    facts = read_question("As of Q2'2023, is Ostrava Pharma spinning off its consumer unit?")
    resolution = resolve(facts, cards)
    assert resolution.unknown is None
    assert list(resolution.documents) == ["ostrava-10q"]
