"""The served graphs behind a real ``langgraph dev`` server, driven through langgraph_sdk.

The server runs as a subprocess with no network: analytics, version check and tracing off, the
chat model an OpenAI-compatible stub on 127.0.0.1, the embedder the local MiniLM. Its
checkpointer is the one langgraph.json names (deploy/checkpointer.py: PostgreSQL), so the test
also checks that a thread's checkpoints land in the database.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import pytest

from chop_rag.harness.sample_corpus import SAMPLE_MODELS, write_sample_corpus
from chop_rag.store import store_for
from tests.langgraph_server import (
    ROOT,
    RUN_S,
    checkpoint_count,
    langgraph_dev,
    missing_server_packages,
    request_listener,
    server_context,
    stub_llm,
    stub_settings,
)

pytestmark = pytest.mark.server


def test_langgraph_dev_serves_ingest_and_answer(data_dir: Path, tmp_path: Path) -> None:
    if reason := missing_server_packages():
        pytest.skip(reason)
    from langgraph_sdk import get_sync_client

    collection = f"t_srv_{uuid.uuid4().hex[:10]}"
    corpus = tmp_path / "corpus"
    write_sample_corpus(corpus)
    paths: Any = [str(corpus)]
    ctx = server_context(data_dir, collection)
    server_dir = tmp_path / "server"
    server_dir.mkdir()
    with stub_llm() as stub_url:
        # the corpus is beside the server's folder, in tmp_path
        settings = stub_settings(stub_url, tmp_path, CHOP_COLLECTION=collection)
        try:
            with langgraph_dev(server_dir, data_dir, settings) as url:
                client = get_sync_client(url=url, timeout=RUN_S)
                graphs = {a["graph_id"] for a in client.assistants.search()}
                assert {"ingest", "answer"} <= graphs

                # Ingest on a thread: the run's checkpoints go to PostgreSQL. The context is a
                # plain dict; the server coerces it to chop_rag.config.Context.
                thread = client.threads.create()
                result: Any = client.runs.wait(
                    thread["thread_id"],
                    "ingest",
                    input={"paths": paths},
                    context={"collection": collection, "use_cache": False, "k": 3},
                )
                assert isinstance(result, dict), result
                assert result["report"]["added"] == 3, result
                assert result["report"]["chunks_stored"] > 0
                assert result["problems"] == []
                state: Any = client.threads.get_state(thread["thread_id"])
                assert state["values"]["report"]["added"] == 3
                assert checkpoint_count(ctx, thread["thread_id"]) > 0

                # The same folder again, streamed (a fresh thread: one thread per ingest run):
                # progress events arrive as "custom" parts, the state as "values".
                events: list[dict[str, Any]] = []
                final: dict[str, Any] = {}
                for part in client.runs.stream(
                    None,
                    "ingest",
                    input={"paths": paths},
                    context={"collection": collection},
                    stream_mode=["values", "custom"],
                ):
                    if part.event == "custom":
                        events.append(part.data)
                    elif part.event == "values":
                        final = part.data
                assert {"event": "loaded", "documents": 0, "unchanged": 3} in events
                assert final["report"]["unchanged"] == 3 and final["report"]["added"] == 0

                # Ask: streamed values, then a plain wait relying on the server's env defaults.
                question = "How often do I clean the filter of the Coolwave 330C?"
                values: list[dict[str, Any]] = [
                    part.data
                    for part in client.runs.stream(
                        None,
                        "answer",
                        input={"question": question},
                        context={"collection": collection, "k": 3},
                        stream_mode="values",
                    )
                    if part.event == "values"
                ]
                assert values and values[-1]["answer"]
                streamed_sources = values[-1]["sources"]
                assert 0 < len(streamed_sources) <= 3

                answer: Any = client.runs.wait(None, "answer", input={"question": question})
                assert isinstance(answer, dict), answer
                sources = answer["sources"]
                assert sources and answer["answer"]
                json.dumps(sources)  # JSON all the way through
                corpus_files = {str(p) for p in corpus.iterdir()}
                assert all(s["doc_id"] in corpus_files for s in sources)
                assert {s["model"] for s in sources} <= set(SAMPLE_MODELS)
                assert answer["question_model"] == "Coolwave 330C"
                assert all(c in {s["number"] for s in sources} for c in answer["citations"])

                client.threads.delete(thread["thread_id"])  # the saver's adelete_thread
                assert checkpoint_count(ctx, thread["thread_id"]) == 0
        finally:
            with contextlib.suppress(Exception):
                store_for(ctx).drop_collection(collection)


def test_the_server_started_from_another_folder_serves_typed_checked_graphs(
    tmp_path: Path,
) -> None:
    """`langgraph dev --config <repo>/langgraph.json` from elsewhere: the SDK reads each graph's
    input, output and context schema, bad inputs fail with one clear message, and the embedded
    PostgreSQL the server started stops with it (SIGTERM, as a process manager stops it)."""
    if reason := missing_server_packages():
        pytest.skip(reason)
    from langgraph_sdk import get_sync_client

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    data_dir = tmp_path / "data"  # a database of the server's own, so it is the one to stop it
    settings = {
        "CHOP_DATABASE_URL": "",
        "CHOP_CHAT_PROVIDER": "openai",
        "CHOP_OPENAI_BASE_URL": "http://127.0.0.1:9/v1",  # never called: every run is refused
        # chop as installed (pip install -e .): this checkout, not the folder the server runs in
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    postmaster = data_dir / "pgdata" / "postmaster.pid"
    with langgraph_dev(elsewhere, data_dir, settings, config=ROOT / "langgraph.json") as url:
        assert postmaster.exists()
        client = get_sync_client(url=url, timeout=RUN_S)
        schemas = {
            a["graph_id"]: client.assistants.get_schemas(a["assistant_id"])
            for a in client.assistants.search()
        }
        assert set(schemas) == {"ingest", "answer", "chat"}
        for graph_id, schema in schemas.items():
            for kind in ("input_schema", "output_schema", "context_schema"):
                assert schema[kind], f"{graph_id}: {kind} is {schema[kind]!r}"
        answer_input: Any = schemas["answer"]["input_schema"]
        assert answer_input["required"] == ["question"]
        assert answer_input["properties"]["question"]["type"] == "string"
        assert {"answer", "citations", "sources"} <= set(
            schemas["answer"]["output_schema"]["properties"]
        )
        assert {"paths", "documents", "delete", "meta"} == set(
            schemas["ingest"]["input_schema"]["properties"]
        )
        assert schemas["answer"]["context_schema"]["properties"]["k"]["type"] == "integer"

        question = {"question": "How often do I clean the filter of the Coolwave 330C?"}
        refused: list[tuple[str, dict[str, Any], dict[str, Any], str]] = [
            ("answer", question, {"k": "5"}, "setting 'k' must be int, got str '5'"),
            ("answer", question, {"search": "foo"}, "setting 'search' must be one of"),
            ("answer", {}, {}, "the answer graph needs 'question', a string; got nothing"),
            ("ingest", {"paths": "manuals/"}, {}, "'paths' must be a list of strings"),
            ("answer", question, {"colection": "manuals"}, "unknown setting(s): colection"),
            ("ingest", {"path": ["manuals/"]}, {}, "unknown input key(s) 'path'"),
            (
                "answer",
                question,
                {"collection": "no_such_collection"},
                "collection 'no_such_collection' does not exist",
            ),
        ]
        # Settings only the deployment sets: a caller cannot send the server's key to its own
        # host nor make the server start a database in a folder of its choosing (issue 36).
        elsewhere_data = tmp_path / "callers-data"
        with request_listener() as (listener_url, requests_seen):
            refused += [
                ("answer", question, {"openai_base_url": listener_url}, "openai_base_url cannot"),
                ("answer", question, {"chat_provider": "openai", "embedding_base_url":
                                      listener_url}, "chat_provider, embedding_base_url cannot"),
                ("ingest", {"paths": [str(tmp_path)]}, {"data_dir": str(elsewhere_data)},
                 "data_dir cannot be chosen by a run"),
                ("answer", question, {"database_url": "postgresql://x@127.0.0.1:9/x"},
                 "database_url cannot be chosen by a run"),
                ("ingest", {"paths": ["/etc"]}, {},
                 "path '/etc' is outside the folders a server run may read"),
            ]  # fmt: skip
            for graph_id, run_input, context, message in refused:
                with pytest.raises(Exception, match=re.escape(message)):
                    client.runs.wait(None, graph_id, input=run_input, context=context)  # type: ignore[arg-type]
            assistant = client.assistants.create(
                "answer", context={"openai_base_url": listener_url}
            )
            with pytest.raises(Exception, match="openai_base_url cannot be chosen by a run"):
                client.runs.wait(None, assistant["assistant_id"], input=question)
        assert requests_seen == [], "the caller's host was called"
        assert not elsewhere_data.exists(), "the server made the caller's data folder"
    deadline = time.monotonic() + 15
    while postmaster.exists() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not postmaster.exists(), "the embedded PostgreSQL outlived the server"


def test_with_api_keys_the_server_refuses_callers_without_one_and_keeps_threads_apart(
    tmp_path: Path,
) -> None:
    """The deploy recipe's auth (deploy/auth.py, CHOP_API_KEYS): no key or a wrong key is a
    401 on every route; a caller with a key sees only its own threads."""
    if reason := missing_server_packages():
        pytest.skip(reason)
    from langgraph_sdk import get_sync_client

    server_dir = tmp_path / "server"
    server_dir.mkdir()
    settings = {
        "CHOP_API_KEYS": "key-of-ann,key-of-bob",
        "CHOP_CHAT_PROVIDER": "openai",
        "CHOP_OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
    }
    with langgraph_dev(server_dir, tmp_path / "data", settings) as url:
        for headers in ({}, {"x-api-key": "key-of-eve"}, {"Authorization": "Bearer nope"}):
            request = urllib.request.Request(
                f"{url}/assistants/search", data=b"{}", method="POST",
                headers={"Content-Type": "application/json", **headers},
            )  # fmt: skip
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(request, timeout=10)
            assert refused.value.code == 401, headers
        # the page's own files load for anyone (it then asks for a key); its routes do not
        with urllib.request.urlopen(f"{url}/chop/", timeout=10) as page:
            assert page.status == 200
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"{url}/chop/api/collections", timeout=10)
        assert refused.value.code == 401
        keyed = urllib.request.Request(
            f"{url}/chop/api/collections", headers={"x-api-key": "key-of-ann"}
        )
        with urllib.request.urlopen(keyed, timeout=10) as listed:
            assert listed.status == 200
        ann = get_sync_client(url=url, api_key="key-of-ann", timeout=RUN_S)
        bob = get_sync_client(url=url, headers={"Authorization": "Bearer key-of-bob"})
        assert {a["graph_id"] for a in ann.assistants.search()} >= {"ingest", "answer"}
        thread = ann.threads.create()
        assert [t["thread_id"] for t in ann.threads.search()] == [thread["thread_id"]]
        assert bob.threads.search() == []
        with pytest.raises(Exception, match="not found"):
            bob.threads.get(thread["thread_id"])
