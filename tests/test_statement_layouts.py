"""Statements of companies chop was not written against, in the layouts filings print: titles
without "consolidated", units lines in their common spellings, outflows in parentheses, line
items under each of their names, and quarterly reports of fiscal years that end in June or
September. Every company and figure here is invented, so each rule is a method read from the
statement's own structure, never a company's wording."""

from __future__ import annotations

import datetime as dt
from typing import cast

import pytest

from chop_rag.answers.computed import segment_not_asked
from chop_rag.answers.formulas import compute
from chop_rag.answers.statement_rows import table_rows
from chop_rag.questions.line_items import ITEMS, rows_of_item
from chop_rag.questions.statements import statement_named
from chop_rag.state import Source
from chop_rag.text.periods import ReportPeriod

# a 10-K whose statements are titled without "consolidated", in "Millions of dollars"
HARROWGATE_INCOME = """HARROWGATE INSTRUMENTS
INCOME STATEMENTS
(Millions of dollars, except per share amounts)
Year Ended June 30, 2019 2018 2017
Sales to customers $ 8,000 $ 7,500 $ 7,000
Cost of products sold 4,800 4,600 4,300
Operating earnings 1,600 1,400 1,250
Provision for taxes on income 300 280 240
Net earnings attributable to Harrowgate Instruments 1,150 1,000 900
"""

# a cash flow statement: outflows printed in parentheses
MARLOWE_CASH_FLOWS = """Marlowe Freight Corporation
Consolidated Statement of Cash Flows
(in millions)
Fiscal years ended September 29, 2018 and September 30, 2017
2018 2017
Net cash provided by operating activities 4,200 3,900
Capital spending (1,577) (1,320)
Dividends paid (389) (350)
"""


def test_a_statement_titled_without_consolidated_is_still_that_statement() -> None:
    rows = table_rows(HARROWGATE_INCOME, 1)
    assert rows and rows[0].statement == "Income Statements"
    assert statement_named(rows[0].statement) == "income statement"
    assert rows[0].unit == "millions"


@pytest.mark.parametrize(
    ("units_line", "unit"),
    [
        ("(Millions of dollars)", "millions"),
        ("($ in thousands)", "thousands"),
        ("(Dollars in millions, except per share amounts)", "millions"),
        ("(in millions of U.S. dollars)", "millions"),
        ("(In billions)", "billions"),
        ("(in thousands, except share data)", "thousands"),
    ],
)
def test_a_units_line_is_read_in_its_common_spellings(units_line: str, unit: str) -> None:
    table = f"BALANCE SHEETS\n{units_line}\n2024 2023\nTotal assets 900 800\nTotal equity 400 350\n"
    assert {row.unit for row in table_rows(table, 1)} == {unit}


@pytest.mark.parametrize(
    ("key", "label"),
    [
        ("revenue", "Sales to customers"),
        ("revenue", "Total net sales"),
        ("revenue", "Net operating revenues"),
        ("cogs", "Cost of products sold"),
        ("cogs", "Total cost of revenue"),
        ("cogs", "Cost of sales, excluding depreciation and amortization"),
        ("operating_income", "Operating earnings"),
        ("operating_income", "Income from operations"),
        ("operating_income", "Operating profit"),
        ("net_income", "Net earnings attributable to Harrowgate Instruments"),
        ("income_tax", "Provision for taxes on income"),
        ("income_tax", "Income tax (expense)/benefit"),
        ("income_tax", "Provision for income taxes"),
        ("capex", "Capital spending"),
        ("capex", "Payments for property, plant and equipment"),
        ("capex", "Additions to property and equipment"),
        ("dividends", "Cash dividends paid"),
        ("depreciation", "Depreciation, depletion and amortization"),
    ],
)
def test_a_line_item_is_found_under_each_of_its_names(key: str, label: str) -> None:
    table = f"Statements of Income\n(in millions)\n2024 2023\n{label} 120 100\nOther 1 2\n"
    assert [row.label for row in rows_of_item(ITEMS[key], table_rows(table, 1))] == [label]


