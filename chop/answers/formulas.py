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
tax rate; interest coverage; return on assets and on equity; debt to equity; capex as a share of
revenue; growth and CAGR of any line item; an average over several years of any of these.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from chop.answers.figures import Row
from chop.answers.line_items import ITEMS, METRICS, STATEMENT_OF, Item, Metric, rows_of_item
from chop.questions.statements import statement_named
from chop.text.periods import periods

# ------------------------------------------------------------------ reading the question

_AVERAGE = re.compile(r"\b(?:(\w+)[- ]year\s+)?average\b", re.I)
_CAGR = re.compile(r"\bcagr\b|\bcompound(?:ed)?\s+annual\s+growth", re.I)
_GROWTH = re.compile(
    r"\b(?:growth(?:\s+rate)?|year[- ]over[- ]year|yoy|change|grew|increase|decrease|decline"
    r"|drop|improv\w*)\b",
    re.I,
)
_DIRECTION = re.compile(
    r"\b(?:improv\w*|increas\w*|grow\w*|grew|higher|ris(?:e|en|ing)|rose|declin\w*|decreas\w*"
    r"|drop\w*|lower|fall\w*|fell|reduc\w*|worsen\w*|deteriorat\w*)\b",
    re.I,
)
_UP = re.compile(r"\b(?:improv\w*|increas\w*|grow\w*|grew|higher|ris(?:e|en|ing)|rose)\b", re.I)
_DEFINED = re.compile(r"\b(?:is\s+)?defined\s+as\b|\bdefine\s+[\w\s]+\s+as\b", re.I)


@dataclass
class Asked:
    """What a metric question asks: the metric (or a line item's growth), the years."""

    metric: Metric | None
    item: Item | None  # a line item asked for itself (its value, growth or CAGR)
    years: list[int]
    mode: str  # "value", "average", "change", "growth", "cagr"


_DEFINITION = re.compile(
    r"(?:\b([\w&' ()-]{2,60}?)\s+(?:is|are)\s+defined\s+as|\bdefine\s+([\w&' ()-]{2,60}?)\s+as)"
    r"\s*:?\s*(.+?)(?=\.\s|\.$|\?|$)",
    re.I,
)
_WORD_OPERATORS = (
    (re.compile(r"\bdivided\s+by\b|\bover\b|÷", re.I), " / "),
    (re.compile(r"\bmultiplied\s+by\b|\btimes\b|×", re.I), " * "),
    (re.compile(r"\bminus\b|\bless\b|\bsubtract(?:ed)?\b|(?<!\w)[-–](?!\w)", re.I), " - "),
    (re.compile(r"\bplus\b|\badded\s+to\b", re.I), " + "),
)
_OPERATOR = re.compile(r"([()+\-*/])")


def definitions(question: str) -> list[tuple[str, str]]:
    """(name, definition) of every metric the question defines, in order: "DPO is defined
    as: 365 * (average accounts payable between FY2019 and FY2020) / (FY2020 COGS)"."""
    return [
        ((m.group(1) or m.group(2)).strip(), m.group(3).strip(" :"))
        for m in _DEFINITION.finditer(question)
    ]


def defined(
    definition: str,
    get: Callable[[str, int], float],
    year: int,
    others: Sequence[tuple[str, str]] = (),
) -> float:
    """The value of a metric the question defines, for ``year``: each phrase between the
    operators is a number, a line item ("FY2020 COGS", "average accounts payable between
    FY2019 and FY2020", "change in inventory between ..."), a standard metric or another
    metric the question defines. A phrase that names none raises ExpressionError."""
    from chop.answers.figures import ExpressionError, _arithmetic

    text = definition
    for pattern, operator in _WORD_OPERATORS:
        text = pattern.sub(operator, text)
    out: list[str] = []
    for part in _OPERATOR.split(text):
        phrase = " ".join(part.split()).strip(" ,;:")
        if not phrase or _OPERATOR.fullmatch(phrase):
            out.append(phrase)
        elif re.fullmatch(r"\d+(?:\.\d+)?", phrase.replace(",", "")):
            out.append(phrase.replace(",", ""))
        else:
            out.append(repr(_phrase_value(phrase, get, year, others)))
    try:
        import ast

        return _arithmetic(ast.parse(" ".join(out), mode="eval").body)
    except SyntaxError as err:
        raise ExpressionError(f"not arithmetic: {definition!r}") from err


