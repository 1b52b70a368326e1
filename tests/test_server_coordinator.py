"""`chop ingest --server URL`: a corpus as batch runs on a LangGraph server
(chop_rag/terminal/coordinator.py).

Against `langgraph dev` with two jobs at a time: every document is stored once, the batch
threads are deterministic (a second run submits nothing), and a batch whose run died midway
(cancelled, as a dead worker leaves it) resumes from its checkpoint without duplicates.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from chop_rag.config import Context
from chop_rag.harness.sample_corpus import SAMPLE_MODELS, render_manual, write_sample_corpus
from chop_rag.store import store_for
from chop_rag.terminal.coordinator import plan_batches
from tests.langgraph_server import (
    checkpoint_count,
    langgraph_dev,
    missing_server_packages,
    server_context,
    stub_llm,
    stub_settings,
)

pytestmark = pytest.mark.server
ROOT = Path(__file__).resolve().parents[1]


def write_corpus(folder: Path) -> list[Path]:
    """Six small manuals: the three samples and renamed copies naming other models."""
    files = write_sample_corpus(folder)
    for number, model in enumerate(SAMPLE_MODELS, 1):
        other = model.replace("Coolwave", "Breezer") + f"{number}"
        path = folder / f"breezer-{number}.md"
        path.write_text(render_manual(model).replace(model, other), encoding="ascii")
        files.append(path)
    return files


def coordinator(url: str, corpus: Path, collection: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "chop_rag.cli", "ingest", str(corpus), "--server", url]
    command += ["--jobs", "2", "--batch-size", "2", "--collection", collection]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=240)


def when(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def stored(ctx: Context, collection: str) -> tuple[dict[str, int], list[tuple[str, int]]]:
    """Each document's recorded chunk count, and every stored chunk's (doc_id, index)."""
    store = store_for(ctx)
    documents = {d.doc_id: d.chunk_count for d in store.documents(collection).values()}
    chunks = [(c["doc_id"], c["chunk_index"]) for c in store.chunks(collection)]
    return documents, chunks


def test_coordinator_runs_batches_in_parallel_skips_done_ones_and_resumes_a_dead_one(
    data_dir: Path, tmp_path: Path
) -> None:
    if reason := missing_server_packages():
        pytest.skip(reason)
    from langgraph_sdk import get_sync_client

    collection = f"t_coord_{uuid.uuid4().hex[:10]}"
    corpus = tmp_path / "corpus"
    files = write_corpus(corpus)
    ctx = server_context(data_dir, collection)
    server_dir = tmp_path / "server"
    server_dir.mkdir()
    # A little LLM latency, so a run is still going when it is cancelled below.
    with stub_llm(latency=(0.02, 0.05)) as stub_url:
        settings = stub_settings(stub_url, tmp_path)
        try:
            with langgraph_dev(server_dir, data_dir, settings) as url:
                client = get_sync_client(url=url, timeout=120)
                batches = plan_batches([str(corpus)], collection, 2)
                assert len(batches) == 3
                assert [b.thread_id for b in plan_batches([str(corpus)], collection, 2)] == [
                    b.thread_id for b in batches
                ]

                # A worker dies midway through batch 2: its run stops after some checkpoints.
                dead = batches[1]
                client.threads.create(thread_id=dead.thread_id, metadata={"collection": collection})
                run: Any = client.runs.create(
                    dead.thread_id,
                    "ingest",
                    input={"paths": list(dead.files)},
                    context={"collection": collection},
                )
                deadline = time.monotonic() + 120
                while checkpoint_count(ctx, dead.thread_id) < 3:
                    assert time.monotonic() < deadline, "the run never checkpointed"
                    time.sleep(0.05)
                client.runs.cancel(dead.thread_id, run["run_id"], wait=True)
                state: Any = client.threads.get_state(dead.thread_id)
                assert state["next"], "the run finished before it could be cancelled"

                first = coordinator(url, corpus, collection)
                assert first.returncode == 0, first.stderr
                assert "batch 2 resumed" in first.stderr, first.stderr
                assert "3/3 batches, 6 documents" in first.stderr, first.stderr
                documents, chunks = stored(ctx, collection)
                assert sorted(documents) == sorted(str(f.resolve()) for f in files)
                assert len(chunks) == len(set(chunks)) == sum(documents.values()) > 0

                # Deterministic threads: the same command finds every batch done.
                again = coordinator(url, corpus, collection)
                assert again.returncode == 0, again.stderr
                for batch in batches:
                    assert f"batch {batch.number} done" in again.stderr, again.stderr
                assert " ran " not in again.stderr and " resumed " not in again.stderr
                assert stored(ctx, collection) == (documents, chunks)
                threads = client.threads.search(metadata={"collection": collection}, limit=20)
                assert {t["thread_id"] for t in threads} == {b.thread_id for b in batches}

                # --jobs 2: the server ran two batches at the same time.
                spans = [
                    (when(r["created_at"]), when(r["updated_at"]))
                    for b in batches
                    for r in client.runs.list(b.thread_id)
                    if r["status"] == "success"
                ]
                assert len(spans) == 3
                assert any(
                    a[0] < b[1] and b[0] < a[1] for i, a in enumerate(spans) for b in spans[i + 1 :]
                ), spans

                # A changed file: its batch gets a new thread and runs; the others stay done.
                changed = Path(batches[2].files[0])
                changed.write_text(changed.read_text() + "\nCleaning: wipe the grille monthly.\n")
                third = coordinator(url, corpus, collection)
                assert third.returncode == 0, third.stderr
                assert "batch 3 ran" in third.stderr, third.stderr
                assert "batch 1 done" in third.stderr and "batch 2 done" in third.stderr
                after, after_chunks = stored(ctx, collection)
                assert sorted(after) == sorted(documents)
                assert len(after_chunks) == len(set(after_chunks)) == sum(after.values())
        finally:
            with contextlib.suppress(Exception):
                store_for(ctx).drop_collection(collection)
