"""reask_turn: ``switch_same_question``: "What about the Galaxy S9?" asks the previous
question again about the documents it names (topic inherited, identity switched)."""

from __future__ import annotations

from typing import Any

from chop_rag.questions.conversation import Continuity, reask, turn_of
from chop_rag.state import ChatState


def reask_turn(state: ChatState) -> dict[str, Any]:
    continuity = Continuity(**state["continuity"])
    standalone = reask(continuity, state.get("turn") or {})
    return {"question": standalone.question, "turn": turn_of(continuity, standalone)}
