"""ChopVectorStore as LangChain's users of langchain-postgres know it: metadata filters with
its operators on any key, maximal marginal relevance, and ``delete`` as LangChain specifies.

The real embedded PostgreSQL; vectors chosen by hand, so what is near what is known."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

from chop_rag.config import Context
from chop_rag.retrieval.vectorstore import ChopVectorStore
from chop_rag.store import Store

# id -> (vector, metadata): the query is [1, 0, 0]
ROWS: dict[str, tuple[list[float], dict[str, Any]]] = {
    "filter-1": ([1.0, 0.0, 0.0], {"page": 1, "kind": "manual", "title": "Air Filter"}),
    "filter-2": ([0.99, 0.1, 0.0], {"page": 2, "kind": "manual", "title": "air filter care"}),
    "tank-3": ([0.7, 0.7, 0.1], {"page": 3, "kind": "manual", "title": "Water Tank"}),
    "report-4": ([0.6, 0.0, 0.8], {"page": 4, "kind": "10-K", "draft": True, "year": "2023"}),
    "note-5": ([0.5, 0.5, 0.7], {"kind": "note", "draft": False, "year": "2021"}),
}
QUERY = "the query"


class HandMadeEmbeddings(Embeddings):
    """Each text's vector is its row's, found by its last line (a CNM prefix is embedded
    above it); the query's is [1, 0, 0]."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        rows = [ROWS.get(text.splitlines()[-1]) for text in texts]
        return [row[0] if row else [1.0, 0.0, 0.0] for row in rows]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


@pytest.fixture
def vectors(context: Context, store: Store) -> ChopVectorStore:
    vectors = ChopVectorStore(HandMadeEmbeddings(), context=context)
    vectors.add_documents(
        [Document(page_content=doc_id, metadata=meta) for doc_id, (_, meta) in ROWS.items()],
        ids=list(ROWS),
        cnm=[{"model": "Coolwave 330C"}] * 3 + [None, None],
    )
    return vectors


def found(vectors: ChopVectorStore, filter: dict[str, Any]) -> set[str]:
    return {str(doc.id) for doc in vectors.similarity_search(QUERY, k=10, filter=filter)}


@pytest.mark.parametrize(
    ("filter", "expected"),
    [
        ({"kind": "manual"}, {"filter-1", "filter-2", "tank-3"}),
        ({"kind": {"$eq": "10-K"}}, {"report-4"}),
        ({"draft": True}, {"report-4"}),
        ({"page": 2.0}, {"filter-2"}),  # numbers compare as numbers
        ({"kind": {"$ne": "manual"}}, {"report-4", "note-5"}),
        ({"draft": {"$ne": True}}, {"note-5"}),  # a chunk without the key is not "not equal"
        ({"page": {"$lt": 3}}, {"filter-1", "filter-2"}),
        ({"page": {"$lte": 3}}, {"filter-1", "filter-2", "tank-3"}),
        ({"page": {"$gt": 3}}, {"report-4"}),
        ({"page": {"$gte": 3}}, {"tank-3", "report-4"}),
        ({"year": {"$gte": "2022"}}, {"report-4"}),  # strings compare as strings
        ({"page": {"$gt": "1"}}, set()),  # a string is not compared with numbers
        ({"page": {"$gt": 1, "$lt": 4}}, {"filter-2", "tank-3"}),  # both must hold
        ({"page": {"$between": [2, 3]}}, {"filter-2", "tank-3"}),
        ({"kind": {"$in": ["10-K", "note"]}}, {"report-4", "note-5"}),
        ({"page": {"$in": [1, 4, 9]}}, {"filter-1", "report-4"}),
        ({"kind": {"$nin": ["manual", "note"]}}, {"report-4"}),
        ({"draft": {"$nin": [True]}}, {"note-5"}),
        ({"title": {"$like": "%Filter%"}}, {"filter-1"}),
        ({"title": {"$ilike": "%filter%"}}, {"filter-1", "filter-2"}),
        ({"draft": {"$exists": True}}, {"report-4", "note-5"}),
        ({"page": {"$exists": False}}, {"note-5"}),
        ({"kind": "manual", "page": {"$gte": 2}}, {"filter-2", "tank-3"}),
        ({"$and": [{"kind": "manual"}, {"page": {"$gte": 2}}]}, {"filter-2", "tank-3"}),
        ({"$or": [{"page": 1}, {"kind": "note"}]}, {"filter-1", "note-5"}),
        ({"$not": {"kind": "manual"}}, {"report-4", "note-5"}),
        ({"$not": {"draft": True}}, {"filter-1", "filter-2", "tank-3", "note-5"}),  # complement
        ({"$not": [{"kind": "manual"}, {"page": {"$lt": 3}}]}, {"tank-3", "report-4", "note-5"}),
        (
            {"$or": [{"$and": [{"kind": "manual"}, {"page": {"$gt": 2}}]}, {"year": "2021"}]},
            {"tank-3", "note-5"},
        ),
    ],
)
def test_each_filter_operator_selects_as_langchain_postgres_documents_it(
    vectors: ChopVectorStore, filter: dict[str, Any], expected: set[str]
) -> None:
    assert found(vectors, filter) == expected


