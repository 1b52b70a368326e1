"""judge_answerability: do the passages found answer the question? Decided before any answer
is written, as judge_continuity decides before a chunk is labelled: cheap signals first, the
local LLM only where they are unclear (chop_rag.answers.answerability).

Rules decide without reading: no sources at all, and a question about a model, company or
period no stored document covers (answering from a twin product's manual or another year's
filing is the failure CHOP exists to prevent). The conditional edge after this node follows
the judgment: answer or decline.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from chop_rag import prompts
from chop_rag.answers.answerability import (
    AnswerabilityReply,
    cheap_judgment,
    judged_passages,
    judgment,
    signals,
)
from chop_rag.answers.answering import shown
from chop_rag.answers.passages import from_state
from chop_rag.config import Context
from chop_rag.models.llm import structured_call
from chop_rag.state import Answerability, AnswerState, add_counts
from chop_rag.store import store_for

NO_SOURCES = "The collection has no passages for this question."
NOT_ANSWERED = "The passages found do not answer this question."


def judge_answerability(state: AnswerState, runtime: Runtime[Context]) -> dict[str, Any]:
    sources = state.get("sources", [])
    passages = state.get("passages", [])
    if not sources:
        return {"answerability": judgment(False, "rule:no-sources", {}, None, reason=NO_SOURCES)}
    unknown = state.get("question_unknown")
    if unknown:
        titles = ", ".join(dict.fromkeys(s["doc_title"] for s in sources[:3]))
        why = (
            f"The documents do not cover {unknown}. The closest passages are from {titles}, "
            "so they are not used to answer."
        )
        return {"answerability": judgment(False, "rule:unknown", {}, None, reason=why)}
    resolution: dict[str, Any] = dict(state.get("question_resolution") or {})
    if resolution.get("ambiguous"):  # a bare model number of several brands: none is chosen
        why = (
            f"{resolution.get('label')} could be any of {', '.join(resolution['ambiguous'])}: "
            "which one do you mean?"
        )
        return {"answerability": judgment(False, "rule:ambiguous", {}, None, reason=why)}
    if not passages:
        return {"answerability": judgment(False, "rule:no-text", {}, None, reason=NOT_ANSWERED)}
    question = state["question"]
    ctx = runtime.context
    store = store_for(ctx)
    documents = list(state.get("question_documents") or [])

    def written_anywhere(openings: list[str]) -> set[str]:
        return store.written(ctx.collection, documents, openings)

    found = signals(resolution.get("topic") or question, passages, written_anywhere)
    answerable, decided_by = cheap_judgment(found)
    if resolution.get("filings") and decided_by != "rule:far":
        # a filing's figures are asked for in words its tables do not print ("quick ratio",
        # "capital intensity"): only a passage far from the question declines one
        answerable, decided_by = True, "rule:filing"
    if answerable is not None:
        return {"answerability": judgment(answerable, decided_by, found, passages[0])}
    # the band: the LLM reads the passage the answer would quote, then the closest other one
    # (retrieval's order and the quote's choice can put a section that answers second)
    stats: dict[str, float] = {}
    declined: Answerability | None = None
    for index in judged_passages(passages):
        passage = passages[index]
        messages = prompts.render(
            "judge_answerability", question=question, passages=shown([from_state(passage)])
        )
        result = structured_call(ctx, store, "answerability", messages, AnswerabilityReply)
        stats = add_counts(stats, {**result.stats(), "answerability_judged_by_llm": 1.0})
        if result.value is None:  # the answer quotes the passage, as before the judgment existed
            stats["answerability_model_failures"] = 1.0
            judged = judgment(True, "llm-fallback", found, passages[0], reason=result.error or "")
            return {"answerability": judged, "stats": stats}
        reply = result.value
        if reply.answers:
            judged = judgment(True, "llm", found, passage, covers=reply.covers)
            first = [passage, *(p for i, p in enumerate(passages) if i != index)]
            return {"answerability": judged, "stats": stats, "passages": first}
        declined = declined or judgment(False, "llm", found, passage, covers=reply.covers)
    return {"answerability": declined or judgment(False, "llm", found, passages[0]), "stats": stats}
