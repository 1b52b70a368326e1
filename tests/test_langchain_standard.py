"""LangChain's own standard test suites (langchain-tests) on chop's LangChain pieces:
ChopRetriever, ChopVectorStore and ChopEmbeddings, plus what chop promises beyond them
(the retriever resolves the question as ``ask`` does; the vector store reads collections
that ``ingest`` made and keeps a caller's CNM).

The real embedded PostgreSQL and the real MiniLM embedder; only the chat model is scripted.
"""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.retrievers import BaseRetriever
from langchain_core.vectorstores import VectorStore
from langchain_tests.integration_tests import (
    EmbeddingsIntegrationTests,
    RetrieversIntegrationTests,
    VectorStoreIntegrationTests,
)
from langchain_tests.unit_tests import EmbeddingsUnitTests

from chop_rag.api import ask, ingest
from chop_rag.config import Context
from chop_rag.harness.sample_corpus import SAMPLE_MODELS, write_sample_corpus
from chop_rag.models.construction import ChopEmbeddings, as_embedder, use_models
from chop_rag.models.embedders import Embedder
from chop_rag.retrieval.retriever import ChopRetriever
from chop_rag.retrieval.vectorstore import ChopVectorStore
from chop_rag.store import Store, store_for
from tests.fakes import ScriptedChatModel

TOPIC_QUESTION = "How do I clean the air filter?"  # names no model: every manual may answer
TWIN_QUESTION = "How often should I clean the air filter on the Coolwave 330C?"
_manuals: dict[str, Context] = {}  # the module's ingested collection, for the suite's properties


@pytest.fixture(scope="module")
def manuals(data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Context]:
    """The three near-identical sample manuals (Coolwave 225B, 330C, 410X), ingested once."""
    ctx = Context(
        database_url=os.environ.get("CHOP_DATABASE_URL", ""),
        data_dir=str(data_dir),
        collection=f"t_{uuid.uuid4().hex[:12]}",
        use_cache=False,
    )
    folder = tmp_path_factory.mktemp("manuals")
    write_sample_corpus(folder)
    with use_models(chat_model=ScriptedChatModel(calls=[])):
        report = ingest([folder], context=ctx, durable=False)
    assert report["added"] == len(SAMPLE_MODELS), report
    _manuals["context"] = ctx
    yield ctx
    store_for(ctx).drop_collection(ctx.collection)


# ------------------------------------------------------------ standard suites
class TestChopRetrieverStandard(RetrieversIntegrationTests):
    @pytest.fixture(autouse=True)
    def _ingested(self, manuals: Context) -> None:
        """The suite's properties take no fixtures: the collection is made before them."""

    @property
    def retriever_constructor(self) -> type[BaseRetriever]:
        return ChopRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"context": _manuals["context"]}

    @property
    def retriever_query_example(self) -> str:
        return TOPIC_QUESTION


class TestChopVectorStoreStandard(VectorStoreIntegrationTests):
    """An empty collection per test, with the suite's deterministic fake embeddings."""

    @pytest.fixture
    def vectorstore(self, context: Context, store: Store) -> Iterator[VectorStore]:
        yield ChopVectorStore(self.get_embeddings(), context=context)


class TestChopEmbeddingsUnit(EmbeddingsUnitTests):
    @property
    def embeddings_class(self) -> type[Embeddings]:
        return ChopEmbeddings

    @property
    def embedding_model_params(self) -> dict[str, Any]:
        return {"model": "all-MiniLM-L6-v2", "provider": "local"}

    @property
    def init_from_env_params(self) -> tuple[dict[str, str], dict[str, Any], dict[str, Any]]:
        env = {"CHOP_EMBEDDING_MODEL": "all-MiniLM-L6-v2-int8", "CHOP_EMBEDDING_PROVIDER": "local"}
        return env, {}, {"model": "all-MiniLM-L6-v2-int8", "provider": "local"}


def session_data_dir() -> str:
    """The session's data folder (conftest.data_dir), for properties that take no fixtures."""
    return os.environ.get("CHOP_TEST_DATA_DIR") or str(
        Path(tempfile.gettempdir()) / "chop-test-data"
    )


