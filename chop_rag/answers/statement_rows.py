"""Table rows read from a filing's text: "Inventories  $ 2,757  $ 2,904" under a "2023   2022"
header becomes a row with a value per period.

PDF text keeps a table's cells in reading order but not its layout, so the rows are read
robustly rather than by column positions:
- a header's periods may be printed over several lines ("Years Ended / December 2, / 2016 /
  November 27, / 2015"): consecutive header lines add up to one header;
- a label may wrap onto the line of its figures ("Effect of exchange rates on cash and cash /
  equivalents ... (21.2) (6.7)"), one word a line in some filings ("Property / and /
  equipment, / net 20,729,888");
- a total printed without a label under a heading ("Revenues" ... "5,162,082 12,899,672") is
  that heading's total;
- cells beyond the header's periods are a note column before the figures ("Inventories 6
  2,438 2,320"), a footnote mark ("(1)") or percent-change columns after them, and are dropped;
- dot leaders between a label and its figures are not part of the label;
- "$" signs, "(1,234)" negatives and a dash for nothing (zero) are read as figures.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from chop_rag.text.periods import ReportPeriod, quarter_fiscal_year, written_dates

MAX_LABEL_CHARS = 90  # a longer "label" is a sentence that happens to end in a figure
# a label wrapped over two lines onto its figures ("Additions to property and equipment, net
# of $35, $46 and $32, respectively, of non-cash capital / expenditures (930) (737) (713)")
MAX_WRAPPED_LABEL_CHARS = 160
MIN_TABLE_ROWS = 2  # fewer rows under a period header is prose with a year in it, not a table

_YEAR = r"(?:19|20)\d\d"
_CELL = re.compile(
    r"(?:\$\s*)?\(\s*\$?\s*\d[\d,]*(?:\.\d+)?\s*\)\s*%?"  # (1,234) is negative
    r"|(?:\$\s*)?-?\d[\d,]*(?:\.\d+)?\s*%?"
    r"|[—–-]{1,2}"  # a dash: nothing in this period
)
_TRAILING_CELL = re.compile(r"(?:^|\s)(" + _CELL.pattern + r")\s*$")
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"  # "Sept." "December"
_HEADER_WORDS = re.compile(
    rf"\b(?:{_MONTH}|fiscal|year|years|ended|ending|as|of|at|and|the|quarter|three|six|nine|"
    r"twelve|months|weeks|thirteen|fourteen|twenty-six|twenty-seven|thirty-nine|forty|"
    r"fifty-two|fifty-three|fy|q[1-4]|in|millions|thousands|billions|except|per|share|data|"
    r"amounts|\d{1,2})\b,?",
    re.IGNORECASE,
)
# a table's units line: "(In millions)", "($ in thousands)", "(Dollars in millions, except per
# share data)", "(Millions of dollars)", "(in millions of U.S. dollars)", "$ millions"
_UNIT = re.compile(
    r"\bin\s+(?:(?:us|u\.s\.)?\s*\$\s*|usd\s+)?(millions|thousands|billions)\b"
    r"|\b(millions|thousands|billions)\s+of\s+(?:u\.?s\.?\s+)?dollars\b"
    r"|(?:^|\(|\s)(?:\$|usd|us\$)\s*(millions|thousands|billions)\b"
    r"|\(\s*(millions|thousands|billions)\s*\)",
    re.IGNORECASE,
)
# a statement's title as a page prints it: "Consolidated Statements of Cash Flows",
# "CONSOLIDATED BALANCE SHEETS", "Condensed Consolidated Statements of Operations"
_STATEMENT_TITLE = re.compile(
    r"(?:condensed\s+)?consolidated\s+(?:balance\s+sheets?|statements?\s+of\s+[a-z,'’ ]{4,60}?"
    r"(?=\s*\(|\s*$|\s+\d|\s+[a-z][\w&.'’-]*\s+(?:inc|corp|co|company|incorporated|and)\b))"
    # a title printed without "consolidated" stands on a line of its own: "INCOME
    # STATEMENTS", "Balance Sheets", "Statements of Cash Flows (unaudited)"
    r"|(?:condensed\s+)?(?:balance\s+sheets?|(?:income|cash\s+flows?|(?:comprehensive\s+)?"
    r"income|(?:stock|share)holders['’]?\s+equity)\s+statements?|statements?\s+of\s+"
    r"(?:income|operations|earnings|cash\s+flows?|financial\s+(?:position|condition)|"
    r"comprehensive\s+(?:income|loss)|(?:changes\s+in\s+)?(?:(?:stock|share)holders['’]?\s+)?"
    r"equity))(?=\s*(?:\(.*\))?\s*$)",
    re.IGNORECASE,
)
_LABEL = re.compile(r"\s*[A-Z(]")  # a row's label opens like a line item, not mid-sentence
_FOOTNOTE = re.compile(r"\(\d\)")
_NOTE_REFERENCE = re.compile(r"\d{1,2}")  # a note column's "6" before the figures
_TOTAL = re.compile(r"^\s*total\b", re.IGNORECASE)
_LEADERS = re.compile(r"(?:\s*\.){3,}")  # "Net income ........ $ 629,551": dots lead to the figures
# a line that opens with leader dots is the end of a label a chunk boundary cut off
# (".......... $ 93,307" opens the chunk after "Trade payables"), not a total printed unlabelled
_CUT_LABEL = re.compile(r"^(?:\s*\.){3,}")


@dataclass
class Row:
    """One line of a table: its label, a value per period, where it was printed."""

    label: str
    values: list[float | None]
    periods: list[str]  # the header's years, one per value ("" where the header has none)
    unit: str  # "millions", "thousands", "billions" or ""
    source: int  # the citation number of the source it was read from
    pages: list[int] = field(default_factory=list)
    percent: bool = False
    statement: str = ""  # the table's title or section heading: "Consolidated Balance Sheets"
    group: str = ""  # the heading the row is printed under: "Inventories, net", "Revenues"
    # each period as the answer names it where the header's dates tell a quarter from a
    # fiscal year ("Q2 FY2024 (July 29, 2023)", "FY2023 (January 28, 2023)"); else []
    columns: list[str] = field(default_factory=list)

    def column(self, period: str) -> str:
        """How the answer names the column of ``period`` ("FY2023", "Q2 FY2024 (July 29,
        2023)")."""
        if self.columns and period in self.periods:
            return self.columns[self.periods.index(period)]
        return f"FY{period}" if period.isdigit() else period

    def column_at(self, index: int) -> str:
        """How the answer names the column at ``index``."""
        if self.columns:
            return self.columns[index]
        period = self.periods[index]
        return f"FY{period}" if period.isdigit() else period

    def index_for(
        self, year: int, quarter: int | None = None, ended: dt.date | None = None
    ) -> int | None:
        """The column of fiscal ``year`` (of its ``quarter`` when given): a quarter's column
        is never a fiscal year's, nor a half-year's a quarter's. A table whose header names
        no quarter (plain years) serves either. With ``ended``, the column dated that day
        (within days: "June 30" of a quarter that ended July 2), of three months or a balance, not
        the year to date, wherever its fiscal year falls."""
        if ended is not None and self.columns:
            dated = [
                i for i, name in enumerate(self.columns)
                if any(abs((day - ended).days) <= SAME_DATE_DAYS for _w, day in written_dates(name))
                and not re.search(r"\((?:6|9|12) months", name)
            ]  # fmt: skip
            return dated[0] if dated else None
        at = [i for i, period in enumerate(self.periods) if period == str(year)]
        if not self.columns:
            return at[0] if at else None
        named = f"Q{quarter} FY{year}" if quarter is not None else f"FY{year}"
        return next((i for i in at if self.columns[i].startswith(named)), None)

    def value(self, column: str) -> float | None:
        """The value in the period column ``column`` ("2022"), or by position ("0", "-1")."""
        if column in self.periods:
            return self.values[self.periods.index(column)]
        position = int(column)
        if len(column) <= 2 and -len(self.values) <= position < len(self.values):
            return self.values[position]
        return None

    def shown(self, number: int) -> str:
        """The row as the prompt and the answer show it."""
        cells = "; ".join(
            f"{period or index} = {_written(value, self.percent)}"
            for index, (period, value) in enumerate(zip(self.periods, self.values, strict=True))
        )
        unit = f", in {self.unit}" if self.unit else ""
        return f"R{number} {self.label} [{self.source}{unit}]: {cells}"


