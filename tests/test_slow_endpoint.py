"""Issue 36: a hung or slow LLM endpoint is not a silent run: after chop_rag.models.llm.SLOW_REPLY_S
without a reply, one line says that chop is waiting, for which endpoint and how long more."""

from __future__ import annotations

import logging

import pytest

from chop_rag.config import Context
from chop_rag.harness.stub_llm import serve_stub
from chop_rag.labelling.cnm import ContinuityReply
from chop_rag.models import llm


def test_a_silent_endpoint_gets_one_line_saying_how_long_chop_waits(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(llm, "SLOW_REPLY_S", 0.3)
    with serve_stub(latency=(1.0, 1.0)) as base_url:
        ctx = Context(
            chat_provider="openai",
            openai_base_url=f"{base_url}/v1",
            chat_model="stub",
            use_cache=False,
            llm_timeout_s=20,
            llm_deadline_s=30,
        )
        messages = llm.chat_messages("Answer in JSON.", "Do these two passages continue?")
        with caplog.at_level(logging.WARNING, logger="chop_rag.models.llm"):
            llm.structured_call(ctx, None, "continuity", messages, ContinuityReply)
            llm.structured_call(ctx, None, "continuity", messages, ContinuityReply)
    said = [r.getMessage() for r in caplog.records if "no reply from the LLM" in r.getMessage()]
    assert len(said) >= 1, caplog.text
    assert base_url in said[0] and "waiting up to 20 s more" in said[0], said[0]


def test_a_quick_endpoint_gets_no_such_line(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    with serve_stub(latency=(0.0, 0.01)) as base_url:
        ctx = Context(
            chat_provider="openai", openai_base_url=f"{base_url}/v1", chat_model="stub",
            use_cache=False,
        )  # fmt: skip
        messages = llm.chat_messages("Answer in JSON.", "Do these two passages continue?")
        with caplog.at_level(logging.WARNING, logger="chop_rag.models.llm"):
            llm.structured_call(ctx, None, "continuity", messages, ContinuityReply)
    assert "no reply from the LLM" not in caplog.text
