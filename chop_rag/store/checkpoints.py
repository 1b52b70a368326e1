"""The checkpointer of durable ingests (``ingest(..., durable=True)``), in chop's own database.

LangGraph's PostgresSaver owns its tables; this module only connects it the way a long run
needs: from a checked pool, its calls waiting out a database outage like the store's.
(``langgraph dev`` and the server image use deploy/checkpointer.py, the async counterpart.)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from typing import Any, TypeVar

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import CheckpointTuple
from langgraph.checkpoint.postgres import PostgresSaver
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

from chop_rag.store import CONNECTION_WAIT_S, Outage, outage_for
from chop_rag.store.locks import session_lock
from chop_rag.store.outage import RECONNECT_S

R = TypeVar("R")


# A checkpoint's "ts" is when LangGraph wrote it (ISO 8601 with its offset).
IDLE_THREADS = """
SELECT thread_id FROM checkpoints WHERE starts_with(thread_id, %s)
GROUP BY thread_id
HAVING max((checkpoint->>'ts')::timestamptz) < now() - %s * interval '1 day'
"""

CHECKPOINTER_SETUP_LOCK = "chop-checkpointer-setup"  # shared with deploy/checkpointer.py

# What PostgresSaver.from_conn_string uses for its connection, applied to a pool.
CHECKPOINT_CONNECTION_KWARGS = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}


class ReconnectingPostgresSaver(PostgresSaver):
    """langgraph-checkpoint-postgres on a checked connection pool whose calls wait out a
    database outage (chop_rag.store.Outage: the same bound, and the same one line, as the
    store's own calls).

    ``PostgresSaver.from_conn_string`` holds one connection for the whole run: when the server
    restarts, every later checkpoint fails and the run dies. From a pool that checks each
    connection before use, a write after the restart gets a fresh connection; one that was in
    flight during it is tried again while the server comes back.
    """

    outage: Outage = Outage()  # durable_checkpointer gives each saver its database's

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # PostgresSaver runs every call under one threading.Lock, which guards its single
        # connection; from a pool each call has its own. Under that lock, calls queued behind
        # one waiting out an outage waited their turn unbounded: a durable run outlived
        # CHOP_DATABASE_OUTAGE_S until the database came back (issue 36).
        self.lock = nullcontext()  # type: ignore[assignment]

    def _waiting(self, call: Callable[..., R], *args: Any, **kwargs: Any) -> R:
        return self.outage.call(lambda: call(*args, **kwargs), asks_database=True)

    def put(self, *args: Any, **kwargs: Any) -> RunnableConfig:
        return self._waiting(super().put, *args, **kwargs)

    def put_writes(self, *args: Any, **kwargs: Any) -> None:
        self._waiting(super().put_writes, *args, **kwargs)

    def get_tuple(self, *args: Any, **kwargs: Any) -> CheckpointTuple | None:
        return self._waiting(super().get_tuple, *args, **kwargs)

    def delete_thread(self, *args: Any, **kwargs: Any) -> None:
        self._waiting(super().delete_thread, *args, **kwargs)

    def threads_idle_since(self, prefix: str, days: float) -> list[str]:
        """Threads whose id starts with ``prefix`` and whose last checkpoint is older than
        ``days``: runs that were killed and never run again."""
        return self._waiting(self._thread_ids, IDLE_THREADS, (prefix, days))

    def threads_with_prefix(self, prefix: str) -> list[str]:
        """Threads whose id starts with ``prefix`` (a collection's earlier ingests)."""
        query = "SELECT DISTINCT thread_id FROM checkpoints WHERE starts_with(thread_id, %s)"
        return self._waiting(self._thread_ids, query, (prefix,))

    def _thread_ids(self, query: str, params: tuple[Any, ...]) -> list[str]:
        with self._cursor() as cur:
            cur.execute(query, params)
            return [row["thread_id"] for row in cur.fetchall()]


class _OutagePool(ConnectionPool):
    """A pool whose waits for a connection are bounded by the outage's time left
    (Outage.connection_wait_s), as the store's are."""

    outage: Outage = Outage()

    def connection(self, timeout: float | None = None) -> Any:
        return super().connection(
            timeout=self.outage.connection_wait_s() if timeout is None else timeout
        )


@contextmanager
def durable_checkpointer(url: str, *, max_size: int = 4) -> Iterator[ReconnectingPostgresSaver]:
    """A checkpointer for durable ingests in chop's own database, its tables set up."""
    with _OutagePool(
        url,
        min_size=1,
        max_size=max_size,
        kwargs=CHECKPOINT_CONNECTION_KWARGS,
        check=ConnectionPool.check_connection,
        timeout=CONNECTION_WAIT_S,
        reconnect_timeout=RECONNECT_S,
        open=True,
    ) as pool:
        saver = ReconnectingPostgresSaver(conn=pool)
        saver.outage = pool.outage = outage_for(url)

        def set_up() -> None:
            # The lock and the migrations on one autocommit connection, the lock waited for
            # between tries (chop_rag.store.locks): its CREATE INDEX CONCURRENTLY then waits for
            # no worker that waits for this one.
            with pool.connection() as conn, session_lock(conn, CHECKPOINTER_SETUP_LOCK):
                PostgresSaver(conn).setup()

        saver.outage.call(set_up, asks_database=True)
        yield saver
