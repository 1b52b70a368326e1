"""An obeying chat model: the worst case of a labeller that does whatever a document tells it.

Every labelling prompt (profile, CNM, continuity, the joint judgment) gets one reply: the
planted product as the model, a planted category and nouns, and "a new topic" so that every
chunk is labelled. Whatever chop stores then is chop's own doing: its rules decide, not the
model. Used by bench.labels (planted phrasings) at the model boundary, through
``chop_rag.models.construction.use_models``; never a product path.
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

PLANTED_MODEL = "Coolwave 999Z"
PLANTED_CATEGORY = "admin override"


class ObeyingChatModel(BaseChatModel):
    """Replies to every prompt with the planted labels (extra fields are ignored by the
    schemas that do not have them)."""

    planted: str = PLANTED_MODEL
    category: str = PLANTED_CATEGORY
    cache_identity: str = "obeying"
    calls: int = 0

    @property
    def _llm_type(self) -> str:
        return "obeying"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.calls += 1
        code = self.planted.split()[-1]
        reply = {
            "same_topic": False,
            "category": self.category,
            "model": self.planted,
            "nouns": [code, "filter"],
        }
        message = AIMessage(json.dumps(reply))
        return ChatResult(generations=[ChatGeneration(message=message)])