def table_rows(
    text: str,
    source: int,
    pages: Sequence[int] = (),
    statement: str = "",
    report: ReportPeriod | None = None,
) -> list[Row]:
    """The rows of the tables in ``text``: lines that end in figures under a header line of
    periods (years, or dates that end in years). Lines before any such header, and cells
    that are neither figures of the header's periods nor a note or percent column, are not
    values (the module's docstring lists what is read). ``report``: the quarter the text's
    document reports, where it is a quarterly report."""
    rows: list[Row] = []
    periods: list[str] = []
    unit = ""
    heading = statement if _STATEMENT_TITLE.search(statement) else ""
    in_header = False  # the lines since the last header line are all part of a header
    header_text = ""
    columns: list[str] = []  # the header's periods as the answer names them, when dated
    pending: list[str] = []  # lines with no figures since the last row: a label's start
    group = ""  # the heading the rows below are printed under
    above: list[str] = []  # header words printed over the dates ("Three Months Ended")
    for line in text.splitlines():
        cut = bool(_CUT_LABEL.match(line))
        line = _LEADERS.sub(" ", line)
        if title := _STATEMENT_TITLE.match(" ".join(line.split())):
            heading = _title_case(title.group(0))  # the statement the rows below are in
        named_unit = _UNIT.search(line)
        if named_unit:
            unit = next(g for g in named_unit.groups() if g).lower()
        header = _periods(line)
        if header and in_header and header == periods and not re.search(r"[A-Za-z]", line):
            continue  # the years again under a line of dates that named them
        if header:
            periods = periods + header if in_header else header
            header_text = f"{header_text} {line}" if in_header else " ".join([*above, line])
            in_header, pending, group, above = True, [], "", []
            continue
        if not line.strip() or (in_header and _header_fragment(line)):
            header_text += f" {line}" if in_header else ""
            continue
        above = [*above, line] if _header_fragment(line) else []
        if in_header:
            periods, columns = fiscal_columns(header_text, periods, report)
        in_header = False
        if not periods:
            continue
        label, cells = _split_row(line)
        if cells and cut:
            pending = []  # its row is in the chunk before
            continue
        if not cells:
            words = " ".join(line.split())
            if pending and words[:1].isupper():  # a new label under the heading above it
                group, pending = " ".join(pending).strip(" :,"), []
            if (pending or _LABEL.match(words)) and len(" ".join([*pending, words])) <= (
                MAX_WRAPPED_LABEL_CHARS
            ):
                pending.append(words)
            else:
                pending = []
            continue
        label = " ".join(label.split())
        longest = MAX_LABEL_CHARS
        if pending and (not label or label[0].islower()):
            label = " ".join([*pending, label]).strip()  # a label wrapped onto its figures
            longest = MAX_WRAPPED_LABEL_CHARS
        elif pending and len(" ".join(pending)) > MAX_LABEL_CHARS:
            pass  # a long line before a row is prose, not the heading of the rows below
        elif pending:
            group = " ".join(pending).strip(" :,")  # a heading over the rows below
        elif not label and group:
            label = f"Total {group[0].lower() + group[1:] if not group.isupper() else group}"
        pending = []
        if not _LABEL.match(label) or len(label) > longest:
            continue  # no label, or prose that ends in a number
        label, cells = _columns(label, cells, len(periods))
        values = [_number(cell) for cell in cells]
        if all(value is None for value in values):
            continue
        aligned = len(values) == len(periods)
        row_periods = periods[: len(values)] if aligned else [""] * len(values)
        rows.append(
            Row(" ".join(label.strip(" .:$").split()), values, row_periods, unit, source,
                list(pages), percent=any(cell.rstrip().endswith("%") for cell in cells),
                statement=heading, group=group, columns=columns if aligned else [])
        )  # fmt: skip
        if _TOTAL.match(label):
            group = ""  # the heading's rows end with its total
    return rows if len(rows) >= MIN_TABLE_ROWS else []


