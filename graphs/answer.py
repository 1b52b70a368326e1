"""The answering graph: retrieve the top-k chunks from pgvector, then generate a cited answer.

retrieve ─► generate
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from chop.config import Context
from chop.state import AnswerInput, AnswerOutput, AnswerState
from graphs.checked import checked
from nodes.generate import generate
from nodes.retrieve import retrieve


def build_answer_graph() -> CompiledStateGraph[Any, Any, Any, Any]:
    graph = StateGraph(
        AnswerState, context_schema=Context, input_schema=AnswerInput, output_schema=AnswerOutput
    )
    graph.add_sequence([retrieve, generate])  # nodes named as the functions
    graph.add_edge(START, "retrieve")
    graph.add_edge("generate", END)
    return graph.compile(name="answer")


graph = checked(build_answer_graph())  # a misspelt input or context key is an error
