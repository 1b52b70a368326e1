"""Metrics computed by code from statement rows (chop_rag.answers.formulas): the metric a question
defines or a standard one, its inputs with their periods and sources, missing inputs named.

Statements are synthetic, in the layouts 10-Ks print (a retailer's year ending in February,
a manufacturer's calendar year); the numbers are invented so every result can be checked by
hand."""

from __future__ import annotations

import pytest

from chop_rag.answers.figures import Row, table_rows
from chop_rag.answers.formulas import compute, definitions, read_metric_question, verdict
from chop_rag.questions.metric_questions import statements_needed

INCOME = """CONSOLIDATED STATEMENTS OF EARNINGS
($ in millions)
Fiscal Years Ended January 31, 2021 February 1, 2020 February 2, 2019
Revenue $ 1,000 $ 800 $ 500
Cost of sales 600 500 300
Gross profit 400 300 200
Operating income 150 100 40
Interest expense 10 10 8
Earnings before income taxes 140 90 32
Income tax expense 35 18 8
Net earnings $ 105 $ 72 $ 24
"""
BALANCE = """CONSOLIDATED BALANCE SHEETS
($ in millions)
January 31, 2021 February 1, 2020
Cash and cash equivalents $ 50 $ 40
Short-term investments 10 —
Receivables, net 100 60
Merchandise inventories 200 100
Total current assets 400 250
Property and equipment, net 300 200
Total assets 1,000 800
Accounts payable 120 80
Total current liabilities 320 200
Total shareholders' equity 500 400
"""
CASH = """CONSOLIDATED STATEMENTS OF CASH FLOWS
($ in millions)
Fiscal Years Ended January 31, 2021 February 1, 2020 February 2, 2019
Total cash provided by operating activities 180 120 60
Additions to property and equipment (70) (50) (30)
Dividends paid (42) (36) (12)
"""
ROWS = (
    table_rows(INCOME, 1, [40], "Consolidated Statements of Earnings")
    + table_rows(BALANCE, 2, [38], "Consolidated Balance Sheets")
    + table_rows(CASH, 3, [42], "Consolidated Statements of Cash Flows")
)


def value(question: str) -> float:
    computed = compute(question, ROWS)
    assert computed is not None and computed.value is not None, computed and computed.text
    return computed.value


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What is Acme's FY2021 gross margin?", 40.0),
        ("What was the operating margin in FY2020?", 12.5),
        ("What is the FY2021 net profit margin?", 10.5),
        ("What is the FY2021 current ratio?", 1.25),
        ("What is the FY2021 quick ratio?", (400 - 200) / 320),  # current assets less inventories
        ("What is the FY2021 working capital? Answer in USD millions.", 80.0),
        ("What is the FY2021 inventory turnover ratio?", 600 / 150),
        ("What is the FY2021 fixed asset turnover?", 1000 / 250),
        ("What is the FY2021 total asset turnover?", 1000 / 900),
        ("What is the FY2021 days payable outstanding?", 365 * 100 / 600),
        ("What is the FY2021 DSO?", 365 * 80 / 1000),
        ("What is FY2021 days inventory outstanding?", 365 * 150 / 600),
        ("What is the FY2021 dividend payout ratio?", 42 / 105),
        ("What is the FY2021 retention ratio?", 1 - 42 / 105),
        ("What were FY2021 capital expenditures?", 70.0),
        ("What is the FY2021 free cash flow?", 110.0),
        ("What is the FY2021 effective tax rate?", 25.0),
        ("What is the FY2021 interest coverage ratio?", 15.0),
        ("What is the FY2021 operating cash flow ratio?", 180 / 320),
        ("What is FY2021 capex as a % of revenue?", 7.0),
        ("What is the FY2021 return on assets?", 105 / 900 * 100),
        ("What was revenue growth from FY2020 to FY2021?", 25.0),
        ("What is the 2 year revenue CAGR from FY2019 to FY2021?", ((1000 / 500) ** 0.5 - 1) * 100),
        ("What is the FY2019 - FY2021 3 year average net profit margin?", (4.8 + 9.0 + 10.5) / 3),
    ],
)
def test_a_standard_metric_is_computed_from_the_statement_rows(
    question: str, expected: float
) -> None:
    assert value(question) == pytest.approx(expected, rel=1e-6)


