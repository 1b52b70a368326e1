"""read_passages: the sections of the retrieved sources, each sentence scored against the
question, the one that answers best first (chop_rag.answers.passages).

What judge_answerability judges and the answer quotes. Nothing is read for a question about a
model, company or period no stored document covers: that answer is declined unread.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from chop_rag.answers.passages import read_passages as passages_of
from chop_rag.answers.sections import SectionReader
from chop_rag.config import Context
from chop_rag.models.construction import get_embedder
from chop_rag.state import AnswerState
from chop_rag.store import store_for


def read_passages(state: AnswerState, runtime: Runtime[Context]) -> dict[str, Any]:
    ctx = runtime.context
    sources = state.get("sources", [])
    if not sources or state.get("question_unknown"):
        return {"passages": []}
    resolution: dict[str, Any] = dict(state.get("question_resolution") or {})
    sections = SectionReader(ctx, store_for(ctx))
    passages = passages_of(
        state["question"],
        sources,
        sections,
        get_embedder(ctx),
        filings=bool(resolution.get("filings")),
    )
    return {"passages": passages}
