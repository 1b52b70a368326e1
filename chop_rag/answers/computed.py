"""Figures computed by code, not written by the model: a metric over a filing's statement
rows (chop_rag.answers.formulas), or, with CHOP_ANSWER=lead, arithmetic the model writes over
table rows and code evaluates (chop_rag.answers.figures). What the answer path's compute_figures
node does; when nothing can be computed it says why, and the answer quotes instead."""

from __future__ import annotations

import re
from typing import Any

import chop_rag.prompts as prompts
from chop_rag.answers.answering import heading_path, is_yes_no_question
from chop_rag.answers.figures import (
    FigureReply,
    Row,
    figure_answer,
    has_figure_lines,
    is_figure_question,
    relevant_rows,
    stated,
    table_rows,
)
from chop_rag.answers.formulas import compute
from chop_rag.answers.formulas import verdict as figure_verdict
from chop_rag.answers.sections import SectionReader, to_source
from chop_rag.config import Context
from chop_rag.models.construction import get_embedder
from chop_rag.models.embedders import embed_queries
from chop_rag.models.llm import structured_call
from chop_rag.questions.metric_questions import statements_needed
from chop_rag.questions.statements import STATEMENTS
from chop_rag.retrieval.retrieve import statement_hits
from chop_rag.state import Source, StatedFigure
from chop_rag.store import Store

# chunks above a table's continuation that may hold its header: a statement with dot leaders
# ("Accrued expenses........ 678,364") spans several chunks
HEADER_WINDOW = 12
STATEMENT_CHUNKS = 5  # of each statement a metric needs: its best chunks, read as sections
# a segment's part of a filing ("Flexibles Segment", "Segment Results of Operations"; ASC 280
# has each segment's net sales and profit reported under its name)
_SEGMENT = re.compile(r"\bsegments?\b", re.IGNORECASE)


def wants_figures(ctx: Context, question: str, resolution: dict[str, Any]) -> bool:
    """Whether code may compute the answer: a metric or yes/no question about filings
    (quote mode), or any figure question that is not yes/no (lead mode)."""
    yes_no = is_yes_no_question(question)
    if ctx.answer == "quote":
        filings = bool(resolution.get("filings"))
        return filings and (yes_no or is_figure_question(question))
    return not yes_no and is_figure_question(question)


def compute_answer(
    ctx: Context,
    store: Store,
    question: str,
    resolution: dict[str, Any],
    sources: list[Source],
    sections: SectionReader,
) -> dict[str, Any]:
    """The answer code computes, as the graph's update: an ``answer`` when it computed one;
    else what the quote needs to say instead (``figure_note``: what could not be computed,
    ``stated_figures``: rows of the line items asked for, ``figure_fallback``: why)."""
    if ctx.answer == "quote":
        return _metric_answer(ctx, store, question, resolution, sources, sections)
    rows = relevant_rows(rows_of(sources, sections), question)
    if not rows:
        return {}
    figure = answer_from_rows(ctx, store, question, rows)
    return figure if "answer" in figure else {"figure_fallback": figure}


def _metric_answer(
    ctx: Context,
    store: Store,
    question: str,
    resolution: dict[str, Any],
    sources: list[Source],
    sections: SectionReader,
) -> dict[str, Any]:
    extra = statement_sources(ctx, store, question, resolution, len(sources))
    company = [source for source in sources if not segment_not_asked(source, question)]
    rows = rows_of(extra, sections, whole=True) + rows_of(company, sections, near=True)
    # rows the rules rank alike keep the statement's order: on FinanceBench dev the local
    # model's pick (chop_rag.answers.row_choice) took a per-share row for net income and a
    # guarantor column's total, so it is not asked by default
    computed = compute(question, rows)
    if computed is None:
        return {}
    if computed.plain:
        # a line item asked for itself: the figure in the unit and sign asked opens the quote,
        # then the statement row it was read from and the rows the question names
        opening = computed.text if computed.value is not None else ""
        return {"stated_figures": stated_figures(computed.rows, question), "figure_note": opening}
    if computed.value is None:
        return {"figure_note": computed.text}  # what could not be computed, and what was missing
    said = figure_verdict(question, computed) if is_yes_no_question(question) else None
    opening = {"yes": "Yes. ", "no": "No. "}.get(said or "", "")
    return {
        "answer": opening + computed.text,
        "answerable": True,
        "citations": computed.citations,
        "sources": [*sources, *extra] if extra else sources,
        "answer_note": "computed by chop from the statements' rows (chop_rag.answers.formulas)",
        "stats": {"answer_figures": 1.0},
    }


