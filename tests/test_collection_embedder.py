"""Issue 27, item 5: a collection knows the embedder its vectors are from, and a durable
ingest's checkpoints do not outlive a run nobody runs again."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import psycopg
import pytest

from chop_rag.api import ask, ingest
from chop_rag.config import Context
from chop_rag.harness.sample_corpus import write_sample_corpus
from chop_rag.models.construction import use_models
from chop_rag.models.embedders import ApproximateTokenizer
from chop_rag.retrieval.retriever import ChopRetriever
from chop_rag.store import EmbedderMismatch, Store
from chop_rag.store.pgserver import resolve_database_url
from tests.fakes import ScriptedChatModel, sensible_reply
from tests.ingest_runs import (
    Crash,
    checkpointed_threads,
    crash_after,
    ingested,
    made_with,
    small,
    write_manual,
)

QUESTION = "How often do I clean the filter of the Coolwave 330C?"
MINILM = "all-MiniLM-L6-v2 (384 dimensions)"


class HashingEmbedder:
    """Another embedder: word hashes folded into ``dimension`` numbers (deterministic)."""

    def __init__(self, name: str, dimension: int) -> None:
        self.name, self.dimension = name, dimension
        self.tokenizer = ApproximateTokenizer()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        vectors = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                vectors[row, int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dimension] += 1
        return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)


@pytest.fixture
def minilm_collection(
    context: Context, store: Store, scripted: ScriptedChatModel, tmp_path: Path
) -> Context:
    return ingested(context, tmp_path / "manuals", write_sample_corpus)


def test_a_collection_records_its_embedder_and_the_settings_it_was_made_with(
    minilm_collection: Context, store: Store
) -> None:
    record = made_with(store, minilm_collection)
    assert (record.embedder, record.dimension) == ("all-MiniLM-L6-v2", 384)
    assert record.settings["chunk_tokens"] == minilm_collection.chunk_tokens
    assert record.settings["chat_model"].startswith("override:ScriptedChatModel")


@pytest.mark.parametrize("dimension", [64, 384], ids=["other-width", "same-width"])
def test_a_reader_or_writer_with_another_embedder_gets_one_error_naming_both(
    minilm_collection: Context, tmp_path: Path, dimension: int
) -> None:
    other = HashingEmbedder(f"hashing-{dimension}", dimension)
    named = re.escape(
        f"was embedded with {MINILM}; this run's embedder is hashing-{dimension} "
        f"({dimension} dimensions)"
    )
    with use_models(embedder=other):
        with pytest.raises(EmbedderMismatch, match=named):
            ask(QUESTION, context=minilm_collection)  # not pgvector's "different dimensions"
        with pytest.raises(EmbedderMismatch, match=named):
            ChopRetriever(context=minilm_collection).invoke(QUESTION)
        write_manual(tmp_path / "more", "new.md", "Coolwave 999Z Manual", "Filter. " * 30)
        with pytest.raises(EmbedderMismatch, match=named):
            ingest([tmp_path / "more"], context=minilm_collection)


def test_a_collection_made_before_the_record_is_adopted_on_first_open(
    minilm_collection: Context, store: Store
) -> None:
    url = resolve_database_url(minilm_collection.database_url, minilm_collection.data_dir)
    with psycopg.connect(url) as conn:  # as an earlier chop left it: tables, no record
        conn.execute(
            "DELETE FROM chop_collections WHERE name = %s", (minilm_collection.collection,)
        )
    store._embedder_checked.clear()  # a new process
    assert ask(QUESTION, context=minilm_collection)["sources"]
    assert made_with(store, minilm_collection).embedder == "all-MiniLM-L6-v2"
    with (
        use_models(embedder=HashingEmbedder("hashing-384", 384)),
        pytest.raises(EmbedderMismatch, match="hashing-384"),
    ):
        ask(QUESTION, context=minilm_collection)


def test_a_dropped_collection_forgets_its_embedder(
    minilm_collection: Context, store: Store
) -> None:
    store.drop_collection(minilm_collection.collection)
    assert store.collection_record(minilm_collection.collection) is None


@pytest.mark.usefixtures("store")
def test_checkpoints_of_a_run_killed_long_ago_are_deleted_by_the_next_durable_ingest(
    context: Context, scripted: ScriptedChatModel, tmp_path: Path
) -> None:
    ctx = small(context)
    old = write_manual(tmp_path / "old", "a.md", "Coolwave 225B Manual", "Filter. " * 40)
    recent = write_manual(tmp_path / "recent", "b.md", "Coolwave 330C Manual", "Tank. " * 40)
    for folder in (old.parent, recent.parent):
        crash_after(len(scripted.calls) + 1, scripted)
        with pytest.raises(Crash):
            ingest([folder], context=ctx, durable=True)
    killed = checkpointed_threads(ctx)
    assert len(killed) == 2
    old_thread = next(t for t in killed if t in {_thread(ctx, old.parent)})
    url = resolve_database_url(ctx.database_url, ctx.data_dir)
    with psycopg.connect(url) as conn:  # killed ten days ago, never run again
        conn.execute(
            "UPDATE checkpoints SET checkpoint = jsonb_set(checkpoint, '{ts}', "
            "to_jsonb((now() - interval '10 days')::text)) WHERE thread_id = %s",
            (old_thread,),
        )

    scripted.responder = sensible_reply
    third = write_manual(tmp_path / "third", "c.md", "Coolwave 410X Manual", "Fan. " * 40)
    ingest([third.parent], context=ctx, durable=True)
    left = checkpointed_threads(ctx)
    assert old_thread not in left, "the run abandoned ten days ago is deleted (7 days kept)"
    assert len(left) == 1, "the recent unfinished run stays resumable"


def _thread(ctx: Context, folder: Path) -> str:
    from chop_rag.api import default_thread_id, path_list

    return default_thread_id(ctx, {"paths": path_list(folder), "documents": [], "delete": []})


def test_retention_is_a_positive_number_of_days() -> None:
    with pytest.raises(ValueError, match="checkpoint_retention_days must be positive"):
        Context().with_overrides(checkpoint_retention_days=0)
