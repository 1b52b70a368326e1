"""A question that names a financial statement means the statement's page, and so does one that
asks for a metric printed there: which statements a question names or needs, which chunks are
those statements, and that their best chunks come first."""

from __future__ import annotations

import numpy as np
import pytest

from chop_rag.api import ingest
from chop_rag.config import Context
from chop_rag.models.construction import get_embedder
from chop_rag.questions.facts import read_question
from chop_rag.questions.statements import (
    BUSINESS_DESCRIPTION,
    RECONCILIATION,
    TitledPart,
    named_statements,
)
from chop_rag.reading.documents import SourceDocument, Span, make_document
from chop_rag.retrieval.retrieve import retrieve_for_question, statement_hits, statements_first
from chop_rag.store import ChunkRow, DocumentRecord, Hit, SearchFilter, Store


@pytest.mark.parametrize(
    ("question", "named"),
    [
        ("Based on the balance sheet, what were inventories at year end?", ["balance sheet"]),
        ("Using the statement of financial position, what is the current ratio?",
         ["balance sheet"]),
        ("From the P&L statement and the balance sheet, what is asset turnover?",
         ["income statement", "balance sheet"]),
        ("Please use the statement of cash flows and the statement of income.",
         ["cash flow statement", "income statement"]),
        ("What does the consolidated statement of operations say about revenue?",
         ["income statement"]),
        ("Which items of the statement of shareholders' equity changed?", ["statement of equity"]),
        ("What was cash flow from operations in FY2022?", []),
        ("What drove other comprehensive income in the statement of comprehensive income?", []),
        ("How do I clean the air filter of the Coolwave 330C?", []),
    ],
)  # fmt: skip
def test_a_question_names_the_statements_it_writes_in_any_of_their_names(
    question: str, named: list[str]
) -> None:
    assert [s.name for s in named_statements(question)] == named


def hit(id: int, score: float) -> Hit:
    return Hit(id=id, doc_id="10-K", doc_title="10-K", chunk_index=id, text="", prefix="",
               category=None, nouns=[], model=None, cnm_source="heading", char_start=0,
               char_end=0, score=score, metadata={})  # fmt: skip


def test_the_named_statements_best_chunks_come_first_and_the_rest_keep_their_order() -> None:
    ranked = [hit(1, 0.05), hit(2, 0.04), hit(3, 0.03), hit(4, 0.02), hit(5, 0.01)]
    balance_sheet = [hit(10, 0.03), hit(11, 0.02), hit(12, 0.01)]
    first = statements_first(ranked, [balance_sheet], k=5)
    assert [h.id for h in first] == [10, 11, 1, 2, 3]
    assert first[1].score > first[2].score, "scored above every other hit"


def test_two_named_statements_share_the_leading_places() -> None:
    ranked = [hit(1, 0.05), hit(2, 0.04), hit(3, 0.03)]
    income, cash_flows = [hit(10, 0.03), hit(11, 0.02)], [hit(20, 0.025), hit(21, 0.01)]
    first = statements_first(ranked, [income, cash_flows], k=4)
    assert [h.id for h in first] == [10, 20, 1, 2]


def test_a_statement_that_is_not_found_changes_nothing() -> None:
    ranked = [hit(1, 0.05), hit(2, 0.04)]
    assert statements_first(ranked, [[]], k=2) == ranked


DIM = 4


def chunk(index: int, text: str, headings: list[str]) -> ChunkRow:
    vector = np.ones(DIM, dtype=np.float32) / 2
    return ChunkRow(doc_id="10-K", doc_title="10-K", chunk_index=index, text=text, prefix="",
                    category=None, nouns=[], model=None, cnm_source="heading",
                    continuity="first", embedding_key=f"k{index}", char_start=index,
                    char_end=index + 1, embedding=vector,
                    metadata={"headings": headings})  # fmt: skip


def titled_chunks(
    store: Store, context: Context, rows: list[ChunkRow], part: TitledPart
) -> list[int]:
    """The chunks of a filing made of ``rows`` that ``part`` is found in by its printed title."""
    store.ensure_collection(context.collection, DIM)
    record = DocumentRecord(
        doc_id="10-K", title="10-K", source="10-K", fingerprint="h", chunk_count=len(rows)
    )
    store.replace_document(context.collection, record, rows)
    where = SearchFilter(doc_ids=("10-K",), titled=part.titled())
    found = store.search(context.collection, np.ones(DIM) / 2, 10, where=where)
    return sorted(h.chunk_index for h in found)


