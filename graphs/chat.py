"""The conversation graph: each user message is a turn, answered like a one-off question once
its continuity with the thread's last turn is decided (chop_rag.questions.conversation).

resolve_turn ─┬─ continue ─────────────► inherit_turn ─┐
              ├─ first / switch ───────► switch_turn ──┼─► retrieve ─► … ─► reply
              └─ switch_same_question ─► reask_turn ───┘

where "retrieve ─► …" is the answer graph's path (graphs/answer.py: judged, then answered or
declined), ending in reply instead of END.

State: ``messages`` (merged by id, each stored once: chop_rag.state.Messages; the last is the
answer, an AIMessage whose ``additional_kwargs["chop"]`` holds citations, sources, declined and
continuity) and ``turn`` (the typed resolution of the last turn), checkpointed per thread:
chop_rag.api uses chop's PostgreSQL checkpointer (chop_rag.store.checkpoints), ``langgraph dev`` and
the server their own.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

from langchain_core.messages import convert_to_messages
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from chop_rag.config import Context
from chop_rag.graphs.answer import add_answer_path
from chop_rag.graphs.checked import CheckedGraph, checked
from chop_rag.nodes.inherit_turn import inherit_turn
from chop_rag.nodes.reask_turn import reask_turn
from chop_rag.nodes.reply import reply
from chop_rag.nodes.resolve_turn import resolve_turn
from chop_rag.nodes.switch_turn import switch_turn
from chop_rag.questions.conversation import Decision
from chop_rag.reading.documents import InvalidInput
from chop_rag.state import ChatInput, ChatOutput, ChatState


def route_on_continuity(state: ChatState) -> Decision:
    """The continuity decision resolve_turn made (each is an edge Studio draws)."""
    decision: Decision = state["continuity"]["decision"]
    return decision


def build_chat_graph() -> CompiledStateGraph[Any, Any, Any, Any]:
    graph = StateGraph(
        ChatState, context_schema=Context, input_schema=ChatInput, output_schema=ChatOutput
    )
    graph.add_node(resolve_turn)
    graph.add_node(inherit_turn)
    graph.add_node(switch_turn)
    graph.add_node(reask_turn)
    graph.add_edge(START, "resolve_turn")
    graph.add_conditional_edges(
        "resolve_turn",
        route_on_continuity,
        {
            "continue": "inherit_turn",
            "first": "switch_turn",
            "switch": "switch_turn",
            "switch_same_question": "reask_turn",
        },
    )
    for chosen in ("inherit_turn", "switch_turn", "reask_turn"):
        graph.add_edge(chosen, "retrieve")
    graph.add_node(reply)
    add_answer_path(graph, "reply")  # the answer graph's nodes, as they are
    graph.add_edge("reply", END)
    return graph.compile(name="chat")


MESSAGE_SHAPE = '{"role": "user", "content": "..."}'


def refuse_malformed_messages(run_input: Any) -> None:
    """One sentence for input messages LangChain cannot read, before LangGraph turns them into
    messages (where a content of 12345 is a many-line pydantic error)."""
    messages = run_input.get("messages") if isinstance(run_input, dict) else None
    if messages is None:
        return  # a resume, or no messages: resolve_turn says what it needs
    listed = messages if isinstance(messages, list) else [messages]
    for number, message in enumerate(listed, start=1):
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(message, dict) and not is_content(content):
            raise InvalidInput(
                f"message {number}'s content must be text or a list of content blocks, "
                f"not {type(content).__name__} {str(content)[:40]!r}: send {MESSAGE_SHAPE}"
            )
    try:
        convert_to_messages(listed)
    except (ValueError, TypeError, NotImplementedError) as error:
        first_line = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise InvalidInput(
            f"the chat graph's messages must be chat messages ({MESSAGE_SHAPE}): {first_line}"
        ) from None


def is_content(content: Any) -> bool:
    """Text, or a list of content blocks (strings or dicts), as LangChain's messages take."""
    return isinstance(content, str) or (
        isinstance(content, list) and all(isinstance(b, str | dict) for b in content)
    )


class ChatGraph(CheckedGraph):
    """The chat graph, refusing malformed messages in one sentence (the server passes on
    whatever a caller sent)."""

    def stream(self, input: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
        refuse_malformed_messages(input)
        return super().stream(input, *args, **kwargs)

    def astream(self, input: Any, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        refuse_malformed_messages(input)
        return super().astream(input, *args, **kwargs)


# a misspelt input or context key, or a message LangChain cannot read, is one error
graph = ChatGraph(**vars(checked(build_chat_graph())))