SAME_DATE_DAYS = 10  # 52/53-week years end within days of each other (January 28 / February 1)


def fiscal_columns(
    header: str, periods: list[str], report: ReportPeriod | None = None
) -> tuple[list[str], list[str]]:
    """A dated header's periods as fiscal years, and how the answer names each column.

    A 10-Q's balance sheet compares the quarter's end with the last fiscal year's end
    ("July 29, 2023  January 28, 2023  July 30, 2022"): a column dated on another day of the
    year than the first is a fiscal year's end (FY2023, named by the year it ends in), and a
    quarter's column belongs to the fiscal year ending after it (July 29, 2023 is in the year
    ending January 2024: Q2 FY2024). A header whose dates all fall on the same day of the
    year (an annual report's) keeps its calendar years."""
    dated = _header_dates(header)
    dates = [date for _at, date in dated]
    if len(dates) != len(periods) or not dates:
        return periods, []
    spans = _column_spans(header, [at for at, _date in dated])
    if (spans and max(spans) < 12) or (3 in spans and 12 in spans):
        return _quarter_columns(dates, spans, report)
    if len(dates) < 2:
        return periods, []
    first = _day_of_year(dates[0])
    year_ends = [d for d in dates if _days_apart(_day_of_year(d), first) > SAME_DATE_DAYS]
    if not year_ends:
        return periods, []
    end = year_ends[0]
    fiscal: list[str] = []
    names: list[str] = []
    for date in dates:
        if _days_apart(_day_of_year(date), _day_of_year(end)) <= SAME_DATE_DAYS:
            fiscal.append(str(date[0]))
            names.append(f"FY{date[0]} ({date[3]})")
            continue
        year = date[0] + (1 if (date[1], date[2]) > (end[1], end[2]) else 0)
        quarter = round(((date[1] - end[1]) % 12 + (date[2] - end[2]) / 30) / 3) or 4
        fiscal.append(str(year))
        names.append(f"Q{quarter} FY{year} ({date[3]})")
    return fiscal, names


