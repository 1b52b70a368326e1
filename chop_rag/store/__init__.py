"""The one module that owns the database: PostgreSQL + pgvector through psycopg 3.

A collection is a pair of tables, ``chop_<name>_chunks`` and ``chop_<name>_documents``; the
embedding dimension is fixed per collection, so models of different widths never mix. A
document's chunks are replaced in one transaction under an advisory lock: readers see the old
chunks or the new ones, never half, and two ingests of one document cannot duplicate it.
The SQL is in named constants below; a collection made before a column was renamed is
migrated when first opened (RENAMED_*). The embedded server is started by chop_rag.store.pgserver.
"""

from __future__ import annotations

import threading
from pathlib import Path

from chop_rag.config import Context, validate_collection
from chop_rag.store.outage import (
    CONNECTION_WAIT_S,
    DEFAULT_OUTAGE_S,
    DatabaseUnavailable,
    Outage,
    outage_for,
)
from chop_rag.store.pgserver import held_url, resolve_database_url, stop_embedded_server
from chop_rag.store.records import (
    NO_CNM,
    ChunkRow,
    CollectionRecord,
    DocumentRecord,
    Hit,
    SearchFilter,
    chunk_row,
    embedding_key,
)
from chop_rag.store.schema import DatabaseNotReady, EmbedderMismatch, UnknownCollection
from chop_rag.store.search import EXACT_SCAN_ROWS, RRF_K, Search
from chop_rag.store.writes import Writes

__all__ = [
    "CONNECTION_WAIT_S",
    "DEFAULT_OUTAGE_S",
    "EXACT_SCAN_ROWS",
    "NO_CNM",
    "RRF_K",
    "ChunkRow",
    "CollectionRecord",
    "DatabaseNotReady",
    "DatabaseUnavailable",
    "DocumentRecord",
    "EmbedderMismatch",
    "Hit",
    "Outage",
    "SearchFilter",
    "Store",
    "UnknownCollection",
    "chunk_row",
    "embedding_key",
    "get_store",
    "outage_for",
    "release_embedded_server",
    "store_for",
    "validate_collection",
]


class Store(Writes, Search):
    """Chunk storage and search for every collection of one database."""


_stores: dict[str, Store] = {}
_stores_lock = threading.Lock()


def get_store(database_url: str, data_dir: str | Path) -> Store:
    """The process-wide Store for a database (embedded when ``database_url`` is empty)."""
    url = resolve_database_url(database_url, data_dir)
    with _stores_lock:
        if url not in _stores:
            _stores[url] = Store(url)
        return _stores[url]


def release_embedded_server(data_dir: str | Path) -> None:
    """Close this process's Store on the embedded PostgreSQL under ``data_dir`` and let go of
    the server (chop_rag.store.pgserver.stop_embedded_server: it stops when no other process uses
    it).

    pgserver does this at interpreter exit, but a process ended by SIGTERM never gets there:
    uvicorn (``langgraph dev``) shuts down gracefully, then re-raises the signal.
    """
    url = held_url(data_dir)
    if url is None:
        return
    with _stores_lock:
        store = _stores.pop(url, None)
    if store is not None:
        store.close()
    stop_embedded_server(data_dir)


def store_for(ctx: Context) -> Store:
    """The Store that a run's context points at, waiting out outages as long as it says."""
    store = get_store(ctx.database_url, ctx.data_dir)
    store.outage.bound_s = ctx.database_outage_s
    return store
