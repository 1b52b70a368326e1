"""Search: the top-k chunks by vector, or by vector and full text (RRF), with CNM filters,
LangChain metadata filters and boosts; the neighbours of a hit; the vectors of hits."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import fields
from typing import Any, cast

import numpy as np
import psycopg
from psycopg import sql
from psycopg.types.json import Jsonb

from chop_rag.store.outage import through_outages
from chop_rag.store.records import Hit, SearchFilter
from chop_rag.store.schema import Schema, _tables
from chop_rag.store.writes import _as_array
from chop_rag.text.words import in_a_row

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


# A passage (chunk) of the given documents that a tsquery matches
SAID_TOGETHER = """
SELECT 1 FROM {chunks} c, to_tsquery('english', %(query)s) AS q
WHERE c.doc_id = ANY(%(docs)s) AND c.tsv @@ q LIMIT 1
"""
# Which of the given chunks hold every word of a phrase (stemmed as the index stems them)
NAMING = """
SELECT c.id FROM {chunks} c
WHERE c.id = ANY(%(ids)s) AND c.tsv @@ plainto_tsquery('english', %(words)s)
"""
# The documents whose chunks hold a word (stemmed as the full-text index stems it)
LISTING = """
SELECT w.word, array_agg(DISTINCT c.doc_id) FROM unnest(%(words)s::text[]) AS w(word)
JOIN {chunks} c ON c.tsv @@ plainto_tsquery('english', w.word)
GROUP BY w.word
"""
_TS_WORD = re.compile(r"[^a-z0-9]+")


class Search(Schema):
    """Chunks found by a question's vector (and words)."""

    @through_outages
    def said_together(
        self,
        collection: str,
        doc_ids: Sequence[str],
        word: str,
        others: Sequence[str],
        within: int | None = None,
    ) -> bool:
        """Whether a passage of ``doc_ids`` holds ``word`` and one of ``others`` (``within``:
        written at most that many words before or after it, "snooze a notification"), as the
        full-text index reads words ("notes" is "note", "editing" is "edit")."""
        first = _TS_WORD.sub("", word.lower())
        rest = [w for w in (_TS_WORD.sub("", o.lower()) for o in others) if w]
        if not first or not rest or not doc_ids or not self.collection_exists(collection):
            return False
        if within:  # tsquery's <N>: exactly N positions on; a stop word keeps its position
            pairs = [(first, o) for o in rest] + [(o, first) for o in rest]
            words = " | ".join(f"{a} <{n}> {b}" for a, b in pairs for n in range(1, within + 1))
        else:
            words = f"{first} & ({' | '.join(rest)})"
        chunks, _ = _tables(collection)
        query = sql.SQL(SAID_TOGETHER).format(chunks=chunks)
        with self.pool.connection() as conn:
            row = conn.execute(query, {"query": words, "docs": list(doc_ids)}).fetchone()
            conn.rollback()
        return row is not None

    @through_outages
    def naming(self, collection: str, chunk_ids: Sequence[int], words: str) -> set[int]:
        """Which of ``chunk_ids`` hold every word of ``words`` ("the certificates": a chunk
        that says "certificate"), as the full-text index reads words."""
        if not chunk_ids or not words.strip() or not self.collection_exists(collection):
            return set()
        chunks, _ = _tables(collection)
        with self.pool.connection() as conn:
            rows = conn.execute(
                sql.SQL(NAMING).format(chunks=chunks), {"ids": list(chunk_ids), "words": words}
            ).fetchall()
            conn.rollback()
        return {row[0] for row in rows}

    @through_outages
    def documents_listing(self, collection: str, words: Sequence[str]) -> dict[str, set[str]]:
        """For each of ``words``, the documents whose text holds it ("E2", "Coolwave"); a
        word no document holds is left out."""
        if not words or not self.collection_exists(collection):
            return {}
        chunks, _ = _tables(collection)
        with self.pool.connection() as conn:
            rows = conn.execute(
                sql.SQL(LISTING).format(chunks=chunks), {"words": list(dict.fromkeys(words))}
            ).fetchall()
            conn.rollback()
        return {word: set(docs) for word, docs in rows}

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

    @through_outages
    def vectors(self, collection: str, chunk_ids: Sequence[int]) -> dict[int, np.ndarray]:
        """The stored vectors of these chunks, by chunk id (missing ones left out): what
        maximal marginal relevance compares hits by."""
        if not chunk_ids or not self.collection_exists(collection):
            return {}
        chunks, _ = _tables(collection)
        query = sql.SQL("SELECT id, embedding FROM {} WHERE id = ANY(%s)").format(chunks)
        with self.pool.connection() as conn:
            rows = conn.execute(query, (list(chunk_ids),)).fetchall()
            conn.rollback()
        return {int(chunk_id): _as_array(vector) for chunk_id, vector in rows}

    def written(self, collection: str, doc_ids: Sequence[str], openings: Sequence[str]) -> set[str]:
        """Which of ``openings`` (a word's first letters, lower case; or several words, which
        must be written in a row: "face id") some chunk of the documents ``doc_ids`` (all,
        when none) writes at the start of a word: whether a document ever mentions what a
        question names, not only the sections it retrieved."""
        if not openings or not self.collection_exists(collection):
            return set()
        chunks, _ = _tables(collection)
        docs = sql.SQL("c.doc_id = ANY(%(docs)s) AND ") if doc_ids else sql.SQL("")
        query = sql.SQL(
            "SELECT w FROM unnest(%(words)s::text[]) AS w WHERE EXISTS (SELECT 1 FROM {chunks} "
            "AS c WHERE {docs}(c.text ~* ('\\m' || w) OR c.doc_title ~* ('\\m' || w)))"
        ).format(chunks=chunks, docs=docs)
        patterns = [in_a_row(opening) for opening in openings]
        with self.pool.connection() as conn:
            rows = conn.execute(query, {"words": patterns, "docs": list(doc_ids)}).fetchall()
            conn.rollback()
        by_pattern = dict(zip(patterns, openings, strict=True))
        return {by_pattern[row[0]] for row in rows}

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
    if where.metadata is not None:
        conditions.append(metadata_condition(where.metadata, params))
    return conditions, params


