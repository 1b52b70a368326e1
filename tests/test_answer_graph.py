"""The answer graph: retrieval that knows the asked model, and answers that cite or decline."""

from __future__ import annotations

import json
import re

from chop_rag.api import ask, ingest
from chop_rag.config import Context
from chop_rag.questions.facts import read_question
from chop_rag.questions.matching import QuestionCNM, match_question
from chop_rag.reading.documents import make_document
from tests.fakes import ScriptedChatModel, replying, sensible_reply

FILTER = "Clean the mesh filter every {weeks} weeks with warm water and let it dry fully. " * 3
TANK = "Empty the water tank when the full light shows, then refit it firmly. " * 3


def twin_manuals(context: Context) -> Context:
    ctx = context.with_overrides(continuity_mode="rules", chunk_tokens=60, chunk_overlap=0)
    docs = [
        make_document(f"m{w}", f"Coolwave {m}", "\n\n".join([FILTER.format(weeks=w), TANK]))
        for m, w in (("225B", 2), ("330C", 4))
    ]
    ingest(documents=docs, context=ctx)
    return ctx


def test_questions_are_matched_to_stored_models_without_an_llm() -> None:
    models = ["Galaxy S9", "Galaxy S9+", "Galaxy S10"]

    def matched(question: str, stored: list[str] = models) -> QuestionCNM:
        return match_question(read_question(question), stored, [])

    assert matched("battery of the Galaxy S9+?").model == "Galaxy S9+"
    assert matched("battery of the galaxy s9?").model == "Galaxy S9"
    assert matched("how do I charge my S10").model == "Galaxy S10"
    unknown = matched("filter of the Coolwave 999Z?", ["Coolwave 225B"])
    assert unknown.model is None and unknown.unknown_model == "999Z"
    assert matched("how do I clean the filter?") == matched("how do I clean the filter?", [])


def test_the_asked_models_chunks_come_first(context: Context, store, scripted) -> None:  # type: ignore[no-untyped-def]
    ctx = twin_manuals(context)
    for model in ("225B", "330C"):
        result = ask(f"How often do I clean the filter of the Coolwave {model}?", context=ctx)
        assert result["sources"][0]["model"] == f"Coolwave {model}"
        assert result["question_model"] == f"Coolwave {model}"


def test_answers_cite_only_sources_they_were_given(context: Context, store, scripted) -> None:  # type: ignore[no-untyped-def]
    ctx = twin_manuals(context)
    result = ask("How often do I clean the filter of the Coolwave 330C?", context=ctx)
    assert result["answerable"] is True
    assert result["citations"] == [1], "citation 99 does not exist and is dropped"


def test_a_model_missing_from_the_collection_is_declined_without_asking_the_llm(
    context: Context,
    store,
    scripted: ScriptedChatModel,  # type: ignore[no-untyped-def]
) -> None:
    ctx = twin_manuals(context)
    before = scripted.count("answer")
    result = ask("How often do I clean the filter of the Coolwave 999Z?", context=ctx)
    assert result["answerable"] is False
    assert "999Z" in result["answer"] and result["citations"] == []
    assert scripted.count("answer") == before


def test_filter_mode_restricts_sources_to_the_asked_model(
    context: Context, store, scripted
) -> None:  # type: ignore[no-untyped-def]
    ctx = twin_manuals(context).with_overrides(query_cnm="filter")
    result = ask("How often do I clean the filter of the Coolwave 225B?", context=ctx)
    assert {s["model"] for s in result["sources"]} == {"Coolwave 225B"}


def test_a_failing_answer_model_still_answers_in_the_sources_words_and_says_so(
    context: Context,
    store,
    scripted: ScriptedChatModel,  # type: ignore[no-untyped-def]
) -> None:
    ctx = twin_manuals(context).with_overrides(answer="lead")
    scripted.responder = replying(answer="oops")
    result = ask("How often do I clean the filter of the Coolwave 225B?", context=ctx)
    assert result["answerable"] is True and "every 2 weeks" in result["answer"]
    assert result["citations"] == [1] and "model failed" in result["answer_note"]


