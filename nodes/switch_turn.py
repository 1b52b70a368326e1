"""switch_turn: ``first`` or ``switch``: the turn's own documents, nothing stale (FALSE)."""

from __future__ import annotations

from typing import Any

from chop_rag.questions.conversation import Continuity, switch, turn_of
from chop_rag.state import ChatState


def switch_turn(state: ChatState) -> dict[str, Any]:
    continuity = Continuity(**state["continuity"])
    previous = state.get("turn") if continuity.decision == "switch" else None
    standalone = switch(continuity.asked, continuity, previous)
    return {"question": standalone.question, "turn": turn_of(continuity, standalone)}