def _phrase_value(
    phrase: str, get: Callable[[str, int], float], year: int, others: Sequence[tuple[str, str]]
) -> float:
    from chop.answers.figures import ExpressionError

    named = _years(phrase)
    words = _FILLER.sub(" ", phrase)
    average = re.match(r"\s*average\s+(.+?)\s+between\b", words, re.I)
    change = re.match(r"\s*change\s+(.+?)\s+between\b", words, re.I)
    spanned = average or change
    core = spanned.group(1) if spanned else words
    core = _FY_WORDS.sub(" ", core).strip()
    for name, definition in others:
        if name and re.search(rf"\b{re.escape(name)}\b", core, re.I):
            return defined(definition, get, named[-1] if named else year, others)
    at = named[-1] if named else year
    metric = next((m for m in METRICS if m.asked.search(core)), None)
    item = _item_named(core)
    if item is not None and (metric is None or _longer(item.asked, metric.asked, core)):
        if average:
            first, last = (named[0], named[-1]) if len(named) > 1 else (at - 1, at)
            return (get(item.key, first) + get(item.key, last)) / 2
        if change:
            first, last = (named[0], named[-1]) if len(named) > 1 else (at - 1, at)
            return get(item.key, last) - get(item.key, first)
        return get(item.key, at)
    if metric is not None:
        return metric.compute(get, at)
    raise ExpressionError(f"{phrase!r} names no line item")


_FILLER = re.compile(r"\b(?:the|of|in|for|at|end|year|fiscal|annual)\b", re.I)
_FY_WORDS = re.compile(r"\b(?:FY\s*['’]?\d{2,4}|(?:19|20)\d\d|and)\b", re.I)


def _item_named(text: str) -> Item | None:
    found = [(m.end() - m.start(), i) for i in ITEMS.values() if (m := i.asked.search(text))]
    return max(found, key=lambda pair: pair[0])[1] if found else None


def _longer(first: re.Pattern[str], second: re.Pattern[str], text: str) -> bool:
    a, b = first.search(text), second.search(text)
    return bool(a) and (not b or (a.end() - a.start()) >= (b.end() - b.start()))  # type: ignore[union-attr]


def read_metric_question(question: str) -> Asked | None:
    """The metric and fiscal years a question asks for, None when it asks for no known
    metric or line item with a year. A defined metric is read by the name it defines ("X is
    defined as ..."): its definition names which standard metric it is."""
    asked_part = _DEFINED.split(question)[0]
    years = _years(asked_part) or _years(question)
    if not years:
        return None
    text = question
    metric = next((m for m in METRICS if m.asked.search(asked_part)), None)
    metric = metric or next((m for m in METRICS if m.asked.search(text)), None)
    item = None
    if metric is None:
        found = [(m.start(), m.start() - m.end(), i) for i in ITEMS.values()
                 if (m := i.asked.search(asked_part))]  # fmt: skip
        item = min(found, key=lambda f: (f[0], f[1]))[2] if found else None
        if item is None and not definitions(question):
            return None
    span = _span_years(question, years)
    if _CAGR.search(question):
        mode = "cagr"
    elif _AVERAGE.search(asked_part) and len(span) > 1 and not _is_balance_average(asked_part):
        mode = "average"
    elif len(years) > 1 and _GROWTH.search(question):
        mode = "growth" if item is not None else "change"
    elif len(years) > 1:
        mode = "change"
    elif _DIRECTION.search(question) and metric is not None:
        # "improving gross margin as of FY2023": the year against the one before
        years, mode = [years[0] - 1, years[0]], "change"
    else:
        mode = "value"
    return Asked(metric, item, span if mode in ("average",) else years, mode)


def _years(text: str) -> list[int]:
    return sorted({p.fiscal_year for p in periods(text) if p.fiscal_year and not p.day})


def _is_balance_average(text: str) -> bool:
    """ "average inventory between FY2018 and FY2019" is a metric's input, not "a 3 year
    average of the metric"."""
    m = _AVERAGE.search(text)
    return bool(m and not m.group(1) and re.search(r"average\s+\w+(?:\s+\w+)?\s+between", text))


