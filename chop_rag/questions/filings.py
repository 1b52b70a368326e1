"""Which filings cover a period a question names, and which filing holds what it asks when
its period alone does not say, read from the filings' identity cards.

A fiscal year is covered by its annual report (or a fourth-quarter release), named as the
filing names it or by the calendar year it ends in; a quarter by its quarterly report, else by
the annual report of its year; a year with only quarterly reports by those (``covering``).
With no period named, the company now is its latest annual report (``latest_filings``). A
forecast for year N is written in the latest filing before N; what a company expects, with no
year, in its latest filing; an event (an officer change, a shareholder vote, a dividend
declared) in the 8-Ks dated within the period. chop_rag.questions.matching applies these to what
chop_rag.questions.facts read from the question.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, timedelta

from chop_rag.labelling.cards import DocumentCard
from chop_rag.questions.facts import QuestionFacts
from chop_rag.text.periods import Period, quarter_fiscal_year
from chop_rag.types import ANNUAL_KINDS, PERIODIC_KINDS


def _ends(card: DocumentCard) -> date | None:
    """The last day a filing speaks of: its period's end, else its date."""
    return card.period_end or card.day


def _annual_first(found: list[DocumentCard]) -> tuple[list[str], list[str]]:
    """(reference, secondary): a fiscal year's reference is its annual report; an earnings
    release or quarterly report covering the same year stays a candidate, weighed less."""
    annual = [c.doc_id for c in found if c.kind in ANNUAL_KINDS]
    if not annual:
        return [c.doc_id for c in found], []
    return annual, [c.doc_id for c in found if c.doc_id not in annual]


def covering(period: Period, pool: Sequence[DocumentCard]) -> tuple[list[str], list[str], str]:
    """(reference, secondary, rule) of the documents that cover ``period``; ([], [], "")
    when none does."""
    if period.day is not None:
        near = [
            c.doc_id
            for c in pool
            if any(d is not None and abs((d - period.day).days) <= 7 for d in (c.period_end, c.day))
        ]
        return near, [], "date" if near else ""
    year = period.fiscal_year
    whole = [c for c in pool if c.covers_whole_year and c.fiscal_year == year]
    if period.fiscal_quarter is not None:
        quarter = [
            c.doc_id
            for c in pool
            if c.kind in PERIODIC_KINDS and c.fiscal_year == year
            and c.fiscal_quarter == period.fiscal_quarter
        ]  # fmt: skip
        if quarter:
            return quarter, [], "the quarter's report"
        ended = quarter_by_end(period, pool)
        if ended:
            return ended, [], "the quarter's report by the day its quarter ended"
        if whole:  # the annual report covers each of its quarters
            return *_annual_first(whole), "the annual report of the quarter's year"
        return [], [], ""
    if whole:
        return *_annual_first(whole), "the fiscal year as the filing names it"
    by_end = [c for c in pool if c.year_by_end == year]
    if by_end:
        return *_annual_first(by_end), "the fiscal year named by the year it ends in"
    partial = [c for c in pool if c.kind in PERIODIC_KINDS and c.fiscal_year == year]
    if partial:  # a Q1 FY2023 report covers FY2023, as far as it goes
        return [c.doc_id for c in partial], [], "the reports of the fiscal year so far"
    return [], [], ""


CALENDAR_SLACK_DAYS = 46  # a fiscal quarter ends within weeks of the calendar quarter it names


def quarter_by_end(period: Period, pool: Sequence[DocumentCard]) -> list[str]:
    """The quarterly reports of ``period`` (a quarter) told by the day their quarter ended,
    where their cards name another fiscal year (a 10-Q that mentions the last annual
    report's "fiscal year ended December 31, 2022"): first those whose quarter, in the fiscal
    year it belongs to on any fiscal calendar (chop_rag.text.periods.quarter_fiscal_year), is
    the one asked; else those ending within weeks of the calendar quarter of that name
    ("Q2 2023" of a company whose second quarter ended July 29, 2023 is its July report)."""
    year, asked = period.fiscal_year, period.fiscal_quarter
    if year is None or asked is None:
        return []
    quarterly = [
        c
        for c in pool
        if c.kind in PERIODIC_KINDS - ANNUAL_KINDS and c.period_end and c.fiscal_quarter != 4
    ]
    fiscal = [
        c.doc_id
        for c in quarterly
        if c.period_end and c.fiscal_quarter == asked
        and quarter_fiscal_year(c.period_end, asked) == year
    ]  # fmt: skip
    if fiscal:
        return fiscal
    calendar_end = date(year, 3 * asked, 30 if asked in (2, 3) else 31)
    return [
        c.doc_id
        for c in quarterly
        if c.period_end and abs((c.period_end - calendar_end).days) <= CALENDAR_SLACK_DAYS
    ]


