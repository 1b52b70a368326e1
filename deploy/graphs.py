"""The graphs ``langgraph.json`` serves, as factories that see a run's context first.

The LangGraph server drops context keys its schema does not know before a graph sees them, so
a misspelt setting (``{"colection": "manuals"}``) would quietly run against the default
collection. A factory is called with the run's context as the caller sent it: an unknown key
fails the run with one message naming it. Input keys are checked by the graphs themselves
(graphs/checked.py).
"""

from __future__ import annotations

from typing import Any

from langgraph.graph.state import CompiledStateGraph
from langgraph_sdk.runtime import ServerRuntime

from chop.config import refuse_unknown_settings
from graphs.answer import graph as answer_graph
from graphs.chat import graph as chat_graph
from graphs.ingest import graph as ingest_graph


def _checked_context(runtime: ServerRuntime) -> None:
    context = getattr(runtime, "context", None)  # only a run's runtime carries one
    if isinstance(context, dict):
        refuse_unknown_settings(context)


def ingest(runtime: ServerRuntime) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The ingest graph, for a run whose context keys are all settings."""
    _checked_context(runtime)
    return ingest_graph


def answer(runtime: ServerRuntime) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The answer graph, for a run whose context keys are all settings."""
    _checked_context(runtime)
    return answer_graph


def chat(runtime: ServerRuntime) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The conversation graph, for a run whose context keys are all settings."""
    _checked_context(runtime)
    return chat_graph
