"""Financial metrics computed by code from the rows a filing's statements print.

A small local model cannot be trusted to pick operands or do arithmetic, and the analyst must
see how a figure was made. So a metric question is answered here, with no model: the metric is
the one the question defines ("DPO is defined as: 365 * (average accounts payable between
FY2019 and FY2020) / (FY2020 COGS)") or one of the standard metrics below, named as analysts
name it; its inputs are line items found in the statement rows (chop.answers.figures.Row) by the
labels filings print ("Merchandise inventories", "Net cash provided by operating activities");
the answer shows the result, the formula, each input with its period, source and pages, and,
when an input is missing, names it instead of guessing.

Standard metrics (``chop.answers.line_items.METRICS``, beside the line items they read): gross,
operating and net (profit) margin; asset, fixed asset and
inventory turnover; receivables turnover; payout and retention ratio; DPO, DSO, DIO and the
cash conversion cycle; current (working capital), quick and cash ratio; working capital;
operating cash flow ratio; capital expenditure; free cash flow and its conversion; effective
tax rate; interest coverage; return on assets and on equity; debt to equity; capital intensity
(total assets / revenue); total debt; capex as a share of revenue; growth and CAGR of any line
item; an average over several years of any of these. Where analysts' definitions differ, the
common one is chosen and shown in the answer: the quick ratio is (total current assets -
inventories) / total current liabilities, inventories summed from their parts where a balance
sheet prints no total ("Raw materials", "Work in process", "Finished goods").
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from chop.answers.figures import Row
from chop.answers.line_items import (
    ITEMS,
    METRICS,
    STATEMENT_OF,
    Item,
    _normal_label,
    rows_of_item,
)
from chop.answers.metric_questions import (
    _DIRECTION,
    _UP,
    Asked,
    defined,
    definitions,
    read_metric_question,
)
from chop.questions.statements import statement_named

# ------------------------------------------------------------------ computing


@dataclass
class Input:
    item: Item
    year: int
    value: float
    row: Row


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

    def __init__(self, rows: Sequence[Row]) -> None:
        self.rows = rows
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

        def rank(row: Row) -> tuple[bool, bool, int]:
            printed_in = statement_named(row.statement)
            apart = bool(beside) and row.source not in beside
            return printed_in != own, apart, -sum(1 for p in row.periods if p)

        if not item.flow:  # a balance is never a cash flow statement's change in it
            found = [r for r in found if statement_named(r.statement) != "cash flow statement"]
        if not item.flow and key != "equity":  # an asset or a liability is never negative:
            # a row with a negative figure is a change in it, whatever heading it is under
            found = [r for r in found if all(v is None or v >= 0 for v in r.values)]
        # an item summed from its parts on its own statement ranks before a note's row
        for row in sorted([*_summed_parts(item, self.rows, year), *found], key=rank):
            value = row.value(str(year)) if str(year) in row.periods else None
            if value is not None:
                value = abs(value) if item.magnitude else value
                self.used[(key, year)] = Input(item, year, value, row)
                return value * _in_millions(row)
        self.missing.append(f"{item.name} (FY{year})")
        raise LookupError(key)


_UNIT_SIZE = {"thousands": 1e-3, "millions": 1.0, "billions": 1e3}
# metrics that are amounts of money, not ratios: stated in millions
AMOUNTS = frozenset(("fcf", "working_capital", "total_debt"))


def _in_millions(row: Row) -> float:
    return _UNIT_SIZE.get(row.unit, 1.0)


def _summed_parts(item: Item, rows: Sequence[Row], year: int) -> list[Row]:
    """The item as the sum of its components one table prints with no total of its own
    ("Raw materials and supplies" + "Work in process and finished goods"), as a row."""
    if item.parts is None:
        return []
    tables: dict[tuple[int, str], list[Row]] = {}
    for row in rows:
        label = _normal_label(row.label)
        if item.parts.match(label) and str(year) in row.periods and row.value(str(year)):
            tables.setdefault((row.source, row.statement), []).append(row)
    summed = []
    for parts in tables.values():
        parts = list({part.label: part for part in parts}.values())
        if len(parts) > 1:
            total = sum(part.value(str(year)) or 0.0 for part in parts)
            first = parts[0]
            values = [total if period == str(year) else None for period in first.periods]
            summed.append(
                Row(" + ".join(part.label for part in parts), values, list(first.periods),
                    first.unit, first.source, first.pages, statement=first.statement)
            )  # fmt: skip
    return summed


def compute(question: str, rows: Sequence[Row]) -> Computed | None:
    """The metric a question asks for, computed from ``rows``; None when it asks for none.
    When an input is missing the result names it and holds no value."""
    asked = read_metric_question(question)
    if asked is None:
        return None
    if not asked.years:
        asked.years = _printed_years(asked, rows)
        if not asked.years:
            return None
    lookup = Lookup(rows)
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
        name, formula, percent = metric.name, metric.formula, metric.percent
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
    names = {i.year: i.row.column(str(i.year)).split(" (")[0] for i in lookup.used.values()}
    amount = (asked.metric.key in AMOUNTS) if asked.metric else not percent
    in_units = all(i.row.unit for i in lookup.used.values())
    unit = " million" if amount and in_units else ""
    text, value = _result_text(asked, name, formula, percent, values, question, names, unit)
    inputs = sorted(lookup.used.values(), key=lambda i: (i.item.key, i.year))
    text += " Inputs: " + "; ".join(_input_text(i) for i in inputs) + "."
    citations = list(dict.fromkeys(i.row.source for i in inputs))
    plain = not given and asked.metric is None and asked.mode == "value"
    rows_used = list({id(i.row): i.row for i in inputs}.values())
    return Computed(text, citations, [], value, values, plain, rows_used)


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
    unit: str = "",
) -> tuple[str, float]:
    def fy(year: int) -> str:
        return (names or {}).get(year, f"FY{year}")

    decimals = _decimals(question)
    years = asked.years
    each = "; ".join(f"{fy(y)} {_shown(values[y], percent, decimals)}{unit}" for y in years)
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
        amount = _signed_amount(last - first, decimals) + unit
        return (
            f"{name}: {each}; change {amount} ({_signed(value, decimals)}%) "
            f"({fy(years[-1])} vs {fy(years[0])}"
            + (f"; {name.lower()} = {formula}" if formula != name.lower() else "")
            + ").",
            value,
        )
    value = values[years[-1]]
    how = f" ({name.lower()} = {formula})" if formula != name.lower() else ""
    return f"{name} {fy(years[-1])}: {_shown(value, percent, decimals)}{unit}{how}.", value


def _missing_text(name: str, years: list[int], missing: list[str]) -> str:
    span = ", ".join(f"FY{y}" for y in years)
    needed = "; ".join(missing) or "the line items it needs"
    return f"{name} for {span} cannot be computed from the statements found: missing {needed}."


def _input_text(given: Input) -> str:
    from chop.answers.figures import _written

    row = given.row
    unit = f" {row.unit.rstrip('s')}" if row.unit and not row.percent else ""
    pages = f", p. {', '.join(str(p) for p in row.pages)}" if row.pages else ""
    where = f"{row.statement}, " if row.statement else ""
    return (
        f"{row.label} {row.column(str(given.year))} {_written(given.value, row.percent)}{unit} "
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


def statements_needed(question: str) -> list[str]:
    """The statements whose rows a metric question needs: those printing its inputs (the
    inputs its definition names, else the standard metric's, else the line item asked)."""
    asked = read_metric_question(question)
    if asked is None:
        return []
    keys: set[str] = set()
    for _name, definition in definitions(question):
        keys |= {i.key for i in ITEMS.values() if i.asked.search(definition)}
        keys |= {k for m in METRICS if m.asked.search(definition) for k in m.needs}
    if asked.metric is not None:
        keys |= set(asked.metric.needs)
    if asked.item is not None:
        keys.add(asked.item.key)
    return [name for name, items in STATEMENT_OF.items() if keys & set(items)]