# ------------------------------------------------------- LangChain metadata filters
# The operators of langchain-postgres' PGVectorStore, with its meaning: a comparison with a key
# a chunk lacks is false ($ne and $nin included), and $not is the complement of what it holds.
COMPARISONS = {"$eq": "=", "$ne": "<>", "$lt": "<", "$lte": "<=", "$gt": ">", "$gte": ">="}
ORDERINGS = ("$lt", "$lte", "$gt", "$gte", "$between")  # numbers or strings, of one type
FIELD_OPERATORS = (*COMPARISONS, "$in", "$nin", "$between", "$like", "$ilike", "$exists")
LOGICAL_OPERATORS = ("$and", "$or", "$not")
# The metadata a LangChain caller gave a chunk (chop_rag.retrieval.vectorstore), inside the chunk's
# metadata column; ingest's chunks hold chop's own metadata there (pages, headings, ...).
CALLER_METADATA = "langchain_metadata"
# chop's fields of every chunk, by the names its LangChain documents carry them under
# (chop_rag.retrieval.retriever.chunk_document), and their columns
CHUNK_FIELDS = {
    "doc_id": "doc_id",
    "doc_title": "doc_title",
    "chunk_index": "chunk_index",
    "chunk_id": "id",
    "model": "model",
    "category": "category",
    "nouns": "nouns",
    "prefix": "prefix",
    "cnm_source": "cnm_source",
    "char_start": "char_start",
    "char_end": "char_end",
}
MAX_KEY_CHARS = 200
Scalar = str | int | float | bool | None


def metadata_condition(given: Mapping[str, Any], params: dict[str, Any]) -> sql.Composable:
    """A LangChain metadata filter as a SQL condition on a chunks table's row, its values and
    keys added to ``params`` (bound, never written into the SQL).

    ``{"page": 3}`` is ``{"page": {"$eq": 3}}``; a field takes ``$eq $ne $lt $lte $gt $gte``
    (a number, a string, a boolean or None; the orderings only a number or a string, compared
    with values of the same type), ``$in $nin`` (a list of those), ``$between`` ([low, high]),
    ``$like $ilike`` (a SQL pattern) and ``$exists`` (a boolean); several keys, or several
    operators on one key, must all hold; ``$and``/``$or`` take a list of filters, ``$not`` a
    filter (or a list, all of which must hold). A key is looked up in the metadata the caller
    gave (chop_rag.retrieval.vectorstore), else in the chunk's own: chop's metadata of an ingested
    chunk (``pages``, ``headings``, ...) and the fields of every chunk (``doc_id``, ``model``,
    ``category``, ``chunk_index``, ...). Anything else is one ValueError that says what."""
    return _filter_condition(given, params, "filter")


def _filter_condition(given: Any, params: dict[str, Any], where: str) -> sql.Composable:
    if not isinstance(given, Mapping) or not given:
        raise ValueError(f"{where} must be a non-empty dict of metadata keys or $and/$or/$not")
    parts: list[sql.Composable] = []
    for key, value in given.items():
        if key in ("$and", "$or"):
            if not isinstance(value, list | tuple) or not value:
                raise ValueError(f"{key} takes a non-empty list of filters, not {value!r}")
            joined = sql.SQL(" AND " if key == "$and" else " OR ").join(
                _filter_condition(item, params, f"each filter of {key}") for item in value
            )
            parts.append(sql.SQL("({})").format(joined))
        elif key == "$not":
            inner = {"$and": value} if isinstance(value, list | tuple) else value
            parts.append(
                sql.SQL("(NOT {})").format(_filter_condition(inner, params, "$not's filter"))
            )
        elif isinstance(key, str) and key.startswith("$"):
            raise ValueError(
                f"unknown filter operator {key!r} at the top of a filter: "
                f"{', '.join(LOGICAL_OPERATORS)} combine filters, and a metadata key takes "
                f"{', '.join(FIELD_OPERATORS)}"
            )
        else:
            parts.append(_field_condition(_checked_key(key), value, params))
    return parts[0] if len(parts) == 1 else sql.SQL("({})").format(sql.SQL(" AND ").join(parts))


