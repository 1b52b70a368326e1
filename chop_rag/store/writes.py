"""Documents and their chunks, written and read back; the LLM answer cache."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from psycopg import sql
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from chop_rag.store.outage import through_outages
from chop_rag.store.records import ChunkRow, DocumentRecord
from chop_rag.store.schema import Schema, _tables

CACHE_GET = "SELECT value FROM chop_llm_cache WHERE key = %s"
CACHE_PUT = """
INSERT INTO chop_llm_cache (key, chat_model, value) VALUES (%s, %s, %s)
ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, created_at = now()
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


class Writes(Schema):
    """Documents and chunks in, stored rows out; the LLM cache."""

    # ------------------------------------------------------------- documents
    @through_outages
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

    @through_outages
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

    @through_outages
    def set_document_metadata(self, collection: str, doc_id: str, metadata: dict[str, Any]) -> bool:
        """Replace a stored document's metadata (its profile and identity card) without
        touching its chunks; False when no such document is stored."""
        if not self.collection_exists(collection):
            return False
        _, documents = _tables(collection)
        with self.transaction() as conn:
            updated = conn.execute(
                sql.SQL("UPDATE {} SET metadata = %s WHERE doc_id = %s").format(documents),
                (Jsonb(metadata), doc_id),
            ).rowcount
        return updated > 0

    @through_outages
    def delete_document(self, collection: str, doc_id: str) -> bool:
        if not self.collection_exists(collection):
            return False
        _, documents = _tables(collection)
        with self.transaction() as conn:
            cur = conn.execute(
                sql.SQL("DELETE FROM {} WHERE doc_id = %s").format(documents), (doc_id,)
            )
            return cur.rowcount > 0

    @through_outages
    def delete_all_documents(self, collection: str) -> int:
        """Empty a collection, keeping it and the embedder it was made with; how many
        documents were removed."""
        if not self.collection_exists(collection):
            return 0
        _, documents = _tables(collection)
        with self.transaction() as conn:
            return conn.execute(sql.SQL("DELETE FROM {}").format(documents)).rowcount

    @through_outages
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

    @through_outages
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

    @through_outages
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

    # ------------------------------------------------------------- LLM cache
    @through_outages
    def cache_get(self, key: str) -> Any | None:
        with self.connection() as conn:
            row = conn.execute(CACHE_GET, (key,)).fetchone()
            conn.rollback()
        return row[0] if row else None

    @through_outages
    def cache_put(self, key: str, chat_model: str, value: Any) -> None:
        """Keep an answer under ``key``, with the identity of the chat model that gave it."""
        with self.transaction() as conn:
            conn.execute(CACHE_PUT, (key, chat_model, Jsonb(value)))


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


def _as_array(value: Any) -> np.ndarray:
    """pgvector's adapter gives numpy arrays or Vector objects depending on the format."""
    return value.to_numpy() if hasattr(value, "to_numpy") else np.asarray(value, dtype=np.float32)
