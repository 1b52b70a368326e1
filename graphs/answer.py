"""The answering graph: retrieve the top-k chunks from pgvector, judge whether they answer the
question, then answer the way the question needs, or decline.

retrieve ─┬─ figures ──► compute_figures ─┬─ computed ─────────────────────────────────► END
          │                               └─ quote ─┐
          └─ passages ──────────────────────────────┴► read_passages ─► judge_answerability ─┐
  ┌─────────────────────────────────────────────────────────────────────────────────────────┘
  ├─ decline ─► decline ──────────────────────────► END
  └─ answer ──► compare_sources ─┬─ quote ─► quote_section ─► END
                                 └─ model ─► ask_model ─────► END

compute_figures: a metric or arithmetic computed by code over table rows; read_passages: the
sections, each sentence scored against the question; judge_answerability: do they answer it
(cheap signals, the LLM only where unclear); compare_sources: do documents disagree;
quote_section: the section's own words (no model); ask_model: a yes/no verdict or a short
answer the section must back. chat.py reuses this path (add_answer_path).
"""

from __future__ import annotations

from typing import Any, Literal

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from chop_rag.answers.answering import is_yes_no_question
from chop_rag.answers.computed import wants_figures
from chop_rag.config import Context
from chop_rag.graphs.checked import checked
from chop_rag.nodes.ask_model import ask_model
from chop_rag.nodes.compare_sources import compare_sources
from chop_rag.nodes.compute_figures import compute_figures
from chop_rag.nodes.decline import decline
from chop_rag.nodes.judge_answerability import judge_answerability
from chop_rag.nodes.quote_section import quote_section
from chop_rag.nodes.read_passages import read_passages
from chop_rag.nodes.retrieve import retrieve
from chop_rag.state import AnswerInput, AnswerOutput, AnswerState


def route_by_question(
    state: AnswerState, runtime: Runtime[Context]
) -> Literal["figures", "passages"]:
    """Figures code may compute go to compute_figures first; everything else is read."""
    resolution: dict[str, Any] = dict(state.get("question_resolution") or {})
    computable = (
        bool(state.get("sources"))
        and not state.get("question_unknown")
        and wants_figures(runtime.context, state["question"], resolution)
    )
    return "figures" if computable else "passages"


def route_on_computed(state: AnswerState) -> Literal["computed", "quote"]:
    """A computed answer is the answer; otherwise the passages are read and quoted."""
    return "computed" if state.get("answer") else "quote"


def route_on_answerability(state: AnswerState) -> Literal["answer", "decline"]:
    """judge_answerability's judgment (each is an edge Studio draws)."""
    return "answer" if state["answerability"]["answerable"] else "decline"


def route_answer_way(state: AnswerState, runtime: Runtime[Context]) -> Literal["quote", "model"]:
    """The section's own words answer a question that is not yes/no (CHOP_ANSWER=quote);
    the model is asked for a yes/no verdict, or a short answer in lead mode."""
    quote = runtime.context.answer == "quote" and not is_yes_no_question(state["question"])
    return "quote" if quote else "model"


def add_answer_path(graph: StateGraph[Any, Any, Any, Any], then: str) -> None:
    """The answer path's nodes and edges, from retrieve to ``then`` (END, or chat's reply)."""
    for node in (
        retrieve,
        compute_figures,
        read_passages,
        judge_answerability,
        decline,
        compare_sources,
        quote_section,
        ask_model,
    ):
        graph.add_node(node)  # nodes named as the functions
    graph.add_conditional_edges(
        "retrieve", route_by_question, {"figures": "compute_figures", "passages": "read_passages"}
    )
    graph.add_conditional_edges(
        "compute_figures", route_on_computed, {"computed": then, "quote": "read_passages"}
    )
    graph.add_edge("read_passages", "judge_answerability")
    graph.add_conditional_edges(
        "judge_answerability",
        route_on_answerability,
        {"answer": "compare_sources", "decline": "decline"},
    )
    graph.add_conditional_edges(
        "compare_sources", route_answer_way, {"quote": "quote_section", "model": "ask_model"}
    )
    for last in ("decline", "quote_section", "ask_model"):
        graph.add_edge(last, then)


def build_answer_graph() -> CompiledStateGraph[Any, Any, Any, Any]:
    graph = StateGraph(
        AnswerState, context_schema=Context, input_schema=AnswerInput, output_schema=AnswerOutput
    )
    graph.add_edge(START, "retrieve")
    add_answer_path(graph, END)
    return graph.compile(name="answer")


graph = checked(build_answer_graph())  # a misspelt input or context key is an error