def _checked_key(key: Any) -> str:
    if not isinstance(key, str) or not key or len(key) > MAX_KEY_CHARS or "\x00" in key:
        raise ValueError(
            f"a filter's metadata key must be a non-empty string of at most {MAX_KEY_CHARS} "
            f"characters without NUL, not {key!r}"
        )
    return key


def _field_condition(key: str, value: Any, params: dict[str, Any]) -> sql.Composable:
    """The conditions on one metadata key, each true or false (never SQL NULL, so that $not
    is their complement)."""
    operators = (
        dict(value)
        if isinstance(value, Mapping) and value and all(str(k).startswith("$") for k in value)
        else {"$eq": value}
    )
    field = _field_value(key, params)
    parts = [
        sql.SQL("coalesce({}, false)").format(_operator_condition(key, op, arg, field, params))
        for op, arg in operators.items()
    ]
    return parts[0] if len(parts) == 1 else sql.SQL("({})").format(sql.SQL(" AND ").join(parts))


def _field_value(key: str, params: dict[str, Any]) -> sql.Composable:
    """The key's value in a chunk as jsonb (SQL NULL where the chunk has no such key)."""
    name = _param(params, key)
    caller = sql.SQL("metadata -> {} -> {}").format(sql.Literal(CALLER_METADATA), name)
    column = CHUNK_FIELDS.get(key)
    own = (
        sql.SQL("to_jsonb({})").format(sql.Identifier(column))
        if column
        else sql.SQL("metadata -> {}").format(name)
    )
    return sql.SQL("coalesce({}, {})").format(caller, own)


def _operator_condition(
    key: str, op: Any, arg: Any, field: sql.Composable, params: dict[str, Any]
) -> sql.Composable:
    if op in COMPARISONS:
        bound = _param(params, Jsonb(_scalar(key, op, arg, ordered=op in ORDERINGS)))
        comparison = sql.SQL("{} {} {}").format(field, sql.SQL(COMPARISONS[op]), bound)
        if op not in ORDERINGS:
            return comparison
        return sql.SQL("(jsonb_typeof({}) = jsonb_typeof({}) AND {})").format(
            field, bound, comparison
        )
    if op == "$between":
        if not isinstance(arg, list | tuple) or len(arg) != 2:
            raise ValueError(f"$between on {key!r} takes [low, high], not {arg!r}")
        low, high = (_param(params, Jsonb(_scalar(key, op, a, ordered=True))) for a in arg)
        between = "(jsonb_typeof({f}) = jsonb_typeof({lo}) AND {f} BETWEEN {lo} AND {hi})"
        return sql.SQL(between).format(f=field, lo=low, hi=high)
    if op in ("$in", "$nin"):
        if not isinstance(arg, list | tuple | set | frozenset):
            raise ValueError(f"{op} on {key!r} takes a list of values, not {arg!r}")
        values = _param(params, [Jsonb(_scalar(key, op, a)) for a in arg])
        found = sql.SQL("{} = ANY({}::jsonb[])").format(field, values)
        return found if op == "$in" else sql.SQL("({} IS NOT NULL AND NOT {})").format(field, found)
    if op in ("$like", "$ilike"):
        if not isinstance(arg, str):
            raise ValueError(f"{op} on {key!r} takes a SQL pattern string, not {arg!r}")
        return sql.SQL("(jsonb_typeof({f}) = 'string' AND ({f} #>> '{{}}') {op} {p})").format(
            f=field, op=sql.SQL("LIKE" if op == "$like" else "ILIKE"), p=_param(params, arg)
        )
    if op == "$exists":
        if not isinstance(arg, bool):
            raise ValueError(f"$exists on {key!r} takes true or false, not {arg!r}")
        return sql.SQL("({} IS {} NULL)").format(field, sql.SQL("NOT" if arg else ""))
    raise ValueError(
        f"unknown filter operator {op!r} on {key!r}: a metadata key takes "
        f"{', '.join(FIELD_OPERATORS)}"
    )


def _scalar(key: str, op: str, value: Any, *, ordered: bool = False) -> Scalar:
    """A value a metadata value is compared with: a string, a finite number, a boolean or
    None; an ordering only a string or a number."""
    allowed: tuple[type, ...] = (str, int, float) if ordered else (str, int, float, bool)
    if (value is None and not ordered) or (
        isinstance(value, allowed) and not (ordered and isinstance(value, bool))
    ):
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"{op} on {key!r} takes a finite number, not {value!r}")
        return cast(Scalar, value)
    kinds = "a string or a number" if ordered else "a string, a number, a boolean or None"
    raise ValueError(f"{op} on {key!r} compares with {kinds}, not {value!r}")


def _param(params: dict[str, Any], value: Any) -> sql.Placeholder:
    """``value`` bound as the next of the metadata filter's parameters."""
    name = f"f_meta_{len([k for k in params if k.startswith('f_meta_')])}"
    params[name] = value
    return sql.Placeholder(name)
