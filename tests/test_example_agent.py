"""examples/retriever_agent.py: chop's retriever inside a user's own LangGraph agent, run end to
end with the real store and embedder and a scripted chat model."""

from __future__ import annotations

import pytest
from langchain_core.messages import BaseMessage
from pydantic import Field

from chop_rag.config import Context
from chop_rag.models.construction import use_models
from chop_rag.store import store_for
from examples.retriever_agent import main
from tests.fakes import ScriptedChatModel

REPLY = "Clean the Coolwave 330C's air filter every two weeks."


class AgentChatModel(ScriptedChatModel):
    """chop's own prompts get chop's scripted replies; the agent's prompt gets REPLY."""

    agent_prompts: list[str] = Field(default_factory=list)

    def reply(self, messages: list[BaseMessage]) -> str:
        system = str(messages[0].content)
        if not system.startswith("You are a support agent"):
            return super().reply(messages)
        self.agent_prompts.append(system)
        return REPLY


@pytest.mark.usefixtures("database_env")
def test_the_example_agent_answers_from_chop_passages(
    capsys: pytest.CaptureFixture[str], context: Context
) -> None:
    model = AgentChatModel(calls=[], agent_prompts=[])
    question = "How often do I clean the filter of the Coolwave 330C?"
    try:
        with use_models(chat_model=model):
            assert main([question, "--collection", context.collection]) == 0
    finally:
        store_for(context).drop_collection(context.collection)

    (prompt,) = model.agent_prompts  # one answer, from the retrieved passages
    assert "[1] " in prompt and "(Coolwave 330C):" in prompt.split("[2]")[0]
    out = capsys.readouterr().out
    assert "sample manuals: 3 added, 0 unchanged" in out
    assert f"A: {REPLY}" in out
    assert "  [1] " in out and "Coolwave 330C" in out.split("  [1] ")[1].splitlines()[0]
