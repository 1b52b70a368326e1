"""Line items as filings label them and questions name them, the statement printing each, and
the standard metrics computed over them (chop_rag.answers.formulas computes them). Here, below
retrieval, because which statements a question needs is read from it before the search.

chop_rag.answers.formulas computes metrics from statement rows (chop_rag.answers.figures.Row); which
row states which line item is decided here, by the labels 10-Ks, 10-Qs and earnings releases print
("Merchandise inventories", "Net cash provided by operating activities", "Additions to property and
equipment") and the words questions use ("COGS", "capex", "PP&E").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar


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
    # the labels of its components, summed when a statement prints them with no total
    # ("Inventories, net: Raw materials and supplies 992; Work in process and finished goods")
    parts: re.Pattern[str] | None = None


def _item(
    key: str,
    name: str,
    label: str,
    asked: str,
    flow: bool = True,
    magnitude: bool = False,
    parts: str = "",
) -> Item:
    return Item(
        key, name, re.compile(label), re.compile(asked, re.I), flow, magnitude,
        re.compile(parts) if parts else None,
    )  # fmt: skip


_NET = r"(?:,?\s*net)?"
ITEMS = {
    item.key: item
    for item in (
        _item("revenue", "Revenue",
              r"^(?:total\s+)?(?:net\s+)?(?:operating\s+)?(?:revenues?|sales)(?:,?\s*net)?"
              r"(?:\s+and\s+other\s+(?:income|revenues?))?$"
              r"|^total\s+(?:net\s+)?revenues?(?:,?\s*net\s+of\s+interest\s+expense)?$"
              r"|^net\s+revenues?(?:,?\s*net\s+of\s+interest\s+expense)?$"
              r"|^(?:total\s+)?(?:net\s+)?sales\s+(?:to\s+customers|and\s+(?:other\s+)?"
              r"(?:operating\s+)?revenues?)$|^(?:total\s+)?revenues?\s+from\s+contracts\s+with"
              r"\s+customers$",
              r"\b(?:total\s+|net\s+)?(?:revenues?|sales|top\s*line|turnover)\b"),
        _item("cogs", "Cost of goods sold",
              r"^(?:total\s+)?costs?\s+of\s+(?:goods\s+sold|sales|revenues?|products\s+sold|"
              r"merchandise\s+sold|goods\s+and\s+services\s+sold|products\s+and\s+services"
              r"\s+sold)(?:\s*\(.*\)|,?\s+(?:excluding|exclusive\s+of|excl\.)\s+.*)?$"
              r"|^cost\s+of\s+sales\s+and\s+occupancy.*$",
              r"\bcogs\b|\bcost\s+of\s+(?:goods\s+sold|sales|revenues?|products\s+sold)\b",
              magnitude=True),
        _item("gross_profit", "Gross profit", r"^gross\s+(?:profit|margin)$",
              r"\bgross\s+profit\b"),
        _item("operating_income", "Operating income",
              r"^(?:total\s+)?operating\s+(?:income|profit|earnings)(?:\s*\(loss\))?$"
              r"|^(?:income|earnings)\s*(?:\(loss\)\s*)?from\s+operations$"
              r"|^operating\s+\(loss\)\s+income$",
              r"\b(?:unadjusted\s+)?operating\s+(?:income|profit)\b|\bebit\b"
              r"|\bincome\s+from\s+operations\b"),
        _item("net_income", "Net income",
              r"^net\s+(?:income|earnings|profit)(?:\s*\(loss\))?(?:\s+attributable\s+to\s+"
              r"(?!redeemable|non|minority)[\w .,&'-]+)?$|^net\s+\(loss\)\s+income$",
              r"\bnet\s+(?:income|earnings|profit)\b"),
        _item("pretax_income", "Income before income taxes",
              r"^(?:income|earnings)\s*(?:\(loss\)\s*)?(?:from\s+continuing\s+operations\s+)?"
              r"before\s+(?:provision\s+for\s+)?income\s+tax(?:es)?.*$"
              r"|^pre-?tax\s+income(?:\s*\(loss\))?$|^(?:income|earnings)\s+before\s+taxes$",
              r"\b(?:pre-?tax|before\s+(?:income\s+)?taxes)\b"),
        _item("income_tax", "Income tax expense",
              r"^(?:provision\s+for|\(?benefit\)?\s+from|benefit\s+\(provision\)\s+for)\s+income"
              r"\s+tax(?:es)?(?:\s+\(benefit\))?$|^income\s+tax(?:es)?(?:\s+expense)?"
              r"(?:\s*\(benefit\))?$|^income\s+tax\s+provision$"
              r"|^(?:\(?provision\)?\s+(?:\(?benefit\)?\s+)?for\s+)?taxes\s+on\s+income$"
              r"|^income\s+tax(?:es)?\s*\(?(?:expense|provision)\)?\s*(?:/|and|or)?\s*"
              r"\(?benefit\)?$|^(?:total\s+)?(?:provision\s+for\s+)?income\s+tax(?:es)?\s+"
              r"(?:expense|provision)\s*(?:\(benefit\)|/\s*\(?benefit\)?)?$",
              r"\bincome\s+tax(?:es)?\b", magnitude=True),
        _item("interest_expense", "Interest expense",
              r"^interest\s+(?:and\s+debt\s+)?expense(?:,?\s*net)?(?:\s+of\s+amounts\s+"
              r"capitalized)?$|^interest\s+expense\s+on\s+(?:debt|borrowings)$",
              r"\binterest\s+expense\b", magnitude=True),
        _item("inventory", "Inventories",
              r"^(?:total\s+)?(?:merchandise\s+)?inventor(?:y|ies)" + _NET + r"$",
              r"\binventor(?:y|ies)\b", flow=False,
              parts=r"^(?:raw\s+materials|work\s+in\s+(?:process|progress)|finished\s+goods"
                    r"|(?:materials\s+and\s+)?supplies)\b.*"),
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
              r"\bcash(?:\s+(?:and|&)\s+(?:cash\s+)?equivalents)?\b"
              r"(?!\s+(?:flows?|from|provided|conversion|ratio|dividends?|paid))", flow=False),
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
              r"^(?:(?:total\s+)?capital\s+expenditures?(?:,.*|\s+\(.*)?"
              # "Purchases of property and equipment", "Additions to property, plant and
              # equipment", "Purchases of land, buildings, and equipment", "Payments for
              # acquisition of property, plant and equipment", "Expenditures for property"
              r"|(?:purchases?|additions?|payments?|expenditures?|acquisitions?|investments?)"
              r"\s+(?:of|to|for|in)\s+(?:acquisition\s+of\s+)?(?:(?:land|buildings?|property|"
              r"plant|premises|equipment|fixed\s+assets|pp&e)[,\s]*(?:and\s+)?)+.*"
              r"|capital\s+(?:spending|investments?|additions)"
              r"|(?:property,?\s+)?(?:plant\s+)?(?:and\s+)?equipment\s+(?:additions|purchases))$",
              r"\bcapex\b|\bcapital\s+expenditures?\b|\bcapital\s+spending\b", magnitude=True),
        _item("dividends", "Cash dividends paid",
              r"^(?:cash\s+)?dividends?\s+(?:paid|to\s+(?:share|stock)holders)(?:\s+to\s+.*)?$"
              r"|^(?:payments?\s+of\s+)?(?:cash\s+)?dividends(?:\s+paid)?$"
              r"|^dividends\s+paid\s+on\s+common\s+stock$",
              r"\bdividends?\b", magnitude=True),
        _item("long_term_debt", "Long-term debt",
              r"^long-term\s+debt(?:\s+and\s+(?:finance|capital)\s+lease\s+obligations)?"
              r"(?:,?\s*(?:net|less\s+current\s+(?:portion|maturities)|excluding\s+current"
              r"\s+(?:portion|maturities)|non-?current(?:\s+portion)?)[\w ,-]*)?$",
              r"\blong-term\s+debt\b", flow=False),
        _item("current_debt", "Debt due within a year",
              r"^(?:debt\s+maturing\s+within\s+one\s+year|current\s+(?:portion|maturities)\s+of"
              r"\s+long-term\s+debt(?:\s+and\s+.*)?|short-term\s+(?:debt|borrowings)(?:\s+and\s+.*)?"
              r"|notes\s+payable|commercial\s+paper)$",
              r"\bshort-term\s+(?:debt|borrowings)\b|\bcurrent\s+(?:portion|maturities)\s+of\s+"
              r"long-term\s+debt\b", flow=False),
        _item("depreciation", "Depreciation and amortization",
              r"^depreciation(?:,?\s+(?:depletion\s+)?(?:and\s+)?amortization)?(?:\s+expense)?$"
              r"|^depreciation\s+and\s+amortization\s+of\s+property.*$",
              r"\bdepreciation\b"),
    )
}  # fmt: skip


def _normal_label(label: str) -> str:
    text = re.sub(r"\((?:notes?\s+[\w ,&-]+|\d+|[a-z])\)|\$|[*:]", " ", label.lower())
    text = text.replace("’", "'")
    return " ".join(text.split()).strip(" .,")


class Labelled(Protocol):
    """A statement row as far as its line item goes: the label the filing prints."""

    @property
    def label(self) -> str: ...


RowT = TypeVar("RowT", bound=Labelled)


def rows_of_item(item: Item, rows: Sequence[RowT]) -> list[RowT]:
    """The rows that state ``item``, in the order given (best-ranked source first)."""
    return [row for row in rows if item.label.fullmatch(_normal_label(row.label))]


# the statement that prints each line item (chop_rag.questions.statements' names)
STATEMENT_OF = {
    "balance sheet": ("inventory", "receivables", "payables", "current_assets",
                      "current_liabilities", "cash", "short_investments", "total_assets", "ppe",
                      "equity", "long_term_debt", "current_debt"),
    "income statement": ("revenue", "cogs", "gross_profit", "operating_income", "net_income",
                         "pretax_income", "income_tax", "interest_expense"),
    "cash flow statement": ("cfo", "capex", "dividends", "depreciation"),
}  # fmt: skip


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
    # the common analyst definition: the current assets that are not inventories (the
    # stricter "cash + short-term investments + receivables" leaves out other liquid
    # current assets a filing prints under its own names)
    _metric("quick", "Quick ratio", r"\bquick\s+ratio\b|\bacid[- ]test\b",
            "(total current assets - inventories) / total current liabilities",
            ("current_assets", "inventory", "current_liabilities"),
            lambda g, y: (g("current_assets", y) - _optional(g, "inventory", y))
            / g("current_liabilities", y)),
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
    _metric("capital_intensity", "Capital intensity",
            r"\bcapital[- ]intens(?:ity|ive)\b|\basset\s+intensity\b",
            "total assets / revenue (assets per 1 of revenue)", ("total_assets", "revenue"),
            lambda g, y: g("total_assets", y) / g("revenue", y)),
    _metric("total_debt", "Total debt",
            # the company's debt as a whole, not a kind of debt ("which debt securities")
            r"\btotal\s+debt\b(?!\s*(?:-|to)\s*(?:equity|capital|ebitda))"
            r"|\bdebt\s+on\s+(?:its\s+|the\s+)?balance\s+sheet\b"
            r"|\b(?:its|their)\s+(?:total\s+)?debt\b(?!\s+(?:securities|investments?))",
            "long-term debt + debt due within a year", ("long_term_debt", "current_debt"),
            lambda g, y: g("long_term_debt", y) + _optional(g, "current_debt", y)),
    _metric("debt_to_equity", "Debt to equity", r"\bdebt[- ]to[- ]equity\b",
            "total liabilities / total shareholders' equity", ("total_assets", "equity"),
            lambda g, y: (g("total_assets", y) - g("equity", y)) / g("equity", y)),
)  # fmt: skip


def _optional(get: Callable[[str, int], float], key: str, year: int) -> float:
    try:
        return get(key, year)
    except LookupError:
        return 0.0
