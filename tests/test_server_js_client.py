"""A generic LangGraph chat client against a real ``langgraph dev``: the JS
``@langchain/langgraph-sdk`` (tests/js, installed by scripts/install.sh) streams a turn of the
chat graph with ``streamMode: "messages-tuple"`` as Agent Chat UI does, and gets the answer in
several chunks, its citations as standard annotations; with ``"updates"`` it gets what each
node found as it finished."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chop_rag.api import ingest
from chop_rag.config import Context
from chop_rag.harness.sample_corpus import write_sample_corpus
from chop_rag.models.construction import use_models
from chop_rag.store import store_for
from tests.fakes import ScriptedChatModel
from tests.langgraph_server import RUN_S, langgraph_dev, missing_server_packages

pytestmark = pytest.mark.server

JS = Path(__file__).resolve().parent / "js"
QUESTION = "How often should I clean the air filter on the Coolwave 330C?"


def missing_js_client() -> str | None:
    if shutil.which("node") is None:
        return "node is not on PATH (Node.js 18+ runs the JS LangGraph SDK)"
    if not (JS / "node_modules" / "@langchain" / "langgraph-sdk").is_dir():
        return "the JS LangGraph SDK is not installed (scripts/install.sh: npm ci in tests/js)"
    return None


def js_stream(url: str, collection: str, question: str, modes: str) -> dict[str, Any]:
    """The events of one turn streamed by the JS SDK (tests/js/stream_chat.mjs)."""
    done = subprocess.run(
        ["node", str(JS / "stream_chat.mjs"), url, collection, question, modes],
        capture_output=True, text=True, timeout=RUN_S, check=False, cwd=JS,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout)
    return result


@pytest.fixture(scope="module")
def served(
    data_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, Context]]:
    """One server for the module, on the sample manuals."""
    if reason := missing_server_packages() or missing_js_client():
        pytest.skip(reason)
    ctx = Context(
        database_url=os.environ.get("CHOP_DATABASE_URL", ""),
        data_dir=str(data_dir),
        collection=f"t_js_{uuid.uuid4().hex[:10]}",
        continuity_mode="rules",
    )
    corpus = tmp_path_factory.mktemp("corpus")
    write_sample_corpus(corpus)
    with use_models(chat_model=ScriptedChatModel(calls=[])):
        ingest([corpus], context=ctx)  # profiled by the scripted model; answers quote: no LLM
    server_dir = tmp_path_factory.mktemp("server")
    settings = {
        "CHOP_COLLECTION": ctx.collection,
        "CHOP_CHAT_PROVIDER": "openai",
        "CHOP_OPENAI_BASE_URL": "http://127.0.0.1:9/v1",  # never called: quotes need no LLM
        "CHOP_EMBEDDING_PROVIDER": "local",
        "CHOP_EMBEDDING_MODEL": "all-MiniLM-L6-v2",
    }
    try:
        with langgraph_dev(server_dir, data_dir, settings) as url:
            yield url, ctx
    finally:
        with contextlib.suppress(Exception):
            store_for(ctx).drop_collection(ctx.collection)


def test_the_js_sdk_gets_the_answer_in_chunks_with_standard_citations(
    served: tuple[str, Context],
) -> None:
    from langgraph_sdk import get_sync_client

    url, ctx = served
    run = js_stream(url, ctx.collection, QUESTION, "messages-tuple")
    answer_chunks = [
        message
        for part in run["events"]
        if part["event"] == "messages"
        for message, meta in [part["data"]]
        if meta.get("langgraph_node") == "reply"
    ]
    assert len(answer_chunks) >= 2, [p["event"] for p in run["events"]]
    assert {m["type"] for m in answer_chunks} == {"AIMessageChunk"}
    assert len({m["id"] for m in answer_chunks}) == 1, "one message, written in chunks"
    blocks = [block for m in answer_chunks for block in m["content"]]
    assert {b["type"] for b in blocks} == {"text"}
    written = "".join(b["text"] for b in blocks)
    annotations = [a for b in blocks for a in b.get("annotations", [])]

    client = get_sync_client(url=url, timeout=RUN_S)
    final = client.threads.get_state(run["thread_id"])["values"]["messages"][-1]  # type: ignore[call-overload]
    (block,) = final["content"]
    assert final["id"] == answer_chunks[0]["id"] and written == block["text"]
    assert "4 weeks" in written
    assert annotations == block["annotations"] and annotations
    chop = final["additional_kwargs"]["chop"]
    assert answer_chunks[-1]["additional_kwargs"]["chop"] == chop  # with the last chunk
    sources = {s["number"]: s for s in chop["sources"]}
    for citation in annotations:
        assert citation["type"] == "citation"
        source = sources[citation["extras"]["number"]]
        assert citation["title"] == source["doc_title"] == "Coolwave 330C User Manual"
        assert citation["extras"]["doc_id"] == source["doc_id"]
        assert citation["extras"]["section"] and citation["cited_text"]
        span = written[citation["start_index"] : citation["end_index"]]
        assert span.endswith(f"[{source['number']}]") and "4 weeks" in span


def test_the_js_sdk_gets_what_each_node_found_as_updates(served: tuple[str, Context]) -> None:
    url, ctx = served
    run = js_stream(url, ctx.collection, QUESTION, "updates")
    found: dict[str, Any] = {}
    for part in run["events"]:
        if part["event"] == "updates":
            found.update(part["data"])
    assert found["resolve_turn"]["continuity"]["decision"] == "first"
    assert {s["model"] for s in found["retrieve"]["sources"]} == {"Coolwave 330C"}
    assert found["quote_section"]["answerable"] is True and found["quote_section"]["citations"]
    assert "4 weeks" in found["quote_section"]["answer"]
    assert found["reply"]["messages"][-1]["content"][0]["annotations"]
