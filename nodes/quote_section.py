"""quote_section: the answer in the source's own words, no model call: the section that answers
best, quoted whole when short or around its best sentence (chop_rag.answers.answering). A figure
question's answer first states the table rows of the line items it asks for, and what code
could not compute; sources that disagree are said to, both quoted (compare_sources)."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from chop_rag.answers.answering import compose, extract
from chop_rag.answers.computed import rows_of, stated_figures
from chop_rag.answers.conflicts import said
from chop_rag.answers.figures import answering_rows, is_figure_question
from chop_rag.answers.passages import from_state
from chop_rag.answers.sections import SectionReader
from chop_rag.config import Context
from chop_rag.state import AnswerState, StatedFigure
from chop_rag.store import store_for


def quote_section(state: AnswerState, runtime: Runtime[Context]) -> dict[str, Any]:
    ctx = runtime.context
    question = state["question"]
    best = state["passages"][0]
    chosen = from_state(best)
    answer = compose(
        chosen, extract(chosen, best["scores"]), None, sources=state.get("sources", [])
    )
    figures: list[StatedFigure] = []
    if is_figure_question(question):
        # the line items a figure question asks for, as their tables print them; matched on
        # the question's topic, as the company's name in "attributable to General Mills" is no
        # line item
        resolution: dict[str, Any] = dict(state.get("question_resolution") or {})
        topic = str(resolution.get("topic") or question)
        rows = answering_rows(
            rows_of(state.get("sources", []), SectionReader(ctx, store_for(ctx))), topic
        )
        figures = list(state.get("stated_figures") or []) + stated_figures(rows, question)
        figures = list({figure["text"]: figure for figure in figures}.values())
    found = state.get("disagreement")
    note = state.get("figure_note")
    parts = [
        *([said(found)] if found else []),
        *([note] if note else []),
        *(figure["text"] for figure in figures),
        answer.text,
    ]
    cited = [figure["citation"] for figure in figures] + answer.citations
    if found:
        cited = [found["first"]["number"], found["second"]["number"], *cited]
    return {
        "answer": " ".join(parts),
        "answerable": True,
        "citations": list(dict.fromkeys(cited)),
        **dict(state.get("figure_fallback") or {}),
    }
