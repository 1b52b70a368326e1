"""The conversation graph: each user message is a turn, answered like a one-off question once
its continuity with the thread's last turn is decided (chop.questions.conversation).

resolve_turn ─┬─ continue ─────────────► inherit_turn ─┐
              ├─ first / switch ───────► switch_turn ──┼─► retrieve ─► generate ─► reply
              └─ switch_same_question ─► reask_turn ───┘

State: ``messages`` (``add_messages``; the last is the answer, an AIMessage whose
``additional_kwargs["chop"]`` holds citations, sources, declined and continuity) and ``turn``
(the typed resolution of the last turn), checkpointed per thread: chop.api uses chop's
PostgreSQL checkpointer (chop.store.checkpoints), ``langgraph dev`` and the server their own.
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from chop.config import Context
from chop.questions.conversation import Decision
from chop.state import ChatInput, ChatOutput, ChatState
from graphs.checked import checked
from nodes.generate import generate
from nodes.inherit_turn import inherit_turn
from nodes.reask_turn import reask_turn
from nodes.reply import reply
from nodes.resolve_turn import resolve_turn
from nodes.retrieve import retrieve
from nodes.switch_turn import switch_turn


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
    graph.add_sequence([retrieve, generate])  # the answer graph's nodes, as they are
    graph.add_node(reply)
    graph.add_edge("generate", "reply")
    graph.add_edge("reply", END)
    return graph.compile(name="chat")


graph = checked(build_chat_graph())  # a misspelt input or context key is an error
