"""The CHOP ingestion graph.

    load ─► profile_document (Send: one per document) ─► split
      ─► decide_cnm (Send: one per chunk)
           judge_continuity ─┬─ TRUE  ─► inherit_cnm
                             └─ FALSE ─► extract_cnm
      ─► prefix ─► embed ─► persist

Continuity judgments of different pairs, and extractions of different segment heads, do not
depend on each other, so each chunk's decision runs as its own Send (bounded by the run's
``max_concurrency``); prefix then walks each document in order and resolves inheritance.
"""

from __future__ import annotations

from typing import Any, Literal

import psycopg
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import RetryPolicy, Send

from chop.config import Context
from chop.state import Chunk, ChunkDecision, DecisionOutput, IngestInput, IngestOutput, IngestState
from nodes.embed import embed
from nodes.extract_cnm import extract_cnm
from nodes.inherit_cnm import inherit_cnm
from nodes.judge_continuity import judge_continuity
from nodes.load import load
from nodes.persist import persist
from nodes.prefix import prefix
from nodes.profile_document import OPENING_CHARS, ProfileTask, profile_document
from nodes.split import split

DATABASE_RETRY = RetryPolicy(retry_on=psycopg.OperationalError, max_attempts=3)


def route_on_continuity(state: ChunkDecision) -> Literal["TRUE", "FALSE"]:
    """CHOP's conditional edge: TRUE inherits the previous CNM, FALSE extracts a new one."""
    return "TRUE" if state["same_topic"] else "FALSE"


def route_documents(state: IngestState) -> list[Send] | Literal["split"]:
    """Profile every new or changed document concurrently."""
    documents = state.get("pending", [])
    if not documents:
        return "split"
    return [
        Send(
            "profile_document",
            ProfileTask(doc_id=d["doc_id"], title=d["title"], opening=d["text"][:OPENING_CHARS]),
        )
        for d in documents
    ]


def route_chunks(state: IngestState) -> list[Send] | Literal["prefix"]:
    """One CHOP decision per chunk, each knowing its predecessor and its document's profile."""
    chunks = state.get("chunks", [])
    if not chunks:
        return "prefix"
    profiles = state.get("profiles", {})
    sends = []
    previous: Chunk | None = None
    for chunk in chunks:
        same_doc = previous is not None and previous["doc_id"] == chunk["doc_id"]
        sends.append(
            Send(
                "decide_cnm",
                {
                    "chunk": chunk,
                    "previous": previous if same_doc else None,
                    "profile": profiles.get(
                        chunk["doc_id"], {"category": None, "model": None, "source": "fallback"}
                    ),
                },
            )
        )
        previous = chunk
    return sends


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
    return graph.compile(name="decide_cnm")


def build_ingest_graph() -> CompiledStateGraph[Any, Any, Any, Any]:
    graph = StateGraph(
        IngestState, context_schema=Context, input_schema=IngestInput, output_schema=IngestOutput
    )
    graph.add_node("load", load, retry_policy=DATABASE_RETRY)
    graph.add_node(
        "profile_document",
        profile_document,  # type: ignore[call-overload]  # a Send payload, not the state
        input_schema=ProfileTask,
    )
    graph.add_node("split", split)
    graph.add_node("decide_cnm", build_decision_graph())
    graph.add_node("prefix", prefix)
    graph.add_node("embed", embed, retry_policy=DATABASE_RETRY)
    graph.add_node("persist", persist, retry_policy=DATABASE_RETRY)
    graph.add_edge(START, "load")
    graph.add_conditional_edges("load", route_documents, ["profile_document", "split"])
    graph.add_edge("profile_document", "split")
    graph.add_conditional_edges("split", route_chunks, ["decide_cnm", "prefix"])
    graph.add_edge("decide_cnm", "prefix")
    graph.add_edge("prefix", "embed")
    graph.add_edge("embed", "persist")
    graph.add_edge("persist", END)
    return graph.compile(name="ingest")


graph = build_ingest_graph()