# the span a column covers, as a 10-Q's or a release's header prints it over its dates
# 52/53-week years count weeks, in figures or words ("Thirteen Weeks Ended", "Fourteen Weeks
# Ended" for the fourth quarter of a 53-week year)
_WEEKS = {"13": 3, "14": 3, "26": 6, "27": 6, "39": 9, "40": 9, "52": 12, "53": 12,
          "thirteen": 3, "fourteen": 3, "twenty-six": 6, "twenty-seven": 6, "thirty-nine": 9,
          "forty": 9, "fifty-two": 12, "fifty-three": 12}  # fmt: skip
_SPAN = re.compile(
    r"\b(?:(three|six|nine|twelve)\s+months|(" + "|".join(_WEEKS) + r")\s+weeks|(quarter|year))s?"
    r"\s+(?:ended|ending)\b",
    re.IGNORECASE,
)
_SPAN_MONTHS = {"three": 3, "six": 6, "nine": 9, "twelve": 12, "quarter": 3, "year": 12, **_WEEKS}


def _column_spans(header: str, starts: list[int]) -> list[int]:
    """The months each dated column of ``header`` covers ("Three Months Ended ... Six Months
    Ended ..."), [] when the header names no span. Spans printed each over its dates name
    the dates after them; spans printed all before the dates share them out in order."""
    spans = [(m.start(), _SPAN_MONTHS[next(g for g in m.groups() if g).lower()])
             for m in _SPAN.finditer(header)]  # fmt: skip
    if not spans:
        return []
    columns = len(starts)
    if len(spans) > 1 and all(at < starts[0] for at, _ in spans):
        if columns % len(spans):
            return []
        each = columns // len(spans)
        return [months for _, months in spans for _ in range(each)]
    months_of = []
    for start in starts:
        before = [months for at, months in spans if at < start]
        months_of.append(before[-1] if before else spans[0][1])
    return months_of


