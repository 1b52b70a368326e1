"""Statement rows read from PDF text whose cells do not line up with their header: headers
printed over several lines, labels wrapped onto their figures, dot leaders, unlabelled
totals, note and percent columns, a dash for zero, and a 10-Q's quarter and fiscal-year
columns. The tables are written for these tests, in the shapes PDF text takes; the numbers
are invented so every result can be checked by hand."""

from __future__ import annotations

import pytest

from chop_rag.answers.formulas import compute, verdict
from chop_rag.answers.statement_rows import fiscal_columns, table_rows

# a 10-K in thousands whose header dates are printed one part a line, with dot leaders
INCOME_IN_THOUSANDS = """WIDGETCO INC.
CONSOLIDATED STATEMENTS OF INCOME
(In thousands, except per share data)

Years Ended
December 3,
2021
November 27,
2020
November 29,
2019
Revenue:
Subscription ........................................ $ 2,400,000 $ 2,000,000 $ 1,500,000
Product ............................................. 600,000 500,000 500,000
Total revenue ....................................... 3,000,000 2,500,000 2,000,000
Total operating expenses ............................ 2,250,000 2,000,000 1,700,000
Operating income .................................... 750,000 500,000 300,000
Other income (expense), net ......................... 1,200 — (3,400)
"""

# one word a line, a heading over an unlabelled total, a note column
LODGING = """LODGECO HOLDINGS
CONSOLIDATED STATEMENTS OF OPERATIONS
(In thousands)
Year Ended December 31,
Note 2022 2021
Revenues
Rooms 4 800,000 600,000
Food and beverage 4 200,000 150,000
1,000,000 750,000
Expenses
Rooms 300,000 250,000
Property
and
equipment
depreciation 90,000 80,000
Effect of exchange rates on cash and cash
equivalents (1,500) 2,500
"""

# an MD&A table with percent-change columns after the periods
SEGMENTS = """Fiscal 2023 2022
Net sales $ 4,400 $ 4,000 10 %
Operating income 440 500 (12)%
"""

# a 10-Q balance sheet: the quarter's end, the last fiscal year's end, the quarter a year ago
QUARTER_BALANCE = """Condensed Consolidated Balance Sheets
$ in millions (unaudited)
August 3, 2024 February 3, 2024 July 29, 2023
Cash and cash equivalents $ 600 $ 1,000 $ 500
Merchandise inventories 2,000 1,800 2,100
Total current assets 3,000 3,200 3,100
Total current liabilities 2,500 2,600 2,400
"""


def rows_by_label(text: str) -> dict[str, object]:
    return {row.label: row for row in table_rows(text, 1, [7])}


def test_a_header_printed_one_part_a_line_names_every_column() -> None:
    rows = {row.label: row for row in table_rows(INCOME_IN_THOUSANDS, 1, [7])}
    operating = rows["Operating income"]
    assert operating.periods == ["2021", "2020", "2019"]
    assert operating.values == [750_000.0, 500_000.0, 300_000.0]
    assert operating.unit == "thousands"
    assert operating.statement == "Consolidated Statements of Income"


def test_dot_leaders_are_not_part_of_a_label_and_a_dash_is_zero() -> None:
    rows = {row.label: row for row in table_rows(INCOME_IN_THOUSANDS, 1)}
    assert "Subscription" in rows
    assert rows["Other income (expense), net"].values == [1_200.0, 0.0, -3_400.0]


def test_a_year_over_year_change_reads_the_multi_line_header() -> None:
    computed = compute(
        "What is the year-over-year change in operating income from FY2020 to FY2021?",
        table_rows(INCOME_IN_THOUSANDS, 1),
    )
    assert computed is not None and computed.value == pytest.approx(50.0)
    assert "change +$250 million (+50.0%)" in computed.text, "an amount too, in millions"


