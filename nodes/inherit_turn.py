"""inherit_turn: ``continue``: the turn is about the previous turn's documents (TRUE).

A turn that refers back and asks its own question ("And how do I edit them?") has its pronoun
resolved against the previous question's things, by what the documents in view say
(chop_rag.store's said_together: "snooze" next to "notification", "edit" and "notes" in one
passage)."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from chop_rag.config import Context
from chop_rag.questions.conversation import (
    IN_ONE_PASSAGE,
    NEAR_WORDS,
    NEXT_TO,
    Continuity,
    SaidTogether,
    inherit,
    turn_of,
)
from chop_rag.state import ChatState
from chop_rag.store import store_for


def inherit_turn(state: ChatState, runtime: Runtime[Context]) -> dict[str, Any]:
    ctx = runtime.context
    continuity = Continuity(**state["continuity"])
    previous = state.get("turn") or {}
    said: SaidTogether | None = None
    documents = previous.get("documents") or []
    if continuity.own_words and documents:
        store = store_for(ctx)

        def said(thing: str, own: Any) -> int:
            if store.said_together(ctx.collection, documents, thing, own, within=NEAR_WORDS):
                return NEXT_TO
            if store.said_together(ctx.collection, documents, thing, own):
                return IN_ONE_PASSAGE
            return 0

    standalone = inherit(continuity.asked, continuity, previous, said)
    return {
        "question": standalone.question,
        "focus": standalone.inherited.get("referent", ""),
        "turn": turn_of(continuity, standalone),
    }