def test_a_title_printed_alone_is_looked_for_only_where_the_consolidated_one_is_not(
    store: Store, context: Context
) -> None:
    """ "Income Statement (In thousand)" heads a subsidiary's summary in the MD&A; the filing's
    own statement is the consolidated one. A filing that never writes "consolidated" is still
    read by its title alone."""
    collection = context.collection
    store.ensure_collection(collection, DIM)
    rows = [
        chunk(0, "Income Statement (In thousand)\nNet revenues $ 3,586,846", ["Item 7. MD&A"]),
        chunk(1, "Revenues $ 5,162,082", ["Item 8", "Consolidated Statements of Operations"]),
    ]
    record = DocumentRecord(doc_id="10-K", title="10-K", source="10-K", fingerprint="h",
                            chunk_count=2)  # fmt: skip
    store.replace_document(collection, record, rows)
    (income,) = named_statements("based on the income statement")
    found = statement_hits(store, context, income, ["10-K"], np.ones(DIM) / 2, 10, None)
    assert [h.chunk_index for h in found] == [1]
    store.replace_document(collection, record, rows[:1])
    found = statement_hits(store, context, income, ["10-K"], np.ones(DIM) / 2, 10, None)
    assert [h.chunk_index for h in found] == [0], "no consolidated statement: the title alone"


def test_a_statements_chunks_are_found_by_their_heading_or_their_opening_line(
    store: Store, context: Context
) -> None:
    item8 = "PART II > Item 8. Financial Statements and Supplementary Data"
    rows = [
        chunk(0, "Assets\nCash $ 1,980", [item8, "Consolidated Balance Sheets"]),
        chunk(
            1, "Table of Contents\n\nACME INC\nCONSOLIDATED BALANCE SHEETS\n(In millions)", [item8]
        ),
        chunk(2, "Working capital $ 4,237", ["Item 7. MD&A", "Key Balance Sheet Data"]),
        chunk(3, "Amounts recognized in the consolidated balance sheets consist of:", [item8]),
        chunk(4, "Selected data", ["Item 6", "Selected Consolidated Balance Sheet Data"]),
        chunk(5, "Revenue $ 11,303", [item8, "Consolidated Statements of Operations"]),
        chunk(6, "Index\n\nConsolidated\u00a0Balance\u00a0Sheets Acme and Subsidiaries", [item8]),
        chunk(7, "Index to Financial Statements\nConsolidated Balance Sheets 72\n", [item8]),
        chunk(8, "Consolidated balance sheets: Other assets $ 1,025\n", [item8]),
        chunk(9, "Consolidated Balance Sheets as of December 31, 2020\nAssets", [item8]),
        chunk(10, "Accounts receivable are presented separately in the\nconsolidated balance "
                  "sheets. We maintain allowances for credit losses", ["Item 7. MD&A"]),
    ]  # fmt: skip
    (balance_sheet,) = named_statements("based on the balance sheet")
    found = titled_chunks(store, context, rows, balance_sheet)
    assert found == [0, 1, 6, 9], "not an index line, not a row, not a sentence the PDF wrapped"


def test_a_non_gaap_reconciliation_is_found_by_what_its_title_reconciles(
    store: Store, context: Context
) -> None:
    """The table Regulation G requires beside a non-GAAP measure, however the release titles
    it; not a reconciliation of the tax rate, nor a table that only uses the measure."""
    release = "ACME REPORTS FOURTH QUARTER RESULTS"
    rows = [
        chunk(0, "Page 14 of 15\nACME INC AND SUBSIDIARIES\nRECONCILIATION OF NET INCOME "
                 "ATTRIBUTABLE TO ACME TO ADJUSTED EBITDAR\n(In thousands)", [release]),
        chunk(1, "Components of Fiscal 2023 Net Sales growth\nVolume % (7)",
              [release, "Recon of Non-GAAP Measures"]),
        chunk(2, "Adjusted EPS\nThe following table reconciles diluted EPS to Adjusted EPS",
              [release]),
        chunk(3, "Reconciliation of the statutory tax rate to the effective tax rate", ["Notes"]),
        chunk(4, "Adjusted EBITDA was $609 million, up 4% on a comparable basis.", [release]),
        chunk(5, "Net sales $ 14,694", [release, "Consolidated Statements of Income"]),
    ]  # fmt: skip
    assert titled_chunks(store, context, rows, RECONCILIATION) == [0, 1, 2]


