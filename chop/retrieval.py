"""Retrieval for one question: the options of the retrieve node, usable without the graph.

The question's own CNM (the stored model it names, found without an LLM) boosts or filters
chunks of that model (Context.query_cnm); a filter that matches nothing falls back to the
unfiltered search and says so. Context.search="hybrid" fuses full-text and vector ranks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from chop.config import Context
from chop.query import QuestionCNM, match_question
from chop.store import Hit, SearchFilter, Store

MODEL_BOOST = 0.1


@dataclass
class Retrieved:
    hits: list[Hit]
    question: QuestionCNM
    note: str


def retrieve_for_question(
    ctx: Context, store: Store, question: str, vector: np.ndarray, k: int | None = None
) -> Retrieved:
    k = k or ctx.k
    matched = match_question(
        question,
        store.distinct_values(ctx.collection, "model"),
        store.distinct_values(ctx.collection, "category"),
    )
    text = question if ctx.search == "hybrid" else None
    note = ""
    hits: list[Hit] = []
    if ctx.query_cnm == "filter" and matched.model:
        hits = store.search(
            ctx.collection, vector, k, where=SearchFilter(model=matched.model), query_text=text
        )
        note = f"filtered to model {matched.model}"
        if not hits:
            note = f"no chunk of model {matched.model}; searched all"
    if not hits:
        boost_model = matched.model if ctx.query_cnm in ("boost", "filter") else None
        hits = store.search(
            ctx.collection, vector, k, boost_model=boost_model, boost=MODEL_BOOST, query_text=text
        )
        if boost_model and not note:
            note = f"boosted model {boost_model}"
    if matched.unknown_model:
        note = f"the question names {matched.unknown_model}, which no stored chunk is about"
    return Retrieved(hits=hits, question=matched, note=note)
