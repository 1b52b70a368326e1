"""Search: the top-k chunks by vector, or by vector and full text (RRF), with CNM filters
and boosts; and the neighbours of a hit."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from typing import Any

import numpy as np
import psycopg
from psycopg import sql

from chop.store.outage import through_outages
from chop.store.records import Hit, SearchFilter
from chop.store.schema import Schema, _tables

RRF_K = 60
EXACT_SCAN_ROWS = 20_000  # filters matching fewer rows are searched exactly (see search)
TITLE_OPENING_CHARS = 300  # a titled part's title is in its first chunk's first lines

# Hit's fields are columns of the same names, selected in this order before the score.
HIT_FIELDS = tuple(f.name for f in fields(Hit) if f.name != "score")
HIT_COLUMNS = ", ".join(f"c.{name}" for name in HIT_FIELDS)

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


class Search(Schema):
    """Chunks found by a question's vector (and words)."""

    @through_outages
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

    # ---------------------------------------------------------------- search
    @through_outages
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


def _estimated_rows(
    conn: psycopg.Connection, chunks: sql.Identifier, condition: sql.Composable, params: Any
) -> int:
    """The planner's estimate of the rows ``condition`` matches (its column statistics;
    well under a millisecond, where counting a common model's rows takes tens)."""
    query = sql.SQL("EXPLAIN (FORMAT JSON) SELECT 1 FROM {} WHERE {}").format(chunks, condition)
    row = conn.execute(query, params).fetchone()
    return int(row[0][0]["Plan"]["Plan Rows"]) if row else 0


def _hit(row: Sequence[Any]) -> Hit:
    *values, score = row
    # numeric from SQL arrives as Decimal in hybrid mode
    return Hit(**dict(zip(HIT_FIELDS, values, strict=True)), score=float(score))


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
    if where.titled:
        conditions.append(
            sql.SQL(
                "(coalesce(metadata->'headings'->>-1, '') ~* %(f_heading)s"
                " OR left(text, {}) ~* %(f_opening)s)"
            ).format(sql.Literal(TITLE_OPENING_CHARS))
        )
        params["f_heading"], params["f_opening"] = where.titled
    return conditions, params