def test_a_10ks_business_description_is_found_by_its_opening(
    store: Store, context: Context
) -> None:
    """Item 1's opening, where the company says what it is, however the PDF gave its title;
    not the table of contents, not Item 1A's risk factors, not Item 1's later sections."""
    rows = [
        chunk(0, "TABLE OF CONTENTS\nPART I 4\nItem 1. Business. 4\nItem 1A. Risk Factors. 8",
              ["ACME INC > DOCUMENTS INCORPORATED BY REFERENCE"]),
        chunk(1, "PART I\n\nItem 1. - Business\n\nThe Company\n\nAcme is a global leader in "
                 "packaging.", ["PART I > Item 1. - Business > The Company"]),
        chunk(2, "Competition\nThe packaging industry is competitive.",
              ["PART I > Item 1. - Business > Competition"]),
        chunk(3, "ITEM 1A. RISK FACTORS\nOur industry is cyclical.", ["PART I > Item 1A."]),
        chunk(4, "Unless the context otherwise requires, we means Acme.", ["Item 1. Business."]),
    ]  # fmt: skip
    assert titled_chunks(store, context, rows, BUSINESS_DESCRIPTION) == [1, 4]


@pytest.mark.parametrize(
    ("question", "about"),
    [
        ("What industry does AMCOR primarily operate in?", True),
        ("What does Acme Widgets sell, and to whom?", True),
        ("Describe the nature of Verdant Foods' business.", True),
        ("Which business model does the company follow?", True),
        ("What was Acme's operating income in FY2022?", False),
        ("What industry risks did Acme's 10-K disclose?", False),
        ("In what sector is Verdant Foods?", True),
        ("Which countries does Acme mainly operate in?", False),
        ("Did Acme's revenue grow in the industrial segment?", False),
    ],
)  # fmt: skip
def test_a_question_about_what_a_company_does_is_read_as_one(question: str, about: bool) -> None:
    assert read_question(question).about_business is about


@pytest.mark.parametrize(
    ("question", "reconciled"),
    [
        ("What was MGM's interest coverage ratio using FY2022 Adjusted EBIT?", True),
        ("What were Acme's non-GAAP earnings per share in Q3 2023?", True),
        ("How much did sales grow in FY2023 if we exclude the impact of FX movements?", True),
        ("What was organic growth in the Americas in 2022?", True),
        ("What was Acme's operating income in FY2022?", False),
        ("What is the FY2021 unadjusted operating income margin?", False),
    ],
)  # fmt: skip
def test_a_question_about_a_non_gaap_measure_is_read_as_one(
    question: str, reconciled: bool
) -> None:
    assert read_question(question).release_measure is reconciled


@pytest.mark.parametrize(
    ("question", "needed"),
    [
        ("Has Acme's quick ratio improved or declined between FY2023 and FY2022?",
         ["balance sheet"]),
        ("Does Acme have positive working capital based on FY2022 data?", ["balance sheet"]),
        ("Does Acme have an improving gross margin profile as of FY2023?", ["income statement"]),
        ("Are Acme's gross margins historically consistent?", ["income statement"]),
        ("What was Acme's FY2021 capital expenditure?", ["cash flow statement"]),
        ("What is Acme's FY2022 inventory turnover?", ["balance sheet", "income statement"]),
        ("What industry does Acme primarily operate in?", []),
        ("How often should I clean the air filter of the Coolwave 330C?", []),
    ],
)  # fmt: skip
def test_a_metric_question_needs_the_statements_that_print_its_inputs(
    question: str, needed: list[str]
) -> None:
    facts = read_question(question)
    assert facts.statements == [], "it names no statement"
    assert [s.name for s in facts.statements_needed] == needed


