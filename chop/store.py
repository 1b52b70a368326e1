"""The one module that owns the database: PostgreSQL + pgvector through psycopg 3.

A collection is a pair of tables, ``chop_<name>_chunks`` and ``chop_<name>_documents``; the
embedding dimension is fixed per collection, so models of different widths never mix. A
document's chunks are replaced in one transaction under an advisory lock: readers see the old
chunks or the new ones, never half, and two ingests of one document cannot duplicate it.
The SQL is in named constants below; a collection made before a column was renamed is
migrated when first opened (RENAMED_*). The embedded server is started by chop.pgserver.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import numpy as np
import psycopg
import tenacity
from pgvector.psycopg import register_vector
from psycopg import sql
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool

from chop.config import Context
from chop.pgserver import held_url, resolve_database_url, stop_embedded_server

R = TypeVar("R")
# The pool logs each failed reconnect ("error connecting in 'pool-1': ... the database system
# is shutting down") while it waits out a database restart it then survives; a failure that
# lasts ends as PoolTimeout, which the CLI reports in one line.
logging.getLogger("psycopg.pool").setLevel(logging.ERROR)


class _CleanupOfALostConnection(logging.Filter):
    """psycopg warns when it closes a pipeline or a COPY on a connection an outage cut ("error
    ignored terminating <psycopg.Pipeline [BAD]>: the connection is lost"): the outage has
    its own line (Outage), and the call is retried."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("error ignored terminating")


logging.getLogger("psycopg").addFilter(_CleanupOfALostConnection())
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
    cnm_source: str  # heading | extracted | profile | inherited | document | fallback
    continuity: str  # first | rule:<why> | llm | llm-fallback
    embedding_key: str  # embedding_key(embedded text, embedder): finds the vector again
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
    fingerprint: str  # nodes.load.fingerprint: unchanged means nothing to ingest again
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


def embedding_key(embedded_text: str, embedder_name: str) -> str:
    """The key a stored vector is found again by: the same text from the same embedder."""
    payload = f"{embedder_name}\x00{embedded_text}".encode("utf-8", "surrogatepass")
    return hashlib.sha256(payload).hexdigest()


log = logging.getLogger(__name__)
P = ParamSpec("P")
DEFAULT_OUTAGE_S = 900.0  # Context.database_outage_s
CONNECTION_WAIT_S = 10.0  # one wait for a pooled connection; an outage is waited out in several


class DatabaseUnavailable(RuntimeError):
    """The database stayed unreachable longer than the outage bound: the run ends here."""


class Outage:
    """The outages of one database as every caller sees them: the first failed call begins
    one (one line), every call waits and retries until the database answers or the outage
    has lasted ``bound_s`` (then DatabaseUnavailable, for every caller at once), and the first
    call that begins after it and gets its answer from the database ends it (one line): a
    connection that passed its check, or a cached answer, proves nothing while a server shuts
    down. A run carries on when the server comes back."""

    def __init__(self, bound_s: float = DEFAULT_OUTAGE_S) -> None:
        self.bound_s = bound_s
        self.started: float | None = None  # when the first failed call began (for the bound)
        self.noticed = 0.0  # when it failed: only a call asked after this can end the outage
        self.ended = 0.0  # when the last outage ended: a call asked before it fails stale
        self.last_error = ""
        self._lock = threading.Lock()
        self._attempt = threading.local()  # when this thread's current attempt began

    def call(self, work: Callable[[], R], *, asks_database: bool = False) -> R:
        """``work()``, retried with backoff through an outage of at most ``bound_s``.
        ``asks_database``: every success is the database's answer (else only one that took a
        connection from Store.connection)."""

        def attempt() -> R:
            began = self._attempt.began = time.monotonic()
            token = _asked_database.set(asks_database)
            try:
                result = work()
                if _asked_database.get():
                    self._answered(began)
                return result
            finally:
                _asked_database.reset(token)

        retrying = tenacity.Retrying(
            retry=tenacity.retry_if_exception_type(psycopg.OperationalError),
            stop=self._outlasted,
            wait=tenacity.wait_exponential(multiplier=0.25, max=5),
            reraise=False,
        )
        try:
            return retrying(attempt)
        except tenacity.RetryError as gave_up:
            raise DatabaseUnavailable(
                f"the database has been unreachable for {self.bound_s:.0f} s "
                f"(last: {self.last_error}); what finished is stored, and the same command "
                "resumes once it is back"
            ) from gave_up.last_attempt.exception()

    def _outlasted(self, state: tenacity.RetryCallState) -> bool:
        """Record a failed call; True when the outage has lasted longer than the bound. A call
        asked before the last outage ended (a long wait for a pooled connection) failed in
        that outage: it is retried without beginning another."""
        error = state.outcome.exception() if state.outcome else None
        with self._lock:
            now = time.monotonic()
            self.last_error = _one_line(error) if error else self.last_error
            stale = getattr(self._attempt, "began", now) < self.ended
            if self.started is None and not stale:  # it began when the failed call did
                self.started, self.noticed = min(now, state.start_time), now
                log.warning(
                    "database unreachable (%s); waiting up to %.0f s for it",
                    self.last_error,
                    self.bound_s,
                )
            return self.started is not None and now - self.started > self.bound_s

    def _answered(self, asked: float) -> None:
        """The database answered a call that asked at ``asked``: an outage that had begun by
        then is over (an answer to an earlier call proves nothing about now)."""
        if self.started is None or asked < self.noticed:
            return
        with self._lock:
            if self.started is not None and asked >= self.noticed:
                self.ended = time.monotonic()
                log.warning("database back after %.0f s", self.ended - self.started)
                self.started = None


def _one_line(error: BaseException) -> str:
    """An error in one short line (libpq's messages span three)."""
    text = " ".join(str(error).split()) or type(error).__name__
    return text if len(text) <= 200 else text[:200] + "…"


_asked_database: ContextVar[bool] = ContextVar("chop_asked_database", default=False)
_outages: dict[str, Outage] = {}
_outages_lock = threading.Lock()


def outage_for(url: str) -> Outage:
    """The Outage of the database at ``url``, shared by its Store and its checkpointer."""
    with _outages_lock:
        return _outages.setdefault(url, Outage())


def _through_outages(method: Callable[P, R]) -> Callable[P, R]:
    """A Store method that waits out a database outage (Store.outage) instead of failing."""

    @functools.wraps(method)
    def waiting(*args: P.args, **kwargs: P.kwargs) -> R:
        store = args[0]
        assert isinstance(store, Store)
        return store.outage.call(lambda: method(*args, **kwargs))

    return waiting


class UnknownCollection(ValueError):
    """A search or read names a collection that does not exist (a typo, or nothing ingested)."""


class EmbedderMismatch(ValueError):
    """A collection is read or written with another embedder than the one its vectors are
    from: other widths fail inside pgvector, equal widths give silently wrong neighbours."""


@dataclass(frozen=True)
class CollectionRecord:
    """What a collection was made with (``chop_collections``): its embedder and its width,
    and the settings of the run that made it (for the record; they do not bind later runs)."""

    embedder: str
    dimension: int
    settings: dict[str, Any] = field(default_factory=dict)


def validate_collection(name: str) -> str:
    if not isinstance(name, str) or not _COLLECTION_NAME.fullmatch(name):  # "$" allows a "\n"
        raise ValueError(
            f"collection name {name!r} must be lowercase letters, digits and '_', "
            "starting with a letter, at most 40 characters"
        )
    return name


EXACT_SCAN_ROWS = 20_000  # filters matching fewer rows are searched exactly (see search)

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

CACHE_GET = "SELECT value FROM chop_llm_cache WHERE key = %s"
CACHE_PUT = """
INSERT INTO chop_llm_cache (key, chat_model, value) VALUES (%s, %s, %s)
ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, created_at = now()
"""

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

# The columns replace_document writes, named as ChunkRow's fields, with their COPY types.
COPIED_CHUNK_COLUMNS = {
    "doc_id": "text",
    "doc_title": "text",
    "chunk_index": "int4",
    "text": "text",
    "prefix": "text",
    "category": "text",
    "nouns": "text[]",
    "model": "text",
    "cnm_source": "text",
    "continuity": "text",
    "flags": "text[]",
    "embedding_key": "text",
    "char_start": "int4",
    "char_end": "int4",
    "metadata": "jsonb",
    "embedding": "vector",
}
DOCUMENT_COLUMNS = ("doc_id", "title", "source", "fingerprint", "chunk_count", "metadata")
STORED_CHUNK_COLUMNS = (  # what chunks() shows: every column but the vector and the tsvector
    "id, doc_id, doc_title, chunk_index, text, prefix, category, nouns, model, cnm_source, "
    "continuity, flags, embedding_key, char_start, char_end, metadata"
)
HIT_COLUMNS = (  # Hit's fields in order, before its score
    "c.id, c.doc_id, c.doc_title, c.chunk_index, c.text, c.prefix, c.category, c.nouns, "
    "c.model, c.cnm_source, c.char_start, c.char_end, c.metadata"
)

# Search. {source} is the chunks table, or its filtered rows as a subquery for an exact scan.
BOOST = """
CASE WHEN (%(boost_model)s <> '' AND lower(c.model) = lower(%(boost_model)s))
     OR c.doc_id = ANY(%(boost_docs)s) THEN %(boost)s ELSE 0 END
"""

VECTOR_SEARCH = """
SELECT {columns}, 1 - c.d + {boost} AS score FROM (
    SELECT *, embedding <=> %(q)s AS d FROM {source}
    WHERE {filter} ORDER BY embedding <=> %(q)s LIMIT %(n)s) c
ORDER BY score DESC, c.doc_title, c.chunk_index LIMIT %(k)s
"""

HYBRID_SEARCH = """
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
    + {boost} AS score
FROM vec FULL JOIN fts USING (id) JOIN {chunks} c USING (id)
ORDER BY score DESC, c.doc_title, c.chunk_index LIMIT %(k)s
"""


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
            timeout=CONNECTION_WAIT_S,
            open=True,
        )
        self.outage = outage_for(url)
        self._ready: set[tuple[str, int, str | None]] = set()
        self._existing: set[str] = set()
        self._embedder_checked: set[tuple[str, str, int]] = set()

    def close(self) -> None:
        self.pool.close()

    @contextmanager
    def transaction(self) -> Iterator[psycopg.Connection]:
        with self.connection() as conn, conn.transaction():
            yield conn

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection]:
        """A checked connection from the pool; a call that gets one and succeeds ends an
        outage that began before it asked (Outage)."""
        with self.pool.connection() as conn:
            _asked_database.set(True)  # this call's answer comes from the database
            yield conn

    # ---------------------------------------------------------------- schema
    @_through_outages
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

    @_through_outages
    def collection_record(self, collection: str) -> CollectionRecord | None:
        """What the collection was made with, or None (not made, or made before the record)."""
        with self.connection() as conn:
            row = conn.execute(COLLECTION_RECORD, (validate_collection(collection),)).fetchone()
            conn.rollback()
        return CollectionRecord(str(row[0]), int(row[1]), dict(row[2])) if row else None

    @_through_outages
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

    @_through_outages
    def collection_dimension(self, collection: str) -> int | None:
        """The vector width of an existing collection, or None when it does not exist."""
        with self.connection() as conn:
            row = conn.execute(
                VECTOR_WIDTH, (f"chop_{validate_collection(collection)}_chunks",)
            ).fetchone()
            conn.rollback()
        return int(row[0]) if row else None

    @_through_outages
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

    def require_collection(self, collection: str) -> None:
        """Raise UnknownCollection, naming it, unless the collection exists: a misspelt name
        must not read as "no passages for this question"."""
        if not self.collection_exists(collection):
            raise UnknownCollection(
                f"collection {collection!r} does not exist "
                f"(ingest documents into it first: chop ingest PATH --collection {collection})"
            )

    @_through_outages
    def drop_collection(self, collection: str) -> None:
        chunks, documents = _tables(collection)
        with self.transaction() as conn:
            conn.execute(sql.SQL("DROP TABLE IF EXISTS {} CASCADE").format(chunks))
            conn.execute(sql.SQL("DROP TABLE IF EXISTS {} CASCADE").format(documents))
            conn.execute(FORGET_COLLECTION, (collection,))
        self._ready = {r for r in self._ready if r[0] != collection}
        self._embedder_checked = {r for r in self._embedder_checked if r[0] != collection}
        self._existing.discard(collection)

    # ------------------------------------------------------------- documents
    @_through_outages
    def documents(self, collection: str) -> dict[str, DocumentRecord]:
        if not self.collection_exists(collection):
            return {}
        _, documents = _tables(collection)
        with self.connection() as conn:
            rows = conn.execute(
                sql.SQL("SELECT {} FROM {}").format(_names(DOCUMENT_COLUMNS), documents)
            ).fetchall()
            conn.rollback()
        return {r[0]: DocumentRecord(*r) for r in rows}

    @_through_outages
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
                sql.SQL("INSERT INTO {} ({}) VALUES ({})").format(
                    documents,
                    _names(DOCUMENT_COLUMNS),
                    sql.SQL(", ").join(sql.Placeholder() * len(DOCUMENT_COLUMNS)),
                ),
                _document_values(document),
            )
            copy_sql = sql.SQL("COPY {} ({}) FROM STDIN WITH (FORMAT BINARY)").format(
                chunks, _names(COPIED_CHUNK_COLUMNS)
            )
            with conn.cursor() as cur, cur.copy(copy_sql) as copy:
                copy.set_types(list(COPIED_CHUNK_COLUMNS.values()))
                for r in rows:
                    copy.write_row(_copied_values(r))
        return replaced > 0

    @_through_outages
    def delete_document(self, collection: str, doc_id: str) -> bool:
        if not self.collection_exists(collection):
            return False
        _, documents = _tables(collection)
        with self.transaction() as conn:
            cur = conn.execute(
                sql.SQL("DELETE FROM {} WHERE doc_id = %s").format(documents), (doc_id,)
            )
            return cur.rowcount > 0

    @_through_outages
    def chunks(self, collection: str, doc_id: str | None = None) -> list[dict[str, Any]]:
        """Stored chunks in document order (without vectors), for inspection and tests."""
        if not self.collection_exists(collection):
            return []
        chunks, _ = _tables(collection)
        query = sql.SQL("SELECT {} FROM {} {} ORDER BY doc_id, chunk_index").format(
            sql.SQL(STORED_CHUNK_COLUMNS), chunks, sql.SQL("WHERE doc_id = %s" if doc_id else "")
        )
        with self.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            rows = cur.execute(query, (doc_id,) if doc_id else ()).fetchall()
            conn.rollback()
        return list(rows)

    @_through_outages
    def neighbours(self, collection: str, doc_id: str, first: int, last: int) -> list[Hit]:
        """A document's chunks ``first``..``last`` (by chunk_index) in order, scored 0: the
        section around a retrieved chunk, which the answer reads whole."""
        if not self.collection_exists(collection):
            return []
        chunks, _ = _tables(collection)
        query = sql.SQL(
            "SELECT {columns}, 0.0 FROM {chunks} AS c WHERE c.doc_id = %s "
            "AND c.chunk_index BETWEEN %s AND %s ORDER BY c.chunk_index"
        ).format(columns=sql.SQL(HIT_COLUMNS), chunks=chunks)
        with self.pool.connection() as conn:
            rows = conn.execute(query, (doc_id, first, last)).fetchall()
            conn.rollback()
        return [_hit(row) for row in rows]

    @_through_outages
    def embeddings_by_key(self, collection: str, doc_id: str) -> dict[str, np.ndarray]:
        """Vectors already stored for a document, by their :func:`embedding_key`."""
        if not self.collection_exists(collection):
            return {}
        chunks, _ = _tables(collection)
        with self.connection() as conn:
            rows = conn.execute(
                sql.SQL("SELECT embedding_key, embedding FROM {} WHERE doc_id = %s").format(chunks),
                (doc_id,),
            ).fetchall()
            conn.rollback()
        return {h: _as_array(e) for h, e in rows}

    @_through_outages
    def distinct_values(self, collection: str, column: str) -> list[str]:
        """Stored model or category values, for matching a question against them."""
        if column not in ("model", "category", "doc_title"):
            raise ValueError(f"not a CNM column: {column}")
        if not self.collection_exists(collection):
            return []
        chunks, _ = _tables(collection)
        with self.connection() as conn:
            rows = conn.execute(
                sql.SQL("SELECT DISTINCT {col} FROM {t} WHERE {col} IS NOT NULL").format(
                    col=sql.Identifier(column), t=chunks
                )
            ).fetchall()
            conn.rollback()
        return sorted(r[0] for r in rows)

    # ---------------------------------------------------------------- search
    @_through_outages
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

        ``boost`` is added to the boosted chunks' score in the search's own units: cosine
        points for a vector search, reciprocal-rank points for a hybrid one.

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
        query = sql.SQL(HYBRID_SEARCH if query_text else VECTOR_SEARCH)
        try:
            with self.transaction() as conn:
                exact = bool(conditions) and (
                    _estimated_rows(conn, chunks, filter_clause, filter_params) <= EXACT_SCAN_ROWS
                )
                statement = query.format(
                    chunks=chunks,
                    source=exact_source if exact else chunks,
                    filter=filter_clause,
                    columns=sql.SQL(HIT_COLUMNS),
                    boost=sql.SQL(BOOST),
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
    @_through_outages
    def cache_get(self, key: str) -> Any | None:
        with self.connection() as conn:
            row = conn.execute(CACHE_GET, (key,)).fetchone()
            conn.rollback()
        return row[0] if row else None

    @_through_outages
    def cache_put(self, key: str, chat_model: str, value: Any) -> None:
        """Keep an answer under ``key``, with the identity of the chat model that gave it."""
        with self.transaction() as conn:
            conn.execute(CACHE_PUT, (key, chat_model, Jsonb(value)))


def _estimated_rows(
    conn: psycopg.Connection, chunks: sql.Identifier, condition: sql.Composable, params: Any
) -> int:
    """The planner's estimate of the rows ``condition`` matches (its column statistics;
    well under a millisecond, where counting a common model's rows takes tens)."""
    query = sql.SQL("EXPLAIN (FORMAT JSON) SELECT 1 FROM {} WHERE {}").format(chunks, condition)
    row = conn.execute(query, params).fetchone()
    return int(row[0][0]["Plan"]["Plan Rows"]) if row else 0


def _names(columns: Iterable[str]) -> sql.Composable:
    return sql.SQL(", ").join(sql.Identifier(name) for name in columns)


def _document_values(document: DocumentRecord) -> tuple[Any, ...]:
    values = {**vars(document), "metadata": Jsonb(document.metadata)}
    return tuple(values[name] for name in DOCUMENT_COLUMNS)


def _copied_values(row: ChunkRow) -> tuple[Any, ...]:
    values = {
        **vars(row),
        "nouns": list(row.nouns),
        "flags": list(row.flags),
        "metadata": Jsonb(row.metadata),
        "embedding": np.asarray(row.embedding, dtype=np.float32),
    }
    return tuple(values[name] for name in COPIED_CHUNK_COLUMNS)


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
            conn.execute(CREATE_LLM_CACHE)
            conn.execute(CREATE_COLLECTIONS)
            _rename_columns(conn, "chop_llm_cache", RENAMED_CACHE_COLUMNS)
        finally:
            conn.execute("SELECT pg_advisory_unlock(hashtext('chop-bootstrap'))")


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
    the server (chop.pgserver.stop_embedded_server: it stops when no other process uses it).

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