@pytest.mark.parametrize(
    ("key", "label"),
    [
        ("income_tax", "State income taxes, net of federal benefit"),
        ("income_tax", "Deferred income taxes"),
        ("revenue", "Deferred revenue"),
        ("net_income", "Net income attributable to noncontrolling interests"),
    ],
)
def test_a_row_that_only_shares_words_with_a_line_item_is_not_it(key: str, label: str) -> None:
    table = f"Statements of Income\n(in millions)\n2024 2023\n{label} 120 100\nOther 1 2\n"
    assert rows_of_item(ITEMS[key], table_rows(table, 1)) == []


def test_income_statement_items_are_read_from_a_statement_without_consolidated() -> None:
    rows = table_rows(HARROWGATE_INCOME, 1)
    margin = compute("What was the FY2019 operating margin?", rows)
    assert margin is not None and margin.value == pytest.approx(20.0)
    tax = compute("What is the FY2019 effective tax rate? Use income tax expense.", rows)
    assert tax is None or tax.missing, "no pretax income row: named missing, never guessed"


def test_an_outflow_in_parentheses_is_answered_as_the_amount_asked() -> None:
    computed = compute(
        "What is the FY2018 capital expenditure amount (in USD millions) for Marlowe Freight?",
        table_rows(MARLOWE_CASH_FLOWS, 1),
    )
    assert computed is not None
    assert computed.text.startswith("Capital expenditures FY2018: $1,577 million.")
    assert "Capital spending FY2018 1,577 million" in computed.text, "the input, then its page"


def test_an_amount_asked_in_billions_is_stated_in_billions() -> None:
    computed = compute(
        "How much did Marlowe Freight pay in dividends in FY2018? Answer in USD billions.",
        table_rows(MARLOWE_CASH_FLOWS, 1),
    )
    assert computed is not None
    assert computed.text.startswith("Cash dividends paid FY2018: $0.39 billion.")


# a 10-Q of a company whose fiscal year ends late in September (52/53 weeks)
PELLUCID_QUARTER = """PELLUCID FOODS, INC.
CONDENSED CONSOLIDATED STATEMENTS OF OPERATIONS
(Unaudited; in millions)
Three Months Ended Six Months Ended
March 30, 2024 April 1, 2023 March 30, 2024 April 1, 2023
Net sales $ 2,600 $ 2,400 $ 5,300 $ 4,900
Cost of sales 1,560 1,470 3,200 2,990
Operating income 390 330 820 700
"""

# a 10-Q of a company whose fiscal year ends June 30: the years printed bare after the date
QUILLON_QUARTER = """Quillon Packaging plc
Condensed Consolidated Statements of Income
($ in millions)
Three Months Ended December 31, 2023 2022
Six Months Ended December 31, 2023 2022
Net sales 3,100 3,000 6,200 6,100
Cost of sales 2,500 2,450 5,000 4,950
"""


@pytest.mark.parametrize(
    "asked",
    ["Q2 FY2024", "Q2'2024", "Q2 2024", "second quarter of 2024", "2024Q2", "Q2 FY24",
     "the second quarter of fiscal 2024"],
)  # fmt: skip
def test_a_quarter_in_any_spelling_reads_that_quarters_column(asked: str) -> None:
    computed = compute(
        f"What were Pellucid Foods' net sales in {asked}?", table_rows(PELLUCID_QUARTER, 1)
    )
    assert computed is not None and computed.values == {2024: 2_600.0}
    assert "Q2 FY2024 (3 months ended March 30, 2024)" in computed.text


def test_a_quarter_of_a_june_fiscal_year_is_the_year_it_ends_in() -> None:
    rows = table_rows(QUILLON_QUARTER, 1)
    assert rows[0].columns[0].startswith("Q2 FY2024 (3 months ended December 31, 2023)")
    assert rows[0].columns[2].startswith("6M FY2024")
    computed = compute("What was Quillon's gross margin in Q2 of FY2024?", rows)
    assert computed is not None and computed.value == pytest.approx(600 / 3_100 * 100)


