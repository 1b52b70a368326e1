"""compute_figures: a figure computed by code over table rows, not written by the model
(chop_rag.answers.computed): a metric over a filing's statement rows, or (CHOP_ANSWER=lead) the
model's arithmetic evaluated over the rows it names. When nothing is computed, what could
not be, and the rows that state the line items asked for, go on to the quoted answer."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from chop_rag.answers.computed import compute_answer
from chop_rag.answers.sections import SectionReader
from chop_rag.config import Context
from chop_rag.state import AnswerState
from chop_rag.store import store_for


def compute_figures(state: AnswerState, runtime: Runtime[Context]) -> dict[str, Any]:
    ctx = runtime.context
    store = store_for(ctx)
    return compute_answer(
        ctx,
        store,
        state["question"],
        dict(state.get("question_resolution") or {}),
        state.get("sources", []),
        SectionReader(ctx, store),
    )
