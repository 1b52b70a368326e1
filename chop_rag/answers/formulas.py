"""Financial metrics computed by code from the rows a filing's statements print.

A small local model cannot be trusted to pick operands or do arithmetic, and the analyst must
see how a figure was made. So a metric question is answered here, with no model: the metric is
the one the question defines ("DPO is defined as: 365 * (average accounts payable between
FY2019 and FY2020) / (FY2020 COGS)") or one of the standard metrics below, named as analysts
name it; its inputs are line items found in the statement rows (chop_rag.answers.figures.Row) by the
labels filings print ("Merchandise inventories", "Net cash provided by operating activities");
the answer shows the result, the formula, each input with its period, source and pages, and,
when an input is missing, names it instead of guessing.

Standard metrics (``chop_rag.questions.line_items.METRICS``, beside the line items they read):
gross, operating and net (profit) margin; asset, fixed asset and inventory turnover; receivables
turnover; payout and retention ratio; DPO, DSO, DIO and the cash conversion cycle; current (working
capital), quick and cash ratio; working capital; operating cash flow ratio; capital expenditure;
free cash flow and its conversion; effective tax rate; interest coverage; return on assets and on
equity; debt to equity; capital intensity (total assets / revenue); total debt; capex as a share of
revenue; growth and CAGR of any line item; an average over several years of any of these. Where
analysts' definitions differ, the common one is chosen and shown in the answer: the quick ratio is
(total current assets - inventories) / total current liabilities, inventories summed from their
parts where a balance sheet prints no total ("Raw materials", "Work in process", "Finished goods").
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import date

from chop_rag.answers.figures import Row
from chop_rag.answers.row_choice import RowChooser, choose_row
from chop_rag.questions.line_items import (
    ITEMS,
    STATEMENT_OF,
    Item,
    Metric,
    _normal_label,
    rows_of_item,
)
from chop_rag.questions.metric_questions import (
    _DIRECTION,
    _UP,
    Asked,
    defined,
    definitions,
    read_metric_question,
)
from chop_rag.questions.statements import statement_named

# ------------------------------------------------------------------ computing


@dataclass
class Input:
    item: Item
    year: int
    value: float
    row: Row
    column: int = -1  # the row's column it was read from

    @property
    def period(self) -> str:
        """The column as the answer names it ("FY2023", "Q2 FY2024 (3 months ended ...)")."""
        return self.row.column_at(self.column) if self.column >= 0 else f"FY{self.year}"


@dataclass
class Computed:
    """A computed answer: its text, the sources it cites, and what was missing."""

    text: str
    citations: list[int]
    missing: list[str] = field(default_factory=list)
    value: float | None = None
    values: dict[int, float] = field(default_factory=dict)
    plain: bool = False  # one line item's value asked for itself: nothing computed
    rows: list[Row] = field(default_factory=list)  # the rows its inputs were read from


class Lookup:
    """Line items by year from the rows given, remembering which row gave each."""

    def __init__(
        self,
        rows: Sequence[Row],
        quarters: dict[int, int] | None = None,
        choose: RowChooser | None = None,
        ended: dict[int, date] | None = None,
    ) -> None:
        self.rows = rows
        self.quarters = quarters or {}  # fiscal year → the quarter asked of it
        self.ended = ended or {}  # year written → the day the period asked ends
        self.choose = choose
        self.choices: list[str] = []  # where the rules could not decide, and what was taken
        self.used: dict[tuple[str, int], Input] = {}
        self.missing: list[str] = []

    def __call__(self, key: str, year: int) -> float:
        """The item's value in ``year``, in millions where its table names a unit (a
        statement in thousands beside a summary in millions)."""
        if (key, year) in self.used:
            given = self.used[(key, year)]
            return given.value * _in_millions(given.row)
        item = ITEMS[key]
        # a statement prints every year it compares: of the rows that state the item, those
        # with the most periods first (a note's or a subsidiary's one-year table after them)
        found = rows_of_item(item, self.rows)
        own = next((name for name, keys in STATEMENT_OF.items() if key in keys), "")

        # the sources the other inputs were read from: one statement's rows go together
        beside = {given.row.source for given in self.used.values()}

        def rank(row: Row) -> tuple[int, bool, int]:
            # its own statement first, then a table whose title is not known, and last
            # another statement's row (net income as the cash flow statement restates it)
            printed_in = statement_named(row.statement)
            place = 0 if printed_in == own else 1 if not printed_in else 2
            apart = bool(beside) and row.source not in beside
            return place, apart, -sum(1 for p in row.periods if p)

        if not item.flow:  # a balance is never a cash flow statement's change in it
            found = [r for r in found if statement_named(r.statement) != "cash flow statement"]
        if not item.flow and key != "equity":  # an asset or a liability is never negative:
            # a row with a negative figure is a change in it, whatever heading it is under
            found = [r for r in found if all(v is None or v >= 0 for v in r.values)]
        # an item summed from its parts on its own statement ranks before a note's row
        quarter, ended = self.quarters.get(year), self.ended.get(year)
        summed = _summed_parts(item, self.rows, year, quarter)
        candidates = [
            Input(item, year, abs(value) if item.magnitude else value, row, column)
            for row in sorted([*summed, *found], key=rank)
            if (column := row.index_for(year, quarter, ended)) is not None
            and (value := row.values[column]) is not None
        ]
        asked = f"Q{quarter} FY{year}" if quarter else f"FY{year}"
        if candidates:
            tied = [c for c in candidates if rank(c.row) == rank(candidates[0].row)]
            chosen = candidates[0]
            # rows the rules rank alike disagree, under different labels: a model may pick
            distinct = len({c.value for c in tied}) > 1 and len({c.row.label for c in tied}) > 1
            if distinct and self.choose is not None:
                chosen, note = choose_row(self.choose, item, asked, tied)
                self.choices.append(note)
            self.used[(key, year)] = chosen
            return chosen.value * _in_millions(chosen.row)
        self.missing.append(f"{item.name} ({asked})")
        raise LookupError(key)


_UNIT_SIZE = {"thousands": 1e-3, "millions": 1.0, "billions": 1e3}
# metrics that are amounts of money, not ratios: stated in millions
AMOUNTS = frozenset(("fcf", "working_capital", "total_debt"))


def _in_millions(row: Row) -> float:
    return _UNIT_SIZE.get(row.unit, 1.0)


def _summed_parts(
    item: Item, rows: Sequence[Row], year: int, quarter: int | None = None
) -> list[Row]:
    """The item as the sum of its components one table prints with no total of its own
    ("Raw materials and supplies" + "Work in process and finished goods"), as a row."""
    if item.parts is None:
        return []
    tables: dict[tuple[int, str], list[Row]] = {}
    for row in rows:
        label = _normal_label(row.label)
        column = row.index_for(year, quarter)
        if item.parts.match(label) and column is not None and row.values[column]:
            tables.setdefault((row.source, row.statement), []).append(row)
    summed = []
    for parts in tables.values():
        parts = list({part.label: part for part in parts}.values())
        if len(parts) > 1:
            at = [part.index_for(year, quarter) for part in parts]
            total = sum(
                part.values[i] or 0.0 for part, i in zip(parts, at, strict=True) if i is not None
            )
            first = parts[0]
            values = [total if i == at[0] else None for i in range(len(first.periods))]
            summed.append(
                Row(" + ".join(part.label for part in parts), values, list(first.periods),
                    first.unit, first.source, first.pages, statement=first.statement,
                    columns=list(first.columns))
            )  # fmt: skip
    return summed


def compute(
    question: str, rows: Sequence[Row], choose: RowChooser | None = None
) -> Computed | None:
    """The metric a question asks for, computed from ``rows``; None when it asks for none.
    When an input is missing the result names it and holds no value. Where rows the rules
    rank alike state an input differently, ``choose`` (the local model) picks one of them
    (chop_rag.answers.row_choice); code still does the arithmetic."""
    asked = read_metric_question(question)
    if asked is None:
        return None
    if not asked.years:
        asked.years = _printed_years(asked, rows)
        if not asked.years:
            return None
    lookup = Lookup(rows, asked.quarters, choose, asked.ended)
    values: dict[int, float] = {}
    given = definitions(question)
    if given:
        name, definition = given[0]
        name = name.split(",")[-1].strip()
        name = name[:1].upper() + name[1:]  # the answer opens with it: "Net working capital"
        for year in asked.years:
            try:
                values[year] = defined(definition, lookup, year, given[1:])
            except LookupError:
                continue
            except ZeroDivisionError:
                lookup.missing.append(f"a non-zero denominator for FY{year}")
            except ValueError:  # ExpressionError: the definition names what no row states
                values.clear()
                given = []
                break
        percent = asked.metric.percent if asked.metric else False
        formula = definition
    if given:
        pass  # computed by the question's own definition
    elif asked.metric is None and asked.item is None:
        return None  # a definition that names what no line item is, and nothing standard
    elif asked.metric is not None:
        metric = asked.metric
        for year in asked.years:
            try:
                values[year] = metric.compute(lookup, year)
            except LookupError:
                continue
            except ZeroDivisionError:
                lookup.missing.append(f"a non-zero denominator for FY{year}")
        for year in [y for y in asked.years if y not in values]:
            printed = _printed_metric(metric, rows, year, asked.quarters.get(year))
            if printed is not None:
                values[year] = printed.value
                for key in [k for k in lookup.used if k[1] == year]:
                    del lookup.used[key]  # the inputs of a computation that did not finish
                lookup.used[(metric.key, year)] = printed
        name, formula, percent = metric.name, metric.formula, metric.percent
        if any(key == metric.key for key, _year in lookup.used):
            formula = f"{formula}; as the filing prints it where its inputs are not all found"
    elif asked.item is not None:
        item = asked.item
        for year in asked.years:
            try:
                values[year] = lookup(item.key, year)
            except LookupError:
                continue
        name, formula, percent = item.name, item.name.lower(), False
    wanted = asked.years
    complete = all(y in values for y in wanted)
    missing = list(dict.fromkeys(lookup.missing))
    if not complete:
        plain = not given and asked.metric is None and asked.mode == "value"
        return Computed(_missing_text(name, wanted, missing), [], missing, plain=plain)
    names = {i.year: i.period.split(" (")[0] for i in lookup.used.values()}
    amount = (asked.metric.key in AMOUNTS) if asked.metric else not percent
    in_units = all(i.row.unit for i in lookup.used.values())
    money = asked_unit(question) if amount and in_units else ""
    text, value = _result_text(asked, name, formula, percent, values, question, names, money)
    inputs = sorted(lookup.used.values(), key=lambda i: (i.item.key, i.year))
    text += " Inputs: " + "; ".join(_input_text(i) for i in inputs) + "."
    text += "".join(f" {choice}" for choice in dict.fromkeys(lookup.choices))
    citations = list(dict.fromkeys(i.row.source for i in inputs))
    plain = not given and asked.metric is None and asked.mode == "value"
    rows_used = list({id(i.row): i.row for i in inputs}.values())
    return Computed(text, citations, [], value, values, plain, rows_used)


def _printed_metric(
    metric: Metric, rows: Sequence[Row], year: int, quarter: int | None
) -> Input | None:
    """A metric the filing prints itself ("Effective tax rate 23.0% 20.0%"), read where its
    inputs are not all found: a row whose label is the metric's name and nothing more."""
    item = Item(metric.key, metric.name, re.compile(""), metric.asked, magnitude=False)
    for row in rows:
        label = _normal_label(row.label)
        named = metric.asked.search(label)
        if not named or len(label) > len(named.group(0)) + 12:
            continue
        column = row.index_for(year, quarter)
        value = row.values[column] if column is not None else None
        if value is not None and column is not None:
            return Input(item, year, value, replace(row, unit="", percent=metric.percent), column)
    return None


