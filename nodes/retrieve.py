"""retrieve: embed the question and fetch the top-k chunks from pgvector.

How the question's model and the search mode shape the query is in chop_rag.retrieval.retrieve. Only
the chunks of the documents the question resolved to are kept as sources: a twin product's chunk
is never given to the answer nor shown beside it.
"""

from __future__ import annotations

import time
from typing import Any

from langgraph.runtime import Runtime

from chop_rag.answers.sections import to_source
from chop_rag.config import Context
from chop_rag.models.construction import get_embedder
from chop_rag.questions.matching import resolution_state
from chop_rag.questions.query import clean_question
from chop_rag.retrieval.retrieve import retrieve_for_question
from chop_rag.state import AnswerState, input_question
from chop_rag.store import store_for


def retrieve(state: AnswerState, runtime: Runtime[Context]) -> dict[str, Any]:
    ctx = runtime.context
    question = clean_question(input_question(state))
    if not question.strip():
        return {"question": question, "sources": [], "retrieval_note": "empty question"}
    store, embedder = store_for(ctx), get_embedder(ctx)
    store.open_collection(ctx.collection, embedder.name, embedder.dimension)
    started = time.perf_counter()
    found = retrieve_for_question(ctx, store, question, embedder, focus=state.get("focus", ""))
    search_seconds = time.perf_counter() - started
    found_sources = [to_source(i + 1, hit) for i, hit in enumerate(found.hits)]
    asked = found.question.model
    unknown = found.question.unknown_model
    # a page's repeats follow the k places: what a quote runs on into stays citable
    read = [*found.about(), *found.repeats_about()]
    sources = [to_source(i + 1, hit) for i, hit in enumerate(read)]
    if not sources:  # none is about what the question names: shown as the closest, not used
        unknown, sources = unknown or asked, found_sources
    return {
        "question": question,
        "sources": sources,
        "question_model": unknown or asked,
        "question_unknown": unknown,
        "question_documents": found.documents,
        "question_resolution": resolution_state(found.resolution),
        "retrieval_note": found.note,
        "stats": {"retrieve_seconds": search_seconds},
    }
