"""Compiled graphs that name what LangGraph would silently drop from a run.

LangGraph keeps only the input keys its input schema knows (``{"path": [...]}`` for
``{"paths": [...]}`` ingests nothing and reports zeros), and the LangGraph server keeps only
the context keys the context schema knows (``{"colection": "manuals"}`` searches the default
collection). A :class:`CheckedGraph` refuses both with one error that names the keys, from
``graph.invoke``, ``graph.stream`` and the server's ``astream`` alike; the server's context is
checked by the factories in deploy/graphs.py, which see it before the server filters it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

from langgraph.graph.state import CompiledStateGraph

from chop.config import refuse_unknown_settings
from chop.documents import InvalidInput


class CheckedGraph(CompiledStateGraph[Any, Any, Any, Any]):
    """A compiled StateGraph whose runs refuse unknown input and context keys by name."""

    def stream(self, input: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
        refuse_unknown_keys(self, input, kwargs.get("context"))
        return super().stream(input, *args, **kwargs)

    def astream(self, input: Any, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        refuse_unknown_keys(self, input, kwargs.get("context"))
        return super().astream(input, *args, **kwargs)


def checked(graph: CompiledStateGraph[Any, Any, Any, Any]) -> CheckedGraph:
    """``graph`` as a CheckedGraph (the same nodes, channels and settings)."""
    return CheckedGraph(**{k: v for k, v in vars(graph).items() if k != "__orig_class__"})


def refuse_unknown_keys(
    graph: CompiledStateGraph[Any, Any, Any, Any], run_input: Any, context: Any
) -> None:
    """Raise InvalidInput for input keys outside the graph's input schema and ValueError for
    context keys that are not settings (a Context object, or a resume's None, is fine)."""
    if isinstance(run_input, dict):
        accepted = list(graph.builder.schemas[graph.builder.input_schema])
        unknown = [key for key in run_input if key not in accepted]
        if unknown:
            raise InvalidInput(
                f"unknown input key(s) {', '.join(map(repr, unknown))}: the {graph.name} graph "
                f"takes {', '.join(accepted)}"
            )
    if isinstance(context, dict):
        refuse_unknown_settings(context)
