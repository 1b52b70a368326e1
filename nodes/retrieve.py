"""retrieve: embed the question and fetch the top-k chunks from pgvector.

The question's own CNM (the stored model it names, found without an LLM) boosts or filters
chunks of that model (Context.query_cnm); a filter that matches nothing falls back to the
unfiltered search and says so. Context.search="hybrid" fuses full-text and vector ranks.
"""

from __future__ import annotations

import time
from typing import Any

from langgraph.runtime import Runtime

from chop.config import Context
from chop.models import get_embedder
from chop.query import match_question
from chop.state import AnswerState, Source
from chop.store import Hit, SearchFilter, store_for

MODEL_BOOST = 0.1


def to_source(number: int, hit: Hit) -> Source:
    return Source(
        number=number,
        chunk_id=hit.id,
        doc_id=hit.doc_id,
        doc_title=hit.doc_title,
        chunk_index=hit.chunk_index,
        model=hit.model,
        category=hit.category,
        nouns=list(hit.nouns),
        text=hit.text,
        score=hit.score,
        metadata={**hit.metadata, "char_start": hit.char_start, "char_end": hit.char_end},
    )


def retrieve(state: AnswerState, runtime: Runtime[Context]) -> dict[str, Any]:
    ctx = runtime.context
    store = store_for(ctx)
    question = state["question"]
    if not question.strip():
        return {"sources": [], "retrieval_note": "empty question"}
    note = ""
    matched = match_question(
        question,
        store.distinct_values(ctx.collection, "model"),
        store.distinct_values(ctx.collection, "category"),
    )
    started = time.perf_counter()
    vector = get_embedder(ctx).embed([question])[0]
    embed_seconds = time.perf_counter() - started
    text = question if ctx.search == "hybrid" else None
    hits: list[Hit] = []
    if ctx.query_cnm == "filter" and matched.model:
        hits = store.search(
            ctx.collection, vector, ctx.k, where=SearchFilter(model=matched.model), query_text=text
        )
        note = f"filtered to model {matched.model}"
        if not hits:
            note = f"no chunk of model {matched.model}; searched all"
    if not hits:
        boost_model = matched.model if ctx.query_cnm in ("boost", "filter") else None
        hits = store.search(
            ctx.collection,
            vector,
            ctx.k,
            boost_model=boost_model,
            boost=MODEL_BOOST,
            query_text=text,
        )
        if boost_model and not note:
            note = f"boosted model {boost_model}"
    if matched.unknown_model:
        note = f"the question names {matched.unknown_model}, which no stored chunk is about"
    return {
        "sources": [to_source(i + 1, hit) for i, hit in enumerate(hits)],
        "question_model": matched.model or matched.unknown_model,
        "question_category": matched.category,
        "retrieval_note": note,
        "stats": {"embed_seconds": embed_seconds},
    }