def _quarter_columns(
    dates: list[tuple[int, int, int, str]], spans: list[int], report: ReportPeriod | None = None
) -> tuple[list[str], list[str]]:
    """The columns of a quarter's statement ("Three Months Ended / Six Months Ended July 2,
    2023 / July 3, 2022"): the report's quarter is its longest span's (six months: the
    second), and each column's fiscal year is the one its date's quarter falls in, for any
    fiscal calendar (chop_rag.text.periods.quarter_fiscal_year). Three-month columns alone
    are of the first quarter only in a first quarter's report: a fourth-quarter release's
    "Three Months Ended December 31" is its own quarter (``report``) where its latest column
    ends on the quarter's last day (within days): a third quarter's columns in the same fiscal
    year are not."""
    quarter = max(spans) // 3
    if quarter == 1 and report is not None and report.quarter != 1:
        latest = max(dt.date(year, month, day) for year, month, day, _words in dates)
        if report.ended is not None and abs((latest - report.ended).days) <= SAME_DATE_DAYS:
            quarter = report.quarter
    fiscal: list[str] = []
    names: list[str] = []
    for (year, month, day, words), months in zip(dates, spans, strict=True):
        fy = quarter_fiscal_year(dt.date(year, month, day), quarter)
        fiscal.append(str(fy))
        name = {3: f"Q{quarter} FY{fy}", 12: f"FY{fy}"}.get(months, f"{months}M FY{fy}")
        names.append(f"{name} ({months} months ended {words})")
    return fiscal, names


def _header_dates(header: str) -> list[tuple[int, tuple[int, int, int, str]]]:
    """Where each column's date is written in a dated header and (year, month, day, words),
    in order; a year printed bare after a date ends on the same day ("December 31, 2022
    2021": December 31, 2021)."""
    rest = header
    found: list[tuple[int, tuple[int, int, int, str]]] = []
    at = 0
    for words, when in written_dates(header):
        at = rest.find(words, at)
        if at < 0:
            return []
        rest = rest[:at] + " " * len(words) + rest[at + len(words) :]
        found.append((at, (when.year, when.month, when.day, words)))
    if found:
        for m in re.finditer(rf"(?<![\d,.$]){_YEAR}(?![\d,.]\d)", rest):
            found.append((m.start(), (int(m.group(0)), 0, 0, m.group(0))))
    found.sort(key=lambda item: item[0])
    dates: list[tuple[int, tuple[int, int, int, str]]] = []
    for start, (year, month, day, words) in found:
        if not month:
            if not dates:
                return []
            _, (_, month, day, before) = dates[-1]
            words = f"{before.rsplit(' ', 1)[0]} {year}"
        dates.append((start, (year, month, day, words)))
    return dates


def _day_of_year(date: tuple[int, int, int, str]) -> int:
    return (date[1] - 1) * 31 + date[2]


def _days_apart(a: int, b: int) -> int:
    gap = abs(a - b) % 372
    return min(gap, 372 - gap)


def is_figure_line(line: str) -> bool:
    """Whether ``line`` is a table's row by its print, whether or not its table's header was
    read: a label in words, then two or more figure cells ("Corporate bonds Level 2 416,420
    213,875"). Not a line of years alone (a header of periods) nor prose that wraps after a
    date ("... when compared with March 31, 2023,")."""
    label, cells = _split_row(line)
    return (
        len(cells) >= 2
        and any(ch.isalpha() for ch in label)
        and not any(cell.endswith(",") for cell in cells)
        and not all(re.fullmatch(_YEAR, cell) for cell in cells)
    )


def has_figure_lines(text: str) -> bool:
    """Whether ``text`` holds table rows (lines ending in figures), header or not."""
    return sum(1 for line in text.splitlines() if _split_row(line)[1]) >= MIN_TABLE_ROWS


