"""Session advisory locks whose waiters PostgreSQL can see past.

``SELECT pg_advisory_lock(...)`` waits inside a statement, so the waiting backend holds a
snapshot the whole time. ``CREATE INDEX CONCURRENTLY`` (langgraph-checkpoint-postgres's
migrations) waits for every transaction with an older snapshot to end, including a worker
that waits for the very lock the index's builder holds: with the lock and the index on two
connections of one process, that is a deadlock PostgreSQL cannot see (issue 41: durable
ingests started together on a fresh database hung forever). Waiting here, between short
``pg_try_advisory_lock`` statements on an autocommit connection, holds no snapshot and no
transaction while it waits, so the index build waits only for a try that ends at once.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from typing import Any

import psycopg

TRY_LOCK = "SELECT pg_try_advisory_lock(hashtext(%s))"
UNLOCK = "SELECT pg_advisory_unlock(hashtext(%s))"
POLL_S = (0.05, 0.5)  # the first wait between tries, the longest


def _first(row: Any) -> Any:
    return next(iter(row.values())) if isinstance(row, dict) else row[0]


def _refuse_transactions(conn: psycopg.Connection[Any] | psycopg.AsyncConnection[Any]) -> None:
    if not conn.autocommit:  # a try inside a transaction would keep its snapshot between tries
        raise ValueError("session_lock needs an autocommit connection")


@contextmanager
def session_lock(
    conn: psycopg.Connection[Any], name: str, *, waiting: Callable[[], None] | None = None
) -> Iterator[None]:
    """Hold the session advisory lock ``hashtext(name)`` on ``conn`` for the block;
    ``waiting()`` is called once if another session holds it now."""
    _refuse_transactions(conn)
    wait = POLL_S[0]
    while not _first(conn.execute(TRY_LOCK, (name,)).fetchone()):
        if waiting is not None and wait == POLL_S[0]:
            waiting()
        time.sleep(wait * random.uniform(0.5, 1.0))  # jitter: N waiters do not try in step
        wait = min(wait * 2, POLL_S[1])
    try:
        yield
    finally:
        if not conn.broken:  # a lost session has lost its locks: nothing to release
            with suppress(psycopg.OperationalError):
                conn.execute(UNLOCK, (name,))


@asynccontextmanager
async def async_session_lock(conn: psycopg.AsyncConnection[Any], name: str) -> AsyncIterator[None]:
    """:func:`session_lock` for an asyncio connection (the LangGraph server's checkpointer)."""
    _refuse_transactions(conn)
    wait = POLL_S[0]
    while not _first(await (await conn.execute(TRY_LOCK, (name,))).fetchone()):
        await asyncio.sleep(wait * random.uniform(0.5, 1.0))
        wait = min(wait * 2, POLL_S[1])
    try:
        yield
    finally:
        if not conn.broken:
            with suppress(psycopg.OperationalError):
                await conn.execute(UNLOCK, (name,))