# a fourth-quarter earnings release of a company whose fiscal year ends June 30: its table
# prints the quarter's three months alone
QUILLON_RELEASE = """Quillon Packaging plc
Adjusted EBITDA
($ million)
Three Months Ended June 30, 2023 2022
Net sales 3,673 3,909
Adjusted EBITDA 540 609
"""


def test_three_month_columns_alone_are_the_quarter_their_report_is_of() -> None:
    """A fourth-quarter release's "Three Months Ended June 30" is Q4, not Q1 (as in a first
    quarter's 10-Q, the only report whose longest span is three months)."""
    report = ReportPeriod(quarter=4, fiscal_year=2023, ended=dt.date(2023, 6, 30))
    fourth = table_rows(QUILLON_RELEASE, 1, report=report)
    assert fourth[0].columns[0].startswith("Q4 FY2023 (3 months ended June 30, 2023)")
    assert fourth[0].columns[1].startswith("Q4 FY2022 (3 months ended June 30, 2022)")
    computed = compute("What were Quillon's net sales in Q4 FY2023?", fourth)
    assert computed is not None and computed.values == {2023: 3_673.0}
    first = table_rows(QUILLON_RELEASE.replace("June 30", "September 30"), 1,
                       report=ReportPeriod(1, 2024, dt.date(2023, 9, 30)))  # fmt: skip
    assert first[0].columns[0].startswith("Q1 FY2024 (3 months ended September 30, 2023)")


def test_a_reports_quarter_is_not_given_to_a_table_of_another_quarter() -> None:
    """A fourth-quarter release that also prints the third quarter's three months: that table
    is not the fourth quarter; nor is any where the card did not read the quarter's last day."""
    third = QUILLON_RELEASE.replace("June 30", "March 31")
    rows = table_rows(third, 1, report=ReportPeriod(4, 2023, dt.date(2023, 6, 30)))
    assert not rows[0].columns[0].startswith("Q4")
    undated = table_rows(QUILLON_RELEASE, 1, report=ReportPeriod(4, 2023))
    assert undated[0].columns == table_rows(QUILLON_RELEASE, 1)[0].columns


def test_a_fiscal_year_is_never_answered_from_a_quarters_column() -> None:
    computed = compute(
        "What were Pellucid Foods' FY2024 net sales?", table_rows(PELLUCID_QUARTER, 1)
    )
    assert computed is not None and computed.value is None
    assert computed.missing == ["Revenue (FY2024)"]


def test_a_quarter_asked_against_the_same_quarter_a_year_before() -> None:
    computed = compute(
        "What was the growth in net sales between Q2 FY2023 and Q2 FY2024?",
        table_rows(PELLUCID_QUARTER, 1),
    )
    assert computed is not None and computed.values == {2023: 2_400.0, 2024: 2_600.0}


@pytest.mark.parametrize(
    ("name", "title", "is_it"),
    [
        ("income statement", "INCOME STATEMENTS", True),
        ("cash flow statement", "CASH FLOWS STATEMENTS", True),
        ("balance sheet", "Balance Sheets (unaudited)", True),
        ("income statement", "Condensed Consolidated Statements of Operations", True),
        ("balance sheet", "Key balance sheet data", False),
        ("income statement", "Our income statements reflect the change in estimate", False),
        ("balance sheet", "Balance Sheet (e)", False),  # a note table's column, footnote (e)
    ],
)
def test_a_statements_chunk_is_told_by_its_title_with_or_without_consolidated(
    name: str, title: str, is_it: bool
) -> None:
    import re

    from chop_rag.questions.statements import STATEMENTS

    statement = next(s for s in STATEMENTS if s.name == name)
    as_heading = as_opening = False
    for alone in (False, True):
        heading, opening = statement.titled(alone)
        as_heading |= bool(re.search(heading.replace("[\\s\\u00a0]", r"\s"), title, re.I))
        text = f"{title}\n(in millions)"
        # PostgreSQL's "(?c)": the pattern is case-sensitive whatever the operator
        cased = opening.startswith("(?c)")
        opening = opening.removeprefix("(?c)").replace("[\\s\\u00a0]", r"\s")
        as_opening |= bool(re.search(opening, text, 0 if cased else re.I))
    assert as_heading == is_it and as_opening == is_it


