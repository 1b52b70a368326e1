"""Ingest a corpus through a LangGraph server as many batch runs (``chop ingest --server URL``).

One ``chop ingest`` is one process; a LangGraph server has many workers. The coordinator splits
the files into batches and submits each as one ``ingest`` run on its own thread, at most
``jobs`` at a time, so the server's workers share the corpus.

Each batch's thread id is a uuid5 of (collection, the batch's sorted files and their content
hashes): the same corpus and batch size always give the same threads, so running the command
again finds its own work (a changed or added file makes new threads for the batches it touches;
their unchanged documents cost nothing, recognised by fingerprint as in any ingest):

- a thread whose state holds a report and nothing left to run is done: skipped;
- a thread with nodes left to run (its worker died or the run was cancelled midway) resumes
  from its last PostgreSQL checkpoint (input ``None``): finished documents are not redone;
- a thread that never checkpointed runs the batch from the start;
- a thread with a run in progress (another coordinator, or a worker still at it) is joined.

Paths are read by the SERVER: the files must lie at the same absolute paths on both sides (a
shared volume) and under the server's CHOP_SERVER_PATHS.
"""

from __future__ import annotations

import hashlib
import sys
import threading
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chop_rag.reading.loaders import files_to_load

GRAPH = "ingest"
NAMESPACE = uuid.UUID("4f1b7c9e-2d0a-5e3b-9c61-0c4a8d7e1f25")  # chop's batch threads
COUNTS = ("added", "updated", "unchanged", "chunks_stored")


@dataclass(frozen=True)
class Batch:
    number: int
    files: tuple[str, ...]
    thread_id: str


@dataclass
class Outcome:
    """What happened to one batch: ``action`` is done (already), resumed, ran or joined."""

    batch: Batch
    action: str
    report: dict[str, Any] = field(default_factory=dict)
    error: str = ""