def latest_filings(pool: Sequence[DocumentCard]) -> tuple[list[str], list[str], int]:
    """(reference, secondary, fiscal year) for a question that names no period: the latest
    annual report, and the periodic reports of that year or later; without an annual report,
    every filing of the latest fiscal year."""
    year_of = {c.doc_id: c.fiscal_year or 0 for c in pool}
    annual = [c for c in pool if c.kind in ANNUAL_KINDS and year_of[c.doc_id]]
    if not annual:
        latest = max(year_of.values())
        ids = [c.doc_id for c in pool]
        return ([d for d in ids if year_of[d] == latest] if latest else ids), [], latest
    latest = max(year_of[c.doc_id] for c in annual)
    reference = [c.doc_id for c in annual if year_of[c.doc_id] == latest]
    later = [
        c.doc_id
        for c in pool
        if c.doc_id not in reference and c.kind in PERIODIC_KINDS and year_of[c.doc_id] >= latest
    ]
    return reference, later, latest


def latest_before(
    period: Period, pool: Sequence[DocumentCard]
) -> tuple[list[str], list[str], int] | None:
    """(reference, secondary, fiscal year) for a forecast of ``period`` that no filing covers:
    the latest filing of an earlier fiscal year (its annual report first)."""
    year = period.fiscal_year or (period.day.year if period.day else None)
    if year is None:
        return None
    earlier = [c for c in pool if c.is_filing and c.fiscal_year and c.fiscal_year < year]
    if not earlier:
        return None
    return latest_report(earlier)


def latest_report(pool: Sequence[DocumentCard]) -> tuple[list[str], list[str], int]:
    """(reference, secondary, fiscal year): the periodic report that speaks of the latest
    period (a later 10-Q before the annual report it follows), the latest annual report kept
    in view."""
    periodic = [c for c in pool if c.kind in PERIODIC_KINDS and c.fiscal_year] or list(pool)

    def when(card: DocumentCard) -> tuple[int, int]:
        return card.fiscal_year or 0, card.fiscal_quarter or 4

    latest = max(periodic, key=lambda c: (*when(c), _ends(c) or date.min))
    year = latest.fiscal_year or 0
    reference = [c.doc_id for c in periodic if when(c) == when(latest)]
    annual = [c for c in periodic if c.kind in ANNUAL_KINDS and c.doc_id not in reference]
    newest = max((c.fiscal_year or 0 for c in annual), default=0)
    return reference, [c.doc_id for c in annual if c.fiscal_year == newest], year


def current_reports(
    facts: QuestionFacts, pool: Sequence[DocumentCard], meant: Sequence[DocumentCard]
) -> list[str]:
    """The 8-Ks an event question is about: those dated within the period it names (the
    fiscal year as the company's annual reports bound it, else the calendar year), else, with
    no period named, all of the company's, the latest first."""
    current = sorted(
        (c for c in pool if c.kind == "8-K" and c.day),
        key=lambda c: c.day or date.min,
        reverse=True,
    )
    if not current:
        return []
    if not facts.periods and not facts.bare_years:
        return [c.doc_id for c in current]
    spans = [_period_span(p, pool, meant) for p in facts.periods] + [
        (date(y, 1, 1), date(y, 12, 31)) for y in facts.bare_years
    ]
    return [
        c.doc_id for c in current if c.day and any(start <= c.day <= end for start, end in spans)
    ]


def _period_span(
    period: Period, pool: Sequence[DocumentCard], meant: Sequence[DocumentCard]
) -> tuple[date, date]:
    """The days a period covers: a day's week either side; a fiscal year (or quarter) by the
    end of the annual report of that year when one is known, else the calendar year."""
    if period.day is not None:
        return period.day - timedelta(days=7), period.day + timedelta(days=7)
    year = period.fiscal_year or 1
    ends = [
        c.period_end
        for c in [*meant, *pool]
        if c.kind in ANNUAL_KINDS and c.fiscal_year == year and c.period_end
    ]
    end = ends[0] if ends else date(year, 12, 31)
    start = end - timedelta(days=365)
    if period.fiscal_quarter:
        start = start + timedelta(days=91 * (period.fiscal_quarter - 1))
        end = start + timedelta(days=92)
    return start, end
