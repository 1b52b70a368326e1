"""The conversation graph behind a real ``langgraph dev``, as Studio's chat view, Agent Chat UI
and a langgraph_sdk client talk to it: ``{"messages": [...]}`` on a thread, answers streamed
with ``stream_mode="messages"``."""

from __future__ import annotations

import contextlib
import os
import uuid
from pathlib import Path
from typing import Any

import pytest

from chop_rag.api import ingest
from chop_rag.config import Context
from chop_rag.harness.sample_corpus import write_sample_corpus
from chop_rag.store import store_for
from tests.langgraph_server import RUN_S, checkpoint_count, langgraph_dev, missing_server_packages

pytestmark = pytest.mark.server


def ai_messages(parts: list[Any]) -> list[dict[str, Any]]:
    """The AI messages of a ``stream_mode="messages"`` stream, as the SDK hands them over."""
    found: list[dict[str, Any]] = []
    for part in parts:
        if not part.event.startswith("messages"):
            continue
        data = part.data if isinstance(part.data, list) else [part.data]
        found.extend(m for m in data if isinstance(m, dict) and m.get("type", "").startswith("ai"))
    return found


def text_of(message: dict[str, Any]) -> str:
    """A message's text as the SDK hands it over: a string, or standard content blocks."""
    content = message["content"]
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content if b.get("type") == "text")


def test_a_conversation_through_the_sdk(data_dir: Path, tmp_path: Path, scripted) -> None:  # type: ignore[no-untyped-def]
    if reason := missing_server_packages():
        pytest.skip(reason)
    from langgraph_sdk import get_sync_client

    ctx = Context(
        database_url=os.environ.get("CHOP_DATABASE_URL", ""),
        data_dir=str(data_dir),
        collection=f"t_chat_{uuid.uuid4().hex[:10]}",
        continuity_mode="rules",
    )
    corpus = tmp_path / "corpus"
    write_sample_corpus(corpus)
    ingest([corpus], context=ctx)  # profiled by the scripted model; answers quote: no LLM
    server_dir = tmp_path / "server"
    server_dir.mkdir()
    settings = {
        "CHOP_COLLECTION": ctx.collection,
        "CHOP_CHAT_PROVIDER": "openai",
        "CHOP_OPENAI_BASE_URL": "http://127.0.0.1:9/v1",  # never called: quotes need no LLM
        "CHOP_EMBEDDING_PROVIDER": "local",
        "CHOP_EMBEDDING_MODEL": "all-MiniLM-L6-v2",
    }
    try:
        with langgraph_dev(server_dir, data_dir, settings) as url:
            client = get_sync_client(url=url, timeout=RUN_S)
            assert "chat" in {a["graph_id"] for a in client.assistants.search()}
            thread = client.threads.create()["thread_id"]

            def turn(text: str) -> dict[str, Any]:
                out: Any = client.runs.wait(
                    thread, "chat", input={"messages": [{"role": "user", "content": text}]},
                    context={"collection": ctx.collection},
                )  # fmt: skip
                assert isinstance(out, dict) and "messages" in out, out
                return out

            first = turn("How often should I clean the air filter on the Coolwave 330C?")
            answer = first["messages"][-1]
            assert answer["type"] == "ai" and "4 weeks" in text_of(answer)
            meta = answer["additional_kwargs"]["chop"]
            assert meta["continuity"]["decision"] == "first" and meta["citations"]
            assert {s["model"] for s in meta["sources"]} == {"Coolwave 330C"}

            second = turn("What about the 225B?")
            assert [m["type"] for m in second["messages"]] == ["human", "ai", "human", "ai"]
            meta = second["messages"][-1]["additional_kwargs"]["chop"]
            assert meta["continuity"]["decision"] == "switch_same_question"
            assert meta["continuity"]["question"].startswith("[Coolwave 225B] How often should")
            assert "2 weeks" in text_of(second["messages"][-1])
            assert second["turn"]["names"] == {"model": "Coolwave 225B"}
            assert checkpoint_count(ctx, thread) > 0  # the server's checkpointer: PostgreSQL

            follow_up = {"role": "user", "content": "How much water does its tank hold?"}
            parts = list(
                client.runs.stream(
                    thread, "chat", input={"messages": [follow_up]},
                    context={"collection": ctx.collection}, stream_mode="messages",
                )
            )  # fmt: skip
            streamed = ai_messages(parts)
            assert streamed, [p.event for p in parts]
            assert len({m["id"] for m in streamed}) == 1, "the quote comes as one message"
            final = client.threads.get_state(thread)["values"]["messages"][-1]  # type: ignore[call-overload]
            # "messages" mode sends the message as written so far, sentence by sentence
            assert len(streamed) >= 2 and text_of(streamed[-1]) == text_of(final)
            assert "1.2 litres" in text_of(final)
            decision = final["additional_kwargs"]["chop"]["continuity"]
            assert decision["decision"] == "continue"
            assert decision["inherited"]["model"] == "Coolwave 225B"

            # a message LangChain cannot read: one sentence, and the thread is as it was
            refused: Any = client.runs.wait(
                thread, "chat", input={"messages": [{"role": "user", "content": 12345}]},
                raise_error=False,
            )  # fmt: skip
            said = str(refused["__error__"]["message"])
            assert "content must be text" in said and "\n" not in said, refused
            kept = client.threads.get_state(thread)["values"]["messages"]  # type: ignore[call-overload]
            assert len(kept) == 6
    finally:
        with contextlib.suppress(Exception):
            store_for(ctx).drop_collection(ctx.collection)
