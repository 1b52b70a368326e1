"""Issue 13: a resume never stores stale or foreign input, and no setting, outage, signal or
question makes chop hang, crash or report something misleading."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from chop_rag.api import ask, ingest
from chop_rag.cli import main
from chop_rag.config import Context
from chop_rag.harness.sample_corpus import write_sample_corpus
from chop_rag.harness.stub_llm import running_stub
from chop_rag.labelling.cnm import CNMReply
from chop_rag.models.llm import chat_messages, structured_call
from chop_rag.nodes.persist import NEEDS_RELABEL
from chop_rag.store import Store, validate_collection
from tests.database import ingest_through_a_restart
from tests.fakes import ScriptedChatModel, sensible_reply, slowed
from tests.ingest_runs import Crash, checkpointed_threads, crash_after, small, write_manual

ROOT = Path(__file__).resolve().parents[1]
FILTER = "Filter care. " + "Clean the mesh filter with warm water and let it dry. " * 6
TANK = "Tank drainage. " + "Empty the water tank when the full light shows. " * 6


# ------------------------------------------------------------------ 1. resume keyed by inputs
def test_an_unfinished_run_of_one_folder_is_never_resumed_for_another_with_the_same_name(
    context: Context,
    store: Store,
    scripted: ScriptedChatModel,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ctx = small(context)
    write_manual(tmp_path / "a" / "docs", "a.md", "Coolwave 225B Manual", FILTER, TANK)
    write_manual(tmp_path / "b" / "docs", "b.md", "Coolwave 330C Manual", TANK, FILTER)
    monkeypatch.chdir(tmp_path / "a")
    crash_after(2, scripted)
    with pytest.raises(Crash):
        ingest(["docs"], context=ctx, durable=True)

    scripted.responder = sensible_reply
    monkeypatch.chdir(tmp_path / "b")
    events: list[str] = []
    report = ingest(
        ["docs"], context=ctx, durable=True, on_event=lambda e: events.append(e["event"])
    )
    assert "resumed" not in events
    assert report["added"] == 1
    assert {r["doc_title"] for r in store.chunks(ctx.collection)} == {"Coolwave 330C Manual"}


def test_a_file_edited_or_deleted_after_a_crash_is_read_again_from_disk(
    context: Context, store: Store, scripted: ScriptedChatModel, tmp_path: Path
) -> None:
    ctx = small(context)
    folder = tmp_path / "docs"
    edited = write_manual(folder, "edited.md", "Coolwave 225B Manual", FILTER, TANK)
    deleted = write_manual(folder, "deleted.md", "Coolwave 330C Manual", TANK, FILTER)
    crash_after(2, scripted)
    with pytest.raises(Crash):
        ingest([folder], context=ctx, durable=True)
    assert checkpointed_threads(ctx), "the crash left a resumable thread"

    write_manual(folder, "edited.md", "Coolwave 225B Manual", "Fan speed. " * 20, TANK)
    deleted.unlink()
    scripted.responder = sensible_reply
    report = ingest([folder], context=ctx, durable=True)

    assert report["added"] == 1
    assert {r["doc_id"] for r in store.chunks(ctx.collection)} == {str(edited.resolve())}
    stored_text = " ".join(r["text"] for r in store.chunks(ctx.collection))
    assert "Fan speed." in stored_text and "Filter care." not in stored_text
    assert checkpointed_threads(ctx) == [], "the stale thread and the finished one are pruned"


# ------------------------------------------------------------------ 2. settings that would hang
def test_a_concurrency_of_zero_is_refused_with_one_message_instead_of_hanging(
    context: Context, tmp_path: Path
) -> None:
    with pytest.raises(ValueError, match=r"max_concurrency must be .* at least 1"):
        context.with_overrides(max_concurrency=0)
    write_manual(tmp_path, "a.md", "Coolwave 225B Manual", FILTER)
    env = {**os.environ, "CHOP_DATA_DIR": context.data_dir, "CHOP_MAX_CONCURRENCY": "0"}
    done = subprocess.run(
        [sys.executable, "-m", "chop_rag.cli", "ingest", str(tmp_path), "--collection",
         context.collection],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2
    assert "max_concurrency" in done.stderr and "Traceback" not in done.stderr


def test_bad_k_and_collection_names_are_refused() -> None:
    for bad in ({"k": -1}, {"k": 0}, {"chunk_overlap": 500}, {"llm_deadline_s": 0}):
        with pytest.raises(ValueError):
            Context().with_overrides(**bad)
    for name in ("docs\n", "Docs", "x" * 41, "a-b"):
        with pytest.raises(ValueError, match="collection name"):
            validate_collection(name)
    assert main(["ask", "anything", "--k=-1"]) == 2


def test_a_malformed_numeric_setting_names_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHOP_MAX_CONCURRENCY", "four")
    with pytest.raises(
        ValueError, match=r"^CHOP_MAX_CONCURRENCY: max_concurrency must be a whole number"
    ):
        Context()


# ------------------------------------------------------------------ 3. database restart
@pytest.mark.skipif(bool(os.environ.get("CHOP_DATABASE_URL")), reason="embedded server only")
def test_a_durable_ingest_survives_a_database_restart(
    context: Context, store: Store, scripted: ScriptedChatModel, tmp_path: Path
) -> None:
    ctx = context.with_overrides(continuity_mode="llm", chunk_tokens=60, chunk_overlap=10)
    outcome = ingest_through_a_restart(tmp_path / "corpus", ctx, scripted, durable=True)
    assert "error" not in outcome, outcome.get("error")
    assert {r.doc_id for r in store.documents(ctx.collection).values()} and len(
        store.documents(ctx.collection)
    ) == 3


# ------------------------------------------------------------------ 4. LLM down, then up
@pytest.mark.usefixtures("every_attempt_runs")
def test_a_run_of_mostly_fallbacks_says_so_and_the_next_run_relabels_it(
    context: Context,
    store: Store,
    scripted: ScriptedChatModel,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    def unauthorized(task: str, user: str) -> str:
        raise RuntimeError("Error code: 401 - invalid api key")

    scripted.responder = unauthorized
    about = "This air conditioner cools one room."  # a category the document writes is kept
    write_manual(tmp_path, "a.md", "Coolwave 225B Manual", about, FILTER, TANK)
    write_manual(tmp_path, "b.md", "Coolwave 330C Manual", about, TANK, FILTER)
    monkeypatch.setenv("CHOP_DATA_DIR", context.data_dir)
    monkeypatch.setenv("CHOP_CONTINUITY_MODE", "llm")
    monkeypatch.setenv("CHOP_CHUNK_TOKENS", "40")
    monkeypatch.setenv("CHOP_CHUNK_OVERLAP", "0")
    argv = ["ingest", str(tmp_path), "--collection", context.collection, "--no-durable"]
    assert main([*argv, "--quiet"]) == 3
    err = capsys.readouterr().err
    assert err.count("LLM unavailable") == 1 and "401" in err
    assert all(r.fingerprint.startswith(NEEDS_RELABEL) for r in store.documents(
        context.collection).values())  # fmt: skip

    scripted.responder = sensible_reply
    assert main([*argv, "--quiet"]) == 0
    assert "updated 2" in capsys.readouterr().err
    rows = store.chunks(context.collection)
    assert rows and not any(r["flags"] or r["continuity"] == "llm-fallback" for r in rows)
    assert main([*argv, "--quiet"]) == 0
    assert "unchanged 2" in capsys.readouterr().err


# ------------------------------------------------------------------ 6. one deadline per call
def test_a_hung_endpoint_costs_one_deadline_and_every_attempt_is_counted(
    context: Context, store: Store
) -> None:
    faults = ["ok"] + ["timeout"] * 20  # one good call first: the client is warm when timed
    with running_stub(latency=(0, 0), faults=faults, timeout_sleep=6.0) as stub:
        ctx = context.with_overrides(
            chat_provider="openai",
            openai_base_url=f"{stub.base_url}/v1",
            chat_model="stub",
            llm_timeout_s=1.0,
            llm_deadline_s=2.5,
        )
        assert structured_call(ctx, store, "cnm", chat_messages("l", "x"), CNMReply).value
        started = time.monotonic()
        result = structured_call(ctx, store, "cnm", chat_messages("label", "y"), CNMReply)
        elapsed = time.monotonic() - started
        served = len(stub.served) - 1
    assert result.value is None and "Timeout" in (result.error or "")
    assert elapsed < 4.0, f"{elapsed:.1f} s for a 2.5 s deadline (9 s and more before)"
    assert result.attempts == served >= 2, "the client does not retry behind chop's back"


# ------------------------------------------------------------------ 8. Ctrl-C
def test_ctrl_c_stops_an_ingest_within_seconds_and_the_same_command_resumes(
    context: Context, store: Store, tmp_path: Path
) -> None:
    folder = tmp_path / "corpus"
    write_sample_corpus(folder)
    with running_stub(latency=(0.1, 0.1)) as stub:
        env = {
            **os.environ,
            "CHOP_DATA_DIR": context.data_dir,
            "CHOP_CHAT_PROVIDER": "openai",
            "CHOP_OPENAI_BASE_URL": f"{stub.base_url}/v1",
            "CHOP_CHAT_MODEL": "stub",
            "CHOP_CONTINUITY_MODE": "llm",
            "CHOP_CHUNK_TOKENS": "60",
            "CHOP_CHUNK_OVERLAP": "10",
            "CHOP_MAX_CONCURRENCY": "1",
        }
        command = [sys.executable, "-m", "chop_rag.cli", "ingest", str(folder), "--collection",
                   context.collection, "--quiet"]  # fmt: skip
        run = subprocess.Popen(
            command, cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True,
            # a shell's background job ignores SIGINT and its children inherit that: a user's
            # terminal does not, and this test is about the user's Ctrl-C
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )  # fmt: skip
        deadline = time.monotonic() + 300
        while len(stub.served) < 10 and time.monotonic() < deadline:
            assert run.poll() is None, "finished before it could be interrupted"
            time.sleep(0.05)
        stopped_at = time.monotonic()
        run.send_signal(signal.SIGINT)
        _, err = run.communicate(timeout=60)
        took = time.monotonic() - stopped_at
        assert run.returncode == 130 and took < 5, (run.returncode, took, err)
        lines = [line for line in err.splitlines() if line.strip()]
        assert len(lines) == 1 and "interrupted" in lines[0], err
    with running_stub(latency=(0, 0)) as fast:  # the endpoint is not part of the thread's key
        env["CHOP_OPENAI_BASE_URL"] = f"{fast.base_url}/v1"
        again = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True,
                               timeout=600)  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert "resuming" in again.stderr
    assert len(store.documents(context.collection)) == 3


# ------------------------------------------------------------------ 9. questions
@pytest.mark.usefixtures("store", "scripted")
def test_odd_questions_are_answered_or_refused_with_a_message_never_a_crash(
    context: Context,
) -> None:
    ctx = small(context, search="hybrid")
    ingest(documents=[], context=ctx)
    from chop_rag.reading.documents import make_document

    ingest(documents=[make_document("a", "Coolwave 225B", FILTER)], context=ctx)
    for question in ("filter\x00cleaning?", "caf\udcc3 filter?", "filter " * 570):
        result = ask(question, context=ctx)
        assert result["sources"], question[:20]
    for question in ("filter " * 18_000, "x" * 1_000_000):
        with pytest.raises(ValueError, match="characters long"):
            ask(question, context=ctx)


def test_the_cli_refuses_a_huge_question_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ask", "q" * 200_000]) == 2
    err = capsys.readouterr().err
    assert "characters long" in err and "Traceback" not in err


# ------------------------------------------------------------------ 10/11. honest reports
@pytest.mark.usefixtures("store", "scripted")
def test_each_skipped_file_is_reported_once_with_or_without_quiet(
    context: Context,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    write_manual(tmp_path, "a.md", "Coolwave 225B Manual", FILTER)
    (tmp_path / "empty.md").write_text("  \n")
    monkeypatch.setenv("CHOP_DATA_DIR", context.data_dir)
    for extra in ([], ["--quiet"]):
        main(["ingest", str(tmp_path), "--collection", context.collection, "--no-durable", *extra])
        assert capsys.readouterr().err.count("empty.md") == 1, extra


def test_a_resumed_run_reports_only_the_calls_it_made(
    context: Context, store: Store, scripted: ScriptedChatModel, tmp_path: Path
) -> None:
    ctx = small(context, max_concurrency=1)
    write_manual(tmp_path, "a.md", "Coolwave 225B Manual", FILTER, TANK)
    write_manual(tmp_path, "b.md", "Coolwave 330C Manual", TANK, FILTER)
    clean = ctx.with_overrides(collection=ctx.collection + "_clean")
    ingest([tmp_path], context=clean)
    store.drop_collection(clean.collection)
    total, scripted.calls[:] = len(scripted.calls), []
    crash_after(total * 2 // 3, scripted)
    with pytest.raises(Crash):
        ingest([tmp_path], context=ctx, durable=True)
    scripted.responder = sensible_reply
    before = len(scripted.calls)
    resumed = ingest([tmp_path], context=ctx, durable=True)
    assert resumed["stats"]["llm_calls"] == len(scripted.calls) - before


def test_dangling_symlinks_and_symlink_loops_in_a_folder_are_reported(tmp_path: Path) -> None:
    from chop_rag.reading.loaders import load_paths

    write_manual(tmp_path, "a.md", "Coolwave 225B Manual", FILTER)
    (tmp_path / "gone.md").symlink_to(tmp_path / "missing.md")
    (tmp_path / "self.md").symlink_to(tmp_path / "self.md")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "up").symlink_to(tmp_path)
    documents, problems = load_paths([tmp_path])
    assert [Path(d["doc_id"]).name for d in documents] == ["a.md"]
    reasons = {Path(p["source"]).name: p["reason"] for p in problems}
    assert reasons["gone.md"].startswith("broken symbolic link")
    assert reasons["self.md"] == "symbolic link loop"
    assert reasons["up"].startswith("symbolic link loop")


def test_a_utf8_file_with_a_few_bad_bytes_keeps_its_text_and_says_so(tmp_path: Path) -> None:
    from chop_rag.reading.loaders import load_paths

    text = "Don’t remove the filter while the unit runs. " * 20
    (tmp_path / "a.txt").write_bytes(text.encode() + b" \xff tail")
    [document], problems = load_paths([tmp_path])
    assert problems == []
    assert "Don’t remove" in document["text"] and "â€" not in document["text"]
    assert "\ufffd" in document["text"]
    assert document["metadata"]["warnings"] == [
        "1 byte sequence(s) not valid UTF-8, replaced with U+FFFD"
    ]


def test_a_damaged_pdf_is_reported_once_with_its_name_and_pypdf_stays_quiet(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from chop_rag.reading.loaders import load_paths

    (tmp_path / "truncated.pdf").write_bytes(b"%PDF-1.4\n1 0 obj << /Type /Catalog")
    _, problems = load_paths([tmp_path])
    assert [Path(p["source"]).name for p in problems] == ["truncated.pdf"]
    assert not [r for r in caplog.records if r.name.startswith("pypdf")]


def test_a_long_run_without_spaces_becomes_bounded_chunks(embedder) -> None:  # type: ignore[no-untyped-def]
    from chop_rag.reading.chunking import MAX_TOKEN_CHARS, token_windows

    text = "Intro line.\n" + "QmFzZTY0" * 37_500  # 300 KB without a space
    windows = token_windows(text, embedder.tokenizer, 200, 40)
    assert len(windows) > 1
    assert max(w.end - w.start for w in windows) <= 200 * MAX_TOKEN_CHARS
    assert windows[-1].end == len(text)


def test_two_runs_storing_the_same_documents_at_once_do_not_both_report_them_added(
    context: Context, store: Store, scripted: ScriptedChatModel
) -> None:
    import contextvars
    from concurrent.futures import ThreadPoolExecutor

    from chop_rag.reading.documents import make_document

    scripted.responder = slowed(0.1)  # both runs load before either stores
    ctx = small(context)
    ingest(documents=[], context=ctx)  # the collection exists before the race
    documents = [
        make_document("a", "Coolwave 225B", FILTER),
        make_document("b", "Coolwave 330C", TANK),
    ]
    with ThreadPoolExecutor(2) as pool:
        runs = [
            pool.submit(contextvars.copy_context().run, ingest, documents=documents, context=ctx)
            for _ in range(2)
        ]
        reports = [run.result(timeout=300) for run in runs]
    assert sum(r["added"] for r in reports) == 2
    assert sum(r["added"] + r["updated"] for r in reports) == 4
    assert len(store.documents(ctx.collection)) == 2
