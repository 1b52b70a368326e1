"""The CHOP ingestion graph.

    load ─► index_document (Send: one per new or changed document)
              profile_document ─► split
                ─► decide_cnm (Send: one per chunk)
                     judge_continuity ─┬─ TRUE  ─► inherit_cnm
                                       └─ FALSE ─► extract_cnm
                ─► prefix ─► embed ─► persist

Documents are independent, so each runs its own pipeline and is stored as soon as it is done:
embedding one document overlaps the LLM calls of the others, and a crash keeps every finished
document. Inside a document, continuity judgments of different pairs and extractions of
different segment heads do not depend on each other either, so each chunk's decision is its own
Send; prefix then walks the document in order and resolves inheritance. LLM calls in flight
are bounded by ``Context.max_concurrency`` (chop_rag.models.llm), graph tasks by the run's
``max_concurrency``.

Every stage records when it ran and the CPU it used (``stage_spans``, chop_rag.stage_profile):
load's parsing, each LLM request, and the split, embed and persist nodes, timed whole here.
"""

from __future__ import annotations

from typing import Any, Literal

import psycopg
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import RetryPolicy, Send

from chop_rag.config import Context
from chop_rag.graphs.checked import checked
from chop_rag.labelling.profile import NO_PROFILE
from chop_rag.nodes.embed import embed
from chop_rag.nodes.extract_cnm import extract_cnm
from chop_rag.nodes.inherit_cnm import inherit_cnm
from chop_rag.nodes.judge_continuity import judge_continuity
from chop_rag.nodes.load import load
from chop_rag.nodes.persist import persist
from chop_rag.nodes.prefix import prefix
from chop_rag.nodes.profile_document import profile_document
from chop_rag.nodes.split import split
from chop_rag.stage_profile import timed_node
from chop_rag.state import (
    Chunk,
    ChunkDecision,
    DecisionOutput,
    DocumentOutput,
    DocumentState,
    DocumentTask,
    IngestInput,
    IngestOutput,
    IngestState,
)

DATABASE_RETRY = RetryPolicy(retry_on=psycopg.OperationalError, max_attempts=3)


def route_on_continuity(state: ChunkDecision) -> Literal["TRUE", "FALSE"]:
    """CHOP's conditional edge: TRUE inherits the previous CNM, FALSE extracts a new one."""
    return "TRUE" if state["same_topic"] else "FALSE"


def route_documents(state: IngestState) -> list[Send] | Literal["__end__"]:
    """Index every new or changed document concurrently."""
    tasks = state.get("pending", [])
    if not tasks:
        return "__end__"
    return [Send("index_document", task) for task in tasks]


def route_chunks(state: DocumentState) -> list[Send] | Literal["prefix"]:
    """One CHOP decision per chunk, each knowing its predecessor and its document's profile."""
    chunks = state.get("chunks", [])
    if not chunks:
        return "prefix"
    profile = state.get("profile", NO_PROFILE)
    previous: list[Chunk | None] = [None, *chunks[:-1]]
    return [
        Send("decide_cnm", {"chunk": chunk, "previous": before, "profile": profile})
        for chunk, before in zip(chunks, previous, strict=True)
    ]


def build_decision_graph() -> CompiledStateGraph[Any, Any, Any, Any]:
    """Per chunk: judge continuity, then inherit (TRUE) or extract (FALSE)."""
    graph = StateGraph(ChunkDecision, context_schema=Context, output_schema=DecisionOutput)
    graph.add_node("judge_continuity", judge_continuity)
    graph.add_node("inherit_cnm", inherit_cnm)
    graph.add_node("extract_cnm", extract_cnm)
    graph.add_edge(START, "judge_continuity")
    graph.add_conditional_edges(
        "judge_continuity", route_on_continuity, {"TRUE": "inherit_cnm", "FALSE": "extract_cnm"}
    )
    graph.add_edge("inherit_cnm", END)
    graph.add_edge("extract_cnm", END)
    # A chunk's decision is two steps with nothing worth resuming between them: its result
    # is recorded by the document graph's task write, so the subgraph keeps no checkpoints
    # of its own (a 700-chunk filing otherwise spends most of a durable run writing them).
    return graph.compile(name="decide_cnm", checkpointer=False)


def build_document_graph() -> CompiledStateGraph[Any, Any, Any, Any]:
    """One document: profile, split, decide every chunk, prefix, embed, store."""
    graph = StateGraph(
        DocumentState,
        context_schema=Context,
        input_schema=DocumentTask,
        output_schema=DocumentOutput,
    )
    graph.add_node("profile_document", profile_document)
    graph.add_node("split", timed_node("split", split))
    graph.add_node("decide_cnm", build_decision_graph())
    graph.add_node("prefix", prefix)
    graph.add_node("embed", timed_node("embed", embed), retry_policy=DATABASE_RETRY)
    graph.add_node("persist", timed_node("persist", persist), retry_policy=DATABASE_RETRY)
    graph.add_edge(START, "profile_document")
    graph.add_edge("profile_document", "split")
    graph.add_conditional_edges("split", route_chunks, ["decide_cnm", "prefix"])
    graph.add_edge("decide_cnm", "prefix")
    graph.add_edge("prefix", "embed")
    graph.add_edge("embed", "persist")
    graph.add_edge("persist", END)
    return graph.compile(name="index_document")


def build_ingest_graph() -> CompiledStateGraph[Any, Any, Any, Any]:
    graph = StateGraph(
        IngestState, context_schema=Context, input_schema=IngestInput, output_schema=IngestOutput
    )
    graph.add_node("load", load, retry_policy=DATABASE_RETRY)
    graph.add_node("index_document", build_document_graph())
    graph.add_edge(START, "load")
    graph.add_conditional_edges("load", route_documents, ["index_document", END])
    graph.add_edge("index_document", END)
    return graph.compile(name="ingest")


graph = checked(build_ingest_graph())  # a misspelt input or context key is an error
