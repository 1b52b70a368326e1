"""ChopVectorStore: a chop collection as a LangChain ``VectorStore``.

    from chop_rag.retrieval.vectorstore import ChopVectorStore
    store = ChopVectorStore(context=Context(collection="notes"))      # chop's embedder
    ids = store.add_documents(docs, cnm={"model": "Coolwave 330C"})   # optional CNM
    store.similarity_search("air filter", k=4, filter={"page": {"$lte": 3}})
    store.max_marginal_relevance_search("air filter", k=4, fetch_k=20)
    store.as_retriever(search_type="mmr")  # ChopRetriever resolves the question first

Why ``add_documents`` stores the given texts, one chunk each, instead of running the ingest
graph: LangChain's contract is that a document added under an id comes back under that id
with its exact ``page_content`` and ``metadata``, that adding the same id again replaces it,
and that ``delete(ids)`` removes exactly those. The ingest graph splits a document into
chunks of its own, labels each with an LLM call (CHOP's CNM) and renames nothing back, so it
keeps none of those promises, and would make ``add_documents`` cost an LLM call per chunk.
Texts that are already chunks (a LangChain splitter's output) are stored as they are; their
CNM prefix, when the caller knows it, is given as ``cnm`` (``model``, ``category``, ``nouns``)
and embedded before the text exactly as ingest embeds its chunks
(chop_rag.labelling.cnm.embedded_text), and the CNM columns let chop's model filters, boosts and
``ChopRetriever`` find them. For whole documents with CNM labels from the LLM, use
``chop_rag.api.ingest`` into the same collection: this store searches those chunks too (their
metadata then says what chop stored: CNM, document, position).

Each LangChain document is one chop document of one chunk (doc_id = the LangChain id), so
``chop docs`` lists it and ``chop delete ID`` removes it.

Filters are langchain-postgres' (``$eq $ne $lt $lte $gt $gte $in $nin $between $like $ilike
$exists``, combined by ``$and $or $not``) on a document's metadata, any key; they become SQL
with bound values in chop_rag.store.search (``metadata_condition`` says what each one means).
``delete()`` without ids deletes every document of the collection, as LangChain specifies.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import VectorStore
from langchain_core.vectorstores.utils import maximal_marginal_relevance

from chop_rag.config import Context
from chop_rag.labelling.cnm import embedded_text, make_cnm, prefix_line
from chop_rag.models.construction import ChopEmbeddings, as_embedder
from chop_rag.models.embedders import Embedder, embed_queries
from chop_rag.reading.documents import content_hash
from chop_rag.retrieval.retriever import chunk_document
from chop_rag.store import ChunkRow, DocumentRecord, Hit, SearchFilter, Store, store_for
from chop_rag.store.records import embedding_key
from chop_rag.store.search import CALLER_METADATA, metadata_condition

CALLER = "caller"  # cnm_source and continuity of a chunk stored as given (not by ingest)
ADDED_BY = "ChopVectorStore"
LANGCHAIN_METADATA = CALLER_METADATA  # the chunk metadata key holding the caller's own


class ChopVectorStore(VectorStore):
    """A chop collection (``context.collection``) as a LangChain vector store.

    ``add_documents`` stores each given text as one chunk under its id, with the CNM the
    caller supplies (``cnm=``) embedded before it; it does not run the ingest graph, whose own
    chunking and LLM labels would break LangChain's contract (the same id, text and metadata
    back; re-adding replaces; delete removes exactly those) and cost an LLM call per chunk.
    Ingest whole documents with ``chop_rag.api.ingest``; this store searches their chunks too.

    ``embedding`` defaults to chop's own embedder for the context (:class:`ChopEmbeddings`);
    any LangChain ``Embeddings`` works, and the collection then keeps that one (a collection
    is read with the embedder it was made with). Search is cosine similarity over the stored
    vectors, or maximal marginal relevance among the ``fetch_k`` nearest; ``filter`` is
    langchain-postgres' metadata filter (chop_rag.store.search.metadata_condition): a key is
    the document's metadata, else chop's field of the chunk (``doc_id``, ``model``,
    ``category``, ``chunk_index``, ...), compared exactly (``$ilike`` for any case).
    """

    def __init__(self, embedding: Embeddings | None = None, *, context: Context | None = None):
        self.context = context or Context()
        self._embeddings = embedding or ChopEmbeddings.from_context(self.context)
        self._embedder: Embedder | None = None

    # --------------------------------------------------------------- plumbing
    @property
    def embeddings(self) -> Embeddings:
        return self._embeddings

    @property
    def embedder(self) -> Embedder:
        """chop's Embedder for ``embedding`` (a ChopEmbeddings gives its own, name included)."""
        if self._embedder is None:
            self._embedder = as_embedder(self._embeddings)
        return self._embedder

    @property
    def store(self) -> Store:
        return store_for(self.context)

    @property
    def collection(self) -> str:
        return self.context.collection

    def _ready(self) -> Store:
        """The store with the collection made (or checked against this embedder)."""
        store, embedder = self.store, self.embedder
        store.ensure_collection(
            self.collection, embedder.dimension, embedder=embedder.name, settings={}
        )
        return store

    # ------------------------------------------------------------------ write
    def add_texts(
        self,
        texts: Iterable[str],
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: list[str] | None = None,
        cnm: Mapping[str, Any] | Sequence[Mapping[str, Any] | None] | None = None,
        **kwargs: Any,
    ) -> list[str]:
        """Store each text as one chunk under its id (a new uuid4 where none is given);
        an id already stored is replaced. ``cnm``: one ``{"model", "category", "nouns"}`` for
        every text, or one per text; it is embedded before the text as chop's CNM prefix."""
        if kwargs:
            raise TypeError(f"add_texts got unexpected arguments: {', '.join(sorted(kwargs))}")
        texts = list(texts)
        metadatas = [dict(m or {}) for m in metadatas] if metadatas else [{} for _ in texts]
        given: list[str | None] = list(ids) if ids else [None] * len(texts)
        labels = list(cnm) if isinstance(cnm, Sequence) else [cnm] * len(texts)
        for name, values in (("metadatas", metadatas), ("ids", given), ("cnm", labels)):
            if len(values) != len(texts):
                raise ValueError(f"{len(texts)} texts but {len(values)} {name}")
        chosen = [str(i) if i is not None else str(uuid.uuid4()) for i in given]
        store, embedder = self._ready(), self.embedder
        rows = [
            self._row(text, metadata, doc_id, label)
            for text, metadata, doc_id, label in zip(texts, metadatas, chosen, labels, strict=True)
        ]
        vectors = embedder.embed([embedded for _, embedded in rows])
        for (row, embedded), vector in zip(rows, vectors, strict=True):
            row.embedding = vector
            row.embedding_key = embedding_key(embedded, embedder.name)
            record = DocumentRecord(
                doc_id=row.doc_id,
                title=row.doc_title,
                source=ADDED_BY,
                fingerprint=content_hash(f"{ADDED_BY}\0{embedded}\0{json.dumps(row.metadata)}"),
                chunk_count=1,
                metadata={"added_by": ADDED_BY},
            )
            store.replace_document(self.collection, record, [row])
        return chosen

    def _row(
        self, text: str, metadata: dict[str, Any], doc_id: str, label: Mapping[str, Any] | None
    ) -> tuple[ChunkRow, str]:
        try:
            json.dumps(metadata, allow_nan=False)
        except (TypeError, ValueError) as err:
            raise ValueError(f"metadata of document {doc_id!r} is not JSON: {err}") from None
        unknown = sorted(set(label or {}) - {"model", "category", "nouns"})
        if unknown:
            raise ValueError(f"cnm takes model, category and nouns; not {', '.join(unknown)}")
        label = label or {}
        cnm = make_cnm(label.get("category"), list(label.get("nouns") or []), label.get("model"))
        row = ChunkRow(
            doc_id=doc_id,
            doc_title=str(metadata.get("title") or doc_id),
            chunk_index=0,
            text=text,
            prefix=prefix_line(cnm),
            category=cnm["category"],
            nouns=list(cnm["nouns"]),
            model=cnm["model"],
            cnm_source=CALLER,
            char_start=0,
            char_end=len(text),
            continuity=CALLER,
            embedding_key="",
            embedding=[],
            metadata={LANGCHAIN_METADATA: metadata},
        )
        return row, embedded_text(cnm, text)

    def delete(self, ids: list[str] | None = None, **kwargs: Any) -> bool | None:
        """Remove these ids (unknown ones are no error); True when any was stored. Without
        ids (None), as LangChain specifies, every document of the collection is removed,
        those ``ingest`` stored included; the collection stays, with its embedder. An empty
        list removes nothing."""
        if kwargs:
            raise TypeError(f"delete got unexpected arguments: {', '.join(sorted(kwargs))}")
        store = self.store
        if ids is None:
            return store.delete_all_documents(self.collection) > 0
        return any([store.delete_document(self.collection, str(i)) for i in ids])

    # ------------------------------------------------------------------- read
    def get_by_ids(self, ids: Sequence[str], /) -> list[Document]:
        """The stored documents of these ids (missing ones left out), one per chunk."""
        store = self.store
        found: list[Document] = []
        for doc_id in dict.fromkeys(str(i) for i in ids):
            for row in store.chunks(self.collection, doc_id):
                hit = Hit(
                    **{k: row[k] for k in _HIT_COLUMNS},
                    id=int(row["id"]),
                    metadata=dict(row["metadata"] or {}),
                    score=0.0,
                )
                found.append(self._document(hit))
        return found

    def similarity_search_with_score(
        self, query: str, k: int = 4, filter: Mapping[str, Any] | None = None, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        vector = embed_queries(self.embedder, [query])[0]
        return self.similarity_search_by_vector_with_score(vector, k, filter=filter, **kwargs)

    def similarity_search_by_vector_with_score(
        self,
        embedding: Sequence[float],
        k: int = 4,
        filter: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> list[tuple[Document, float]]:
        """The k stored chunks nearest ``embedding``, with their cosine similarity."""
        hits = self._hits(embedding, k, filter, kwargs)
        return [(self._document(hit), hit.score) for hit in hits]

    def _hits(
        self,
        embedding: Sequence[float],
        k: int,
        filter: Mapping[str, Any] | None,
        kwargs: Mapping[str, Any],
    ) -> list[Hit]:
        if kwargs:
            raise TypeError(f"unexpected search arguments: {', '.join(sorted(kwargs))}")
        where, store = search_filter(filter), self.store
        if not store.collection_exists(self.collection):
            return []
        store.open_collection(self.collection, self.embedder.name, self.embedder.dimension)
        return store.search(
            self.collection, embedding, k, where=where, ef_search=self.context.ef_search
        )

    def max_marginal_relevance_search(
        self,
        query: str,
        k: int = 4,
        fetch_k: int = 20,
        lambda_mult: float = 0.5,
        filter: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> list[Document]:
        vector = embed_queries(self.embedder, [query])[0]
        return self.max_marginal_relevance_search_by_vector(
            list(map(float, vector)), k, fetch_k, lambda_mult, filter=filter, **kwargs
        )

    def max_marginal_relevance_search_by_vector(
        self,
        embedding: list[float],
        k: int = 4,
        fetch_k: int = 20,
        lambda_mult: float = 0.5,
        filter: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> list[Document]:
        """k of the ``fetch_k`` chunks nearest ``embedding``, each chosen for its similarity
        to it less its similarity to those already chosen (``lambda_mult``: 1 similarity
        only, 0 diversity only), in the order chosen; fewer when ``fetch_k`` < k."""
        if k <= 0 or fetch_k <= 0:
            return []
        hits = self._hits(embedding, fetch_k, filter, kwargs)
        vectors = self.store.vectors(self.collection, [hit.id for hit in hits])
        hits = [hit for hit in hits if hit.id in vectors]  # deleted since: left out
        if not hits:
            return []
        chosen = maximal_marginal_relevance(
            np.asarray(embedding, dtype=np.float32),
            [vectors[hit.id].tolist() for hit in hits],
            lambda_mult=lambda_mult,
            k=k,
        )
        return [self._document(hits[i]) for i in chosen]

    def similarity_search(
        self, query: str, k: int = 4, filter: Mapping[str, Any] | None = None, **kwargs: Any
    ) -> list[Document]:
        return [doc for doc, _ in self.similarity_search_with_score(query, k, filter, **kwargs)]

    def similarity_search_by_vector(
        self,
        embedding: list[float],
        k: int = 4,
        filter: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> list[Document]:
        found = self.similarity_search_by_vector_with_score(embedding, k, filter, **kwargs)
        return [doc for doc, _ in found]

    def _select_relevance_score_fn(self) -> Any:
        return self._cosine_relevance_score_fn

    @staticmethod
    def _cosine_relevance_score_fn(similarity: float) -> float:
        """chop's scores are cosine similarities (-1..1): relevance 0..1."""
        return (1.0 + similarity) / 2.0

    def _document(self, hit: Hit) -> Document:
        """A chunk this store added comes back as it was given; a chunk ``ingest`` stored
        comes back with chop's metadata (CNM, document, position), as ChopRetriever gives."""
        if hit.cnm_source == CALLER and LANGCHAIN_METADATA in hit.metadata:
            return Document(
                id=hit.doc_id,
                page_content=hit.text,
                metadata=dict(hit.metadata[LANGCHAIN_METADATA]),
            )
        return chunk_document(hit, self.collection)

    @classmethod
    def from_texts(
        cls,
        texts: list[str],
        embedding: Embeddings,
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: list[str] | None = None,
        context: Context | None = None,
        **kwargs: Any,
    ) -> ChopVectorStore:
        store = cls(embedding, context=context)
        store.add_texts(texts, metadatas, ids=list(ids) if ids else None, **kwargs)
        return store


_HIT_COLUMNS = (
    "doc_id",
    "doc_title",
    "chunk_index",
    "text",
    "prefix",
    "category",
    "nouns",
    "model",
    "cnm_source",
    "char_start",
    "char_end",
)


def search_filter(given: Mapping[str, Any] | None) -> SearchFilter:
    """A LangChain ``filter`` as chop's SearchFilter, checked now: a bad filter is one
    ValueError even where the collection is empty."""
    if given is None or (isinstance(given, Mapping) and not given):
        return SearchFilter()
    metadata_condition(given, {})
    return SearchFilter(metadata=given)