class LocalEmbeddingsIntegration(EmbeddingsIntegrationTests):
    """The integration suite on one of chop's local embedders (``model``), in the session's
    data folder (the int8 export and the nomic weights are made or joined there); the suite's
    own ``model`` is a fixture, so the name is ``chop_model``."""

    chop_model = "all-MiniLM-L6-v2"

    @property
    def embeddings_class(self) -> type[Embeddings]:
        return ChopEmbeddings

    @property
    def embedding_model_params(self) -> dict[str, Any]:
        return {"model": self.chop_model, "provider": "local", "data_dir": session_data_dir()}


class TestChopEmbeddingsIntegration(LocalEmbeddingsIntegration):
    """MiniLM, the default."""


class TestChopEmbeddingsInt8Integration(LocalEmbeddingsIntegration):
    """MiniLM with int8 weights in ONNX Runtime (exported into the data folder at first use)."""

    chop_model = "all-MiniLM-L6-v2-int8"


@pytest.mark.nomic
class TestChopEmbeddingsNomicIntegration(LocalEmbeddingsIntegration):
    """nomic-embed-text-v1.5 through llama.cpp, with its query and passage prefixes."""

    chop_model = "nomic-embed-text-v1.5"


# ------------------------------------------------ the retriever is ask's retrieval
def test_the_k_keyword_and_search_settings_apply_per_call(manuals: Context) -> None:
    retriever = ChopRetriever(context=manuals, k=4)
    assert len(retriever.invoke(TOPIC_QUESTION)) == 4
    assert len(retriever.invoke(TOPIC_QUESTION, k=1)) == 1
    hybrid = retriever.invoke(TOPIC_QUESTION, k=2, search="hybrid")
    assert len(hybrid) == 2
    assert "hybrid" not in hybrid[0].metadata["retrieval_note"]  # said only when auto chose it
    kept = ChopRetriever(context=manuals, search_kwargs={"k": 3}).invoke(TOPIC_QUESTION)
    assert len(kept) == 3
    with pytest.raises(ValueError, match="k, search, query_cnm, ef_search; not 'kk'"):
        retriever.invoke(TOPIC_QUESTION, kk=2)
    with pytest.raises(ValueError, match="setting 'k' must be int"):
        retriever.invoke(TOPIC_QUESTION, k="2")


@pytest.mark.usefixtures("scripted")
def test_a_question_naming_a_twin_gets_only_its_chunks_as_ask_does(manuals: Context) -> None:
    documents = ChopRetriever(context=manuals, k=5).invoke(TWIN_QUESTION)
    assert documents
    assert {d.metadata["model"] for d in documents} == {"Coolwave 330C"}
    (meant,) = {d.metadata["doc_id"] for d in documents}
    resolution = documents[0].metadata["resolution"]
    assert resolution["documents"] == [meant] and resolution["label"] == "Coolwave 330C"
    assert documents[0].metadata["about_question"] is True

    answer = ask(TWIN_QUESTION, context=manuals.with_overrides(k=5))
    assert [s["chunk_id"] for s in answer["sources"]] == [d.metadata["chunk_id"] for d in documents]


def test_a_model_no_manual_covers_gets_the_closest_chunks_marked_not_about_it(
    manuals: Context,
) -> None:
    documents = ChopRetriever(context=manuals, k=3).invoke(
        "How often should I clean the air filter on the Coolwave 999Z?"
    )
    assert len(documents) == 3
    assert all(d.metadata["about_question"] is False for d in documents)
    assert "999Z" in documents[0].metadata["retrieval_note"]


# ------------------------------------------------------------- the vector store
def test_the_vector_store_reads_a_collection_ingest_made(manuals: Context) -> None:
    """With chop's own embedder (the default) it is the collection's embedder, so no
    EmbedderMismatch; ingest's chunks come back with chop's metadata."""
    vectors = ChopVectorStore(context=manuals)
    found = vectors.similarity_search("air filter cleaning interval", k=3)
    assert len(found) == 3
    assert {"model", "doc_id", "chunk_index", "prefix"} <= set(found[0].metadata)
    only = vectors.similarity_search("air filter", k=5, filter={"model": "Coolwave 410X"})
    assert only and {d.metadata["model"] for d in only} == {"Coolwave 410X"}
    retriever_docs = vectors.as_retriever(search_kwargs={"k": 2}).invoke("air filter")
    assert len(retriever_docs) == 2
    # ingest's own metadata and chop's fields filter as any metadata key does
    later = vectors.similarity_search(
        "air filter", k=5, filter={"model": "Coolwave 410X", "chunk_index": {"$gte": 1}}
    )
    assert later and all(d.metadata["chunk_index"] >= 1 for d in later)
    assert {d.metadata["model"] for d in later} == {"Coolwave 410X"}
    headed = vectors.similarity_search("air filter", k=3, filter={"headings": {"$exists": True}})
    assert headed and all(d.metadata.get("headings") is not None for d in headed)
    diverse = vectors.as_retriever(search_type="mmr", search_kwargs={"k": 3}).invoke("air filter")
    assert len(diverse) == 3 and len({d.metadata["chunk_id"] for d in diverse}) == 3