STATEMENT_YEARS = 3  # an income statement's comparison: the years a "trend" question reads


def _printed_years(asked: Asked, rows: Sequence[Row]) -> list[int]:
    """For a metric asked with no year: the fiscal years the statement printing its first
    input compares (all of them for a trend, the latest for a value)."""
    if asked.metric is None:
        return []
    found = rows_of_item(ITEMS[asked.metric.needs[0]], rows)
    printed = [sorted({int(p) for p in row.periods if p.isdigit()}) for row in found]
    years = max(printed, key=len, default=[])[-STATEMENT_YEARS:]
    return years if asked.mode == "change" else years[-1:]


def _result_text(
    asked: Asked,
    name: str,
    formula: str,
    percent: bool,
    values: dict[int, float],
    question: str,
    names: dict[int, str] | None = None,
    money: str = "",
) -> tuple[str, float]:
    """The result's sentence, opening with the figure asked for; an amount of money (``money``:
    the unit asked for, "millions" unless the question asks another) is written as the
    question asks it: "$1,577 million", "$0.39 billion"."""

    def fy(year: int) -> str:
        return (names or {}).get(year, f"FY{year}")

    decimals = _decimals(question)
    years = asked.years

    def figure(value: float, signed: bool = False) -> str:
        if not money:
            return (_signed_amount if signed else _plain)(value, decimals)
        return _money(value, money, decimals, signed)

    def shown(value: float) -> str:
        return figure(value) if money else _shown(value, percent, decimals)

    each = "; ".join(f"{fy(y)} {shown(values[y])}" for y in years)
    if asked.mode == "average":
        value = sum(values[y] for y in years) / len(years)
        return (
            f"{name}, {len(years)}-year average {fy(years[0])}-{fy(years[-1])}: "
            f"{_shown(value, percent, decimals)} (each year: {each}; {name.lower()} = {formula}).",
            value,
        )
    if asked.mode == "cagr":
        first, last = values[years[0]], values[years[-1]]
        span = years[-1] - years[0]
        if first <= 0 or last <= 0 or span <= 0:
            return f"{name}: {each}; a CAGR needs two positive values.", math.nan
        value = ((last / first) ** (1 / span) - 1) * 100
        return (
            f"{name} CAGR {fy(years[0])}-{fy(years[-1])}: {_shown(value, True, decimals)} "
            f"(({name} {fy(years[-1])} / {fy(years[0])})^(1/{span}) - 1; {each}).",
            value,
        )
    if asked.mode in ("growth", "change") and len(years) > 1:
        first, last = values[years[0]], values[years[-1]]
        if percent:
            value = last - first
            steps = (
                "; year-over-year: "
                + "; ".join(
                    f"{fy(b)} {_signed(values[b] - values[a], decimals)} percentage points"
                    for a, b in itertools.pairwise(years)
                )
                if len(years) > 2
                else ""
            )
            return (
                f"{name}: {each}; change {_signed(value, decimals)} percentage points "
                f"{fy(years[0])}-{fy(years[-1])}{steps} ({name.lower()} = {formula}).",
                value,
            )
        value = (last - first) / abs(first) * 100 if first else math.nan
        amount = figure(last - first, signed=True)
        return (
            f"{name}: {each}; change {amount} ({_signed(value, decimals)}%) "
            f"({fy(years[-1])} vs {fy(years[0])}"
            + (f"; {name.lower()} = {formula}" if formula != name.lower() else "")
            + ").",
            value,
        )
    value = values[years[-1]]
    how = f" ({name.lower()} = {formula})" if formula != name.lower() else ""
    return f"{name} {fy(years[-1])}: {shown(value)}{how}.", value


