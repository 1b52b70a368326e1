"""The checkpointer of durable ingests (``ingest(..., durable=True)``), in chop's own database.

LangGraph's PostgresSaver owns its tables; this module only connects it the way a long run
needs: from a checked pool, its calls retried while the server restarts. (``langgraph dev`` and
the server image use deploy/checkpointer.py, the async counterpart.)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import psycopg
import tenacity
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import CheckpointTuple
from langgraph.checkpoint.postgres import PostgresSaver
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

R = TypeVar("R")


# A checkpoint's "ts" is when LangGraph wrote it (ISO 8601 with its offset).
IDLE_THREADS = """
SELECT thread_id FROM checkpoints WHERE starts_with(thread_id, %s)
GROUP BY thread_id
HAVING max((checkpoint->>'ts')::timestamptz) < now() - %s * interval '1 day'
"""

# What PostgresSaver.from_conn_string uses for its connection, applied to a pool.
CHECKPOINT_CONNECTION_KWARGS = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}


def _retried_on_disconnect(call: Callable[..., R], *args: Any, **kwargs: Any) -> R:
    """``call``, tried again (for up to ~15 s) while the server is restarting."""
    retrying = tenacity.Retrying(
        retry=tenacity.retry_if_exception_type(psycopg.OperationalError),
        stop=tenacity.stop_after_attempt(6),
        wait=tenacity.wait_exponential(multiplier=0.5, max=8),
        reraise=True,
    )
    return retrying(call, *args, **kwargs)


class ReconnectingPostgresSaver(PostgresSaver):
    """langgraph-checkpoint-postgres on a checked connection pool whose calls are retried.

    ``PostgresSaver.from_conn_string`` holds one connection for the whole run: when the server
    restarts, every later checkpoint fails and the run dies. From a pool that checks each
    connection before use, a write after the restart gets a fresh connection; one that was in
    flight during it is tried again while the server comes back.
    """

    def put(self, *args: Any, **kwargs: Any) -> RunnableConfig:
        return _retried_on_disconnect(super().put, *args, **kwargs)

    def put_writes(self, *args: Any, **kwargs: Any) -> None:
        _retried_on_disconnect(super().put_writes, *args, **kwargs)

    def get_tuple(self, *args: Any, **kwargs: Any) -> CheckpointTuple | None:
        return _retried_on_disconnect(super().get_tuple, *args, **kwargs)

    def delete_thread(self, *args: Any, **kwargs: Any) -> None:
        _retried_on_disconnect(super().delete_thread, *args, **kwargs)

    def threads_idle_since(self, prefix: str, days: float) -> list[str]:
        """Threads whose id starts with ``prefix`` and whose last checkpoint is older than
        ``days``: runs that were killed and never run again."""
        with self._cursor() as cur:
            cur.execute(IDLE_THREADS, (prefix, days))
            return [row["thread_id"] for row in cur.fetchall()]

    def threads_with_prefix(self, prefix: str) -> list[str]:
        """Threads whose id starts with ``prefix`` (a collection's earlier ingests)."""
        with self._cursor() as cur:
            cur.execute(
                "SELECT DISTINCT thread_id FROM checkpoints WHERE starts_with(thread_id, %s)",
                (prefix,),
            )
            return [row["thread_id"] for row in cur.fetchall()]


@contextmanager
def durable_checkpointer(url: str, *, max_size: int = 4) -> Iterator[ReconnectingPostgresSaver]:
    """A checkpointer for durable ingests in chop's own database, its tables set up."""
    with ConnectionPool(
        url,
        min_size=1,
        max_size=max_size,
        kwargs=CHECKPOINT_CONNECTION_KWARGS,
        check=ConnectionPool.check_connection,
        open=True,
    ) as pool:
        saver = ReconnectingPostgresSaver(conn=pool)  # type: ignore[arg-type]
        with pool.connection() as conn:
            conn.execute("SELECT pg_advisory_lock(hashtext('chop-checkpointer-setup'))")
            try:
                saver.setup()
            finally:
                conn.execute("SELECT pg_advisory_unlock(hashtext('chop-checkpointer-setup'))")
        yield saver
