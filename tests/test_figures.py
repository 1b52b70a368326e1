"""Figure answers: table rows are read from filings' text, the model's arithmetic is checked
and evaluated by code, and the answer names every operand with its source."""

from __future__ import annotations

import pytest

from chop_rag.answers.figures import (
    answering_rows,
    evaluate,
    figure_answer,
    is_figure_question,
    relevant_rows,
    stated,
    table_rows,
)
from chop_rag.text.arithmetic import ExpressionError

BALANCE_SHEET_DATA = """Key Balance Sheet Data

We fund our working capital with cash from operations and short-term borrowings.

The following table presents balance sheet and working capital measures (in millions):

  June 30,   December 31,
  2023   2022
Working capital  $ 2,882  $ 2,278
Current ratio  1.7:1  1.4:1
Inventories  $ 2,757  $ 2,904
Days payable outstanding (1)   47   52
Total debt to total capital   39%  36%"""

CASH_FLOWS = """CONSOLIDATED STATEMENTS OF CASH FLOWS
(In thousands)
Year Ended December 31,
2020 2019 2018
Net income (loss) $ (1,319,907 ) $ 2,214,380 $ 583,894
Capital expenditures, net of construction payable (270,579) (739,006) (777,682)
Dividends paid — (260,000) (255,000)"""


def test_rows_are_read_under_their_period_header_with_their_unit() -> None:
    rows = table_rows(BALANCE_SHEET_DATA, source=1, pages=[34])
    inventories = next(row for row in rows if row.label == "Inventories")
    assert inventories.periods == ["2023", "2022"]
    assert inventories.values == [2757.0, 2904.0]
    assert inventories.unit == "millions"
    assert inventories.pages == [34]


def test_a_footnote_mark_belongs_to_the_label_parentheses_are_negative_a_dash_is_zero() -> None:
    rows = {row.label: row for row in table_rows(BALANCE_SHEET_DATA, 1) + table_rows(CASH_FLOWS, 2)}
    assert rows["Days payable outstanding (1)"].values == [47.0, 52.0]
    assert rows["Net income (loss)"].values == [-1319907.0, 2214380.0, 583894.0]
    assert rows["Dividends paid"].values == [0.0, -260000.0, -255000.0]  # "—": none paid
    assert rows["Total debt to total capital"].percent


def test_prose_with_a_year_in_it_is_not_a_table() -> None:
    text = "In 2022 we opened 12 stores.\nSales grew 5% in 2023 compared to 2022."
    assert table_rows(text, 1) == []


def test_the_rows_that_share_words_with_the_question_are_kept_in_table_order() -> None:
    rows = table_rows(BALANCE_SHEET_DATA, 1) + table_rows(CASH_FLOWS, 2)
    kept = relevant_rows(rows, "What were capital expenditures and net income?", limit=2)
    assert [row.label for row in kept] == [
        "Net income (loss)",
        "Capital expenditures, net of construction payable",
    ]


def test_an_expression_over_rows_is_evaluated_and_its_operands_are_named() -> None:
    rows = table_rows(CASH_FLOWS, 2)
    value, used = evaluate("(R1[2020] + R1[2019] + R1[2018]) / 3", rows)
    assert value == pytest.approx((-1319907 + 2214380 + 583894) / 3)
    assert [column for _, column in used] == ["2020", "2019", "2018"]


@pytest.mark.parametrize(
    "expression",
    ["__import__('os').system('true')", "R9[2020]", "R1[2017]", "R1[2020] ** 99", "2 + 2", "R1"],
)
def test_anything_but_arithmetic_over_the_rows_shown_is_refused(expression: str) -> None:
    with pytest.raises(ExpressionError):
        evaluate(expression, table_rows(CASH_FLOWS, 2))


def test_a_stated_figure_is_answered_with_its_label_period_unit_and_source() -> None:
    rows = table_rows(BALANCE_SHEET_DATA, 3)
    answer = figure_answer("What were inventories at the end of 2022?", "R2[2022]", rows)
    assert answer == ("Inventories (2022): 2,904 million [3].", [3])


def test_a_computed_figure_shows_its_formula_operands_and_the_decimals_asked_for() -> None:
    rows = table_rows(BALANCE_SHEET_DATA, 1) + table_rows(CASH_FLOWS, 2)
    question = "What is the change in inventories from 2022 to 2023 in percent? One decimal place."
    text, citations = figure_answer(question, "(R2[2023] - R2[2022]) / R2[2022]", rows) or ("", [])
    assert text.startswith("-5.1%, computed as (Inventories (2023) - Inventories (2022))")
    assert "Inventories (2023) 2,757 million [1]" in text
    assert citations == [1]


