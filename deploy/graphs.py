"""The graphs ``langgraph.json`` serves, as factories that see a run's context first.

Only whole pipelines a client has a use for are served (ingest, answer, chat): an internal
step such as ``decide_cnm`` (one chunk's continuity decision, a subgraph of ingest) would be
offered as an assistant and as an MCP tool that takes a chunk no client has. Studio draws it
inside the ingest graph.

A server run's ``context`` comes from whoever may call the server. The factory is called with
it as the caller sent it (merged with the assistant's), before the server drops the keys its
schema does not know, and fails the run with one message when it names

- a key that is not a setting (``{"colection": "manuals"}`` would otherwise quietly run
  against the default collection), or
- a setting only the deployment sets (``openai_base_url``, ``data_dir``, ``database_url``,
  models, keys, limits: chop_rag.config.CALLER_SETTINGS lists what a run may choose), so no
  caller can point the model endpoint at itself and receive the server's key, or make the
  server start a database in a folder of its choosing.

The served graphs check the same again on every server run (graphs/checked.py). Input keys are
checked by the graphs themselves.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langgraph.graph.state import CompiledStateGraph
from langgraph_sdk.runtime import ServerRuntime

from chop_rag.graphs.answer import graph as answer_graph
from chop_rag.graphs.chat import graph as chat_graph
from chop_rag.graphs.checked import refuse_server_context
from chop_rag.graphs.ingest import graph as ingest_graph


def _checked_context(runtime: ServerRuntime) -> None:
    context = getattr(runtime, "context", None)  # only a run's runtime carries one
    if isinstance(context, dict):
        refuse_server_context(context)


Graph = CompiledStateGraph[Any, Any, Any, Any]


def _served(graph: Graph, name: str, what: str) -> Callable[[ServerRuntime], Graph]:
    """``graph`` behind a factory that checks a run's context first. The server reads the
    factory's signature: one ``ServerRuntime`` parameter is what makes it pass the run's."""

    def factory(runtime: ServerRuntime) -> Graph:
        _checked_context(runtime)
        return graph

    factory.__name__ = factory.__qualname__ = name
    factory.__doc__ = f"{what}, for a run whose context sets only what a caller may choose."
    return factory


ingest = _served(ingest_graph, "ingest", "The ingest graph")
answer = _served(answer_graph, "answer", "The answer graph")
chat = _served(chat_graph, "chat", "The conversation graph")
