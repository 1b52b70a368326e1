"""The Python API: ingest paths or documents, ask questions; the graphs underneath.

    from chop.api import ingest, ask
    report = ingest(["manuals/"])
    result = ask("How often do I clean the filter of the 330C?")
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from chop.config import Context
from chop.documents import SourceDocument

Event = dict[str, Any]


def run_config(ctx: Context, thread_id: str | None = None) -> dict[str, Any]:
    config: dict[str, Any] = {"max_concurrency": ctx.max_concurrency, "recursion_limit": 50}
    if thread_id:
        config["configurable"] = {"thread_id": thread_id}
    return config


def ingest(
    paths: Iterable[str | Path] = (),
    documents: Sequence[SourceDocument] = (),
    *,
    delete: Sequence[str] = (),
    context: Context | None = None,
    on_event: Callable[[Event], None] | None = None,
    checkpointer: BaseCheckpointSaver | None = None,
    thread_id: str | None = None,
) -> dict[str, Any]:
    """Index ``paths`` (files or folders) and/or loaded ``documents``; returns the report.

    With a ``checkpointer`` (e.g. langgraph's PostgresSaver) and a ``thread_id`` the run is
    durable: calling again with the same thread_id after a crash resumes where it stopped.
    """
    from graphs.ingest import build_ingest_graph

    ctx = context or Context()
    graph = build_ingest_graph()
    if checkpointer is not None:
        graph = graph.builder.compile(checkpointer=checkpointer, name="ingest")  # type: ignore[attr-defined]
        thread_id = thread_id or str(uuid.uuid4())
    payload: dict[str, Any] | None = {
        "paths": [str(p) for p in paths],
        "documents": list(documents),
        "delete": list(delete),
    }
    config = run_config(ctx, thread_id)
    if checkpointer is not None and graph.get_state(config).next:
        payload = None  # an unfinished run of this thread: resume it
    final: dict[str, Any] = {}
    for namespace, mode, chunk in graph.stream(
        payload, config=config, context=ctx, stream_mode=["custom", "values"], subgraphs=True
    ):
        if mode == "custom" and on_event is not None:
            on_event(chunk)
        elif mode == "values" and not namespace:
            final = chunk
    return {
        **final.get("report", {}),
        "problems": final.get("problems", []),
        "stats": final.get("stats", {}),
    }


def ask(question: str, *, context: Context | None = None) -> dict[str, Any]:
    """Answer ``question`` from the collection; returns answer, citations and sources."""
    from graphs.answer import graph

    ctx = context or Context()
    return dict(graph.invoke({"question": question}, context=ctx, config=run_config(ctx)))
