"""Killing an ingest mid-run loses nothing, duplicates nothing, and does not redo LLM work."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

from chop_rag.config import Context
from chop_rag.harness.sample_corpus import write_sample_corpus
from chop_rag.store import Store

ROOT = Path(__file__).resolve().parents[1]
FIELDS = ("doc_id", "chunk_index", "text", "prefix", "category", "nouns", "model", "cnm_source")


def start_worker(folder: Path, ctx: Context, identity: str, calls_log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.ingest_worker", str(folder), ctx.collection,
         ctx.data_dir, identity, str(calls_log)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )  # fmt: skip


def lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def stored(store: Store, collection: str) -> list[tuple]:
    return [tuple(str(row[f]) for f in FIELDS) for row in store.chunks(collection)]


def test_a_killed_ingest_resumes_to_the_same_rows_without_redoing_llm_calls(
    context: Context, store: Store, tmp_path: Path
) -> None:
    folder = tmp_path / "corpus"
    write_sample_corpus(folder)
    run = uuid.uuid4().hex[:8]

    clean_log = tmp_path / "clean.log"
    clean = start_worker(folder, context, f"clean-{run}", clean_log)
    assert clean.wait(timeout=600) == 0, clean.stderr.read() if clean.stderr else ""
    expected, clean_calls = stored(store, context.collection), lines(clean_log)
    assert clean_calls > 20

    crashed = context.with_overrides(collection=context.collection + "_k")
    crash_log = tmp_path / "crash.log"
    worker = start_worker(folder, crashed, f"crash-{run}", crash_log)
    deadline = time.monotonic() + 600
    while lines(crash_log) < clean_calls // 2 and time.monotonic() < deadline:
        assert worker.poll() is None, "the worker finished before it could be killed"
        time.sleep(0.05)
    os.kill(worker.pid, signal.SIGKILL)
    worker.wait()
    before_kill = lines(crash_log)
    assert 0 < before_kill < clean_calls

    resumed = start_worker(folder, crashed, f"crash-{run}", crash_log)
    out, err = resumed.communicate(timeout=600)
    assert resumed.returncode == 0, err
    result = json.loads(out.strip().splitlines()[-1])
    try:
        assert result["resumed"], "the second run continued the checkpointed thread"
        assert stored(store, crashed.collection) == expected, "same rows, no duplicates, no gaps"
        redone = lines(crash_log) - clean_calls
        assert redone <= 2, f"{redone} LLM calls were paid twice (at most the 2 in flight)"
    finally:
        store.drop_collection(crashed.collection)
