"""What the scripted fault run (tests/fault_run.py) found, each pinned by a focused test."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from chop_rag.api import ingest
from chop_rag.config import Context
from chop_rag.nodes.persist import NEEDS_RELABEL
from chop_rag.store import Store
from tests.fakes import ScriptedChatModel, replying, sensible_reply

MANUAL = (
    "# Coolwave 225B User Manual\n\nYour air conditioner needs little care.\n\n## Filter care\n\n"
    + "Clean the mesh filter with warm water and let it dry. " * 6
    + "\n\n## Tank drainage\n\n"
    + "Empty the water tank when the full light shows. " * 6
)


@pytest.mark.usefixtures("every_attempt_runs")
def test_a_failed_profile_call_is_relabelled_even_when_the_title_names_the_model(
    context: Context, store: Store, scripted: ScriptedChatModel, tmp_path: Path
) -> None:
    (tmp_path / "coolwave-225b.md").write_text(MANUAL, encoding="utf-8")
    scripted.responder = replying(profile=RuntimeError("Error code: 503 - service unavailable"))
    ctx = context.with_overrides(llm_deadline_s=0.5)
    ingest([tmp_path], context=ctx)
    [record] = store.documents(ctx.collection).values()
    assert record.metadata["profile"]["source"] == "title"  # the title still names the model
    assert record.metadata["profile"]["category"] is None  # but the category was the LLM's
    assert record.fingerprint.startswith(NEEDS_RELABEL), "stored as final before"

    scripted.responder = sensible_reply
    report = ingest([tmp_path], context=ctx)
    assert report["updated"] == 1
    [record] = store.documents(ctx.collection).values()
    assert record.metadata["profile"]["category"] == "air conditioner"
    assert not record.fingerprint.startswith(NEEDS_RELABEL)


def test_the_pools_reconnect_attempts_during_a_database_restart_are_not_printed() -> None:
    import chop_rag.store  # noqa: F401  (sets the level)

    assert logging.getLogger("psycopg.pool").getEffectiveLevel() >= logging.ERROR


def test_a_cache_the_database_restart_cut_off_is_one_warning_line(
    context: Context,
    store: Store,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    import psycopg

    from chop_rag.models.llm import _cache_get, _cache_put

    cut = psycopg.OperationalError(
        "consuming input failed: server closed the connection unexpectedly\n"
        "\tThis probably means the server terminated abnormally\n"
        "\tbefore or while processing the request."
    )

    def fail(*args: object) -> None:
        raise cut

    monkeypatch.setattr(store, "cache_get", fail)
    monkeypatch.setattr(store, "cache_put", fail)
    with caplog.at_level(logging.WARNING, logger="chop_rag.models.llm"):
        assert _cache_get(store, "key") is None
        _cache_put(store, "key", "model", {"value": 1})
    messages = [record.getMessage() for record in caplog.records]
    assert len(messages) == 2 and all("\n" not in m for m in messages), messages
    assert "server closed the connection unexpectedly This probably means" in messages[0]
