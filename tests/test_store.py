"""The pgvector store, against the real embedded PostgreSQL."""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path

import numpy as np
import psycopg
import pytest
from psycopg import sql

from chop_rag.config import Context
from chop_rag.store import (
    ChunkRow,
    DatabaseUnavailable,
    DocumentRecord,
    SearchFilter,
    Store,
    store_for,
    validate_collection,
)
from chop_rag.store.outage import Outage
from chop_rag.store.pgserver import embedded_database_url, server_settings, write_server_settings

DIM = 8


def unit(*values: float) -> np.ndarray:
    v = np.zeros(DIM, dtype=np.float32)
    v[: len(values)] = values
    return v / np.linalg.norm(v)


def row(doc: str, index: int, vector: np.ndarray, model: str | None = None) -> ChunkRow:
    return ChunkRow(
        doc_id=doc,
        doc_title=doc.upper(),
        chunk_index=index,
        text=f"{doc} {index}",
        prefix="",
        category="phone",
        nouns=["n"],
        model=model,
        cnm_source="extracted",
        continuity="first",
        embedding_key=f"{doc}{index}",
        char_start=index * 10,
        char_end=index * 10 + 10,
        embedding=vector,
    )


def record(doc: str, n: int) -> DocumentRecord:
    return DocumentRecord(doc_id=doc, title=doc.upper(), source=doc, fingerprint="h", chunk_count=n)


@pytest.fixture
def collection(store: Store, context: Context) -> str:
    store.ensure_collection(context.collection, DIM)
    return context.collection


def test_schema_creation_is_idempotent(store: Store, collection: str) -> None:
    store._ready.clear()
    store.ensure_collection(collection, DIM)
    assert store.collection_dimension(collection) == DIM


def test_a_collection_refuses_vectors_of_another_width(store: Store, collection: str) -> None:
    with pytest.raises(ValueError, match="8-dimensional"):
        store.ensure_collection(collection, DIM * 2)


@pytest.mark.parametrize("name", ["Bad", "x; drop table y", "", "a" * 41, "1abc"])
def test_collection_names_are_validated(name: str) -> None:
    with pytest.raises(ValueError):
        validate_collection(name)


def test_replacing_a_document_swaps_all_its_chunks(store: Store, collection: str) -> None:
    store.replace_document(collection, record("a", 3), [row("a", i, unit(1, i)) for i in range(3)])
    store.replace_document(collection, record("a", 2), [row("a", i, unit(1, i)) for i in range(2)])
    assert [r["chunk_index"] for r in store.chunks(collection, "a")] == [0, 1]


