"""Which filing holds what a question asks when its period alone does not say: a forecast for
year N is written in the latest filing before N; what a company expects, with no year, in its
latest filing; an event (an officer change, a shareholder vote, a dividend declared) in the
8-Ks dated within the period. chop.questions.question applies these after reading the question.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, timedelta

from chop.labelling.cards import DocumentCard
from chop.questions.facts import Period, QuestionFacts
from chop.types import ANNUAL_KINDS, PERIODIC_KINDS


def _ends(card: DocumentCard) -> date | None:
    """The last day a filing speaks of: its period's end, else its date."""
    return card.period_end or card.day


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
