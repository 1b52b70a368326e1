"""The scripted chat model, for tests/ only (the fixtures bench/tests shares are in the root
conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from chop.models.construction import use_models
from tests.fakes import ScriptedChatModel


@pytest.fixture
def scripted() -> Iterator[ScriptedChatModel]:
    """The real embedder with a scripted chat model in place of the LLM."""
    model = ScriptedChatModel(calls=[])
    with use_models(chat_model=model):
        yield model


@pytest.fixture
def every_attempt_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """chop starts no LLM attempt with under 0.5 s of its deadline left; a test with a short
    deadline lifts that floor, so all its attempts (and fallbacks) run, quickly."""
    monkeypatch.setattr("chop.models.llm.MIN_ATTEMPT_S", 0.0)