def test_concurrent_replacements_of_one_document_never_duplicate_it(
    store: Store, collection: str
) -> None:
    def write() -> None:
        store.replace_document(
            collection, record("a", 5), [row("a", i, unit(1, i)) for i in range(5)]
        )

    threads = [threading.Thread(target=write) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [r["chunk_index"] for r in store.chunks(collection)] == [0, 1, 2, 3, 4]


def test_search_ranks_by_cosine_and_breaks_ties_by_title(store: Store, collection: str) -> None:
    same = unit(1, 1)
    store.replace_document(collection, record("twin_b", 1), [row("twin_b", 0, same)])
    store.replace_document(collection, record("twin_a", 1), [row("twin_a", 0, same)])
    store.replace_document(collection, record("far", 1), [row("far", 0, unit(0, 0, 1))])
    hits = store.search(collection, same, 3)
    assert [h.doc_id for h in hits] == ["twin_a", "twin_b", "far"]
    assert hits[0].score == pytest.approx(1.0, abs=1e-5)


def test_a_filtered_search_returns_k_rows_even_when_the_match_is_rare(
    store: Store, collection: str
) -> None:
    rng = np.random.default_rng(0)
    rows = [row("bulk", i, unit(*rng.normal(size=DIM)), model="Common") for i in range(400)]
    rows += [row("bulk", 400 + i, unit(*rng.normal(size=DIM)), model="Rare 1") for i in range(5)]
    store.replace_document(collection, record("bulk", len(rows)), rows)
    hits = store.search(collection, unit(1), 5, where=SearchFilter(model="rare 1"))
    assert len(hits) == 5 and {h.model for h in hits} == {"Rare 1"}


def test_a_selective_filter_is_searched_exactly_and_a_broad_one_through_hnsw(
    store: Store, collection: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(1)
    vectors = [unit(*rng.normal(size=DIM)) for _ in range(300)]
    rows = [row("bulk", i, v, model="Common" if i % 10 else "Tenth") for i, v in enumerate(vectors)]
    store.replace_document(collection, record("bulk", len(rows)), rows)
    query = unit(1, 1)
    tenth = [i for i in range(300) if i % 10 == 0]
    exact = sorted(tenth, key=lambda i: -float(np.dot(vectors[i], query)))[:5]

    def top(model: str) -> list[int]:
        hits = store.search(collection, query, 5, where=SearchFilter(model=model))
        return [h.chunk_index for h in hits]

    assert top("tenth") == exact, "30 matching rows: exact distances"
    monkeypatch.setattr("chop_rag.store.search.EXACT_SCAN_ROWS", 10)
    assert len(top("tenth")) == 5, "over the limit: the iterative HNSW scan still returns k"
    assert len(top("common")) == 5


def test_filter_values_are_parameters_not_sql(store: Store, collection: str) -> None:
    store.replace_document(collection, record("a", 1), [row("a", 0, unit(1), model="M")])
    hostile = SearchFilter(model="x' OR '1'='1", category="'; DROP TABLE chop_llm_cache; --")
    assert store.search(collection, unit(1), 3, where=hostile) == []
    assert store.collection_exists(collection)


def test_a_model_boost_lifts_that_models_chunks(store: Store, collection: str) -> None:
    store.replace_document(collection, record("a", 1), [row("a", 0, unit(1, 0.1), model="S9")])
    store.replace_document(collection, record("b", 1), [row("b", 0, unit(1, 0.3), model="S10")])
    assert store.search(collection, unit(1), 1)[0].model == "S9"
    assert store.search(collection, unit(1), 1, boost_model="s10")[0].model == "S10"


def test_hybrid_search_finds_exact_terms(store: Store, collection: str) -> None:
    rows = [row("a", i, unit(1, i * 0.01)) for i in range(20)]
    rows[13].text = "Error code E4 means the compressor overheated."
    store.replace_document(collection, record("a", 20), rows)
    hits = store.search(collection, unit(0, 1), 3, query_text="what does E4 mean")
    assert hits[0].chunk_index == 13


def test_a_hybrid_boost_is_added_in_reciprocal_rank_points(store: Store, collection: str) -> None:
    named = row("a", 0, unit(1, 0.1))  # nearest vector, no word of the query
    other = row("b", 0, unit(1, 0.2))
    other.text = "Error code E4 means the compressor overheated."  # first in both rankings
    store.replace_document(collection, record("a", 1), [named])
    store.replace_document(collection, record("b", 1), [other])
    query = {"query_text": "what does E4 mean"}
    assert store.search(collection, unit(1), 1, **query)[0].doc_id == "b"
    first_place = 1 / 60  # one ranking's first place, as chop_rag.retrieval.retrieve.RRF_BOOST
    hits = store.search(collection, unit(1), 2, boost_doc_ids=["a"], boost=first_place, **query)
    assert hits[0].doc_id == "a"
    assert hits[0].score == pytest.approx(1 / 61 + first_place)


def test_deleting_a_document_removes_its_chunks(store: Store, collection: str) -> None:
    store.replace_document(collection, record("a", 1), [row("a", 0, unit(1))])
    assert store.delete_document(collection, "a")
    assert not store.delete_document(collection, "a")
    assert store.chunks(collection) == []


def test_the_embedded_server_is_sized_for_its_index_not_initdbs_defaults(tmp_path: Path) -> None:
    settings = server_settings()
    assert int(settings["shared_buffers"].removesuffix("MB")) >= 128
    (tmp_path / "postgresql.conf").write_text("port = 5432\n")
    write_server_settings(tmp_path, settings)
    write_server_settings(tmp_path, settings)
    assert (tmp_path / "postgresql.conf").read_text().count("include_if_exists") == 1
    assert "shared_buffers = " in (tmp_path / "chop.conf").read_text()

    fresh = embedded_database_url(tmp_path / "fresh")  # a server this test starts itself
    with psycopg.connect(fresh) as conn:
        row = conn.execute(
            "SELECT setting::bigint * 8192 / 1048576 FROM pg_settings WHERE name = 'shared_buffers'"
        ).fetchone()
    assert row is not None and f"{row[0]}MB" == settings["shared_buffers"]


# The tables as chop made them before content_hash was split into fingerprint (documents)
# and embedding_key (chunks).
OLD_SCHEMA = """
CREATE TABLE {documents} (doc_id text PRIMARY KEY, title text NOT NULL, source text NOT NULL,
    content_hash text NOT NULL, chunk_count int NOT NULL, metadata jsonb NOT NULL DEFAULT '{{}}',
    updated_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE {chunks} (id bigserial PRIMARY KEY,
    doc_id text NOT NULL REFERENCES {documents} (doc_id) ON DELETE CASCADE,
    doc_title text NOT NULL, chunk_index int NOT NULL, text text NOT NULL, prefix text NOT NULL,
    category text, nouns text[] NOT NULL DEFAULT '{{}}', model text, cnm_source text NOT NULL,
    continuity text NOT NULL, flags text[] NOT NULL DEFAULT '{{}}', content_hash text NOT NULL,
    char_start int NOT NULL, char_end int NOT NULL, metadata jsonb NOT NULL DEFAULT '{{}}',
    embedding vector(8) NOT NULL,
    tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', prefix || ' ' || text)) STORED,
    UNIQUE (doc_id, chunk_index));
INSERT INTO {documents} (doc_id, title, source, content_hash, chunk_count)
    VALUES ('old', 'OLD', 'old.txt', 'fp-old', 1);
INSERT INTO {chunks} (doc_id, doc_title, chunk_index, text, prefix, cnm_source, continuity,
    content_hash, char_start, char_end, embedding)
    VALUES ('old', 'OLD', 0, 'kept text', '', 'extracted', 'first', 'key-old', 0, 9,
            '[1,0,0,0,0,0,0,0]');
"""


def test_a_collection_made_before_the_column_renames_is_migrated_and_still_searchable(
    context: Context,
) -> None:
    name = context.collection
    url = store_for(context).url
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            sql.SQL(OLD_SCHEMA).format(
                documents=sql.Identifier(f"chop_{name}_documents"),
                chunks=sql.Identifier(f"chop_{name}_chunks"),
            )
        )
    store = Store(url, max_size=2)  # a fresh process: nothing known about the collection
    try:
        assert store.documents(name)["old"].fingerprint == "fp-old"
        assert [h.text for h in store.search(name, unit(1), 1)] == ["kept text"]
        assert store.embeddings_by_key(name, "old").keys() == {"key-old"}
        store.ensure_collection(name, DIM)  # the next ingest: idempotent, writes new rows
        store.replace_document(name, record("new", 1), [row("new", 0, unit(0, 1))])
        assert [r["embedding_key"] for r in store.chunks(name)] == ["new0", "key-old"]
        assert [h.text for h in store.search(name, unit(1), 2)] == ["kept text", "new 0"]
    finally:
        store.drop_collection(name)
        store.close()


def test_once_an_outage_outlasts_its_bound_every_call_fails_at_once_while_the_server_is_down() -> (
    None
):
    """A durable run's queued cache and checkpoint writes each waited for a pooled connection
    after the bound had passed, and ended the run 46 s into a 4 s bound (CI, issue 36's test)."""

    def unreachable() -> None:
        raise psycopg.OperationalError("connection refused")

    nowhere = Outage(bound_s=0.2, url="postgresql://127.0.0.1:1/none")  # port 1: refused
    with pytest.raises(DatabaseUnavailable, match=r"unreachable for 0 s \(last: connection"):
        nowhere.call(unreachable)
    asked: list[str] = []
    with pytest.raises(DatabaseUnavailable):
        nowhere.call(lambda: asked.append("work"))
    assert asked == [], "the server refused a fresh connection: the work is not tried"

    unknown = Outage(bound_s=0.2)  # no URL to ask: the call is tried, and its answer ends it
    with pytest.raises(DatabaseUnavailable):
        unknown.call(unreachable)
    assert unknown.call(lambda: "answer", asks_database=True) == "answer"
    assert unknown.started is None


def test_words_said_together_in_a_passage_or_next_to_each_other(
    store: Store, collection: str
) -> None:
    passages = [
        "Alarm sound: choose a sound and volume. Vibration: choose a pattern. Snooze: allow it.",
        "Show snooze option: get an option to snooze a notification for a later time.",
    ]
    rows = [replace(row("s9", i, unit(1, i)), text=text) for i, text in enumerate(passages)]
    store.replace_document(collection, record("s9", 2), rows)
    assert store.said_together(collection, ["s9"], "sound", ["snooze"])
    assert not store.said_together(collection, ["s9"], "sound", ["snooze"], within=3)
    assert store.said_together(collection, ["s9"], "notifications", ["snoozing"], within=3), (
        "words as the index stems them; a stop word between them still counts"
    )
    assert store.said_together(collection, ["s9"], "option", ["snooze"], within=1), "either order"
    assert not store.said_together(collection, ["other"], "sound", ["snooze"])
