"""Fixtures for tests/ only: the scripted chat model, and the environment a process that reads
its settings from it needs (the fixtures bench/tests shares are in the root conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from chop_rag.config import Context
from chop_rag.models.construction import use_models
from tests.fakes import ScriptedChatModel


@pytest.fixture
def scripted() -> Iterator[ScriptedChatModel]:
    """The real embedder with a scripted chat model in place of the LLM."""
    model = ScriptedChatModel(calls=[])
    with use_models(chat_model=model):
        yield model


@pytest.fixture
def database_env(monkeypatch: pytest.MonkeyPatch, context: Context) -> Context:
    """What reads its settings from the environment (the CLI, the example agent) finds the
    test database there."""
    monkeypatch.setenv("CHOP_DATA_DIR", context.data_dir)
    if context.database_url:  # unset, not empty: empty warns (chop_rag.store.pgserver)
        monkeypatch.setenv("CHOP_DATABASE_URL", context.database_url)
    else:
        monkeypatch.delenv("CHOP_DATABASE_URL", raising=False)
    return context


@pytest.fixture
def cli_env(monkeypatch: pytest.MonkeyPatch, database_env: Context) -> Context:
    """The CLI pointed at the test database, its LLM cache off."""
    monkeypatch.setenv("CHOP_USE_CACHE", "0")
    return database_env


@pytest.fixture
def every_attempt_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """chop starts no LLM attempt with under 0.5 s of its deadline left; a test with a short
    deadline lifts that floor, so all its attempts (and fallbacks) run, quickly."""
    monkeypatch.setattr("chop_rag.models.llm.MIN_ATTEMPT_S", 0.0)