def file_digest(path: str) -> str:
    """The file's content hash: a changed file makes a new batch thread, so it is ingested."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def thread_id_for(collection: str, files: Sequence[str]) -> str:
    """The batch's thread: the same files (paths and contents) of the same collection always
    map to it; a finished thread is never run again, so a changed file must change the id."""
    key = "\n".join([collection, *(f"{f} {file_digest(f)}" for f in sorted(files))])
    return str(uuid.uuid5(NAMESPACE, key))


def plan_batches(paths: Sequence[str], collection: str, batch_size: int) -> list[Batch]:
    """The supported files under ``paths`` (absolute, sorted) in batches of ``batch_size``.

    Sorting makes the split independent of listing order, so thread ids stay stable."""
    if batch_size < 1:
        raise ValueError("--batch-size must be at least 1")
    files = sorted({str(path.resolve()) for path in files_to_load(list(paths), [])})
    groups = [files[i : i + batch_size] for i in range(0, len(files), batch_size)]
    return [
        Batch(number, tuple(group), thread_id_for(collection, group))
        for number, group in enumerate(groups, 1)
    ]


def _report_of(values: Any) -> dict[str, Any] | None:
    if isinstance(values, dict) and isinstance(values.get("report"), dict):
        return values["report"]
    return None


def run_batch(client: Any, batch: Batch, context: dict[str, Any]) -> Outcome:
    """Bring one batch's thread to done: skip, join, resume or run it (see the module doc).

    The run is created and then joined (not ``runs.wait``), so it goes on on the server if
    this process dies; the next coordinator then joins or resumes it."""
    client.threads.create(
        thread_id=batch.thread_id,
        if_exists="do_nothing",
        metadata={"chop_batch": batch.number, "collection": context.get("collection", "")},
    )
    thread = client.threads.get(batch.thread_id)
    if thread.get("status") == "busy":
        runs = client.runs.list(batch.thread_id, limit=1)
        if runs and runs[0].get("status") in ("pending", "running"):
            client.runs.join(batch.thread_id, runs[0]["run_id"])
            return _finished(client, batch, "joined")
    state = client.threads.get_state(batch.thread_id)
    if state.get("next"):
        action, run_input = "resumed", None  # continue from the last checkpoint
    elif (report := _report_of(state.get("values"))) is not None:
        return Outcome(batch, "done", report)
    else:
        action, run_input = "ran", {"paths": list(batch.files)}
    run = client.runs.create(
        batch.thread_id,
        GRAPH,
        input=run_input,
        context=context,
        multitask_strategy="reject",
    )
    client.runs.join(batch.thread_id, run["run_id"])
    return _finished(client, batch, action)


def _finished(client: Any, batch: Batch, action: str) -> Outcome:
    state = client.threads.get_state(batch.thread_id)
    report = _report_of(state.get("values"))
    if state.get("next") or report is None:
        runs = client.runs.list(batch.thread_id, limit=1)
        status = runs[0].get("status") if runs else "unknown"
        return Outcome(batch, action, error=f"run ended {status} before the batch finished")
    return Outcome(batch, action, report)


def coordinate(
    client: Any,
    batches: Sequence[Batch],
    context: dict[str, Any],
    *,
    jobs: int = 2,
    say: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True),
) -> list[Outcome]:
    """Run every batch, ``jobs`` at a time, retrying a failed batch once; says one progress
    line per finished batch (batches done/total, documents, chunks)."""
    if jobs < 1:
        raise ValueError("--jobs must be at least 1")
    lock = threading.Lock()
    totals = dict.fromkeys(COUNTS, 0)
    outcomes: list[Outcome] = []

    def attempt(batch: Batch) -> Outcome:
        error = ""
        for _ in range(2):  # one retry: a worker may die once; twice is a real failure
            try:
                outcome = run_batch(client, batch, context)
            except Exception as err:  # the server's message, on one line
                outcome = Outcome(batch, "failed", error=" ".join(str(err).split()))
            if not outcome.error:
                return outcome
            error = outcome.error
        return Outcome(batch, "failed", error=error)

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(attempt, batch) for batch in batches]
        for future in as_completed(futures):
            outcome = future.result()
            with lock:
                outcomes.append(outcome)
                for key in COUNTS:
                    totals[key] += int(outcome.report.get(key, 0) or 0)
                documents = totals["added"] + totals["updated"] + totals["unchanged"]
                detail = outcome.error or (
                    f"{outcome.report.get('added', 0)} added, "
                    f"{outcome.report.get('unchanged', 0)} unchanged"
                )
                say(
                    f"batch {outcome.batch.number} {outcome.action} ({detail}); "
                    f"{len(outcomes)}/{len(batches)} batches, {documents} documents, "
                    f"{totals['chunks_stored']} chunks"
                )
    return sorted(outcomes, key=lambda o: o.batch.number)


def ingest_on_server(
    url: str,
    paths: Sequence[str],
    context: dict[str, Any],
    *,
    batch_size: int = 8,
    jobs: int = 2,
    api_key: str | None = None,
) -> list[Outcome]:
    """``chop ingest --server``: plan the batches of ``paths`` and run them on ``url``."""
    from langgraph_sdk import get_sync_client

    if jobs < 1:  # before the server is asked anything
        raise ValueError("--jobs must be at least 1")
    batches = plan_batches(
        [str(Path(p).resolve()) for p in paths], context["collection"], batch_size
    )
    timeout = (30.0, None, 30.0, 30.0)  # a join lasts as long as its batch
    client = get_sync_client(url=url, api_key=api_key, timeout=timeout)
    try:  # one line for an unreachable server or a refused key, not one per batch
        served = client.assistants.search(graph_id=GRAPH, limit=1)
    except Exception as err:
        raise OSError(
            f"cannot use the LangGraph server at {url}: {' '.join(str(err).split())}"
        ) from err
    if not served:
        raise OSError(f"the LangGraph server at {url} does not serve the {GRAPH!r} graph")
    return coordinate(client, batches, context, jobs=jobs)


def cli_ingest(args: Any, collection: str) -> int:
    """``chop ingest PATH... --server URL``: 0 when every batch is done, else 1 with one line
    per failed batch (after its one retry)."""
    from chop_rag.config import env_setting
    from chop_rag.reading.documents import missing_paths

    if missing := missing_paths(args.paths):  # the coordinator lists what the server reads
        print(f"error: no such file or folder: {', '.join(missing)}", file=sys.stderr)
        return 1
    context: dict[str, Any] = {"collection": collection}
    if args.mode:
        context["continuity_mode"] = args.mode
    if args.no_cache:
        context["use_cache"] = False
    try:
        outcomes = ingest_on_server(
            args.server,
            args.paths,
            context,
            batch_size=args.batch_size,
            jobs=args.jobs,
            api_key=args.api_key or env_setting("CHOP_API_KEY") or None,
        )
    except (ValueError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    failed = [o for o in outcomes if o.error]
    for outcome in failed:
        files = ", ".join(Path(f).name for f in outcome.batch.files)
        print(f"error: batch {outcome.batch.number} ({files}): {outcome.error}", file=sys.stderr)
    if not outcomes:
        print("error: no supported files under the given paths", file=sys.stderr)
    return 1 if failed or not outcomes else 0
