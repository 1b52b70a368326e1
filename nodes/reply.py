"""reply: the turn's answer as the conversation's AI message, with why it went where it went.

``additional_kwargs["chop"]`` carries what a client shows beside the answer: the cited source
numbers, the sources (as chop.api.ask returns them), whether the answer declined, and the
continuity decision with what the turn inherited and the standalone question actually asked.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage

from chop.questions.conversation import Turn
from chop.state import ChatState


def reply(state: ChatState) -> dict[str, Any]:
    turn = Turn(**(state.get("turn") or {}))
    resolution: dict[str, Any] = dict(state.get("question_resolution") or {})
    turn["documents"] = list(state.get("question_documents") or [])
    turn["label"] = resolution.get("label") if turn["documents"] else None
    notes = [n for n in (state.get("retrieval_note"), state.get("answer_note")) if n]
    chop: dict[str, Any] = {
        "citations": list(state.get("citations") or []),
        "sources": list(state.get("sources") or []),
        "declined": not state.get("answerable", False),
        "continuity": {
            "decision": turn.get("decision", "first"),
            "reason": turn.get("reason", ""),
            "inherited": turn.get("inherited", {}),
            "question": turn.get("question", ""),
        },
        "question_model": state.get("question_model"),
        "notes": notes,
    }
    if state.get("error"):
        chop["error"] = state["error"]
    message = AIMessage(content=state.get("answer", ""), additional_kwargs={"chop": chop})
    return {"messages": [message], "turn": turn}