def test_a_count_or_ratio_in_a_table_in_millions_gets_no_unit() -> None:
    rows = table_rows(BALANCE_SHEET_DATA, 1)
    assert figure_answer("How many days payable outstanding in 2023?", "R3[2023]", rows) == (
        "Days payable outstanding (1) (2023): 47 [1].",
        [1],
    )


def test_an_expression_that_does_not_evaluate_gives_no_answer() -> None:
    rows = table_rows(CASH_FLOWS, 2)
    assert figure_answer("What is the ratio?", "R1[2020] / (R2[2020] - R2[2020])", rows) is None
    assert figure_answer("What is the ratio?", "net income / capex", rows) is None


@pytest.mark.parametrize(
    ("question", "asks"),
    [
        ("What is the FY2019 total amount of inventories for Best Buy?", True),
        ("How much has the effective tax rate of Corning changed between FY2021 and FY2022?", True),
        ("What is the FY2018 fixed asset turnover ratio for CVS Health?", True),
        ("What was Kestrel Works' capital expenditure in FY2023?", True),
        ("What was Ostrava Pharma's revenue in the second quarter of fiscal 2024?", True),
        ("What industry does AMCOR primarily operate in?", False),
        ("How do I clean the air filter?", False),
    ],
)
def test_a_figure_question_asks_for_a_quantity(question: str, asks: bool) -> None:
    assert is_figure_question(question) is asks


def test_the_rows_that_answer_share_the_questions_distinctive_words_best_first() -> None:
    rows = table_rows(BALANCE_SHEET_DATA, 1) + table_rows(CASH_FLOWS, 2)
    asked = "What is the total amount of inventories at year end? Answer in USD millions."
    assert [row.label for row in answering_rows(rows, asked)] == ["Inventories"]
    capex = "What were capital expenditures in FY2019?"
    assert answering_rows(rows, capex)[0].label.startswith("Capital expenditures")


def test_no_row_answers_when_the_question_shares_only_words_many_rows_have() -> None:
    rows = [
        row
        for text in (f"2023 2022\nTotal {item} 1 2\n" for item in ("a", "bb", "cc", "dd", "ee"))
        for row in table_rows(text + "Total other 3 4", 1)
    ]
    assert answering_rows(rows, "What is the total for the year?") == []
    assert answering_rows(table_rows(BALANCE_SHEET_DATA, 1), "How do I clean the filter?") == []


def test_a_stated_row_gives_each_period_with_its_unit_and_the_unit_the_question_asks_for() -> None:
    capex = next(row for row in table_rows(CASH_FLOWS, 2) if row.label.startswith("Capital"))
    assert stated(capex, "What was capex? Answer in USD millions.") == (
        "Consolidated Statements of Cash Flows: "
        "Capital expenditures, net of construction payable, in thousands: "
        "2020 -270,579 (= -270.58 million); 2019 -739,006 (= -739.01 million); "
        "2018 -777,682 (= -777.68 million) [2]."
    )
    inventories = next(
        row for row in table_rows(BALANCE_SHEET_DATA, 1) if row.label == "Inventories"
    )
    assert stated(inventories, "What were inventories?") == (
        "Inventories, in millions: 2023 2,757; 2022 2,904 [1]."
    )


def test_a_stated_row_names_the_statement_it_is_printed_in() -> None:
    rows = table_rows(CASH_FLOWS.replace("CONSOLIDATED STATEMENTS OF CASH FLOWS", "Cash"), 2,
                      statement="Consolidated Statements of Cash Flows")  # fmt: skip
    assert table_rows(CASH_FLOWS, 2, statement="Signature Capacity")[0].statement == (
        "Consolidated Statements of Cash Flows"
    ), "the title printed above the rows, not a mistaken heading"
    dividends = next(row for row in rows if row.label == "Dividends paid")
    assert stated(dividends) == (
        "Consolidated Statements of Cash Flows: Dividends paid, in thousands: "
        "2020 0; 2019 -260,000; 2018 -255,000 [2]."
    )


def test_a_row_of_another_line_item_that_shares_a_word_does_not_answer() -> None:
    text = "2018 2017\nAccounts receivable, net 657,206 542,273\nInventories 110,830 101,812\n"
    rows = table_rows(text, 1)
    assert answering_rows(rows, "What is the amount of accounts payable in FY2018?") == []
    asked = "What is the amount of accounts receivable in FY2018?"
    assert [row.label for row in answering_rows(rows, asked)] == ["Accounts receivable, net"]
    assert [row.label for row in answering_rows(rows, "What was inventory?")] == ["Inventories"]


def test_a_row_whose_cells_do_not_line_up_with_the_periods_is_not_stated() -> None:
    text = "2023 2022\nTotal revenues 194,579 (3) 194,582\nInventories 1,559 1,642\n"
    rows = table_rows(text, 1)
    assert answering_rows(rows, "What were total revenues in FY2023?") == []