def test_a_metric_the_question_defines_is_computed_by_its_definition() -> None:
    question = (
        "What is FY2021 days payable outstanding (DPO)? DPO is defined as: 365 * (average "
        "accounts payable between FY2020 and FY2021) / (FY2021 COGS + change in inventory "
        "between FY2020 and FY2021). Round your answer to two decimal places."
    )
    assert value(question) == pytest.approx(365 * 100 / (600 + 100))
    text = compute(question, ROWS).text  # type: ignore[union-attr]
    assert "365 * (average accounts payable" in text, "the formula is shown"
    source = "[Consolidated Balance Sheets, source 2, p. 38]"
    assert f"Accounts payable FY2020 80 million {source}" in text
    assert text.startswith("DPO FY2021: 52.14")


def test_a_definition_may_use_words_for_its_operators_and_name_other_definitions() -> None:
    ratio = "What is the FY2021 liquidity ratio? Define liquidity ratio as total current assets divided by total current liabilities."  # noqa: E501
    assert value(ratio) == pytest.approx(1.25)
    ccc = (
        "What is the FY2021 cash conversion cycle (CCC)? CCC is defined as: DIO + DSO - DPO. "
        "DIO is defined as: 365 * (average inventory between FY2020 and FY2021) / (FY2021 "
        "COGS). DSO is defined as: 365 * (average accounts receivable between FY2020 and "
        "FY2021) / (FY2021 Revenue). DPO is defined as: 365 * (average accounts payable "
        "between FY2020 and FY2021) / (FY2021 COGS)."
    )
    assert [name for name, _ in definitions(ccc)] == ["CCC", "DIO", "DSO", "DPO"]
    assert value(ccc) == pytest.approx(365 * 150 / 600 + 365 * 80 / 1000 - 365 * 100 / 600)


def test_inputs_are_shown_with_their_periods_statements_and_pages() -> None:
    computed = compute("What is the FY2021 free cash flow?", ROWS)
    assert computed is not None
    assert computed.text.startswith("Free cash flow FY2021: $110 million")
    assert "cash from operations - capital expenditures" in computed.text
    assert "Additions to property and equipment FY2021 70 million" in computed.text
    assert "p. 42" in computed.text and computed.citations == [3]


def test_a_missing_input_is_named_never_guessed() -> None:
    only_income = table_rows(INCOME, 1)
    computed = compute("What is the FY2021 inventory turnover ratio?", only_income)
    assert computed is not None and computed.value is None
    assert computed.missing == ["Inventories (FY2021)"]
    assert "cannot be computed" in computed.text and "Inventories (FY2021)" in computed.text
    beyond = compute("What is the FY2017 gross margin?", ROWS)
    assert beyond is not None and beyond.value is None and "Revenue (FY2017)" in beyond.missing


def test_questions_without_a_metric_compute_nothing() -> None:
    assert compute("What industry does Acme operate in?", ROWS) is None
    assert compute("What is the revenue?", ROWS) is None, "a line item with no year"


def test_a_metric_asked_with_no_year_is_the_latest_year_the_statement_prints() -> None:
    computed = compute("What is the gross margin?", ROWS)
    assert computed is not None and computed.values == {2021: pytest.approx(40.0)}


def test_a_trend_asked_with_no_year_reads_every_year_printed_and_each_change() -> None:
    computed = compute("Are Acme's gross margins historically consistent?", ROWS)
    assert computed is not None
    assert computed.values == {2019: 40.0, 2020: 37.5, 2021: 40.0}
    assert "FY2020 -2.5 percentage points; FY2021 +2.5 percentage points" in computed.text


@pytest.mark.parametrize(
    ("question", "said"),
    [
        ("Does Acme have an improving gross margin profile as of FY2021?", "yes"),
        ("Did Acme's operating margin decline in FY2021?", "no"),
        ("Does Acme have positive working capital based on FY2021 data?", "yes"),
        ("Has revenue increased between FY2020 and FY2021?", "yes"),
        ("Was there any drop in cash between FY2020 and FY2021?", "no"),
    ],
)
def test_a_figure_compared_decides_a_yes_no_question(question: str, said: str) -> None:
    computed = compute(question, ROWS)
    assert computed is not None and verdict(question, computed) == said


def test_a_figure_that_compares_nothing_gives_no_verdict() -> None:
    question = "Is Acme's FY2021 gross margin something analysts watch?"
    computed = compute(question, ROWS)
    assert computed is not None and verdict(question, computed) is None


def test_the_statements_a_metric_needs_are_named() -> None:
    assert statements_needed("What is the FY2021 inventory turnover?") == [
        "balance sheet", "income statement"
    ]  # fmt: skip
    assert statements_needed("What is the FY2021 free cash flow?") == ["cash flow statement"]
    assert read_metric_question("Who is the CEO in FY2021?") is None


