"""reply: the turn's answer as the conversation's AI message, with why it went where it went.

The content is one standard text block: the answer with ``[n]`` markers and a ``citation``
annotation per cited span (chop_rag.answers.citations), streamed sentence by sentence to a
``messages`` stream (chop_rag.answers.streaming). ``additional_kwargs["chop"]`` carries the rest a
client shows beside the answer: the cited source numbers, the sources (as chop_rag.api.ask returns
them), whether the answer declined, and the continuity decision with what the turn inherited
and the standalone question actually asked.
"""

from __future__ import annotations

import uuid
from typing import Any

from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig

from chop_rag.answers.citations import answer_content
from chop_rag.answers.streaming import write_answer
from chop_rag.questions.conversation import Turn
from chop_rag.state import ChatState


def reply(state: ChatState, config: RunnableConfig) -> dict[str, Any]:
    turn = Turn(**(state.get("turn") or {}))
    resolution: dict[str, Any] = dict(state.get("question_resolution") or {})
    turn["documents"] = list(state.get("question_documents") or [])
    turn["label"] = resolution.get("label") if turn["documents"] else None
    notes = [n for n in (state.get("retrieval_note"), state.get("answer_note")) if n]
    chop: dict[str, Any] = {
        "citations": list(state.get("citations") or []),
        "sources": list(state.get("sources") or []),
        "answerable": bool(state.get("answerable", False)),
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
    content = answer_content(state.get("answer", ""), chop["citations"], chop["sources"])
    message = AIMessage(
        id=f"chop-{uuid.uuid4()}", content_blocks=content, additional_kwargs={"chop": chop}
    )
    write_answer(message, state.get("messages", [])[-1:], config)
    return {"messages": [message], "turn": turn}
