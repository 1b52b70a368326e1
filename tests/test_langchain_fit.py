"""What a LangChain / LangGraph user plugs in: checked inputs and settings, LangChain Documents in,
LangChain Embeddings as the embedder, ChopRetriever and the async API out.

The real embedded PostgreSQL and the real MiniLM embedder; only the chat model is scripted.
"""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

from chop_rag.api import aask, aingest, ask, ingest
from chop_rag.config import Context
from chop_rag.graphs.answer import graph as answer_graph
from chop_rag.graphs.ingest import graph as ingest_graph
from chop_rag.harness.sample_corpus import (
    SAMPLE_MODELS,
    manual_filename,
    render_manual,
    write_sample_corpus,
)
from chop_rag.models.construction import use_models
from chop_rag.models.embedders import Embedder
from chop_rag.reading.documents import InvalidInput, source_documents
from chop_rag.retrieval.retriever import ChopRetriever
from chop_rag.store import Store
from tests.fakes import ScriptedChatModel

QUESTION = "How often should I clean the air filter on the Coolwave 330C?"


# ---------------------------------------------------------------- bad inputs
@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"k": "5"}, "CHOP_K: setting 'k' must be int, got str '5'"),
        (
            {"search": "foo"},
            "CHOP_SEARCH: setting 'search' must be one of "
            "'auto', 'vector', 'hybrid', 'fusion', got",
        ),
        ({"use_cache": "yes"}, "CHOP_USE_CACHE: setting 'use_cache' must be bool"),
    ],
)
def test_a_wrongly_typed_setting_is_one_clear_error(
    settings: dict[str, Any], message: str, context: Context
) -> None:
    with pytest.raises(ValueError, match="^" + message.replace("(", r"\(")):
        context.with_overrides(**settings)
    # A server run's context arrives as a dict; LangGraph builds Context(**it).
    with pytest.raises(ValueError, match=message.split(",")[0]):
        answer_graph.invoke({"question": QUESTION}, context=settings)  # type: ignore[arg-type]


def test_an_answer_run_without_a_question_names_the_missing_field(
    scripted: ScriptedChatModel, context: Context
) -> None:
    with pytest.raises(InvalidInput, match="needs 'question', a string; got nothing"):
        answer_graph.invoke({}, context=context)  # type: ignore[arg-type]
    assert scripted.calls == []


@pytest.mark.usefixtures("scripted")
def test_a_bad_ingest_input_is_refused_before_anything_changes(
    context: Context, store: Store, tmp_path: Any
) -> None:
    write_sample_corpus(tmp_path)
    ingest([tmp_path], context=context)
    before = store.documents(context.collection)

    with pytest.raises(InvalidInput, match="'paths' must be a list of strings, got str"):
        ingest_graph.invoke({"paths": str(tmp_path)}, context=context)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match=r"documents\[0\] needs string field\(s\): text"):
        ingest_graph.invoke(
            {"documents": [{"doc_id": "x"}], "delete": list(before)},  # type: ignore[list-item]
            context=context,
        )
    assert store.documents(context.collection) == before  # the delete did not happen either


# --------------------------------------------------------- LangChain in, out
class MiniLMEmbeddings(Embeddings):
    """A user's own LangChain Embeddings (here backed by the local MiniLM)."""

    def __init__(self, embedder: Embedder) -> None:
        self.model = "minilm-through-langchain"
        self._embedder = embedder
        self.calls = 0

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.calls += 1
        return [list(map(float, row)) for row in self._embedder.embed(texts)]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


def sample_pages() -> list[Document]:
    """The sample manuals as a LangChain loader would give them: one Document per page."""
    pages: list[Document] = []
    for model in SAMPLE_MODELS:
        paragraphs = [p for p in render_manual(model).split("\n\n") if p.strip()]
        half = len(paragraphs) // 2
        for page, part in enumerate((paragraphs[:half], paragraphs[half:])):
            metadata = {"source": manual_filename(model), "title": f"{model} manual", "page": page}
            pages.append(Document(page_content="\n\n".join(part), metadata=metadata))
    return pages


def test_langchain_documents_pages_of_one_source_become_one_document() -> None:
    pages = [
        Document(page_content="first page", metadata={"source": "a.pdf", "page": 0}),
        Document(page_content="second page", metadata={"source": "a.pdf", "page": 1}),
        Document(page_content="other", metadata={"source": "b.pdf", "title": "B 330C"}),
    ]
    a, b = source_documents(pages)
    assert (a["doc_id"], a["title"], a["text"]) == ("a.pdf", "a.pdf", "first page\n\nsecond page")
    assert [s["meta"] for s in a["spans"]] == [{"page": 0}, {"page": 1}]
    assert a["text"][a["spans"][1]["start"] : a["spans"][1]["end"]] == "second page"
    assert (b["doc_id"], b["title"]) == ("b.pdf", "B 330C")
    # The JSON form a LangGraph server receives is accepted as well.
    serialised = {"page_content": "x", "metadata": {"source": "c"}, "type": "Document"}
    (c,) = source_documents([serialised])
    assert c["doc_id"] == "c"


def test_retriever_over_langchain_documents_and_embeddings(
    scripted: ScriptedChatModel, context: Context, store: Store, embedder: Embedder
) -> None:
    embeddings = MiniLMEmbeddings(embedder)
    with use_models(chat_model=scripted, embedder=embeddings):
        report = ingest(documents=sample_pages(), context=context)
        assert report["added"] == len(SAMPLE_MODELS) and report["problems"] == []
        assert embeddings.calls > 0  # the user's Embeddings did the embedding

        retriever = ChopRetriever(context=context, k=3)
        documents = retriever.invoke(QUESTION)
        async_documents = asyncio.run(retriever.ainvoke(QUESTION))

    assert 0 < len(documents) <= 3
    top = documents[0]
    assert isinstance(top, Document) and top.page_content.strip()
    assert top.metadata["model"] == "Coolwave 330C"  # CNM: the question's model comes first
    assert top.metadata["doc_title"] == "Coolwave 330C manual"
    assert {"category", "nouns", "prefix", "doc_id", "chunk_id", "chunk_index", "score"} <= set(
        top.metadata
    )
    assert top.id == f"{context.collection}:{top.metadata['chunk_id']}"
    assert [d.id for d in async_documents] == [d.id for d in documents]
    stored = store.documents(context.collection)
    assert set(stored) == {d.metadata["source"] for d in sample_pages()}


@pytest.mark.usefixtures("scripted")
def test_aingest_and_aask_give_what_ingest_and_ask_give(context: Context, tmp_path: Any) -> None:
    write_sample_corpus(tmp_path)

    async def run() -> tuple[dict[str, Any], dict[str, Any]]:
        report = await aingest([tmp_path], context=context)
        return report, await aask(QUESTION, context=context)

    report, answer = asyncio.run(run())
    assert report["added"] == len(SAMPLE_MODELS)
    assert answer == ask(QUESTION, context=context)
    assert answer["question_model"] == "Coolwave 330C" and answer["sources"]


def test_a_langchain_embeddings_gets_a_stable_name(embedder: Embedder) -> None:
    """The embedder's name is part of each document's fingerprint: it must not change between
    processes, or every re-ingest would relabel everything."""
    from chop_rag.models.construction import as_embedder

    first, second = as_embedder(MiniLMEmbeddings(embedder)), as_embedder(MiniLMEmbeddings(embedder))
    assert first.name == second.name == "langchain:MiniLMEmbeddings:minilm-through-langchain"
    vectors = first.embed(["filter", "remote"])
    assert vectors.shape == (2, embedder.dimension)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