# A real page: Corning's 10-K for 2020, its income statement and balance sheet as chop's PDF
# loader reads them (pages 70 and 72; public SEC filing), with the chunks' overlaps.
CORNING_2020 = """Consolidated Statements of Income Corning Incorporated and Subsidiary Companies

Year ended December 31,
(In millions, except per share amounts) 2020 2019 2018
Net sales $ 11,303 $ 11,503 $ 11,290
Cost of sales 7,772 7,468 6,829

Gross margin 3,531 4,035 4,461

Operating income 509 1,306 1,575

Interest expense (276)  (221)  (191)
Translated earnings contract (loss) gain, net (Note 15) (38) 248  (93)
276)  (221)  (191)
Income before income taxes 623 1,216 1,503
Provision for income taxes (Note 8) (111)  (256)  (437)

Net income attributable to Corning Incorporated $ 512 $ 960 $ 1,066

Consolidated Balance Sheets Corning Incorporated and Subsidiary Companies

December 31,
(In millions, except share and per share amounts) 2020 2019

Current assets:
Cash and cash equivalents $ 2,672 $ 2,434
Trade accounts receivable, net of doubtful accounts - $46 and $41 2,133 1,836
Inventories, net (Note 6) 2,438 2,320
Other current assets (Note 11 and 15) 761 873
Total current assets 8,004 7,463
) 2,460 1,935
Total Assets $ 30,775 $ 28,898
Current liabilities:
Accounts payable 1,174 1,587
Other accrued liabilities (Note 11 and 14) 2,437 1,923
Total current liabilities 3,767 3,521
"""


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("How liquid was Corning at the end of FY2020, by its current ratio?", 8004 / 3767),
        ("Corning's effective tax rate for fiscal 2020?", 111 / 623 * 100),
        ("What gross margin did Corning earn in FY2020?", 3531 / 11303 * 100),
        ("Could Corning cover its interest in FY2020 (interest coverage)?", 509 / 276),
        ("Corning's days inventory outstanding for FY2020?", 365 * (2438 + 2320) / 2 / 7772),
        ("Did Corning's operating margin fall from FY2019 to FY2020?",
         (509 / 11303 - 1306 / 11503) * 100),
    ],
)  # fmt: skip
def test_metrics_are_computed_from_a_real_filings_statements(
    question: str, expected: float
) -> None:
    rows = table_rows(CORNING_2020, 1, [70, 72])
    assert value_of(question, rows) == pytest.approx(expected, rel=1e-6)
    assert all(row.statement.startswith("Consolidated") for row in rows)


def value_of(question: str, rows: list[Row]) -> float:
    computed = compute(question, rows)
    assert computed is not None and computed.value is not None, computed and computed.text
    return computed.value


def test_an_answer_opens_with_the_defined_metrics_name_capitalised() -> None:
    computed = compute(
        "What is the FY2021 net working capital? Define net working capital as total current "
        "assets less total current liabilities.",
        ROWS,
    )
    assert computed is not None and computed.text.startswith("Net working capital FY2021: ")


@pytest.mark.parametrize(
    "question",
    [
        "What drove the decline in Acme's operating margin in FY2022?",
        "Why did Acme's revenue fall in FY2021?",
        "What were the reasons for the increase in Acme's inventories at the end of FY2023?",
        "Which factors contributed to the change in Acme's net income between FY2021 and FY2022?",
    ],
)
def test_a_question_about_what_caused_a_figure_asks_for_no_metric(question: str) -> None:
    """The causes are written in the MD&A, not computed from the statements."""
    assert read_metric_question(question) is None
    assert statements_needed(question) == []


def test_a_later_explain_why_does_not_make_a_metric_question_one_about_causes() -> None:
    question = (
        "Does Acme have an improving gross margin profile as of FY2023? If gross margin is not "
        "a useful metric for a company like this, then state that and explain why."
    )
    asked = read_metric_question(question)
    assert asked is not None and asked.metric is not None and asked.metric.key == "gross_margin"


@pytest.mark.parametrize(
    "question",
    [
        "Which region had the highest operating income for Acme in FY2022?",
        "Which of Acme's business segments had the lowest net revenue in Q1 2021?",
        "Which product line performed the best by revenue in FY2023?",
    ],
)
def test_a_question_about_which_member_of_a_breakdown_ranks_first_asks_for_no_metric(
    question: str,
) -> None:
    """The consolidated statement's line does not break down by region or segment."""
    assert read_metric_question(question) is None
    assert statements_needed(question) == []


def test_which_year_ranks_first_still_reads_the_line_items_own_periods() -> None:
    asked = read_metric_question(
        "Which fiscal year between FY2020 and FY2022 had the highest revenue?"
    )
    assert asked is not None and asked.item is not None and asked.item.key == "revenue"
