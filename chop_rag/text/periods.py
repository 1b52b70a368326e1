"""Periods as filings and questions write them, read in one place.

Both sides of identity read periods: ingest's cards (chop_rag.labelling.identity: a release's
"Fourth Quarter Fiscal 2022", a file named "ACME_2023Q2_10Q") and question reading
(chop_rag.questions.facts: "Q2'2023", "1H23", "six months ended June 30, 2023"). One set of rules
serves both, so a quarter a filing names is read the same way when a question names it.

A quarter is written with its number before or after the year, glued or spaced, with or
without "FY"/"fiscal"/an apostrophe: "Q1 FY23", "FY2023Q1", "1Q23", "Q2'2023", "Q22023",
"Q2 2023", "2023 Q2", "second quarter of 2023", "second fiscal quarter of 2023". A half is a
quarter's report too: "H1 2023", "1H23", "first half of 2023" are read as the second quarter
(the report that covers six months), the second half as the fourth. A span ending on a date
("six months ended June 30, 2023") is that date. Two-digit years are read only where a
prefix says they are years (FY23, '23, 1Q23), never a bare "23".
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date

MONTHS = {
    name: number
    for number, names in enumerate(
        [("jan", "january"), ("feb", "february"), ("mar", "march"), ("apr", "april"),
         ("may",), ("jun", "june"), ("jul", "july"), ("aug", "august"),
         ("sep", "sept", "september"), ("oct", "october"), ("nov", "november"),
         ("dec", "december")],
        start=1,
    )
    for name in names
}  # fmt: skip
MONTH = (
    r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
YEAR = r"((?:19|20)\d\d)"
# "June 30, 2023" / "30 June 2023" / "1st July 2022" / "2023-06-30"
_DATE_MDY = re.compile(MONTH + r"\.?\s*(\d{1,2})(?:st|nd|rd|th)?\s*,?\s*((?:19|20)\d\d)", re.I)
_DATE_DMY = re.compile(
    r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?" + MONTH + r"\.?,?\s+" + YEAR, re.I
)
DATE_ISO = re.compile(r"\b((?:19|20)\d\d)-(\d\d)-(\d\d)\b")

QUARTER_WORDS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "1st": 1, "2nd": 2, "3rd": 3,
                 "4th": 4, "three": 1, "six": 2, "nine": 3, "13": 1, "26": 2, "39": 3}  # fmt: skip


def make_date(year: str, month: str | int, day: str) -> date | None:
    number = month if isinstance(month, int) else MONTHS.get(month.lower().rstrip("."), 0)
    try:
        return date(int(year), int(number), int(day))
    except ValueError:
        return None


def find_dates(text: str) -> list[date]:
    """Every date written in ``text``, in order of appearance."""
    return [day for _span, day in _dates(text)]


def written_dates(text: str) -> list[tuple[str, date]]:
    """Every date written in ``text`` with its words as written ("July 29, 2023"), in order."""
    return [(" ".join(text[start:end].split()), day) for (start, end), day in _dates(text)]


def _dates(text: str) -> list[tuple[tuple[int, int], date]]:
    found: list[tuple[tuple[int, int], date]] = []
    for m in _DATE_MDY.finditer(text):
        if d := make_date(m.group(3), m.group(1), m.group(2)):
            found.append((m.span(), d))
    for m in _DATE_DMY.finditer(text):
        if d := make_date(m.group(3), m.group(2), m.group(1)):
            found.append((m.span(), d))
    for m in DATE_ISO.finditer(text):
        if d := make_date(m.group(1), int(m.group(2)), m.group(3)):
            found.append((m.span(), d))
    return sorted(found, key=lambda item: item[0][0])


# A 52/53-week fiscal year closes on a weekday near a month's end; one that closes in the
# first days of January is the year before's ("fiscal 2021" ends January 2, 2022).
EARLY_JANUARY_DAYS = 7


def fiscal_year_ending(end: date) -> int:
    """The fiscal year a year-end date closes, when the filing does not name it: the calendar
    year it ends in, except a 52/53-week year that spills a few days into January."""
    if end.month == 1 and end.day <= EARLY_JANUARY_DAYS:
        return end.year - 1
    return end.year


def quarter_fiscal_year(end: date, quarter: int) -> int:
    """The fiscal year a quarter ending on ``end`` belongs to, for any fiscal calendar: the
    year its fiscal year closes in, ``3 * (4 - quarter)`` months later (a second quarter ended
    July 29, 2023 is in the year ending about January 2024: fiscal 2024; one ended July 2, 2023
    in the year ending about January 2, 2024: a 52/53-week fiscal 2023)."""
    months = end.month - 1 + 3 * (4 - quarter)
    closes = date(end.year + months // 12, months % 12 + 1, min(end.day, 28))
    return fiscal_year_ending(closes)


def year_number(value: str) -> int:
    """ "23" → 2023, "2023" → 2023."""
    number = int(value)
    return number + 2000 if number < 100 else number


@dataclass(frozen=True)
class ReportPeriod:
    """The fiscal quarter a quarterly report (a 10-Q, an earnings release) is of, as its
    identity card reads it: what a table of three-month columns alone cannot say."""

    quarter: int
    fiscal_year: int
    ended: date | None = None  # the quarter's last day, where the card read it


@dataclass(frozen=True)
class Period:
    """A period: a fiscal year, a quarter of one, or a day."""

    fiscal_year: int | None = None
    fiscal_quarter: int | None = None
    day: date | None = None

    def __str__(self) -> str:
        if self.day is not None:
            return self.day.isoformat()
        if self.fiscal_quarter:
            return f"Q{self.fiscal_quarter} FY{self.fiscal_year}"
        return f"FY{self.fiscal_year}"

    def order(self) -> tuple[date, int]:
        return (self.day or date(self.fiscal_year or 1, 1, 1), self.fiscal_quarter or 5)


# a year after a prefix that says it is one: "FY2023", "FY 23", "fiscal 2023", "fiscal year
# 2023", "FY'23", "'23"; or a plain four-digit year
_FISCAL = r"(?:fiscal\s+(?:year\s+)?|FY\s*['’]?|['’])"
_YEAR_WRITTEN = r"(?:" + _FISCAL + r"((?:19|20)?\d\d)|((?:19|20)\d\d))"
_ORDINAL = r"(first|second|third|fourth|1st|2nd|3rd|4th)"
_QUARTER = r"(?:Q([1-4])|([1-4])Q|" + _ORDINAL + r"[\s-]+(?:fiscal\s+)?(?:quarter|qtr\.?))"
_HALF = r"(?:H([12])|([12])H|(first|second)[\s-]+(?:fiscal\s+)?half)"
_BETWEEN = (
    r"\s*(?:of\s+|in\s+|,\s*|-\s*|/\s*)?(?:the\s+)?(?:and\s+(?:the\s+)?(?:full|fiscal)\s+year\s+)?"
)
# quarter then year: "Q1 FY23", "Q2'2023", "Q22023", "1Q23", "second quarter of fiscal 2023",
# "Fourth Quarter and Full Year 2022"
_QUARTER_YEAR = re.compile(r"(?<![\w-])" + _QUARTER + _BETWEEN + _YEAR_WRITTEN + r"(?!\d)", re.I)
# year then quarter: "FY2023Q1", "FY23 Q1", "2023 Q1", "2023-Q2", "fiscal 2023 second quarter"
_YEAR_QUARTER = re.compile(
    r"(?<![\w-])" + _YEAR_WRITTEN + r"\s*(?:-|/|,)?\s*" + _QUARTER + r"(?![\w-])", re.I
)
_HALF_YEAR = re.compile(r"(?<![\w-])" + _HALF + _BETWEEN + _YEAR_WRITTEN + r"(?!\d)", re.I)
# a quarter or half glued to a two-digit year: "1Q23", "2H22", "1Q'23"
_GLUED = re.compile(r"(?<![\w-])([1-4])([QH])\s?['’]?(\d\d)(?![\w-])", re.I)
_YEAR_HALF = re.compile(r"(?<![\w-])" + _YEAR_WRITTEN + r"\s*(?:-|/|,)?\s*" + _HALF + r"\b", re.I)
# "first nine months of 2023" covers three quarters: the third quarter's report
_MONTHS_OF = re.compile(
    r"\b(?:first\s+)?(three|six|nine)\s+months\s+(?:of|in)\s+(?:the\s+)?" + _YEAR_WRITTEN
    + r"(?!\d)",
    re.I,
)  # fmt: skip
_FISCAL_YEAR = re.compile(r"(?<![\w-])" + _FISCAL + r"((?:19|20)\d\d|\d\d)(?!\d)", re.I)
# "the 2021 fiscal year", "2021 fiscal period", "fiscal year 2021"
_YEAR_FISCAL = re.compile(r"\b((?:19|20)\d\d)\s+fiscal(?:\s+(?:year|period))?\b", re.I)
BARE_YEAR = re.compile(r"(?<![\w$.,'’-])((?:19|20)\d\d)(?![\w%.,-]*\d)")


def _year(match: re.Match[str], first: int) -> int:
    """The year of a _YEAR_WRITTEN group pair starting at group ``first``."""
    return year_number(match.group(first) or match.group(first + 1))


def _quarter(match: re.Match[str], first: int) -> int:
    digit = match.group(first) or match.group(first + 1)
    return int(digit) if digit else QUARTER_WORDS[match.group(first + 2).lower()]


def _half(match: re.Match[str], first: int) -> int:
    digit = match.group(first) or match.group(first + 1)
    first_half = digit == "1" if digit else match.group(first + 2).lower() == "first"
    return 2 if first_half else 4


def periods_in(text: str) -> list[tuple[tuple[int, int], Period]]:
    """Every period ``text`` names with where it is written, in order: quarters and halves
    first (each span read once), then fiscal years outside them, then dates."""
    found: list[tuple[tuple[int, int], Period]] = []
    taken: list[tuple[int, int]] = []

    def free(span: tuple[int, int]) -> bool:
        return not any(a < span[1] and span[0] < b for a, b in taken)

    def put(span: tuple[int, int], period: Period) -> None:
        if free(span):
            found.append((span, period))
            taken.append(span)

    for m in _GLUED.finditer(text):
        number, letter = int(m.group(1)), m.group(2).upper()
        if letter == "Q" or number <= 2:
            quarter = number if letter == "Q" else 2 * number
            put(m.span(), Period(year_number(m.group(3)), quarter))
    for m in _QUARTER_YEAR.finditer(text):
        put(m.span(), Period(_year(m, 4), _quarter(m, 1)))
    for m in _YEAR_QUARTER.finditer(text):
        put(m.span(), Period(_year(m, 1), _quarter(m, 3)))
    for m in _HALF_YEAR.finditer(text):
        put(m.span(), Period(_year(m, 4), _half(m, 1)))
    for m in _YEAR_HALF.finditer(text):
        put(m.span(), Period(_year(m, 1), _half(m, 3)))
    for m in _MONTHS_OF.finditer(text):
        put(m.span(), Period(_year(m, 2), QUARTER_WORDS[m.group(1).lower()]))
    for m in _FISCAL_YEAR.finditer(text):
        put(m.span(), Period(year_number(m.group(1))))
    for m in _YEAR_FISCAL.finditer(text):
        put(m.span(), Period(int(m.group(1))))
    for span, day in _dates(text):
        put(span, Period(day=day))
    return sorted(found, key=lambda item: item[0][0])


def periods(text: str) -> list[Period]:
    """The periods ``text`` names, in order of writing."""
    return [period for _span, period in periods_in(text)]


def bare_years(text: str) -> list[int]:
    """Years written without a fiscal prefix outside every period ``text`` names ("as of
    2022"): they narrow, they do not name a fiscal period."""
    spans = [span for span, _ in periods_in(text)]
    return [
        int(m.group(1))
        for m in BARE_YEAR.finditer(text)
        if not any(a <= m.start() < b for a, b in spans)
    ]


def first_quarter(text: str, fiscal: bool = False, halves: bool = True) -> Period | None:
    """The first quarter (or half) ``text`` names with its year, None when it names none;
    with ``fiscal``, only one whose year is written as a fiscal year ("Q4 FY23"), which says
    more than a headline's calendar-sounding "Fourth Quarter and Full Year 2022"; without
    ``halves``, only a quarter ("the second half of fiscal 2024" in a release's outlook is
    not the period it reports)."""
    return next(
        (
            p
            for (a, b), p in periods_in(text)
            if p.fiscal_quarter and p.day is None
            and (not fiscal or re.search(r"fy|fiscal", text[a:b], re.I))
            and (halves or not re.search(r"half|h[12]\b|\b[12]h", text[a:b], re.I))
        ),
        None,
    )  # fmt: skip


def fiscal_years(text: str) -> Iterator[int]:
    """The fiscal years ``text`` names with a fiscal prefix ("fiscal 2022", "FY23")."""
    for m in _FISCAL_YEAR.finditer(text):
        yield year_number(m.group(1))
