"""Bad LLM replies and bad input files: retried or reported, never fatal to the batch."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from chop_rag.api import ingest
from chop_rag.config import Context
from chop_rag.harness.sample_corpus import write_sample_corpus
from chop_rag.harness.stub_llm import running_stub
from chop_rag.labelling.cnm import CNMReply, ContinuityReply, make_cnm
from chop_rag.models import llm
from chop_rag.models.llm import chat_messages, structured_call
from chop_rag.store import Store

ROOT = Path(__file__).resolve().parents[1]


def remote(context: Context, base_url: str, **overrides: object) -> Context:
    return context.with_overrides(
        chat_provider="openai",
        openai_base_url=f"{base_url}/v1",
        chat_model="stub",
        llm_timeout_s=1.0,
        **overrides,
    )


@pytest.mark.parametrize("fault", ["429", "500", "timeout", "invalid_json", "missing_field"])
def test_each_kind_of_bad_reply_is_retried_until_a_good_one(
    context: Context, store: Store, fault: str
) -> None:
    with running_stub(latency=(0, 0), faults=[fault], timeout_sleep=3.0) as stub:
        ctx = remote(context, stub.base_url)
        result = structured_call(ctx, store, "cnm", chat_messages("label", "a passage"), CNMReply)
        assert result.value is not None, result.error
        assert stub.served[:2] == [fault, "ok"]


def test_a_reply_that_stays_bad_falls_back_and_says_why(context: Context, store: Store) -> None:
    with running_stub(latency=(0, 0), faults=["invalid_json"] * 20) as stub:
        ctx = remote(context, stub.base_url)
        result = structured_call(
            ctx, store, "continuity", chat_messages("judge", "a, b"), ContinuityReply
        )
    assert result.value is None and result.attempts == 3
    assert result.error and "InvalidOutput" in result.error


def test_a_raw_newline_inside_a_json_string_is_read_and_cleaned_not_retried() -> None:
    # the local grammar let one through at a 60-character cut; three identical retries at
    # temperature 0 then cost a filing its whole profile
    reply = llm.parse_reply(
        '{"category": "air\nconditioner", "nouns": ["cut off\n"], "model": null}', CNMReply
    )
    assert make_cnm(reply.category, reply.nouns, reply.model) == {
        "category": "air conditioner",
        "nouns": ["cut off"],
        "model": None,
    }
    with pytest.raises(llm.InvalidOutput):
        llm.parse_reply('{"category": "air conditioner", "nouns": [', CNMReply)


def test_a_reasoning_models_thinking_before_the_json_is_skipped() -> None:
    reply = llm.parse_reply(
        '<think>\nThe passage says "select Remove", so {yes}.\n</think>\n\n'
        '```json\n{"category": "tv", "nouns": ["remote"], "model": null}\n```',
        CNMReply,
    )
    assert reply.category == "tv" and reply.nouns == ["remote"]
    with pytest.raises(llm.InvalidOutput):  # thinking that never ends is no answer
        llm.parse_reply('<think>{"category": "tv", "nouns": [], "model": null}', CNMReply)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_an_endpoint_that_gives_no_reply_is_left_alone_until_one_task_probes_it(
    context: Context, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    port = free_port()  # nothing listens there yet
    ctx = remote(context, f"http://127.0.0.1:{port}", llm_deadline_s=2.0)

    def ask(n: int) -> llm.CallResult[CNMReply]:
        return structured_call(ctx, store, "cnm", chat_messages("label", f"p{n}"), CNMReply)

    refused = [ask(n) for n in range(llm.OUTAGE_AFTER)]
    assert all(r.value is None and r.attempts > 0 for r in refused)
    skipped = ask(99)
    assert skipped.attempts == 0, "a dead endpoint is not asked once per chunk"
    assert skipped.error and skipped.error.startswith("EndpointDown")
    assert "ConnectError" in skipped.error or "Connection" in skipped.error, "the cause is kept"
    monkeypatch.setattr(llm, "OUTAGE_PROBE_S", 0.0)
    with running_stub(latency=(0, 0), port=port):
        probe = ask(100)
        assert probe.value is not None, "after the pause one task asks, and the server is back"
        assert ask(101).value is not None


def test_the_cli_reports_each_bad_file_once_and_ingests_the_rest(
    context: Context, store: Store, tmp_path: Path
) -> None:
    folder = tmp_path / "mixed"
    write_sample_corpus(folder)
    (folder / "empty.md").write_text("   \n")
    (folder / "binary.txt").write_bytes(b"\x00\x01\x02" * 100)
    (folder / "latin.txt").write_bytes(b"caf\xe9 \x81\x8d\x9d bytes")
    (folder / "truncated.pdf").write_bytes(b"%PDF-1.4\n1 0 obj << /Type /Catalog")
    missing = tmp_path / "does-not-exist.md"
    with running_stub(latency=(0, 0)) as stub:
        env = {
            **os.environ,
            "CHOP_DATA_DIR": context.data_dir,
            "CHOP_COLLECTION": context.collection,
            "CHOP_CHAT_PROVIDER": "openai",
            "CHOP_OPENAI_BASE_URL": f"{stub.base_url}/v1",
            "CHOP_CHAT_MODEL": "stub",
            "HF_HUB_OFFLINE": "1",
        }
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "chop_rag.cli",
                "ingest",
                str(folder),
                str(missing),
                "--json",
                "--quiet",
            ],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    reasons = {Path(p["source"]).name: p["reason"] for p in report["problems"]}
    assert set(reasons) == {"empty.md", "binary.txt", "latin.txt", "truncated.pdf", missing.name}
    assert reasons[missing.name] == "no such file or directory"
    assert report["added"] == 3
    assert {r["doc_title"] for r in store.chunks(context.collection)} == {
        "Coolwave 225B User Manual",
        "Coolwave 330C User Manual",
        "Coolwave 410X User Manual",
    }


def test_a_hung_endpoint_ends_an_ingest_in_about_one_deadline(
    context: Context, store: Store, tmp_path: Path, embedder: object
) -> None:
    # one 12-chunk document: the profile call, then judgments and extractions that each wait
    # for the one before; every request hangs past the deadline
    topics = ["Filter", "Tank", "Fan", "Timer", "Remote", "Drain", "Mode", "Sleep", "Light",
              "Noise", "Power", "Clock"]  # fmt: skip
    text = "\n\n".join(f"{t} care. " + f"The {t.lower()} needs attention weekly. " * 5
                       for t in topics)  # fmt: skip
    (tmp_path / "manual.txt").write_text(text, encoding="utf-8")
    deadline = 3.0
    with running_stub(latency=(0, 0), faults=["timeout"] * 500, timeout_sleep=60.0) as stub:
        ctx = remote(context, stub.base_url).with_overrides(
            llm_timeout_s=deadline,
            llm_deadline_s=deadline,
            continuity_mode="llm",
            chunk_tokens=40,
            chunk_overlap=0,
        )
        started = time.monotonic()
        report = ingest([tmp_path], context=ctx)
        elapsed = time.monotonic() - started
        asked = len(stub.served)
    assert report["chunks_stored"] >= 10 and report["llm_unavailable"]
    # measured: 13.0 s and 7 requests before (a deadline per dependent task), 6.5 s and 1 after
    assert elapsed < 2 * deadline + 4, f"{elapsed:.1f} s for one deadline of {deadline} s"
    assert asked <= ctx.max_concurrency + 1, f"{asked} requests sent to a hung endpoint"
