"""A collection's tables: their SQL, the migrations of collections an earlier chop made, and
the collection's life (made, checked against its embedder, found, dropped), over a pool of
connections that waits out outages."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from pgvector.psycopg import register_vector
from psycopg import sql
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool

from chop_rag.config import validate_collection
from chop_rag.store.claims import CacheClaims
from chop_rag.store.locks import session_lock
from chop_rag.store.outage import (
    CONNECTION_WAIT_S,
    RECONNECT_S,
    asked_database,
    outage_for,
    through_outages,
)
from chop_rag.store.records import CollectionRecord

CONNECT_TIMEOUT_S = 10  # a host that drops packets fails in this time, not the kernel's minutes


class UnknownCollection(ValueError):
    """A search or read names a collection that does not exist (a typo, or nothing ingested)."""


class EmbedderMismatch(ValueError):
    """A collection is read or written with another embedder than the one its vectors are
    from: other widths fail inside pgvector, equal widths give silently wrong neighbours."""


# ---------------------------------------------------------------------- SQL
# {documents}, {chunks}: a collection's tables (identifiers); {dim}: its vector width.
# %(name)s and %s are query parameters.

CREATE_DOCUMENTS = """
CREATE TABLE IF NOT EXISTS {documents} (
    doc_id text PRIMARY KEY,
    title text NOT NULL,
    source text NOT NULL,
    fingerprint text NOT NULL,
    chunk_count int NOT NULL,
    metadata jsonb NOT NULL DEFAULT '{{}}',
    updated_at timestamptz NOT NULL DEFAULT now())
"""

CREATE_CHUNKS = """
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
    embedding_key text NOT NULL,
    char_start int NOT NULL,
    char_end int NOT NULL,
    metadata jsonb NOT NULL DEFAULT '{{}}',
    embedding vector({dim}) NOT NULL,
    tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', prefix || ' ' || text)) STORED,
    UNIQUE (doc_id, chunk_index))
"""

# index name suffix -> definition; the name is chop_<collection>_<suffix>
CHUNK_INDEXES = {
    "model_idx": "(lower(model))",
    "category_idx": "(lower(category))",
    "hnsw_idx": "USING hnsw (embedding vector_cosine_ops)",
    "tsv_idx": "USING gin (tsv)",
}

CREATE_LLM_CACHE = """
CREATE TABLE IF NOT EXISTS chop_llm_cache (
    key text PRIMARY KEY,
    chat_model text NOT NULL,
    value jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now())
"""

CREATE_COLLECTIONS = """
CREATE TABLE IF NOT EXISTS chop_collections (
    name text PRIMARY KEY,
    embedder text NOT NULL,
    dimension int NOT NULL,
    settings jsonb NOT NULL DEFAULT '{}',
    created_at timestamptz NOT NULL DEFAULT now())
