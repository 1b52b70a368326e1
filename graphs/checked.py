"""Compiled graphs that name what LangGraph would silently drop from a run.

LangGraph keeps only the input keys its input schema knows (``{"path": [...]}`` for
``{"paths": [...]}`` ingests nothing and reports zeros), and the LangGraph server keeps only
the context keys the context schema knows (``{"colection": "manuals"}`` searches the default
collection). A :class:`CheckedGraph` refuses both with one error that names the keys, from
``graph.invoke``, ``graph.stream`` and the server's ``astream`` alike; the server's context is
checked by the factories in deploy/graphs.py, which see it before the server filters it.

A run the LangGraph server started also may not set the settings only the deployment sets
(endpoints, keys, the data folder, the database URL: chop_rag.config.CALLER_SETTINGS lists what it
may). The factories refuse them first; the graph refuses them again on any server run, so a
graph served without a factory is no way around it. Python callers are the deployment and may
set everything.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, Send

from chop_rag.config import refuse_deployment_settings, refuse_unknown_settings
from chop_rag.reading.allowed import (
    is_server_run,
    refuse_documents_outside,
    refuse_paths_outside,
    server_folders,
)
from chop_rag.reading.documents import InvalidInput, source_documents

FILE_KEYS = frozenset({"paths", "documents", "document"})  # state keys that can name files


class CheckedGraph(CompiledStateGraph[Any, Any, Any, Any]):
    """A compiled StateGraph whose runs refuse unknown input and context keys by name."""

    def stream(self, input: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
        refuse_unknown_keys(self, input, kwargs.get("context"))
        refuse_server_run_settings(run_config(args, kwargs), kwargs.get("context"))
        refuse_server_paths(run_config(args, kwargs), input)
        return super().stream(input, *args, **kwargs)

    def astream(self, input: Any, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        refuse_unknown_keys(self, input, kwargs.get("context"))
        config = run_config(args, kwargs)
        refuse_server_run_settings(config, kwargs.get("context"))
        if is_server_run(config) and any(FILE_KEYS & set(v) for v in named_states(input)):
            return self._astream_in_server_folders(config, input, args, kwargs)
        return super().astream(input, *args, **kwargs)

    async def _astream_in_server_folders(
        self, config: RunnableConfig | None, input: Any, args: Any, kwargs: Any
    ) -> AsyncIterator[Any]:
        """The server run's stream once its paths are checked: the check reads the file
        system, which the server's event loop must not wait for."""
        await asyncio.to_thread(refuse_server_paths, config, input)
        async for part in super().astream(input, *args, **kwargs):
            yield part


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


def refuse_server_context(context: dict[str, Any]) -> None:
    """What a server run's context may not hold: unknown keys, then deployment settings."""
    refuse_unknown_settings(context)
    refuse_deployment_settings(context)


def run_config(args: tuple[Any, ...], kwargs: dict[str, Any]) -> RunnableConfig | None:
    """The ``config`` of a ``stream(input, config, ...)`` call, positional or by name."""
    config = kwargs.get("config", args[0] if args else None)
    return cast(RunnableConfig, config) if isinstance(config, dict) else None


def refuse_server_run_settings(config: RunnableConfig | None, context: Any) -> None:
    """On a server run, refuse a context that sets what only the deployment sets."""
    if is_server_run(config) and isinstance(context, dict):
        refuse_server_context(context)


def refuse_server_paths(config: RunnableConfig | None, run_input: Any) -> None:
    """On a server run, refuse files outside the folders the deployment allows, named by the
    input or by a ``Command`` (its state update, or the state of a node it sends to): a caller
    may not have the server read /etc or a home folder into a collection and then ask about
    it. The load node checks the same again on whatever state it reads (chop_rag.reading.allowed),
    so a route this misses is refused there; this refuses early, before a run starts."""
    if not is_server_run(config):
        return
    folders = server_folders()
    for values in named_states(run_input):
        paths = values.get("paths")
        if isinstance(paths, list):
            refuse_paths_outside([name for name in paths if isinstance(name, str)], folders)
        document = values.get("document")  # a Send to index_document carries one
        for documents in (values.get("documents"), [document] if document else None):
            try:
                read = source_documents(documents)
            except InvalidInput:  # malformed: the graph says what is wrong with it
                continue
            refuse_documents_outside(read, folders)


def named_states(run_input: Any) -> list[dict[str, Any]]:
    """The state values a run's input writes: the input itself, or a Command's update and the
    arguments of the Sends it goes to."""
    if isinstance(run_input, dict):
        return [run_input]
    if not isinstance(run_input, Command):
        return []
    found: list[dict[str, Any]] = []
    if isinstance(run_input.update, dict):
        found.append(run_input.update)
    gotos = run_input.goto if isinstance(run_input.goto, list | tuple) else [run_input.goto]
    found.extend(
        goto.arg for goto in gotos if isinstance(goto, Send) and isinstance(goto.arg, dict)
    )
    return found