_MILLIONS_IN = {"thousands": 1e-3, "millions": 1.0, "billions": 1e3}


def asked_unit(question: str) -> str:
    """The unit a question asks an amount in ("in USD billions", "in $ thousands"),
    "millions" when it names none (the unit statements are read into)."""
    from chop_rag.answers.figures import _ASKED_UNIT

    named = _ASKED_UNIT.search(question)
    return named.group(1).lower() + "s" if named else "millions"


def _money(value: float, unit: str, decimals: int | None, signed: bool = False) -> str:
    """An amount held in millions, written in ``unit`` with its sign before the dollar sign:
    "$1,577 million", "-$250 million", "+$0.15 billion"."""
    scaled = value / _MILLIONS_IN[unit]
    sign = "-" if scaled < 0 else "+" if signed and scaled > 0 else ""
    whole = decimals is None and round(scaled, 6).is_integer()
    return f"{sign}${_shown(abs(scaled), False, 0 if whole else decimals)} {unit.rstrip('s')}"


def _plain(value: float, decimals: int | None) -> str:
    return _shown(value, False, decimals)


def _missing_text(name: str, years: list[int], missing: list[str]) -> str:
    span = ", ".join(f"FY{y}" for y in years)
    needed = "; ".join(missing) or "the line items it needs"
    return f"{name} for {span} cannot be computed from the statements found: missing {needed}."


