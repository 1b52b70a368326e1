"""ChopRetriever: a collection's chunks as a LangChain retriever, for your own chains and agents.

    from chop.retriever import ChopRetriever
    retriever = ChopRetriever(context=Context(collection="manuals"), k=4)
    docs = retriever.invoke("How often do I clean the filter of the 330C?")
    docs[0].metadata["model"], docs[0].metadata["doc_title"], docs[0].page_content

It runs the answer graph's retrieval (the question's model matched to the stored documents,
boost or filter, vector or hybrid search) without the LLM answer, and hands back LangChain
``Document``s whose metadata carry the chunk's CNM and where it came from.
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

from chop.config import Context
from chop.models import get_embedder
from chop.retrieval import retrieve_for_question
from chop.store import Hit, store_for


def chunk_document(hit: Hit, collection: str) -> Document:
    """One retrieved chunk as a LangChain ``Document``: its raw text, its CNM and identity."""
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
        },
    )


class ChopRetriever(BaseRetriever):
    """Top-``k`` chunks of a chop collection for a question (sync and async)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    context: Context = Field(default_factory=Context)
    """Collection, database, embedder and search options; the rest from CHOP_* variables."""
    k: int | None = None
    """Chunks to return; None: ``context.k``."""

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        if not query.strip():
            return []
        ctx = self.context
        store, embedder = store_for(ctx), get_embedder(ctx)
        store.open_collection(ctx.collection, embedder.name, embedder.dimension)
        found = retrieve_for_question(ctx, store, query, embedder, k=self.k or ctx.k)
        return [chunk_document(hit, ctx.collection) for hit in found.hits]

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        # The store and the embedder are synchronous; a worker thread keeps the event loop free
        # (and carries the caller's use_models overrides, which live in a ContextVar).
        return await asyncio.to_thread(
            self._get_relevant_documents, query, run_manager=run_manager.get_sync()
        )