def test_a_note_column_is_not_a_period_and_a_heading_names_its_unlabelled_total() -> None:
    rows = {row.label: row for row in table_rows(LODGING, 1)}
    assert rows["Food and beverage"].values == [200_000.0, 150_000.0]
    assert rows["Total revenues"].values == [1_000_000.0, 750_000.0]
    assert rows["Total revenues"].group == "Revenues"
    assert rows["Food and beverage"].group == "Revenues"


def test_a_label_wrapped_onto_its_figures_is_read_whole() -> None:
    rows = {row.label: row for row in table_rows(LODGING, 1)}
    assert rows["Property and equipment depreciation"].values == [90_000.0, 80_000.0]
    assert rows["Effect of exchange rates on cash and cash equivalents"].values == [
        -1_500.0,
        2_500.0,
    ]


def test_percent_change_columns_after_the_periods_are_dropped() -> None:
    rows = {row.label: row for row in table_rows(SEGMENTS, 1)}
    assert rows["Net sales"].values == [4_400.0, 4_000.0]
    assert rows["Operating income"].periods == ["2023", "2022"]
    assert not rows["Operating income"].percent


def test_capex_as_a_share_of_revenue_uses_the_unlabelled_total() -> None:
    cash_flows = """CONSOLIDATED STATEMENTS OF CASH FLOWS
(In thousands)
Year Ended December 31,
2022 2021
Net cash provided by operating activities 300,000 200,000
Purchases of land, buildings, and equipment (50,000) (30,000)
"""
    rows = table_rows(LODGING, 1) + table_rows(cash_flows, 2)
    computed = compute("What is FY2022 capex as a % of revenue?", rows)
    assert computed is not None and computed.value == pytest.approx(5.0)
    fcf = compute("What is the FY2022 free cash flow?", rows)
    assert fcf is not None and fcf.value == pytest.approx(250.0), "in millions"
    assert "Free cash flow FY2022: $250 million" in fcf.text


def test_a_ratio_of_a_table_in_millions_to_one_in_thousands_is_computed_in_one_unit() -> None:
    summary = """(in millions)
Fiscal 2022 2021
Net cash provided by operating activities $ 1,250.0 $ 1,000.0
Net cash used for investing activities (400.0) (300.0)
"""
    balance = """CONSOLIDATED BALANCE SHEETS
(In thousands)
December 31, 2022 2021
Total current assets 3,000,000 2,800,000
Total current liabilities 2,500,000 2,000,000
"""
    rows = table_rows(summary, 1) + table_rows(balance, 2)
    question = (
        "What is the FY2022 operating cash flow ratio? Operating cash flow ratio is defined "
        "as: cash from operations / total current liabilities."
    )
    computed = compute(question, rows)
    assert computed is not None and computed.value == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("header", "fiscal", "named"),
    [
        (
            "August 3, 2024 February 3, 2024 July 29, 2023",
            ["2025", "2024", "2024"],
            ["Q2 FY2025", "FY2024", "Q2 FY2024"],
        ),
        ("December 31, 2023 June 30, 2023", ["2024", "2023"], ["Q2 FY2024", "FY2023"]),
        ("March 31, 2024 December 31, 2023", ["2024", "2023"], ["Q1 FY2024", "FY2023"]),
        ("September 30, 2024 December 31, 2023", ["2024", "2023"], ["Q3 FY2024", "FY2023"]),
    ],
)
def test_a_quarter_column_is_told_from_the_fiscal_year_end_it_follows(
    header: str, fiscal: list[str], named: list[str]
) -> None:
    years = [word for word in header.split() if word.isdigit() and len(word) == 4]
    periods, columns = fiscal_columns(header, years)
    assert periods == fiscal
    assert [column.split(" (")[0] for column in columns] == named


def test_an_annual_reports_year_ends_a_few_days_apart_keep_their_years() -> None:
    assert fiscal_columns("February 3, 2024 January 28, 2023", ["2024", "2023"]) == (
        ["2024", "2023"],
        [],
    )


