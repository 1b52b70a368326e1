"""ChopRetriever: a collection's chunks as a LangChain retriever, for your own chains and agents.

    from chop_rag.retrieval.retriever import ChopRetriever
    retriever = ChopRetriever(context=Context(collection="manuals"), k=4)
    docs = retriever.invoke("How often do I clean the filter of the 330C?")
    docs = retriever.invoke("...", k=2, search="hybrid")  # search settings per call
    docs[0].metadata["model"], docs[0].metadata["resolution"], docs[0].page_content

It runs the answer graph's retrieval, the same code as ``ask`` (chop_rag.retrieval.retrieve: the
documents the question names resolved from the stored identity cards, boost or filter, vector or
hybrid search, then ``Retrieved.about``: a twin product's chunk is dropped) without the LLM answer,
and hands back LangChain ``Document``s whose metadata carry the chunk's CNM, where it came
from, and which resolution the question got.
"""

from __future__ import annotations

import asyncio
from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field

from chop_rag.config import Context
from chop_rag.models.construction import get_embedder
from chop_rag.questions.matching import resolution_state
from chop_rag.questions.query import clean_question
from chop_rag.retrieval.retrieve import retrieve_for_question
from chop_rag.store import Hit, store_for


def chunk_document(hit: Hit, collection: str, how: dict[str, Any] | None = None) -> Document:
    """One retrieved chunk as a LangChain ``Document``: its raw text, its CNM and identity,
    and ``how`` it was found (the question's resolution)."""
    return Document(
        id=f"{collection}:{hit.id}",
        page_content=hit.text,
        metadata={
            **hit.metadata,
            "collection": collection,
            "chunk_id": hit.id,
            "doc_id": hit.doc_id,
            "doc_title": hit.doc_title,
            "chunk_index": hit.chunk_index,
            "model": hit.model,
            "category": hit.category,
            "nouns": list(hit.nouns),
            "prefix": hit.prefix,
            "cnm_source": hit.cnm_source,
            "score": hit.score,
            "char_start": hit.char_start,
            "char_end": hit.char_end,
            **(how or {}),
        },
    )


SEARCH_KWARGS = ("k", "search", "query_cnm", "ef_search")
"""The settings a call may change (``retriever.invoke(q, k=2)``); the rest come from context."""


class ChopRetriever(BaseRetriever):
    """Top-``k`` chunks of a chop collection for a question (sync and async).

    At most ``k``: as ``ask`` does, chunks of other documents than the one the question names
    are dropped (a question about the Coolwave 330C gets no 410X chunk). When none is about it
    (it names a model no stored document covers) the closest chunks come back, marked
    ``about_question: False``, where ``ask`` declines."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    context: Context = Field(default_factory=Context)
    """Collection, database, embedder and search options; the rest from CHOP_* variables."""
    k: int | None = None
    """Chunks to return; None: ``context.k``."""
    search_kwargs: dict[str, Any] = Field(default_factory=dict)
    """Search settings for every call (SEARCH_KWARGS), as LangChain's VectorStoreRetriever."""

    def run_context(self, kwargs: dict[str, Any]) -> Context:
        """The context of one call: ``context``, then ``k`` and ``search_kwargs``, then the
        call's own keyword arguments; one clear error for a keyword that is no search setting."""
        given = {**self.search_kwargs, **kwargs}
        unknown = sorted(set(given) - set(SEARCH_KWARGS))
        if unknown:
            raise ValueError(
                f"ChopRetriever takes the search settings {', '.join(SEARCH_KWARGS)}; "
                f"not {', '.join(map(repr, unknown))}"
            )
        return self.context.with_overrides(**{"k": self.k, **given})

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        ctx = self.run_context(kwargs)
        query = clean_question(query)  # as the answer graph's retrieve node takes it
        if not query.strip():
            return []
        store, embedder = store_for(ctx), get_embedder(ctx)
        store.open_collection(ctx.collection, embedder.name, embedder.dimension)
        found = retrieve_for_question(ctx, store, query, embedder, k=ctx.k)
        about = found.about()
        how = {
            "resolution": dict(resolution_state(found.resolution)),
            "retrieval_note": found.note,
            # where ask declines: nothing is about it, or it names what no document covers
            "about_question": bool(about) and not found.question.unknown_model,
        }
        return [chunk_document(hit, ctx.collection, how) for hit in about or found.hits]

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        # The store and the embedder are synchronous; a worker thread keeps the event loop free
        # (and carries the caller's use_models overrides, which live in a ContextVar).
        return await asyncio.to_thread(
            self._get_relevant_documents, query, run_manager=run_manager.get_sync(), **kwargs
        )