def test_chop_fields_of_a_chunk_filter_where_the_metadata_does_not_set_them(
    vectors: ChopVectorStore,
) -> None:
    """The CNM a caller gave (the model column) and the document id are chop's fields."""
    assert found(vectors, {"model": "Coolwave 330C"}) == {"filter-1", "filter-2", "tank-3"}
    assert found(vectors, {"model": {"$ilike": "coolwave 330c"}, "page": 1}) == {"filter-1"}
    assert found(vectors, {"doc_id": {"$in": ["note-5", "tank-3"]}}) == {"note-5", "tank-3"}
    assert found(vectors, {"cnm_source": "caller"}) == set(ROWS)


def test_filter_values_and_keys_are_bound_never_written_into_the_sql(
    vectors: ChopVectorStore,
) -> None:
    assert found(vectors, {"kind": "x' OR '1'='1"}) == set()
    assert found(vectors, {"it's": {"$like": "%'; DROP TABLE chop_llm_cache; --"}}) == set()
    assert found(vectors, {"kind') OR TRUE --": 1}) == set()
    assert found(vectors, {"kind": "manual"}) == {"filter-1", "filter-2", "tank-3"}  # all there


@pytest.mark.parametrize(
    ("filter", "message"),
    [
        ({"page": {"$gtt": 1}}, r"unknown filter operator '\$gtt' on 'page'"),
        ({"$nor": [{"page": 1}]}, r"unknown filter operator '\$nor'"),
        ({"page": {"$in": 1}}, r"\$in on 'page' takes a list"),
        ({"page": {"$gt": True}}, r"\$gt on 'page' compares with a string or a number"),
        ({"page": [1, 2]}, r"\$eq on 'page' compares with a string, a number"),
        ({"page": {"$between": [1]}}, r"\$between on 'page' takes \[low, high\]"),
        ({"title": {"$like": 3}}, r"\$like on 'title' takes a SQL pattern"),
        ({"draft": {"$exists": "yes"}}, r"\$exists on 'draft' takes true or false"),
        ({"$and": []}, r"\$and takes a non-empty list"),
        ({"$or": [{}]}, r"each filter of \$or must be a non-empty dict"),
        ({"": 1}, "metadata key must be a non-empty string"),
        ({"page": float("nan")}, "finite number"),
    ],
)
def test_a_bad_filter_is_one_clear_error_even_on_an_empty_collection(
    context: Context, store: Store, filter: dict[str, Any], message: str
) -> None:
    empty = ChopVectorStore(HandMadeEmbeddings(), context=context)
    with pytest.raises(ValueError, match=message):
        empty.similarity_search(QUERY, filter=filter)


def test_mmr_trades_a_near_duplicate_for_a_different_passage(vectors: ChopVectorStore) -> None:
    nearest = [doc.id for doc in vectors.similarity_search(QUERY, k=2)]
    assert nearest == ["filter-1", "filter-2"]
    diverse = vectors.max_marginal_relevance_search(QUERY, k=2, fetch_k=5, lambda_mult=0.3)
    assert [doc.id for doc in diverse] == ["filter-1", "note-5"]
    assert diverse[0].metadata == ROWS["filter-1"][1]  # documents as they were added
    # lambda_mult=1 is relevance alone: the similarity search's order
    relevant = vectors.max_marginal_relevance_search(QUERY, k=2, fetch_k=5, lambda_mult=1.0)
    assert [doc.id for doc in relevant] == nearest
    # fetch_k bounds the candidates
    assert len(vectors.max_marginal_relevance_search(QUERY, k=4, fetch_k=2)) == 2


def test_mmr_through_the_retriever_and_by_vector_with_a_filter(vectors: ChopVectorStore) -> None:
    retriever = vectors.as_retriever(
        search_type="mmr", search_kwargs={"k": 2, "fetch_k": 5, "lambda_mult": 0.3}
    )
    assert [doc.id for doc in retriever.invoke(QUERY)] == ["filter-1", "note-5"]
    manuals = vectors.max_marginal_relevance_search_by_vector(
        [1.0, 0.0, 0.0], k=2, fetch_k=5, lambda_mult=0.3, filter={"kind": "manual"}
    )
    assert [doc.id for doc in manuals] == ["filter-1", "tank-3"]


def test_mmr_async_and_on_a_missing_collection(vectors: ChopVectorStore, context: Context) -> None:
    import asyncio

    found = asyncio.run(vectors.amax_marginal_relevance_search(QUERY, k=2, lambda_mult=0.3))
    assert [doc.id for doc in found] == ["filter-1", "note-5"]
    missing = ChopVectorStore(
        HandMadeEmbeddings(), context=context.with_overrides(collection="t_never_made")
    )
    assert missing.max_marginal_relevance_search(QUERY, k=2) == []


def test_delete_without_ids_empties_the_collection_as_langchain_specifies(
    vectors: ChopVectorStore, store: Store, context: Context
) -> None:
    assert vectors.delete([]) is False  # an empty list names nothing
    assert len(vectors.get_by_ids(list(ROWS))) == len(ROWS)
    assert vectors.delete(["filter-1", "unknown"]) is True
    assert vectors.delete(["unknown"]) is False
    assert vectors.delete() is True
    assert vectors.get_by_ids(list(ROWS)) == []
    assert vectors.similarity_search(QUERY, k=5) == []
    assert store.collection_exists(context.collection)  # kept, with its embedder
    assert vectors.delete() is False  # nothing left to delete
    vectors.add_texts(["tank-3"], ids=["again"])
    assert [doc.id for doc in vectors.similarity_search(QUERY, k=5)] == ["again"]
    with pytest.raises(TypeError, match="unexpected arguments: collection_only"):
        vectors.delete(collection_only=True)