def test_a_change_between_a_fiscal_year_and_a_later_quarter_reads_the_right_columns() -> None:
    rows = table_rows(QUARTER_BALANCE, 1)
    question = "Was there any drop in cash and cash equivalents between FY2024 and Q2 of FY2025?"
    computed = compute(question, rows)
    assert computed is not None
    assert computed.values == {2024: 1_000.0, 2025: 600.0}
    assert "-40.0%" in computed.text and "Q2 FY2025 (August 3, 2024)" in computed.text
    assert verdict(question, computed) == "yes"


BALANCE_WITH_PARTS = """CONSOLIDATED BALANCE SHEETS
($ in millions)
As of June 30, 2024 2023
Cash and cash equivalents $ 300 $ 250
Trade receivables, net 500 450
Inventories, net
Raw materials and supplies 200 180
Work in process and finished goods 400 420
Prepaid expenses and other current assets 100 100
Total current assets 1,500 1,400
Current portion of long-term debt 50 40
Total current liabilities 1,000 1,000
Long-term debt 2,000 2,100
Total assets 6,000 5,800
"""


def test_the_quick_ratio_is_current_assets_less_inventories_summed_from_their_parts() -> None:
    computed = compute("What is the FY2024 quick ratio?", table_rows(BALANCE_WITH_PARTS, 1))
    assert computed is not None
    assert computed.value == pytest.approx((1_500 - 200 - 400) / 1_000)
    assert "Raw materials and supplies + Work in process and finished goods" in computed.text


def test_inventories_summed_on_the_balance_sheet_rank_before_a_notes_inventories_row() -> None:
    note = """Deferred tax assets
(in millions)
2024 2023
Inventories 71 65
Accrued employee costs 40 38
"""
    note = note.replace("Deferred tax assets", "Consolidated Balance Sheets")  # a note's heading
    rows = table_rows(note, 2) + table_rows(BALANCE_WITH_PARTS, 1)
    computed = compute("What is the FY2024 quick ratio?", rows)
    assert computed is not None
    assert computed.value == pytest.approx((1_500 - 200 - 400) / 1_000)


def test_a_change_in_a_balance_is_not_the_balance_whatever_heading_it_is_under() -> None:
    changes = """Consolidated Balance Sheets
(in millions)
2024 2023 2022
Accounts payable and accrued liabilities 24 (6) (5)
Inventories (9) 3 2
"""
    balance = """CONSOLIDATED BALANCE SHEETS
(in millions)
2024 2023
Accounts payable 303 255
Merchandise inventories 110 102
"""
    rows = table_rows(changes, 1) + table_rows(balance, 2)
    computed = compute("What is the year end FY2024 amount of accounts payable?", rows)
    assert computed is not None and computed.values == {2024: 303.0}


def test_total_debt_sums_both_maturities_and_states_the_change_as_an_amount() -> None:
    question = "Has the company increased its debt on balance sheet between 2024 and 2023?"
    computed = compute(question, table_rows(BALANCE_WITH_PARTS, 1))
    assert computed is not None
    assert computed.values == {2023: 2_140.0, 2024: 2_050.0}
    assert "change -$90 million" in computed.text
    assert verdict(question, computed) == "no"


def test_a_kind_of_debt_asked_about_is_not_the_companys_total_debt() -> None:
    rows = table_rows(BALANCE_WITH_PARTS, 1)
    listed = "Which debt securities are listed under the company's name in 2024?"
    assert compute(listed, rows) is None
    assert compute("Which type of debt held the largest investment in FY2024?", rows) is None


def test_capital_intensity_is_assets_per_unit_of_revenue() -> None:
    income = """CONSOLIDATED STATEMENTS OF INCOME
($ in millions)
Fiscal Years Ended June 30, 2024 2023
Net sales $ 2,000 $ 1,900
Cost of sales 1,500 1,400
"""
    rows = table_rows(BALANCE_WITH_PARTS, 1) + table_rows(income, 2)
    computed = compute("Is the company a capital intensive business based on FY2024 data?", rows)
    assert computed is not None and computed.value == pytest.approx(3.0)
