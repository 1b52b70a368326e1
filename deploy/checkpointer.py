"""The LangGraph server's checkpointer: langgraph-checkpoint-postgres on chop's own database.

``langgraph.json`` names this factory under ``"checkpointer": {"path": ...}``. The server
(``langgraph dev`` and the langgraph-api image alike) enters it once per event loop and uses
the saver it yields for every thread's checkpoints, so an ingest run that dies halfway can be
resumed from its last finished step after a restart.

The database is the one chop stores chunks in: ``CHOP_DATABASE_URL``, or, when that is empty,
the embedded PostgreSQL under ``CHOP_DATA_DIR`` (started here if it is not running yet). The
saver's tables (``checkpoints``, ``checkpoint_blobs``, ``checkpoint_writes``,
``checkpoint_migrations``) sit beside chop's ``chop_*`` tables. An embedded server is let go
when the last saver closes, so it stops with the LangGraph server unless another process
still uses it.

``langgraph.json`` names the factory as a module
(``chop_rag.deploy.checkpointer.postgres_checkpointer``, installed with chop), not a file path:
``langgraph dev`` resolves file paths from the current folder, so
``langgraph dev --config path/to/langgraph.json`` would not find the file.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from psycopg import AsyncConnection
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from chop_rag.config import Context, env_setting
from chop_rag.store import release_embedded_server
from chop_rag.store.checkpoints import CHECKPOINTER_SETUP_LOCK
from chop_rag.store.locks import async_session_lock
from chop_rag.store.outage import RECONNECT_S
from chop_rag.store.pgserver import resolve_database_url

# What AsyncPostgresSaver.from_conn_string uses for its connection, applied to a pool.
CONNECTION_KWARGS = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}


_open_savers = 0  # the server enters the factory once per event loop
_open_savers_lock = threading.Lock()


def _count_open_savers(change: int) -> int:
    global _open_savers
    with _open_savers_lock:
        _open_savers += change
        return _open_savers


def checkpointer_database_url() -> str:
    """The server's database, from the environment (blocking: may start the embedded one)."""
    ctx = Context()
    return resolve_database_url(ctx.database_url, ctx.data_dir)


async def setup_checkpoint_tables(url: str) -> None:
    """Create or migrate the saver's tables; an advisory lock keeps concurrent workers apart,
    waited for between tries (chop_rag.store.locks): a blocked ``pg_advisory_lock`` would hold the
    snapshot that the holder's ``CREATE INDEX CONCURRENTLY`` waits for."""
    async with (
        await AsyncConnection.connect(url, **CONNECTION_KWARGS) as conn,  # type: ignore[arg-type]
        async_session_lock(conn, CHECKPOINTER_SETUP_LOCK),
    ):
        await AsyncPostgresSaver(conn).setup()  # type: ignore[arg-type]


@asynccontextmanager
async def postgres_checkpointer() -> AsyncIterator[AsyncPostgresSaver]:
    """Yield an AsyncPostgresSaver on a connection pool; closed when the server stops."""
    ctx = Context()
    url = await asyncio.to_thread(checkpointer_database_url)
    _count_open_savers(+1)
    try:
        async with _saver_on_pool(url) as saver:
            yield saver
    finally:
        if _count_open_savers(-1) == 0 and not ctx.database_url:
            await asyncio.to_thread(release_embedded_server, ctx.data_dir)


@asynccontextmanager
async def _saver_on_pool(url: str) -> AsyncIterator[AsyncPostgresSaver]:
    await setup_checkpoint_tables(url)
    pool = AsyncConnectionPool(
        url,
        min_size=1,
        max_size=int(env_setting("CHOP_CHECKPOINTER_POOL_SIZE")),
        kwargs=CONNECTION_KWARGS,
        check=AsyncConnectionPool.check_connection,  # a restarted database: reconnect
        reconnect_timeout=RECONNECT_S,  # and soon after it is back (chop_rag.store.outage)
        open=False,
    )
    await pool.open(wait=True)
    try:
        yield AsyncPostgresSaver(conn=pool)  # type: ignore[arg-type]
    finally:
        await pool.close()
