"""resolve_turn: read the user's new message and decide its continuity with the last turn.

The decision (chop_rag.questions.conversation.decide) is made by rules from what the question names
and what the thread's last turn was about; the conditional edge after this node follows it. The
answer graph's channels are reset here, so nothing of the previous turn's answer (a note, an
error) is mistaken for this turn's.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage
from langgraph.runtime import Runtime

from chop_rag.config import Context
from chop_rag.questions.codes import listing_words
from chop_rag.questions.conversation import decide
from chop_rag.questions.facts import read_question
from chop_rag.questions.query import clean_question
from chop_rag.reading.documents import InvalidInput
from chop_rag.retrieval.retrieve import identity_cards
from chop_rag.state import ChatState
from chop_rag.store import store_for

# what a turn's answer writes: cleared before the turn is answered
FRESH_TURN: dict[str, Any] = {
    "question": "",
    "focus": "",
    "question_model": None,
    "question_unknown": None,
    "question_documents": [],
    "retrieval_note": "",
    "sources": [],
    "passages": [],
    "disagreement": None,
    "figure_note": "",
    "stated_figures": [],
    "figure_fallback": {},
    "answer": "",
    "answerable": False,
    "citations": [],
    "answer_note": "",
    "error": "",
}


def message_text(message: BaseMessage) -> str:
    """A message's text: its string content, or its text blocks joined (Studio, Agent Chat UI)."""
    if isinstance(message.content, str):
        return message.content
    parts = [
        block if isinstance(block, str) else str(block.get("text", ""))
        for block in message.content
        if isinstance(block, str) or block.get("type") == "text"
    ]
    return "\n".join(parts)


def last_question(state: ChatState) -> str:
    """The user's new question: the last message, which must be the user's."""
    messages = state.get("messages") or []
    if not messages or not isinstance(messages[-1], HumanMessage):
        got = type(messages[-1]).__name__ if messages else "no messages"
        raise InvalidInput(
            "the chat graph needs 'messages' ending with the user's question "
            f'({{"role": "user", "content": "..."}}); got {got}'
        )
    question = clean_question(message_text(messages[-1])).strip()
    if not question:
        raise InvalidInput("the question is empty")
    return question


def resolve_turn(state: ChatState, runtime: Runtime[Context]) -> dict[str, Any]:
    ctx = runtime.context
    question = last_question(state)
    store = store_for(ctx)
    cards = identity_cards(store.documents(ctx.collection).values())
    listed = store.documents_listing(ctx.collection, listing_words(read_question(question)))
    continuity = decide(question, state.get("turn") or None, cards, listed)
    return {**FRESH_TURN, "continuity": asdict(continuity)}