ACME_10K = """FORM 10-K ANNUAL REPORT For the fiscal year ended December 31, 2023
Commission File Number 001-1 ACME WIDGETS PLC (Exact name of registrant as specified in its charter)

LIQUIDITY AND CAPITAL RESOURCES

Our liquidity, our quick ratio and our working capital are strong: we manage the quick ratio,
the current ratio and liquidity closely, and we expect the quick ratio to improve as we collect
receivables faster and hold less inventory. Liquidity, the quick ratio and working capital are
the measures our treasury reports to the board each quarter, beside the current ratio.

CONSOLIDATED BALANCE SHEETS

(in millions)
December 31,
2023   2022
Cash and cash equivalents  $ 400  $ 350
Inventories  520  480
Total current assets  $ 1,500  $ 1,400
Total current liabilities  $ 1,200  $ 1,000
"""


def test_a_metric_question_about_a_filing_gets_the_statement_printing_its_inputs_first(
    context: Context,
    store: Store,
    scripted: object,
) -> None:
    """The MD&A that talks about the quick ratio embeds closer to the question than the page of
    figures it is computed from; the balance sheet's chunk still comes first."""
    ctx = context.with_overrides(continuity_mode="rules", chunk_tokens=70, chunk_overlap=0)

    def filing(doc_id: str, title: str, text: str) -> SourceDocument:
        """The text under its two headings, as the PDF reader marks them."""
        sheet = text.index("CONSOLIDATED BALANCE SHEETS")
        spans: list[Span] = [
            {"start": 0, "end": sheet, "meta": {"heading": "Item 7. MD&A > Liquidity"}},
            {"start": sheet, "end": len(text),
             "meta": {"heading": "Item 8 > Consolidated Balance Sheets"}},
        ]  # fmt: skip
        return make_document(doc_id, title, text, spans=spans)

    older = ACME_10K.replace("2023", "2021").replace("2022", "2020")
    documents = [filing("acme2023", "annual report", ACME_10K),
                 filing("acme2021", "annual report 2021", older)]  # fmt: skip
    ingest(documents=documents, context=ctx)
    question = "Has Acme Widgets' quick ratio improved or declined between FY2023 and FY2022?"
    found = retrieve_for_question(ctx, store, question, get_embedder(ctx))
    assert "Total current assets" in found.hits[0].text
    assert "balance sheet first" in found.note


ACME_RELEASE = """ACME WIDGETS PLC REPORTS FOURTH QUARTER AND FISCAL 2023 RESULTS
Exhibit 99.1 Earnings release for the fiscal year ended December 31, 2023

HIGHLIGHTS

Adjusted EBIT grew again: adjusted EBIT, adjusted EBIT margin and adjusted EBIT per share are
the measures we manage by, and adjusted EBIT rose on higher volumes. We expect adjusted EBIT to
grow next year, and adjusted EBIT remains the measure our board reviews with adjusted EBIT margin.

RECONCILIATION OF NET INCOME TO ADJUSTED EBIT
(in millions)
Net income  $ 300
Income tax expense  90
Interest expense  60
Restructuring  25
Total  $ 475
"""


def test_a_non_gaap_question_about_a_release_gets_the_reconciliation_first(
    context: Context,
    store: Store,
    scripted: object,
) -> None:
    """The highlights that talk about adjusted EBIT embed closer to the question than the table
    that reconciles it; the table still comes first."""
    ctx = context.with_overrides(continuity_mode="rules", chunk_tokens=70, chunk_overlap=0)
    table = ACME_RELEASE.index("RECONCILIATION")
    spans: list[Span] = [
        {"start": 0, "end": table, "meta": {"heading": "Highlights"}},
        {"start": table, "end": len(ACME_RELEASE), "meta": {"heading": "Financial tables"}},
    ]
    release = make_document("acme-q4", "Acme Widgets earnings release", ACME_RELEASE, spans=spans)
    ingest(documents=[release], context=ctx)
    question = "What was Acme Widgets' adjusted EBIT for FY2023?"
    found = retrieve_for_question(ctx, store, question, get_embedder(ctx))
    assert "Restructuring" in found.hits[0].text
    assert "non-GAAP reconciliation first" in found.note