"""
RECORD_COLLECTION = """
INSERT INTO chop_collections (name, embedder, dimension, settings) VALUES (%s, %s, %s, %s)
ON CONFLICT (name) DO NOTHING
"""
COLLECTION_RECORD = "SELECT embedder, dimension, settings FROM chop_collections WHERE name = %s"
FORGET_COLLECTION = "DELETE FROM chop_collections WHERE name = %s"


# Columns renamed since tables could have been made (old name -> new): applied to a table
# found with the old name, so a collection an earlier chop made keeps working.
RENAMED_CHUNK_COLUMNS = {"content_hash": "embedding_key"}
RENAMED_DOCUMENT_COLUMNS = {"content_hash": "fingerprint"}
RENAMED_CACHE_COLUMNS = {"model": "chat_model"}
TABLE_COLUMNS = """
SELECT column_name FROM information_schema.columns
WHERE table_schema = current_schema() AND table_name = %s
"""

VECTOR_WIDTH = """
SELECT a.atttypmod FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
WHERE c.relname = %s AND a.attname = 'embedding' AND c.relkind = 'r'
"""


def _configure(conn: psycopg.Connection) -> None:
    conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    conn.commit()
    register_vector(conn)


class Schema:
    """A database's pool of connections and its collections' tables."""

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
            timeout=CONNECTION_WAIT_S,
            reconnect_timeout=RECONNECT_S,
            open=True,
        )
        self.outage = outage_for(url)
        self.claims = CacheClaims(url)  # LLM cache keys being asked for (chop_rag.store.claims)
        self._ready: set[tuple[str, int, str | None]] = set()
        self._existing: set[str] = set()
        self._embedder_checked: set[tuple[str, str, int]] = set()

    def close(self) -> None:
        self.claims.close()
        self.pool.close()

    @contextmanager
    def transaction(self) -> Iterator[psycopg.Connection]:
        with self.connection() as conn, conn.transaction():
            yield conn

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection]:
        """A checked connection from the pool; a call that gets one and succeeds ends an
        outage that began before it asked (Outage)."""
        with self.pool.connection(timeout=self.outage.connection_wait_s()) as conn:
            asked_database.set(True)  # this call's answer comes from the database
            yield conn

    # ---------------------------------------------------------------- schema
    @through_outages
    def ensure_collection(
        self,
        collection: str,
        dim: int,
        *,
        embedder: str | None = None,
        settings: dict[str, Any] | None = None,
    ) -> None:
        """Create the collection's tables and indexes if missing (idempotent). With
        ``embedder``, a new collection records it (and ``settings``), an existing one must have
        been made with it (EmbedderMismatch otherwise), and one made before collections kept a
        record adopts it."""
        validate_collection(collection)
        if (collection, dim, embedder) in self._ready:
            return
        chunks, documents = _tables(collection)
        if embedder is not None:
            self._check_embedder(collection, embedder, dim, settings or {})
        stored = self.collection_dimension(collection)
        if stored is not None and stored != dim:
            raise EmbedderMismatch(
                f"collection {collection!r} stores {stored}-dimensional vectors; the embedder "
                f"gives {dim}. Use another collection for this embedder."
            )
        with self.transaction() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(hashtext('chop-schema'))")
            _migrate_collection(conn, collection)
            conn.execute(sql.SQL(CREATE_DOCUMENTS).format(documents=documents))
            conn.execute(
                sql.SQL(CREATE_CHUNKS).format(
                    chunks=chunks, documents=documents, dim=sql.Literal(dim)
                )
            )
            for suffix, definition in CHUNK_INDEXES.items():
                conn.execute(
                    sql.SQL("CREATE INDEX IF NOT EXISTS {} ON {} " + definition).format(
                        sql.Identifier(f"chop_{collection}_{suffix}"), chunks
                    )
                )
        self._ready.add((collection, dim, embedder))

    def open_collection(self, collection: str, embedder: str, dim: int) -> None:
        """Make sure a reader may search ``collection`` with ``embedder``: the collection
        exists (UnknownCollection) and its vectors are that embedder's (EmbedderMismatch),
        one clear error instead of pgvector's "different vector dimensions" or, with equal
        widths, wrong results."""
        self.require_collection(collection)
        self._check_embedder(collection, embedder, dim, {})

    @through_outages
    def collection_record(self, collection: str) -> CollectionRecord | None:
        """What the collection was made with, or None (not made, or made before the record)."""
        with self.connection() as conn:
            row = conn.execute(COLLECTION_RECORD, (validate_collection(collection),)).fetchone()
            conn.rollback()
        return CollectionRecord(str(row[0]), int(row[1]), dict(row[2])) if row else None

    @through_outages
    def _check_embedder(
        self, collection: str, embedder: str, dim: int, settings: dict[str, Any]
    ) -> None:
        """Record ``embedder`` for a collection without a record (a new one, or one an earlier
        chop made, whose vectors must then have its width); refuse any other embedder."""
        if (collection, embedder, dim) in self._embedder_checked:
            return
        width = self.collection_dimension(collection)
        if width is not None and width != dim:
            known = self.collection_record(collection)
            made_with = f"{known.embedder} ({width} dimensions)" if known else f"{width} dimensions"
            raise EmbedderMismatch(
                f"collection {collection!r} was embedded with {made_with}; this run's embedder "
                f"is {embedder} ({dim} dimensions). Use the collection's embedder "
                "(CHOP_EMBEDDING_PROVIDER / CHOP_EMBEDDING_MODEL) or another collection."
            )
        with self.transaction() as conn:
            conn.execute(RECORD_COLLECTION, (collection, embedder, dim, Jsonb(settings)))
            row = conn.execute(COLLECTION_RECORD, (collection,)).fetchone()
        if row is not None and (row[0], row[1]) != (embedder, dim):
            raise EmbedderMismatch(
                f"collection {collection!r} was embedded with {row[0]} ({row[1]} dimensions); "
                f"this run's embedder is {embedder} ({dim} dimensions). Use the collection's "
                "embedder (CHOP_EMBEDDING_PROVIDER / CHOP_EMBEDDING_MODEL) or another collection."
            )
        self._embedder_checked.add((collection, embedder, dim))

    @through_outages
    def collection_dimension(self, collection: str) -> int | None:
        """The vector width of an existing collection, or None when it does not exist."""
        with self.connection() as conn:
            row = conn.execute(
                VECTOR_WIDTH, (f"chop_{validate_collection(collection)}_chunks",)
            ).fetchone()
            conn.rollback()
        return int(row[0]) if row else None

    @through_outages
    def collection_exists(self, collection: str) -> bool:
        """Whether the tables exist; a yes is remembered (searches ask on every query), and
        the first yes brings a collection an earlier chop made up to date (RENAMED_*)."""
        if collection in self._existing:
            return True
        exists = self.collection_dimension(collection) is not None
        if exists:
            with self.transaction() as conn:
                conn.execute("SELECT pg_advisory_xact_lock(hashtext('chop-schema'))")
                _migrate_collection(conn, collection)
            self._existing.add(collection)
        return exists

    @through_outages
    def collection_names(self) -> list[str]:
        """The collections whose tables exist (a page's selector lists them)."""
        with self.connection() as conn:
            rows = conn.execute(
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = current_schema() AND table_name LIKE 'chop\\_%\\_chunks'"
            ).fetchall()
            conn.rollback()
        names = (str(row[0])[len("chop_") : -len("_chunks")] for row in rows)
        return sorted(name for name in names if _is_collection_name(name))

    def require_collection(self, collection: str) -> None:
        """Raise UnknownCollection, naming it, unless the collection exists: a misspelt name
        must not read as "no passages for this question"."""
        if not self.collection_exists(collection):
            raise UnknownCollection(
                f"collection {collection!r} does not exist "
                f"(ingest documents into it first: chop ingest PATH --collection {collection})"
            )

    @through_outages
    def drop_collection(self, collection: str) -> None:
        chunks, documents = _tables(collection)
        with self.transaction() as conn:
            conn.execute(sql.SQL("DROP TABLE IF EXISTS {} CASCADE").format(chunks))
            conn.execute(sql.SQL("DROP TABLE IF EXISTS {} CASCADE").format(documents))
            conn.execute(FORGET_COLLECTION, (collection,))
        self._ready = {r for r in self._ready if r[0] != collection}
        self._embedder_checked = {r for r in self._embedder_checked if r[0] != collection}
        self._existing.discard(collection)


class DatabaseNotReady(RuntimeError):
    """The database cannot hold chop's tables as it is (pgvector missing, or not this role's
    to create): one line saying what its administrator must do."""


def _is_collection_name(name: str) -> bool:
    try:
        validate_collection(name)
    except ValueError:
        return False
    return True


def _bootstrap(url: str) -> None:
    """Create the extension and the shared LLM cache table once per database."""
    try:
        conn = psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S)
    except psycopg.ProgrammingError as exc:  # not a URL libpq can read
        raise ValueError(
            f"CHOP_DATABASE_URL is not a PostgreSQL URL ({_first_line(exc)}); expected "
            "postgresql://USER:PASSWORD@HOST:PORT/DATABASE"
        ) from None
    with conn, session_lock(conn, "chop-bootstrap"):
        _create_vector_extension(conn)
        conn.execute(CREATE_LLM_CACHE)
        conn.execute(CREATE_COLLECTIONS)
        _rename_columns(conn, "chop_llm_cache", RENAMED_CACHE_COLUMNS)