def _input_text(given: Input) -> str:
    from chop_rag.answers.figures import _written

    row = given.row
    unit = f" {row.unit.rstrip('s')}" if row.unit and not row.percent else ""
    pages = f", p. {', '.join(str(p) for p in row.pages)}" if row.pages else ""
    where = f"{row.statement}, " if row.statement else ""
    return (
        f"{row.label} {given.period} {_written(given.value, row.percent)}{unit} "
        f"[{where}source {row.source}{pages}]"
    )


def _decimals(question: str) -> int | None:
    m = re.search(r"\b(one|two|three|1|2|3)\s+decimal", question, re.I)
    if not m:
        return None
    word = m.group(1).lower()
    return {"one": 1, "two": 2, "three": 3}.get(word) or int(word)


def _shown(value: float, percent: bool = False, decimals: int | None = None) -> str:
    if decimals is None:
        decimals = 1 if percent else (0 if abs(value) >= 100 else 2)
    text = f"{value:,.{decimals}f}"
    return text + "%" if percent else text


def _signed_amount(value: float, decimals: int | None) -> str:
    whole = decimals is None and abs(value) >= 1 and round(value, 6).is_integer()
    return ("+" if value > 0 else "") + _shown(value, False, 0 if whole else decimals)


def _signed(value: float, decimals: int | None) -> str:
    return ("+" if value > 0 else "") + _shown(value, False, 1 if decimals is None else decimals)


def verdict(question: str, computed: Computed) -> str | None:
    """ "yes" or "no" when the computed figures decide a yes/no question: a value asked to be
    positive or negative, or a direction asked between two years (for a margin or a ratio,
    higher is "improving"); None when they do not decide it."""
    values = computed.values
    if not values or computed.missing:
        return None
    years = sorted(values)
    if re.search(r"\bpositive\b", question, re.I):
        return "yes" if values[years[-1]] > 0 else "no"
    if re.search(r"\bnegative\b", question, re.I):
        return "yes" if values[years[-1]] < 0 else "no"
    if len(years) < 2 or not (direction := _DIRECTION.search(question)):
        return None
    up = bool(_UP.fullmatch(direction.group(0)))
    first, last = values[years[0]], values[years[-1]]
    if first == last:
        return "no"
    return "yes" if (last > first) == up else "no"
