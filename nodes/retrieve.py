"""retrieve: embed the question and fetch the top-k chunks from pgvector.

How the question's model and the search mode shape the query is in chop.retrieval.retrieve. Only the
chunks of the documents the question resolved to are kept as sources: a twin product's chunk
is never given to the answer nor shown beside it.
"""

from __future__ import annotations

import time
from typing import Any

from langgraph.runtime import Runtime

from chop.config import Context
from chop.models.construction import get_embedder
from chop.questions.matching import resolution_state
from chop.questions.query import clean_question
from chop.retrieval.retrieve import retrieve_for_question
from chop.state import AnswerState, Source, input_question
from chop.store import Hit, store_for
from chop.types import plain_copy


def to_source(number: int, hit: Hit) -> Source:
    metadata = {**hit.metadata, "char_start": hit.char_start, "char_end": hit.char_end}
    return plain_copy(Source, hit, number=number, chunk_id=hit.id, metadata=metadata)


def retrieve(state: AnswerState, runtime: Runtime[Context]) -> dict[str, Any]:
    ctx = runtime.context
    question = clean_question(input_question(state))
    if not question.strip():
        return {"question": question, "sources": [], "retrieval_note": "empty question"}
    store, embedder = store_for(ctx), get_embedder(ctx)
    store.open_collection(ctx.collection, embedder.name, embedder.dimension)
    started = time.perf_counter()
    found = retrieve_for_question(ctx, store, question, embedder)
    search_seconds = time.perf_counter() - started
    found_sources = [to_source(i + 1, hit) for i, hit in enumerate(found.hits)]
    asked = found.question.model
    unknown = found.question.unknown_model
    sources = [to_source(i + 1, hit) for i, hit in enumerate(found.about())]
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