def test_a_caller_cnm_is_embedded_as_ingest_embeds_and_filters_like_it(
    context: Context, store: Store, embedder: Embedder
) -> None:
    vectors = ChopVectorStore(ChopEmbeddings(model="all-MiniLM-L6-v2"), context=context)
    texts = ["Rinse the filter under warm water.", "Rinse the filter under warm water."]
    ids = vectors.add_texts(
        texts,
        [{"page": 1}, {"page": 2}],
        ids=["a", "b"],
        cnm=[{"model": "Coolwave 330C", "nouns": ["air filter"]}, {"model": "Coolwave 410X"}],
    )
    assert ids == ["a", "b"]
    (row,) = store.chunks(context.collection, "a")
    assert (row["model"], row["prefix"]) == ("Coolwave 330C", "Coolwave 330C | air filter")
    assert row["nouns"] == ["air filter"] and row["cnm_source"] == "caller"
    # the prefixed text is what was embedded: the same vector as embedding it directly
    expected = embedder.embed(["Coolwave 330C | air filter\nRinse the filter under warm water."])
    got = vectors.similarity_search_by_vector_with_score(list(map(float, expected[0])), k=1)
    assert got[0][0] == Document(id="a", page_content=texts[0], metadata={"page": 1})
    assert got[0][1] == pytest.approx(1.0, abs=1e-3)
    (only,) = vectors.similarity_search("filter", k=5, filter={"model": "Coolwave 410X"})
    assert only.id == "b"
    (only,) = vectors.similarity_search("filter", k=5, filter={"model": {"$ilike": "%410x"}})
    assert only.id == "b"
    # chop docs / chop delete see them as documents
    assert set(store.documents(context.collection)) == {"a", "b"}
    assert (
        ChopRetriever(context=context, k=1).invoke("Coolwave 410X filter")[0].metadata["doc_id"]
        == "b"
    )


def test_chop_embeddings_passed_to_chop_are_the_embedder_they_wrap(embedder: Embedder) -> None:
    wrapped = ChopEmbeddings(model="all-MiniLM-L6-v2", provider="local")
    assert as_embedder(wrapped) is wrapped.embedder
    assert wrapped.embedder.name == embedder.name == "all-MiniLM-L6-v2"
    assert wrapped.embed_query("air filter") == pytest.approx(
        [float(x) for x in embedder.embed(["air filter"])[0]], abs=2e-3
    )


def test_bad_vector_store_input_is_one_clear_error(context: Context, store: Store) -> None:
    vectors = ChopVectorStore(VectorStoreIntegrationTests.get_embeddings(), context=context)
    with pytest.raises(ValueError, match=r"unknown filter operator '\$gt3' on 'page'"):
        vectors.similarity_search("x", filter={"page": {"$gte": 1, "$gt3": 2}})
    with pytest.raises(ValueError, match="cnm takes model, category and nouns; not modle"):
        vectors.add_texts(["x"], cnm={"modle": "330C"})
    with pytest.raises(ValueError, match="metadata of document 'x' is not JSON"):
        vectors.add_texts(["x"], [{"when": object()}], ids=["x"])
    with pytest.raises(ValueError, match="2 texts but 1 ids"):
        vectors.add_texts(["x", "y"], ids=["x"])


def test_the_retriever_takes_a_question_as_ask_does(manuals: Context) -> None:
    """The same cleaning as the answer graph: a NUL (PostgreSQL text refuses it) is a space,
    a question too long for search is one clear error."""
    retriever = ChopRetriever(context=manuals, k=2)
    assert [d.id for d in retriever.invoke("air\x00filter")] == [
        d.id for d in retriever.invoke("air filter")
    ]
    assert retriever.invoke("   ") == []
    with pytest.raises(ValueError, match="question"):
        retriever.invoke("filter " * 2000)