def _columns(label: str, cells: list[str], periods: int) -> tuple[str, list[str]]:
    """The cells of the header's periods: a note column or footnote marks before them and
    percent-change columns after them are dropped ("(1)" marks stay in the label)."""
    extra = len(cells) - periods
    if extra <= 0 or not periods:
        return label, cells
    lead = cells[:extra]
    if all(_FOOTNOTE.fullmatch(cell) for cell in lead):
        return " ".join([label, *lead]), cells[extra:]  # "Days payable outstanding (1)"
    if all(_NOTE_REFERENCE.fullmatch(cell) for cell in lead):
        return label, cells[extra:]
    kept, after = cells[:periods], cells[periods:]
    if all(c.endswith("%") for c in after) and not any(c.endswith("%") for c in kept):
        return label, kept
    return label, cells


def _header_fragment(line: str) -> bool:
    """A part of a header printed on a line of its own: "Years Ended", "December 2,"."""
    rest = _HEADER_WORDS.sub(" ", line)
    return not re.search(r"[A-Za-z]{2,}|\d", rest)


def _title_case(title: str) -> str:
    """ "CONSOLIDATED STATEMENTS OF CASH FLOWS" → "Consolidated Statements of Cash Flows"."""
    words = " ".join(title.split()).strip(" ,").split(" ")
    if any(w.islower() for w in words):
        return " ".join(words)
    small = {"of", "and", "in", "the"}
    return " ".join(
        w.lower() if w.lower() in small and i else w.capitalize() for i, w in enumerate(words)
    )


def _periods(line: str) -> list[str]:
    """The years of a header line ("2023   2022", "May 26, 2019  May 27, 2018"), else []."""
    years = re.findall(rf"(?<![\d,.$]){_YEAR}(?![\d,.]\d)", line)
    if not years:
        return []
    rest = re.sub(rf"(?<![\d,.$]){_YEAR}(?![\d,.]\d)", " ", line)
    rest = _HEADER_WORDS.sub(" ", rest)
    if re.search(r"[\d$%]", rest) or len(re.findall(r"[A-Za-z]{2,}", rest)) > 2:
        return []
    return years


def _split_row(line: str) -> tuple[str, list[str]]:
    """A line as (label, trailing figure cells), the cells in their printed order."""
    cells: list[str] = []
    rest = line.rstrip()
    while True:
        match = _TRAILING_CELL.search(rest)
        if not match:
            break
        cells.insert(0, match.group(1).strip())
        rest = rest[: match.start(1)].rstrip()
    while rest.endswith("$"):  # "$ 1,234" split as "$" then the number
        rest = rest[:-1].rstrip()
    return rest, cells


def _number(cell: str) -> float | None:
    """A printed figure as a number: "(1,234)" is negative, a dash is nothing (zero)."""
    digits = re.sub(r"[$,%\s]", "", cell)
    if not re.search(r"\d", digits):
        return 0.0 if re.fullmatch(r"[—–-]{1,2}", digits) else None
    negative = digits.startswith("(") or digits.startswith("-")
    value = float(digits.strip("()-"))
    return -value if negative else value


def _written(value: float | None, percent: bool = False, decimals: int | None = None) -> str:
    """A figure as the answer writes it: thousands separated, the decimals the question asked
    for (else at most two), a % sign for a percentage."""
    if value is None:
        return "—"
    if decimals is None:
        decimals = 0 if float(value).is_integer() and (abs(value) >= 10 or not value) else 2
    text = f"{value:,.{decimals}f}"
    return text + "%" if percent else text


def row_for_line(line: str, rows: Sequence[Row]) -> Row | None:
    """The row of ``rows`` a line of text prints (its label and as many cells), if any."""
    label, cells = _split_row(line)
    name = " ".join(label.strip(" .:$").split())
    return next(
        (
            row
            for row in rows
            if row.label == name and len(row.values) == len(cells) and all(row.periods)
        ),
        None,
    )