def segment_not_asked(source: Source, question: str) -> bool:
    """Whether the source's section is a segment's that the question does not ask about: its
    "Net sales" is the segment's, and a metric asked of the company read from it is wrong
    (FinanceBench dev's Amcor revenue, read from its Rigid Packaging segment's table once that
    page was among the sources)."""
    headings = heading_path(source)
    title = headings[-1].split(" > ")[-1] if headings else ""  # its own title, not its path's
    segment = _SEGMENT.search(title)
    if segment is None or _SEGMENT.search(question):
        return False
    names = re.findall(r"\b[A-Z][A-Za-z]{2,}", title[: segment.start()])  # "Flexibles"
    return not any(re.search(rf"\b{name}\b", question, re.IGNORECASE) for name in names)


def stated_figures(rows: list[Row], question: str) -> list[StatedFigure]:
    return [StatedFigure(text=stated(row, question), citation=row.source) for row in rows]


def statement_sources(
    ctx: Context, store: Store, question: str, resolution: dict[str, Any], numbered: int
) -> list[Source]:
    """The best chunks of the statements a metric question needs (the income statement for
    a margin, the balance sheet for a ratio of balances), from the documents it resolved to,
    numbered after the ``numbered`` sources retrieval gave."""
    documents = tuple(resolution.get("documents") or ())
    wanted = statements_needed(question)
    if not documents or not wanted:
        return []
    vector = embed_queries(get_embedder(ctx), [resolution.get("topic") or question])[0]
    found: list[Source] = []
    seen: set[int] = set()
    for statement in (s for s in STATEMENTS if s.name in wanted):
        topic = resolution.get("topic") or question
        hits = statement_hits(store, ctx, statement, documents, vector, STATEMENT_CHUNKS, topic)
        for hit in hits:
            if hit.id not in seen:
                seen.add(hit.id)
                found.append(to_source(numbered + len(found) + 1, hit))
    return found


def rows_of(
    sources: list[Source], sections: SectionReader, near: bool = False, whole: bool = False
) -> list[Row]:
    """The table rows of the sources' sections, each section read once, in rank order. With
    ``near``, a section holding a table's rows without its header is read after the text
    above it; with ``whole`` (a statement's best chunks, ``near`` implied), a table is read on
    into the chunks below it, as a statement's later rows ("Total current liabilities") may
    lie there under another heading."""
    rows: list[Row] = []
    seen: set[int] = set()
    for source in sources:
        if source["chunk_id"] in seen:
            continue
        section = sections(source)
        seen.update(chunk["chunk_id"] for chunk in section)
        pages = sorted({p for chunk in section for p in chunk["metadata"].get("pages") or ()})
        text = "\n".join(chunk["text"] for chunk in section)
        headings = heading_path(source)
        statement = headings[-1] if headings else ""
        report = sections.report_period(source["doc_id"])
        found = table_rows(text, source["number"], pages, statement, report)
        if (near or whole) and has_figure_lines(text):
            if not found:
                above, _ = sections.near(section[0], -HEADER_WINDOW, -1)
                text = f"{above}\n{text}"
            if whole:
                below, more = sections.near(section[-1], 1, HEADER_WINDOW)
                text = f"{text}\n{below}"
                pages = sorted({*pages, *more})
            if not found or whole:
                found = table_rows(text, source["number"], pages, statement, report)
        rows.extend(found)
    return rows


def answer_from_rows(ctx: Context, store: Store, question: str, rows: list[Row]) -> dict[str, Any]:
    """A figure question answered by arithmetic over table rows (chop_rag.answers.figures): the
    model writes the expression, code evaluates it. Without a usable expression the result has only
    an ``answer_note`` saying why, and the caller quotes the passage instead."""
    shown_rows = "\n".join(row.shown(number) for number, row in enumerate(rows, start=1))
    messages = prompts.render("generate_figure", question=question, rows=shown_rows)
    result = structured_call(ctx, store, "answer_figure", messages, FigureReply)
    stats = result.stats()
    expression = result.value.expression.strip() if result.value else ""
    answered = figure_answer(question, expression, rows) if expression else None
    if answered is None:
        why = (
            f"the model failed ({result.error})"
            if result.value is None
            else "the tables found do not hold the figures"
            if not expression
            else f"the model's arithmetic ({expression}) does not evaluate over the rows"
        )
        return {"answer_note": f"{why}; the answer quotes the passage", "stats": stats}
    text, citations = answered
    return {
        "answer": text,
        "answerable": True,
        "citations": citations,
        "answer_note": f"computed by chop from the cited rows: {expression}",
        "stats": {**stats, "answer_figures": 1.0},
    }
