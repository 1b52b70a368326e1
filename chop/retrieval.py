"""Retrieval for one question: the options of the retrieve node, usable without the graph.

The question's own CNM is read without an LLM: the question is matched first against the
documents' own models and titles (what a user names: "my Galaxy S10"), and only when no
document matches, against chunk-level model values. Context.query_cnm then boosts or filters
to the matched documents (or chunks); a match that covers every document changes nothing,
and a filter that matches nothing falls back to the unfiltered search and says so.
Context.search="hybrid" fuses full-text and vector ranks.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from chop.config import Context
from chop.query import QuestionCNM, best_match, match_question
from chop.store import DocumentRecord, Hit, SearchFilter, Store

MODEL_BOOST = 0.1


@dataclass
class Retrieved:
    hits: list[Hit]
    question: QuestionCNM
    note: str
    documents: list[str]  # documents whose own model or title the question names


def matched_documents(
    records: Iterable[DocumentRecord], question: str
) -> tuple[str | None, list[str]]:
    """The document-level model (or title) the question names, and the documents that have it."""
    names: dict[str, list[str]] = {}
    for record in records:
        profile = record.metadata.get("profile") or {}
        for name in {profile.get("model"), record.title} - {None, ""}:
            names.setdefault(str(name), []).append(record.doc_id)
    name = best_match(question, list(names))
    return name, (names[name] if name else [])


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
    records = store.documents(ctx.collection)
    doc_name, doc_ids = matched_documents(records.values(), question)
    if doc_name:
        matched = QuestionCNM(model=doc_name, category=matched.category, unknown_model=None)
    every_document = bool(doc_ids) and len(doc_ids) == len(records)
    use = ctx.query_cnm in ("boost", "filter") and not every_document
    where = SearchFilter(doc_ids=tuple(doc_ids)) if doc_ids else SearchFilter(model=matched.model)
    if use and ctx.query_cnm == "filter" and matched.model:
        hits = store.search(
            ctx.collection, vector, k, where=where, query_text=text, ef_search=ctx.ef_search
        )
        note = f"filtered to {matched.model}"
        if not hits:
            note = f"no chunk of {matched.model}; searched all"
    if not hits:
        hits = store.search(
            ctx.collection,
            vector,
            k,
            boost_model=None if doc_ids or not use else matched.model,
            boost_doc_ids=doc_ids if use else (),
            boost=MODEL_BOOST,
            query_text=text,
            ef_search=ctx.ef_search,
        )
        if use and matched.model and not note:
            note = f"boosted {matched.model}"
    if matched.unknown_model:
        note = f"the question names {matched.unknown_model}, which no stored chunk is about"
    return Retrieved(hits=hits, question=matched, note=note, documents=doc_ids)