def test_a_flow_restated_on_another_statement_ranks_after_a_table_of_unknown_title() -> None:
    cash_flows = """Statements of Cash Flows
(in thousands)
2017 2016 2015
Net income 1,300,000 1,250,000 1,100,000
Depreciation 400,000 380,000 350,000
"""
    summary = """Selected financial data
(in millions)
2017 2016
Net revenues 9,000 8,500
Net income 1,250 1,200
"""
    rows = table_rows(cash_flows, 1) + table_rows(summary, 2)
    computed = compute("What was the FY2017 net income?", rows)
    assert computed is not None and computed.values == {2017: 1_250.0}


def test_a_metric_the_filing_prints_is_read_where_its_inputs_are_not_found() -> None:
    discussion = """Income taxes
(in millions)
2024 2023
Provision for income taxes (410) (390)
Effective tax rate 23.0% 20.0%
"""
    computed = compute(
        "How much has the effective tax rate changed between FY2023 and FY2024?",
        table_rows(discussion, 1),
    )
    assert computed is not None and computed.values == {2023: 20.0, 2024: 23.0}
    assert "change +3.0 percentage points" in computed.text


# two rows the synonym table reads as revenue, on one statement, stating different figures
TWO_REVENUES = """Consolidated Statements of Operations
(in millions)
2024 2023
Net sales 8,500 8,000
Total revenues 9,000 8,400
Operating income 900 800
"""


def test_rows_the_rules_rank_alike_are_chosen_by_the_model_and_code_computes() -> None:
    shown: list[list[str]] = []

    def model(item: object, period: str, rows: object) -> int | None:
        shown.append([row.label for row in rows])  # type: ignore[attr-defined]
        return 1

    computed = compute("What was the FY2024 operating margin?", table_rows(TWO_REVENUES, 1), model)
    assert shown == [["Net sales", "Total revenues"]], "only the candidate rows are shown"
    assert computed is not None and computed.value == pytest.approx(10.0)
    assert 'the local model chose "Total revenues"' in computed.text


@pytest.mark.parametrize("reply", [None, 7])
def test_no_valid_choice_falls_back_to_the_first_row_and_says_so(reply: int | None) -> None:
    computed = compute(
        "What was the FY2024 operating margin?",
        table_rows(TWO_REVENUES, 1),
        lambda item, period, rows: reply,
    )
    assert computed is not None and computed.value == pytest.approx(900 / 8_500 * 100)
    assert 'the first as the statement prints it, "Net sales", was taken' in computed.text


def test_the_model_is_not_asked_where_the_rules_decide() -> None:
    def model(item: object, period: str, rows: object) -> int | None:
        raise AssertionError("asked")

    computed = compute(
        "What was the FY2019 operating margin?", table_rows(HARROWGATE_INCOME, 1), model
    )
    assert computed is not None and computed.value == pytest.approx(20.0)


def test_the_row_choice_prompt_shows_the_rows_and_names_the_item() -> None:
    from chop_rag import prompts
    from chop_rag.answers.row_choice import rows_listed

    rows = table_rows(TWO_REVENUES, 1)[:2]
    messages = prompts.render(
        "choose_row", rows=rows_listed(rows), question="Q?", item="Revenue", period="FY2024"
    )
    text = str(messages[-1].content)
    assert "R1 Net sales, in millions: 2024 8,500; 2023 8,000" in text
    assert "R2 Total revenues" in text and "Line item: Revenue, FY2024" in text


@pytest.mark.parametrize("ended", ["March 30, 2024", "30 March 2024"])
def test_a_quarter_asked_by_the_day_it_ended_reads_that_column(ended: str) -> None:
    computed = compute(
        f"What were Pellucid Foods' net sales for the quarter ended {ended}?",
        table_rows(PELLUCID_QUARTER, 1),
    )
    assert computed is not None and computed.value == 2_600.0
    assert computed.text.startswith("Revenue Q2 FY2024: $2,600 million.")