def _create_vector_extension(conn: psycopg.Connection[Any]) -> None:
    """``CREATE EXTENSION IF NOT EXISTS vector``, its failures said in one line each."""
    if conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone():
        return  # made by an administrator: this role needs no right to create it
    where = f"database {conn.info.dbname!r} on {conn.info.host}:{conn.info.port}"
    try:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except psycopg.errors.InsufficientPrivilege:
        raise DatabaseNotReady(
            f"the role {conn.info.user!r} may not create the pgvector extension in {where}; "
            "a superuser must run there once: CREATE EXTENSION vector;"
        ) from None
    except (psycopg.errors.UndefinedFile, psycopg.errors.FeatureNotSupported) as exc:
        raise DatabaseNotReady(
            f"pgvector is not installed on the server of {where} ({_first_line(exc)}); "
            "install it there (e.g. Debian: apt install postgresql-<version>-pgvector), then "
            "a superuser runs: CREATE EXTENSION vector;"
        ) from None


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _table_names(collection: str) -> tuple[str, str]:
    """The collection's chunks and documents tables."""
    validate_collection(collection)
    return f"chop_{collection}_chunks", f"chop_{collection}_documents"


def _tables(collection: str) -> tuple[sql.Identifier, sql.Identifier]:
    chunks, documents = _table_names(collection)
    return sql.Identifier(chunks), sql.Identifier(documents)


def _migrate_collection(conn: psycopg.Connection, collection: str) -> None:
    chunks, documents = _table_names(collection)
    _rename_columns(conn, chunks, RENAMED_CHUNK_COLUMNS)
    _rename_columns(conn, documents, RENAMED_DOCUMENT_COLUMNS)


def _rename_columns(conn: psycopg.Connection, table: str, renames: dict[str, str]) -> None:
    """Give ``table`` today's column names; idempotent, data and indexes kept."""
    columns = {row[0] for row in conn.execute(TABLE_COLUMNS, (table,)).fetchall()}
    for old, new in renames.items():
        if old in columns and new not in columns:
            conn.execute(
                sql.SQL("ALTER TABLE {} RENAME COLUMN {} TO {}").format(
                    sql.Identifier(table), sql.Identifier(old), sql.Identifier(new)
                )
            )
