"""inherit_turn: ``continue``: the turn is about the previous turn's documents (TRUE)."""

from __future__ import annotations

from typing import Any

from chop.questions.conversation import Continuity, inherit, turn_of
from chop.state import ChatState


def inherit_turn(state: ChatState) -> dict[str, Any]:
    continuity = Continuity(**state["continuity"])
    standalone = inherit(continuity.asked, continuity, state.get("turn") or {})
    return {"question": standalone.question, "turn": turn_of(continuity, standalone)}
