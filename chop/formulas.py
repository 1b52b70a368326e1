"""Financial metrics computed by code from the rows a filing's statements print.

A small local model cannot be trusted to pick operands or do arithmetic, and the analyst must
see how a figure was made. So a metric question is answered here, with no model: the metric is
the one the question defines ("DPO is defined as: 365 * (average accounts payable between
FY2019 and FY2020) / (FY2020 COGS)") or one of the standard metrics below, named as analysts
name it; its inputs are line items found in the statement rows (chop.figures.Row) by the
labels filings print ("Merchandise inventories", "Net cash provided by operating activities");
the answer shows the result, the formula, each input with its period, source and pages, and,
when an input is missing, names it instead of guessing.

Standard metrics (``METRICS``): gross, operating and net (profit) margin; asset, fixed asset and
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

from chop.figures import Row
from chop.periods import periods

# ------------------------------------------------------------------ line items


@dataclass(frozen=True)
class Item:
    """A line item as filings label it, and as questions name it."""

    key: str
    name: str  # how the answer names it
    label: re.Pattern[str]  # a row label that states it (normalised: lower case, no marks)
    asked: re.Pattern[str]  # how a question (or a definition) names it
    flow: bool = True  # a flow over the year (income, cash flow) vs a balance at its end
    # the sign the filing prints is not the item's: capex is printed as an outflow "(1,234)"
    magnitude: bool = False


def _item(
    key: str, name: str, label: str, asked: str, flow: bool = True, magnitude: bool = False
) -> Item:
    return Item(key, name, re.compile(label), re.compile(asked, re.I), flow, magnitude)


_NET = r"(?:,?\s*net)?"
ITEMS = {
    item.key: item
    for item in (
        _item("revenue", "Revenue",
              r"^(?:total\s+)?(?:net\s+)?(?:operating\s+)?(?:revenues?|sales)(?:,?\s*net)?"
              r"(?:\s+and\s+other\s+(?:income|revenues?))?$"
              r"|^total\s+(?:net\s+)?revenues?(?:,?\s*net\s+of\s+interest\s+expense)?$"
              r"|^net\s+revenues?(?:,?\s*net\s+of\s+interest\s+expense)?$",
              r"\b(?:total\s+|net\s+)?(?:revenues?|sales|top\s*line|turnover)\b"),
        _item("cogs", "Cost of goods sold",
              r"^(?:total\s+)?cost\s+of\s+(?:goods\s+sold|sales|revenues?|products\s+sold|"
              r"merchandise\s+sold)(?:\s*\(.*\))?$|^cost\s+of\s+sales\s+and\s+occupancy.*$",
              r"\bcogs\b|\bcost\s+of\s+(?:goods\s+sold|sales|revenues?|products\s+sold)\b"),
        _item("gross_profit", "Gross profit", r"^gross\s+(?:profit|margin)$",
              r"\bgross\s+profit\b"),
        _item("operating_income", "Operating income",
              r"^(?:total\s+)?operating\s+(?:income|profit)(?:\s*\(loss\))?$"
              r"|^(?:income|earnings)\s*(?:\(loss\)\s*)?from\s+operations$"
              r"|^operating\s+\(loss\)\s+income$",
              r"\b(?:unadjusted\s+)?operating\s+(?:income|profit)\b|\bebit\b"
              r"|\bincome\s+from\s+operations\b"),
        _item("net_income", "Net income",
              r"^net\s+(?:income|earnings|profit)(?:\s*\(loss\))?(?:\s+attributable\s+to\s+"
              r"(?!non)[\w .,&'-]+)?$|^net\s+\(loss\)\s+income$",
              r"\bnet\s+(?:income|earnings|profit)\b"),
        _item("pretax_income", "Income before income taxes",
              r"^(?:income|earnings)\s*(?:\(loss\)\s*)?(?:from\s+continuing\s+operations\s+)?"
              r"before\s+(?:provision\s+for\s+)?income\s+tax(?:es)?.*$",
              r"\b(?:pre-?tax|before\s+(?:income\s+)?taxes)\b"),
        _item("income_tax", "Income tax expense",
              r"^(?:provision\s+for|\(?benefit\)?\s+from|benefit\s+\(provision\)\s+for)\s+income"
              r"\s+tax(?:es)?(?:\s+\(benefit\))?$|^income\s+tax(?:es)?(?:\s+expense)?"
              r"(?:\s*\(benefit\))?$|^income\s+tax\s+provision$",
              r"\bincome\s+tax(?:es)?\b"),
        _item("interest_expense", "Interest expense",
              r"^interest\s+expense(?:,?\s*net)?(?:\s+of\s+amounts\s+capitalized)?$",
              r"\binterest\s+expense\b"),
        _item("inventory", "Inventories",
              r"^(?:merchandise\s+)?inventor(?:y|ies)" + _NET + r"$",
              r"\binventor(?:y|ies)\b", flow=False),
        _item("receivables", "Accounts receivable",
              r"^(?:trade\s+)?(?:accounts\s+)?receivables?" + _NET
              + r"(?:\s+of\s+allowances?.*)?$|^accounts\s+and\s+notes\s+receivable" + _NET + "$",
              r"\b(?:accounts\s+)?receivables?\b", flow=False),
        _item("payables", "Accounts payable",
              r"^(?:trade\s+)?accounts\s+payable(?:\s+and\s+accrued\s+.*)?$|^trade\s+payables$",
              r"\baccounts\s+payable\b|\bpayables\b", flow=False),
        _item("current_assets", "Total current assets", r"^total\s+current\s+assets$",
              r"\b(?:total\s+)?current\s+assets\b", flow=False),
        _item("current_liabilities", "Total current liabilities",
              r"^total\s+current\s+liabilities$", r"\b(?:total\s+)?current\s+liabilities\b",
              flow=False),
        _item("cash", "Cash and cash equivalents",
              r"^cash\s+and\s+(?:cash\s+)?equivalents(?:\s+at\s+end\s+of\s+(?:the\s+)?(?:year|period))?$"
              r"|^cash$",
              r"\bcash\s+(?:and\s+cash\s+)?equivalents\b", flow=False),
        _item("short_investments", "Short-term investments",
              r"^(?:short-term\s+investments|marketable\s+securities|short-term\s+marketable"
              r"\s+securities|investments)$",
              r"\bshort-term\s+investments\b|\bmarketable\s+securities\b", flow=False),
        _item("total_assets", "Total assets", r"^total\s+assets$", r"\btotal\s+assets\b",
              flow=False),
        _item("ppe", "Property, plant and equipment, net",
              r"^(?:net\s+)?property(?:,\s*plant)?(?:,?\s*and)?\s+equipment" + _NET
              + r"(?:\s+of\s+accumulated.*)?$|^property\s+and\s+equipment,\s*at\s+cost,?\s*net$",
              r"\bpp&e\b|\bproperty,?\s+(?:plant,?\s+)?(?:and\s+)?equipment\b|\bfixed\s+assets?\b",
              flow=False),
        _item("equity", "Total shareholders' equity",
              r"^total\s+(?:\w+\s+)?(?:share|stock)holders['’]?\s+equity$|^total\s+equity$",
              r"\b(?:shareholders['’]?|stockholders['’]?|total)\s+equity\b", flow=False),
        _item("cfo", "Cash from operations",
              r"^(?:net\s+)?cash\s+(?:provided\s+by|from|generated\s+(?:by|from))\s+"
              r"(?:\(used\s+(?:in|for)\)\s+)?operati(?:ng\s+activities|ons)(?:\s+activities)?$"
              r"|^total\s+cash\s+provided\s+by\s+operating\s+activities$",
              r"\bcash\s+(?:flow\s+)?from\s+operations\b|\boperating\s+cash\s+flow\b"
              r"|\bcash\s+(?:provided\s+by|from)\s+operating\s+activities\b"),
        _item("capex", "Capital expenditures",
              r"^(?:capital\s+expenditures?|purchases?\s+of\s+property(?:,\s*plant)?(?:,?\s*and)?"
              r"\s+equipment|additions\s+to\s+property.*|payments\s+for\s+(?:acquisition\s+of\s+)?"
              r"property(?:,\s*plant)?(?:,?\s*and)?\s+equipment|expenditures\s+for\s+property.*"
              r"|purchases\s+of\s+property\s+and\s+equipment.*|capital\s+expenditures,.*)$",
              r"\bcapex\b|\bcapital\s+expenditures?\b|\bcapital\s+spending\b", magnitude=True),
        _item("dividends", "Cash dividends paid",
              r"^(?:cash\s+)?dividends?\s+(?:paid|to\s+(?:share|stock)holders)(?:\s+to\s+.*)?$"
              r"|^(?:payments?\s+of\s+)?(?:cash\s+)?dividends(?:\s+paid)?$"
              r"|^dividends\s+paid\s+on\s+common\s+stock$",
              r"\bdividends?\b", magnitude=True),
        _item("depreciation", "Depreciation and amortization",
              r"^depreciation(?:\s+and\s+amortization)?$",
              r"\bdepreciation\b"),
    )
}  # fmt: skip


def _normal_label(label: str) -> str:
    text = re.sub(r"\(\d\)|\$|[*:]", " ", label.lower())
    text = text.replace("’", "'")
    return " ".join(text.split()).strip(" .,")


def rows_of_item(item: Item, rows: Sequence[Row]) -> list[Row]:
    """The rows that state ``item``, in the order given (best-ranked source first)."""
    return [row for row in rows if item.label.fullmatch(_normal_label(row.label))]


# ------------------------------------------------------------------ metrics


@dataclass(frozen=True)
class Metric:
    """A metric: what it needs and how it is computed (a function of an item lookup)."""

    key: str
    name: str
    asked: re.Pattern[str]
    formula: str  # as the answer shows it
    needs: tuple[str, ...]  # item keys
    compute: Callable[[Callable[[str, int], float], int], float]
    percent: bool = False
    averaged: tuple[str, ...] = ()  # balances averaged over the year's start and end


def _avg(get: Callable[[str, int], float], key: str, year: int) -> float:
    return (get(key, year) + get(key, year - 1)) / 2


def _gross(get: Callable[[str, int], float], y: int) -> float:
    try:
        profit = get("gross_profit", y)
    except LookupError:
        profit = get("revenue", y) - get("cogs", y)
    return profit / get("revenue", y) * 100


def _metric(
    key: str,
    name: str,
    asked: str,
    formula: str,
    needs: tuple[str, ...],
    compute: Callable[[Callable[[str, int], float], int], float],
    percent: bool = False,
    averaged: tuple[str, ...] = (),
) -> Metric:
    return Metric(key, name, re.compile(asked, re.I), formula, needs, compute, percent, averaged)


# the order matters: the first metric whose words a question writes is the one it asks for
METRICS = (
    _metric("ccc", "Cash conversion cycle", r"\bcash\s+conversion\s+cycle\b|\bccc\b",
            "DIO + DSO - DPO", ("inventory", "receivables", "payables", "cogs", "revenue"),
            lambda g, y: 365 * _avg(g, "inventory", y) / g("cogs", y)
            + 365 * _avg(g, "receivables", y) / g("revenue", y)
            - 365 * _avg(g, "payables", y) / g("cogs", y),
            averaged=("inventory", "receivables", "payables")),
    _metric("dpo", "Days payable outstanding", r"\bdays\s+payables?\s+outstanding\b|\bdpo\b",
            "365 × average accounts payable / cost of goods sold", ("payables", "cogs"),
            lambda g, y: 365 * _avg(g, "payables", y) / g("cogs", y), averaged=("payables",)),
    _metric("dso", "Days sales outstanding", r"\bdays\s+sales\s+outstanding\b|\bdso\b",
            "365 × average accounts receivable / revenue", ("receivables", "revenue"),
            lambda g, y: 365 * _avg(g, "receivables", y) / g("revenue", y),
            averaged=("receivables",)),
    _metric("dio", "Days inventory outstanding",
            r"\bdays\s+(?:inventory|inventories)\s+outstanding\b|\bdio\b|\bdays\s+in\s+inventory\b",
            "365 × average inventory / cost of goods sold", ("inventory", "cogs"),
            lambda g, y: 365 * _avg(g, "inventory", y) / g("cogs", y), averaged=("inventory",)),
    _metric("inventory_turnover", "Inventory turnover", r"\binventory\s+turnover\b",
            "cost of goods sold / average inventory", ("cogs", "inventory"),
            lambda g, y: g("cogs", y) / _avg(g, "inventory", y), averaged=("inventory",)),
    _metric("receivables_turnover", "Receivables turnover", r"\breceivables?\s+turnover\b",
            "revenue / average accounts receivable", ("revenue", "receivables"),
            lambda g, y: g("revenue", y) / _avg(g, "receivables", y), averaged=("receivables",)),
    _metric("fixed_asset_turnover", "Fixed asset turnover",
            r"\bfixed\s+assets?\s+turnover\b|\bpp&e\s+turnover\b",
            "revenue / average PP&E", ("revenue", "ppe"),
            lambda g, y: g("revenue", y) / _avg(g, "ppe", y), averaged=("ppe",)),
    _metric("asset_turnover", "Total asset turnover", r"\b(?:total\s+)?assets?\s+turnover\b",
            "revenue / average total assets", ("revenue", "total_assets"),
            lambda g, y: g("revenue", y) / _avg(g, "total_assets", y),
            averaged=("total_assets",)),
    _metric("retention", "Retention ratio", r"\bretention\s+ratio\b",
            "1 - cash dividends paid / net income", ("dividends", "net_income"),
            lambda g, y: 1 - g("dividends", y) / g("net_income", y)),
    _metric("payout", "Dividend payout ratio", r"\bpayout\s+ratio\b",
            "cash dividends paid / net income", ("dividends", "net_income"),
            lambda g, y: g("dividends", y) / g("net_income", y)),
    _metric("quick", "Quick ratio", r"\bquick\s+ratio\b|\bacid[- ]test\b",
            "(cash and equivalents + short-term investments + accounts receivable) / total "
            "current liabilities", ("cash", "short_investments", "receivables",
                                    "current_liabilities"),
            lambda g, y: (g("cash", y) + _optional(g, "short_investments", y)
                          + g("receivables", y)) / g("current_liabilities", y)),
    _metric("cash_ratio", "Cash ratio", r"\bcash\s+ratio\b",
            "cash and equivalents / total current liabilities", ("cash", "current_liabilities"),
            lambda g, y: g("cash", y) / g("current_liabilities", y)),
    _metric("ocf_ratio", "Operating cash flow ratio", r"\boperating\s+cash\s+flow\s+ratio\b",
            "cash from operations / total current liabilities", ("cfo", "current_liabilities"),
            lambda g, y: g("cfo", y) / g("current_liabilities", y)),
    _metric("current", "Current ratio",
            r"\bcurrent\s+ratio\b|\bworking\s+capital\s+ratio\b",
            "total current assets / total current liabilities",
            ("current_assets", "current_liabilities"),
            lambda g, y: g("current_assets", y) / g("current_liabilities", y)),
    _metric("working_capital", "Working capital", r"\bworking\s+capital\b",
            "total current assets - total current liabilities",
            ("current_assets", "current_liabilities"),
            lambda g, y: g("current_assets", y) - g("current_liabilities", y)),
    _metric("fcf_conversion", "Free cash flow conversion",
            r"\b(?:free\s+cash\s*flow|fcf)\s+conversion\b",
            "(cash from operations - capital expenditures) / net income",
            ("cfo", "capex", "net_income"),
            lambda g, y: (g("cfo", y) - g("capex", y)) / g("net_income", y) * 100, percent=True),
    _metric("fcf", "Free cash flow", r"\bfree\s+cash\s*flows?\b|\bfcf\b",
            "cash from operations - capital expenditures", ("cfo", "capex"),
            lambda g, y: g("cfo", y) - g("capex", y)),
    _metric("capex_share", "Capital expenditures as a share of revenue",
            r"\b(?:capex|capital\s+expenditures?)\s+as\s+a\s+%?\s*(?:percent(?:age)?\s+)?"
            r"(?:of|share\s+of)\s+(?:total\s+)?revenues?\b",
            "capital expenditures / revenue", ("capex", "revenue"),
            lambda g, y: g("capex", y) / g("revenue", y) * 100, percent=True),
    _metric("tax_rate", "Effective tax rate", r"\beffective\s+(?:income\s+)?tax\s+rate\b",
            "income tax expense / income before income taxes", ("income_tax", "pretax_income"),
            lambda g, y: g("income_tax", y) / g("pretax_income", y) * 100, percent=True),
    _metric("interest_coverage", "Interest coverage ratio", r"\binterest\s+coverage\b",
            "operating income / interest expense", ("operating_income", "interest_expense"),
            lambda g, y: g("operating_income", y) / g("interest_expense", y)),
    _metric("roa", "Return on assets", r"\breturn\s+on\s+(?:total\s+)?assets\b|\broa\b",
            "net income / average total assets", ("net_income", "total_assets"),
            lambda g, y: g("net_income", y) / _avg(g, "total_assets", y) * 100, percent=True,
            averaged=("total_assets",)),
    _metric("roe", "Return on equity", r"\breturn\s+on\s+(?:shareholders['’]?\s+)?equity\b|\broe\b",
            "net income / average shareholders' equity", ("net_income", "equity"),
            lambda g, y: g("net_income", y) / _avg(g, "equity", y) * 100, percent=True,
            averaged=("equity",)),
    _metric("gross_margin", "Gross margin", r"\bgross\s+(?:profit\s+)?margins?\b",
            "(revenue - cost of goods sold) / revenue", ("revenue", "cogs"), _gross,
            percent=True),
    _metric("operating_margin", "Operating margin",
            r"\boperating\s+(?:income\s+|profit\s+)?(?:%\s+)?margins?\b",
            "operating income / revenue", ("operating_income", "revenue"),
            lambda g, y: g("operating_income", y) / g("revenue", y) * 100, percent=True),
    _metric("net_margin", "Net profit margin",
            r"\bnet\s+(?:profit\s+|income\s+)?margins?\b|\bprofit\s+margins?\b",
            "net income / revenue", ("net_income", "revenue"),
            lambda g, y: g("net_income", y) / g("revenue", y) * 100, percent=True),
    _metric("cogs_share", "Cost of goods sold as a share of revenue",
            r"\b(?:cogs|cost\s+of\s+(?:goods\s+sold|sales))\s+(?:as\s+a\s+)?(?:%|percent(?:age)?)"
            r"\s+(?:of\s+)?(?:total\s+)?(?:net\s+)?(?:revenues?|sales)\b",
            "cost of goods sold / revenue", ("cogs", "revenue"),
            lambda g, y: g("cogs", y) / g("revenue", y) * 100, percent=True),
    _metric("debt_to_equity", "Debt to equity", r"\bdebt[- ]to[- ]equity\b",
            "total liabilities / total shareholders' equity", ("total_assets", "equity"),
            lambda g, y: (g("total_assets", y) - g("equity", y)) / g("equity", y)),
)  # fmt: skip


def _optional(get: Callable[[str, int], float], key: str, year: int) -> float:
    try:
        return get(key, year)
    except LookupError:
        return 0.0


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
    from chop.figures import ExpressionError, _arithmetic

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
    from chop.figures import ExpressionError

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
        found = [(m.start(), i) for i in ITEMS.values() if (m := i.asked.search(asked_part))]
        item = min(found, key=lambda pair: pair[0])[1] if found else None
        if item is None:
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
        for row in rows_of_item(item, self.rows):
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
        return Computed(_missing_text(name, wanted, missing), [], missing)
    text, value = _result_text(asked, name, formula, percent, values, question)
    inputs = sorted(lookup.used.values(), key=lambda i: (i.item.key, i.year))
    text += " Inputs: " + "; ".join(_input_text(i) for i in inputs) + "."
    citations = list(dict.fromkeys(i.row.source for i in inputs))
    return Computed(text, citations, [], value, values)


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
            f"(FY{years[-1]} vs FY{years[0]}; {name.lower()} = {formula}).",
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
    row = given.row
    unit = f" {row.unit.rstrip('s')}" if row.unit and not row.percent else ""
    pages = f", p. {', '.join(str(p) for p in row.pages)}" if row.pages else ""
    where = f"{row.statement}, " if row.statement else ""
    return (
        f"{row.label} FY{given.year} {_shown(given.value, row.percent)}{unit} "
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
