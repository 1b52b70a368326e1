"""The benchmark tools: the stub LLM server, its faults, the throughput corpus, one real ingest."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from bench.ingest_profile import run_profile
from bench.ingest_throughput import build_corpus
from chop_rag.api import ingest
from chop_rag.config import Context
from chop_rag.harness.sample_corpus import write_sample_corpus
from chop_rag.harness.stub_llm import StubServer, make_instance, running_stub, serve_stub
from chop_rag.labelling.cnm import CNMReply, ContinuityReply, DocumentProfileReply
from chop_rag.models.llm import _json_schema
from chop_rag.store import Store


def post(base_url: str, body: dict[str, Any], timeout: float = 5.0) -> tuple[int, dict, Any]:
    """(status, headers, parsed JSON body) of a chat-completions request."""
    request = urllib.request.Request(
        f"{base_url}/v1/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, dict(response.headers), json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), json.loads(err.read())


def chat(schema: type[BaseModel], prompt: str, *, llama_style: bool = False) -> dict[str, Any]:
    """A request like chop_rag.models.llm sends it (json_schema), or llama.cpp's json_object +
    schema."""
    if llama_style:
        response_format = {"type": "json_object", "schema": _json_schema(schema)}
    else:
        response_format = {
            "type": "json_schema",
            "json_schema": {"name": "t", "schema": _json_schema(schema), "strict": False},
        }
    return {
        "model": "stub",
        "messages": [{"role": "user", "content": prompt}],
        "response_format": response_format,
    }


def content(reply: Any) -> str:
    return str(reply["choices"][0]["message"]["content"])


@pytest.mark.parametrize("schema", [CNMReply, ContinuityReply, DocumentProfileReply])
@pytest.mark.parametrize("llama_style", [False, True])
def test_stub_replies_validate_against_chop_schemas(
    schema: type[BaseModel], llama_style: bool
) -> None:
    with serve_stub(latency=(0.0, 0.0)) as base_url:
        for n in range(6):
            status, _, reply = post(base_url, chat(schema, f"prompt {n}", llama_style=llama_style))
            assert status == 200
            assert reply["object"] == "chat.completion"
            schema.model_validate_json(content(reply))


def test_stub_booleans_follow_the_prompt_and_nullable_is_null() -> None:
    with serve_stub(latency=(0.0, 0.0)) as base_url:
        answers = {
            json.loads(content(post(base_url, chat(ContinuityReply, f"pair {n}"))[2]))["same_topic"]
            for n in range(16)
        }
        again = [post(base_url, chat(ContinuityReply, "pair 3"))[2] for _ in range(2)]
        cnm = CNMReply.model_validate_json(content(post(base_url, chat(CNMReply, "x"))[2]))
    assert answers == {True, False}
    assert content(again[0]) == content(again[1])  # the same prompt, the same reply
    assert cnm.model is None and len(cnm.nouns) == 1


def test_make_instance_follows_the_schema() -> None:
    schema = {
        "$defs": {"Part": {"type": "object", "properties": {"n": {"type": "integer"}}}},
        "type": "object",
        "properties": {
            "word": {"type": "string", "maxLength": 3},
            "long": {"type": "string", "minLength": 12},
            "pair": {"type": "array", "items": {"type": "string"}, "minItems": 2},
            "kind": {"enum": ["a", "b"]},
            "part": {"$ref": "#/$defs/Part"},
            "maybe": {"type": ["string", "null"]},
            "optional": {"type": "string"},
        },
        "required": ["word", "long", "pair", "kind", "part", "maybe"],
    }
    value = make_instance(schema, seed=7)
    assert set(value) == {"word", "long", "pair", "kind", "part", "maybe"}
    assert len(value["word"]) <= 3 and len(value["long"]) >= 12
    assert len(value["pair"]) == 2 and value["kind"] in ("a", "b")
    assert value["part"] == {"n": 0} and value["maybe"] is None


def test_faults_are_served_in_order_then_ok() -> None:
    faults = ["429", "500", "invalid_json", "missing_field", "ok"]
    with running_stub(latency=(0.0, 0.0), faults=faults, retry_after=0.25) as stub:
        replies = [post(stub.base_url, chat(CNMReply, "p")) for _ in range(6)]
        assert stub.served == [*faults, "ok"]
        assert stub.stats()["faults_left"] == []
    statuses = [status for status, _, _ in replies]
    assert statuses == [429, 500, 200, 200, 200, 200]
    assert replies[0][1]["Retry-After"] == "1" and replies[0][1]["retry-after-ms"] == "250"
    assert replies[1][2]["error"]["type"] == "server_error"
    with pytest.raises(json.JSONDecodeError):
        json.loads(content(replies[2][2]))
    missing = json.loads(content(replies[3][2]))
    assert "category" not in missing and "nouns" in missing  # the first required field
    CNMReply.model_validate_json(content(replies[4][2]))


def test_timeout_fault_outlasts_the_client_and_the_next_request_is_served() -> None:
    with running_stub(latency=(0.0, 0.0), faults=["timeout"], timeout_sleep=2.0) as stub:
        with pytest.raises(TimeoutError):
            post(stub.base_url, chat(ContinuityReply, "p"), timeout=0.3)
        status, _, reply = post(stub.base_url, chat(ContinuityReply, "p"))
        assert status == 200 and stub.served == ["timeout", "ok"]
        ContinuityReply.model_validate_json(content(reply))


def test_unknown_fault_and_models_endpoint() -> None:
    with pytest.raises(ValueError, match="unknown fault"):
        StubServer(faults=["teapot"])
    with (
        serve_stub(latency=(0.0, 0.0)) as base_url,
        urllib.request.urlopen(f"{base_url}/v1/models", timeout=5) as response,
    ):
        assert json.loads(response.read())["data"][0]["id"] == "stub"


def test_throughput_corpus_has_distinct_documents(embedder: Any) -> None:
    documents = build_corpus(40, embedder.tokenizer)
    ids = [d["doc_id"] for d in documents]
    assert len(documents) >= 3
    assert len(set(ids)) == len(ids)
    assert len({d["title"] for d in documents}) == len(documents)
    assert len({d["text"] for d in documents}) == len(documents)
    assert all(d["spans"] for d in documents)  # loaded by the Markdown loader: headings


def answered_by(stub: StubServer, context: Context) -> Context:
    """``context`` with its chat model served by the stub, as an OpenAI-compatible endpoint."""
    return context.with_overrides(
        chat_provider="openai",
        openai_base_url=f"{stub.base_url}/v1",
        chat_model="stub",
        structured_output="json_schema",
    )


def test_ingest_against_the_stub_end_to_end(context: Context, store: Store, tmp_path: Any) -> None:
    paths = write_sample_corpus(tmp_path / "corpus")
    with running_stub(latency=(0.0, 0.01)) as stub:
        ctx = answered_by(stub, context).with_overrides(continuity_mode="llm")
        report = ingest(paths, context=ctx)
        requests = stub.stats()["requests"]
    stats = report["stats"]
    assert report["added"] == len(paths) and not report["problems"]
    assert stats["llm_calls"] > 0 and stats["llm_calls"] == requests
    chunks = store.chunks(ctx.collection)
    assert len(chunks) == report["chunks_stored"] == stats["chunks"]
    assert {c["continuity"] for c in chunks} >= {"first", "llm"}


def test_the_profile_mode_sets_each_stage_beside_its_ceiling(
    context: Context, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("bench.ingest_profile.REPEATS", 1)
    paths = write_sample_corpus(tmp_path / "corpus")
    with running_stub(latency=(0.0, 0.01)) as stub:
        ctx = answered_by(stub, context)
        results = run_profile([str(paths[0])], tmp_path / "out", context=ctx)
    profile = results["stage_profile"]
    assert results["ingest"]["chunks_stored"] > 0
    assert profile["busy_s"] <= profile["wall_s"]
    assert results["ceilings"]["pdf"] is None  # Markdown only: no PDF to read
    rates = {row["stage"]: row for row in results["side_by_side"]}
    for stage in ("embed", "persist"):
        assert rates[stage]["ingest_per_s"] > 0 and rates[stage]["ceiling_per_s"] > 0
    assert rates["embed"]["ingest_per_cpu_s"] > 0 and rates["embed"]["ceiling_per_cpu_s"] > 0
    written = json.loads((tmp_path / "out" / "results.json").read_text())
    assert set(written["stage_profile"]["stages"]) >= {"parse", "llm", "embed", "persist"}
    assert "| embed | chunks |" in (tmp_path / "out" / "results.md").read_text()


def test_the_modes_summary_counts_cached_answers_as_llm_work(tmp_path: Path) -> None:
    from bench.studies.continuity_modes import config_args, write_summary

    def results(calls: int, hits: int, hit1: float) -> dict[str, Any]:
        stats = {"llm_calls": calls, "cache_hits": hits, "continuity_llm": 3, "cnm_extracted": 2}
        metrics = {"hit@1": hit1, "mrr@10": 0.5, "ndcg@10": 0.5, "doc@1": 1.0}
        return {
            "settings": {"date": "d", "gate": [0.25, 0.55], "joint_extraction": False},
            "methods": {"chop": {"costs": {"chunks": 10, "extra": {"stats": stats}},
                                 "metrics": metrics}},
        }  # fmt: skip

    for name, (calls, hits, hit1) in {"llm": (9, 11, 0.5), "gate": (0, 4, 0.4)}.items():
        folder = tmp_path / name / "pair"
        folder.mkdir(parents=True)
        (folder / "results.json").write_text(json.dumps(results(calls, hits, hit1)))
    text = write_summary(tmp_path)
    assert "| pair | llm | - |  | 10 | 2.000 |" in text
    assert "| pair | gate | 0.25–0.55 |  | 10 | 0.400 |" in text
    assert text.index("| pair | llm") < text.index("| pair | gate")
    assert config_args("gate_h45") == (["--continuity-mode", "gate"], {"CHOP_GATE_HIGH": "0.45"})
    assert config_args("rules_h30") == (["--continuity-mode", "rules"], {"CHOP_GATE_HIGH": "0.30"})