# an earnings release of a retailer whose 53-week year ends early February: weeks in words
LINDQVIST_RELEASE = """Lindqvist Home Stores, Inc.
Consolidated Statements of Income
(In thousands)
Fourteen Weeks Ended Thirteen Weeks Ended Fifty-Three Weeks Ended Fifty-Two Weeks Ended
February 3, 2024 January 28, 2023 February 3, 2024 January 28, 2023
Net sales 3,500,000 3,200,000 11,000,000 10,200,000
Operating income 490,000 430,000 1,650,000 1,500,000
"""


def test_weeks_written_in_words_name_a_53_week_years_fourth_quarter_and_year() -> None:
    rows = table_rows(LINDQVIST_RELEASE, 1)
    # a year is named by the year it ends in (chop_rag.text.periods.fiscal_year_ending)
    assert [c.split(" (")[0] for c in rows[0].columns] == [
        "Q4 FY2024", "Q4 FY2023", "FY2024", "FY2023"
    ]  # fmt: skip
    year = compute("What was Lindqvist's FY2024 operating margin?", rows)
    assert year is not None and year.value == pytest.approx(15.0)
    quarter = compute("What was Lindqvist's operating margin in Q4 FY2024?", rows)
    assert quarter is not None and quarter.value == pytest.approx(14.0)


def test_a_long_label_wrapped_onto_its_figures_is_one_row() -> None:
    cash_flows = """Statements of Cash Flows
(in millions)
2023 2022
Net cash provided by operating activities 1,824 3,252
Investing activities
Additions to property and equipment, net of $35 and $46, respectively, of non-cash capital
expenditures (930) (737)
"""
    computed = compute(
        "What was Brightwell's capital expenditure in FY2023?", table_rows(cash_flows, 1)
    )
    assert computed is not None
    assert computed.text.startswith("Capital expenditures FY2023: $930 million.")


def test_a_row_whose_label_a_chunk_boundary_cut_off_is_not_its_groups_total() -> None:
    """A chunk can open inside a row's leader dots: the row is the chunk before's, and its
    figures are not the "Total current liabilities" of the heading above."""
    chunk = """December 3, 2015 November 28, 2014
Current liabilities:
............................... $ 93,307 $ 68,377
Accrued expenses......................... 678,364 683,866
Total current liabilities........ 2,213,556 2,494,435
"""
    rows = {row.label: row.values for row in table_rows(chunk, 1)}
    assert "Current liabilities" not in rows and "Total current liabilities" in rows
    assert rows["Total current liabilities"][0] == 2_213_556.0


def _under(*headings: str) -> Source:
    return cast(Source, {"metadata": {"headings": list(headings)}})


def test_a_segments_table_is_not_read_for_a_figure_asked_of_the_company() -> None:
    """ASC 280 has each segment's net sales printed under its name: the company's revenue
    read there is the segment's."""
    asked = "How much did Acme's revenue grow in FY2023?"
    for segment in ("Item 7. MD&A", "Item 7. MD&A > Flexibles Segment"):
        assert segment_not_asked(_under(segment, "Flexibles Segment"), asked)
    assert segment_not_asked(_under("Segment Results of Operations"), asked)
    path = "PART II > Item 7. Management's Discussion and Analysis > Flexibles Segment"
    assert segment_not_asked(_under(path), f"{asked} And its costs?"), (
        "its path's words are not its name"
    )
    assert not segment_not_asked(_under("Item 7. MD&A", "Results of Operations"), asked)
    assert not segment_not_asked(_under(), asked), "a chunk under no heading is read"


def test_a_segments_table_is_read_where_the_question_asks_about_it() -> None:
    flexibles = _under("Item 7. MD&A", "Flexibles Segment")
    assert not segment_not_asked(flexibles, "What were Acme's Flexibles net sales in FY2023?")
    assert not segment_not_asked(flexibles, "Which segment had the highest net sales in FY2023?")