def test_an_empty_collection_says_so(context: Context, store, scripted) -> None:  # type: ignore[no-untyped-def]
    ingest(delete=["nothing"], context=context)  # made, nothing in it (unknown: an error)
    result = ask("anything?", context=context)
    assert result["sources"] == [] and result["answerable"] is False
    assert json.dumps(result)  # JSON-serialisable for --json and the server


def test_naming_the_only_manual_neither_boosts_nor_declines(
    context: Context,
    store,
    scripted: ScriptedChatModel,  # type: ignore[no-untyped-def]
) -> None:
    ctx = context.with_overrides(continuity_mode="rules", chunk_tokens=60, chunk_overlap=0)
    ingest(documents=[make_document("tv", "Samsung Smart TV remote", FILTER.format(weeks=3))],
           context=ctx)  # fmt: skip
    result = ask("[Samsung Smart TV remote] How often do I clean the filter?", context=ctx)
    assert result["answerable"] is True and result["citations"] == [1]
    assert result["retrieval_note"] == ""


def test_the_hnsw_candidate_list_comes_from_the_context(  # type: ignore[no-untyped-def]
    context: Context, store, scripted, monkeypatch
) -> None:
    ctx = twin_manuals(context).with_overrides(ef_search=250)
    seen: list[int] = []
    search = type(store).search

    def spy(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(kwargs["ef_search"])
        return search(self, *args, **kwargs)

    monkeypatch.setattr(type(store), "search", spy)
    result = ask("How often do I clean the filter of the Coolwave 330C?", context=ctx)
    assert set(seen) == {250} and result["sources"][0]["model"] == "Coolwave 330C"


def test_a_model_written_another_way_still_finds_its_manual(
    context: Context, store, scripted
) -> None:  # type: ignore[no-untyped-def]
    ctx = context.with_overrides(continuity_mode="rules", chunk_tokens=60, chunk_overlap=0)
    docs = [
        make_document(f"note{n}", f"Galaxy Note {n}", FILTER.format(weeks=w))
        for n, w in (("10", 2), ("10+", 4))
    ]
    ingest(documents=docs, context=ctx)
    for question, doc in (
        ("How often do I clean the filter of my Note10?", "note10"),
        ("galaxy note-10 plus: how often do I clean the filter?", "note10+"),
    ):
        result = ask(question, context=ctx)
        assert result["sources"][0]["doc_id"] == doc, question


def test_a_period_no_filing_covers_is_declined_without_asking_the_llm(
    context: Context,
    store,
    scripted: ScriptedChatModel,  # type: ignore[no-untyped-def]
) -> None:
    ctx = context.with_overrides(continuity_mode="rules", chunk_tokens=60, chunk_overlap=0)
    cover = (
        "FORM 10-K ANNUAL REPORT For the fiscal year ended June 30, {year} Commission File "
        "Number 001-1 ACME WIDGETS PLC (Exact name of registrant as specified in its charter) "
    )
    docs = [
        make_document(f"acme{y}", "annual report", cover.format(year=y) + TANK)
        for y in (2022, 2023)
    ]
    ingest(documents=docs, context=ctx)
    found = ask("What did Acme Widgets report for FY2023?", context=ctx)
    assert found["sources"][0]["doc_id"] == "acme2023"
    assert "hybrid search (filings)" in found["retrieval_note"], "filings: auto is hybrid"
    before = scripted.count("answer")
    missing = ask("What did Acme Widgets report for FY2030?", context=ctx)
    assert missing["answerable"] is False and "FY2030" in missing["answer"]
    assert scripted.count("answer") == before


def test_sources_of_a_twin_product_are_neither_used_nor_shown(
    context: Context, store, scripted
) -> None:  # type: ignore[no-untyped-def]
    ctx = twin_manuals(context)
    result = ask("How often do I clean the filter of the Coolwave 330C?", context=ctx)
    assert {s["model"] for s in result["sources"]} == {"Coolwave 330C"}
    assert [s["number"] for s in result["sources"]] == list(range(1, len(result["sources"]) + 1))
    assert "every 4 weeks" in result["answer"] and "every 2 weeks" not in result["answer"]


def test_an_answer_the_passage_does_not_back_is_left_out_and_said(
    context: Context,
    store,
    scripted: ScriptedChatModel,  # type: ignore[no-untyped-def]
) -> None:
    ctx = twin_manuals(context).with_overrides(answer="lead")
    scripted.responder = replying(
        answer=json.dumps({"answer": "Open the Settings app and tap Filter care every 6 weeks."})
    )
    result = ask("How often do I clean the filter of the Coolwave 330C?", context=ctx)
    assert "Settings" not in result["answer"] and "6 weeks" not in result["answer"]
    assert "every 4 weeks" in result["answer"], "the passage's own words answer"
    assert "not backed" in result["answer_note"]


def test_a_yes_no_question_is_answered_yes_or_no_then_the_reason(
    context: Context,
    store,
    scripted: ScriptedChatModel,  # type: ignore[no-untyped-def]
) -> None:
    ctx = twin_manuals(context)
    scripted.responder = replying(
        answer=json.dumps({"verdict": "no", "answer": "Refit it firmly."})
    )
    result = ask("Can I use the Coolwave 330C without refitting the water tank?", context=ctx)
    assert result["answer"].startswith("No. ")
    assert "Refit it firmly" in result["answer"] or "refit it firmly" in result["answer"]


def test_quote_answers_need_the_llm_only_for_a_yes_no_verdict(
    context: Context,
    store,
    scripted: ScriptedChatModel,  # type: ignore[no-untyped-def]
) -> None:
    ctx = twin_manuals(context).with_overrides(answer="quote")
    before = scripted.count("answer")
    result = ask("How often do I clean the filter of the Coolwave 330C?", context=ctx)
    assert "every 4 weeks" in result["answer"] and scripted.count("answer") == before
    verdict = ask("Is the Coolwave 330C filter cleaned every 4 weeks?", context=ctx)
    assert verdict["answer"].startswith("Yes. ") and scripted.count("answer") == before + 1


ACME_BALANCE_SHEET_HEAD = """FORM 10-K ANNUAL REPORT For the fiscal year ended December 31, 2023
Commission File Number 001-1 ACME WIDGETS PLC (Exact name of registrant as specified in its charter)

# Consolidated Balance Sheets

(in millions)
December 31,
2023   2022
Cash and cash equivalents  $ 400  $ 350
"""
BALANCE_SHEET = (
    ACME_BALANCE_SHEET_HEAD
    + """Total current assets  $ 1,500  $ 1,400
Total current liabilities  $ 1,200  $ 1,000
Total assets  $ 9,000  $ 8,600
"""
)


def acme_filing(context: Context) -> Context:
    """A filing with a balance sheet, answered in lead mode (the model may write arithmetic)."""
    ctx = context.with_overrides(
        continuity_mode="rules", chunk_tokens=400, chunk_overlap=0, answer="lead"
    )
    ingest(documents=[make_document("acme2023", "annual report", BALANCE_SHEET)], context=ctx)
    return ctx


def row_number(label: str, prompt: str) -> int:
    return next(
        int(n) for n, text in re.findall(r"^R(\d+) (.*?) \[", prompt, re.M) if text == label
    )


def test_a_figure_question_is_computed_by_code_from_the_rows_the_model_names(
    context: Context,
    store,
    scripted: ScriptedChatModel,  # type: ignore[no-untyped-def]
) -> None:
    ctx = acme_filing(context)

    def working_capital_ratio(task: str, user: str) -> str:
        if task != "figure":
            return sensible_reply(task, user)
        assets = row_number("Total current assets", user)
        debts = row_number("Total current liabilities", user)
        return json.dumps({"figures": "", "expression": f"R{assets}[2023] / R{debts}[2023]"})

    scripted.responder = working_capital_ratio
    question = "What is Acme Widgets' FY2023 working capital ratio? Round to two decimal places."
    result = ask(question, context=ctx)
    assert result["answer"].startswith("1.25, computed as Total current assets (2023) / ")
    assert "Total current liabilities (2023) 1,200 million [1]" in result["answer"]
    assert result["citations"] == [1] and "computed by chop" in result["answer_note"]


def test_arithmetic_that_does_not_evaluate_falls_back_to_the_passage_and_says_so(
    context: Context,
    store,
    scripted: ScriptedChatModel,  # type: ignore[no-untyped-def]
) -> None:
    ctx = acme_filing(context)
    scripted.responder = replying(
        figure=json.dumps({"figures": "", "expression": "current assets / current liabilities"})
    )
    result = ask("What is Acme Widgets' FY2023 working capital ratio?", context=ctx)
    assert "Total current assets" in result["answer"], "the balance sheet is quoted instead"
    assert "does not evaluate" in result["answer_note"]


def test_only_lead_mode_asks_for_arithmetic_and_only_over_tables_of_periods(
    context: Context,
    store,
    scripted: ScriptedChatModel,  # type: ignore[no-untyped-def]
) -> None:
    manuals = twin_manuals(context).with_overrides(answer="lead")
    result = ask("How many weeks between filter cleanings on the Coolwave 330C?", context=manuals)
    assert "every 4 weeks" in result["answer"] and scripted.count("figure") == 0
    quoting = acme_filing(context).with_overrides(answer="quote")
    result = ask("What is Acme Widgets' FY2023 working capital ratio?", context=quoting)
    assert "Total current assets" in result["answer"] and scripted.count("figure") == 0


def test_a_quoted_figure_answer_states_the_line_item_asked_for_first(
    context: Context,
    store,
    scripted: ScriptedChatModel,  # type: ignore[no-untyped-def]
) -> None:
    ctx = acme_filing(context).with_overrides(answer="quote")
    before = scripted.count("answer")
    question = (
        "What amount of cash and cash equivalents did Acme Widgets hold in FY2023? In billions."
    )
    result = ask(question, context=ctx)
    assert result["answer"].startswith("Cash and cash equivalents FY2023: $0.40 billion.")
    assert (
        "Cash and cash equivalents, in millions: 2023 400 (= 0.40 billion); "
        "2022 350 (= 0.35 billion) [1]. " in result["answer"]
    ), "then the row as its statement prints it"
    assert result["citations"] == [1] and scripted.count("answer") == before


LONG_BALANCE_SHEET = (
    ACME_BALANCE_SHEET_HEAD
    + """Receivables, net  310  290
Inventories  520  480
Other current assets  270  280
Total current assets  $ 1,500  $ 1,400
Property, plant and equipment, net  4,100  3,900
Goodwill  2,300  2,250
Other noncurrent assets  1,100  1,050
Total assets  $ 9,000  $ 8,600
Accounts payable  $ 610  $ 540
Accrued liabilities  340  300
Current maturities of long-term debt  250  160
Total current liabilities  $ 1,200  $ 1,000
Long-term debt  3,400  3,500
Other noncurrent liabilities  900  880
Total liabilities  5,500  5,380
Total equity  3,500  3,220
"""
)


def test_a_line_item_is_stated_from_its_statement_row_even_below_the_chunk_of_its_header(
    context: Context,
    store,
    scripted: ScriptedChatModel,  # type: ignore[no-untyped-def]
) -> None:
    ctx = context.with_overrides(
        continuity_mode="rules", chunk_tokens=70, chunk_overlap=0, answer="quote"
    )
    document = make_document("acme2023", "annual report", LONG_BALANCE_SHEET)
    ingest(documents=[document], context=ctx)
    question = "How much were Acme Widgets' total current liabilities at the end of FY2023?"
    result = ask(question, context=ctx)
    assert "Total current liabilities, in millions: 2023 1,200; 2022 1,000" in result["answer"]


def test_a_metric_reads_a_statement_on_below_a_heading_that_splits_it(
    context: Context,
    store,
    scripted: ScriptedChatModel,  # type: ignore[no-untyped-def]
) -> None:
    ctx = context.with_overrides(
        continuity_mode="rules", chunk_tokens=70, chunk_overlap=0, answer="quote"
    )
    split = LONG_BALANCE_SHEET.replace("Accounts payable", "# Liabilities\n\nAccounts payable")
    ingest(documents=[make_document("acme2023", "annual report", split)], context=ctx)
    result = ask("What is the FY2023 working capital of Acme Widgets?", context=ctx)
    assert result["answer"].startswith("Working capital FY2023: $300 million")