def _span_years(question: str, years: list[int]) -> list[int]:
    """Every year of "FY2015 - FY2017" (a range), else the years written."""
    if len(years) == 2 and re.search(r"\b(?:through|to|-|–)\b|\s[-–]\s", question):
        return list(range(years[0], years[1] + 1))
    return years


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


class Lookup:
    """Line items by year from the rows given, remembering which row gave each."""

    def __init__(self, rows: Sequence[Row]) -> None:
        self.rows = rows
        self.used: dict[tuple[str, int], Input] = {}
        self.missing: list[str] = []

    def __call__(self, key: str, year: int) -> float:
        if (key, year) in self.used:
            return self.used[(key, year)].value
        item = ITEMS[key]
        # a statement prints every year it compares: of the rows that state the item, those
        # with the most periods first (a note's or a subsidiary's one-year table after them)
        found = rows_of_item(item, self.rows)
        own = next((name for name, keys in STATEMENT_OF.items() if key in keys), "")

        def rank(row: Row) -> tuple[bool, int]:
            printed_in = statement_named(row.statement)
            return printed_in != own, -sum(1 for p in row.periods if p)

        if not item.flow:  # a balance is never a cash flow statement's change in it
            found = [r for r in found if statement_named(r.statement) != "cash flow statement"]
        for row in sorted(found, key=rank):
            value = row.value(str(year)) if str(year) in row.periods else None
            if value is not None:
                value = abs(value) if item.magnitude else value
                self.used[(key, year)] = Input(item, year, value, row)
                return value
        self.missing.append(f"{item.name} (FY{year})")
        raise LookupError(key)


def compute(question: str, rows: Sequence[Row]) -> Computed | None:
    """The metric a question asks for, computed from ``rows``; None when it asks for none.
    When an input is missing the result names it and holds no value."""
    asked = read_metric_question(question)
    if asked is None:
        return None
    lookup = Lookup(rows)
    values: dict[int, float] = {}
    given = definitions(question)
    if given:
        name, definition = given[0]
        name = name.split(",")[-1].strip()
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
    text, value = _result_text(asked, name, formula, percent, values, question)
    inputs = sorted(lookup.used.values(), key=lambda i: (i.item.key, i.year))
    text += " Inputs: " + "; ".join(_input_text(i) for i in inputs) + "."
    citations = list(dict.fromkeys(i.row.source for i in inputs))
    plain = not given and asked.metric is None and asked.mode == "value"
    return Computed(text, citations, [], value, values, plain)


def _result_text(
    asked: Asked,
    name: str,
    formula: str,
    percent: bool,
    values: dict[int, float],
    question: str,
) -> tuple[str, float]:
    decimals = _decimals(question)
    years = asked.years
    each = "; ".join(f"FY{y} {_shown(values[y], percent, decimals)}" for y in years)
    if asked.mode == "average":
        value = sum(values[y] for y in years) / len(years)
        return (
            f"{name}, {len(years)}-year average FY{years[0]}-FY{years[-1]}: "
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
            f"{name} CAGR FY{years[0]}-FY{years[-1]}: {_shown(value, True, decimals)} "
            f"(({name} FY{years[-1]} / FY{years[0]})^(1/{span}) - 1; {each}).",
            value,
        )
    if asked.mode in ("growth", "change") and len(years) > 1:
        first, last = values[years[0]], values[years[-1]]
        if percent:
            value = last - first
            return (
                f"{name}: {each}; change {_signed(value, decimals)} percentage points "
                f"({name.lower()} = {formula}).",
                value,
            )
        value = (last - first) / abs(first) * 100 if first else math.nan
        return (
            f"{name}: {each}; change {_signed(value, decimals)}% "
            f"(FY{years[-1]} vs FY{years[0]}"
            + (f"; {name.lower()} = {formula}" if formula != name.lower() else "")
            + ").",
            value,
        )
    value = values[years[-1]]
    how = f" ({name.lower()} = {formula})" if formula != name.lower() else ""
    return f"{name} FY{years[-1]}: {_shown(value, percent, decimals)}{how}.", value


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
        f"{row.label} FY{given.year} {_written(given.value, row.percent)}{unit} "
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
