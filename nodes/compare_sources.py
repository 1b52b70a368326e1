"""compare_sources: do sources of different documents disagree on the question? Said, with
both quoted, rather than answering from one of them (chop_rag.answers.conflicts).

The cheap pass (aligned sentences whose polarity or figures differ) finds a candidate pair;
the local LLM judges only such a pair. A document marked authoritative wins: its passage is
put first, so the answer is read from it.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from chop_rag import prompts
from chop_rag.answers.answering import shown
from chop_rag.answers.conflicts import ConflictReply, disagreement, opposed_pair, rivals
from chop_rag.answers.passages import from_state
from chop_rag.config import Context
from chop_rag.labelling.profile import stored_profile
from chop_rag.models.llm import structured_call
from chop_rag.state import AnswerState, ReadPassage
from chop_rag.store import Store, store_for


def compare_sources(state: AnswerState, runtime: Runtime[Context]) -> dict[str, Any]:
    passages = state.get("passages", [])
    best = passages[0] if passages else None
    candidates = [
        (rival, pair)
        for rival in rivals(passages)
        if best is not None and (pair := opposed_pair(best, rival)) is not None
    ]
    if best is None or not candidates:
        return {"disagreement": None}
    ctx = runtime.context
    store = store_for(ctx)
    rival, pair = candidates[0]
    messages = prompts.render(
        "judge_conflict",
        question=state["question"],
        first=shown([from_state(best)]),
        second=shown([from_state(rival)]),
    )
    result = structured_call(ctx, store, "conflict", messages, ConflictReply)
    stats = {**result.stats(), "conflicts_judged_by_llm": 1.0}
    decided_by = "llm"
    if result.value is None:  # the cheap pass's pair stands: the safe side is to say it
        stats["conflict_model_failures"] = 1.0
        decided_by = "rule:opposed-fallback"
    elif not result.value.conflict:
        return {"disagreement": None, "stats": stats}
    marked = authoritative(ctx, store, [best, rival])
    found = disagreement(best, rival, pair, decided_by, marked)
    update: dict[str, Any] = {"disagreement": found, "stats": stats}
    if marked.get(rival["source"]["doc_id"]) and not marked.get(best["source"]["doc_id"]):
        update["passages"] = [rival, *(p for p in passages if p is not rival)]
    return update


def authoritative(ctx: Context, store: Store, passages: list[ReadPassage]) -> dict[str, bool]:
    """Which of the passages' documents a user marked authoritative (their identity cards)."""
    records = store.documents(ctx.collection)
    marked: dict[str, bool] = {}
    for passage in passages:
        doc = passage["source"]["doc_id"]
        record = records.get(doc)
        identity = stored_profile(record.metadata).get("identity") or {} if record else {}
        marked[doc] = bool(identity.get("authoritative"))
    return marked
