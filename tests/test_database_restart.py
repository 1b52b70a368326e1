"""A database restart in the middle of an ingest: the run finishes or fails cleanly, and the
next run completes the collection without duplicates."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from chop_rag.api import ingest
from chop_rag.config import Context
from chop_rag.store import Store
from tests.database import ingest_through_a_restart
from tests.fakes import ScriptedChatModel

pytestmark = pytest.mark.skipif(
    bool(os.environ.get("CHOP_DATABASE_URL")), reason="restarts the embedded server only"
)


def test_ingest_survives_a_database_restart(
    context: Context, store: Store, scripted: ScriptedChatModel, tmp_path: Path
) -> None:
    folder = tmp_path / "corpus"
    ctx = context.with_overrides(continuity_mode="llm", chunk_tokens=60, chunk_overlap=10,
                                 use_cache=True)  # fmt: skip
    ingest_through_a_restart(folder, ctx, scripted)  # it may finish or fail cleanly, not hang

    final = ingest([folder], context=ctx)
    assert final["added"] + final["updated"] + final["unchanged"] == 3
    rows = store.chunks(ctx.collection)
    keys = [(r["doc_id"], r["chunk_index"]) for r in rows]
    assert len(keys) == len(set(keys)), "no duplicated chunks"
    per_doc = {r["doc_id"] for r in rows}
    assert len(per_doc) == 3
    for record in store.documents(ctx.collection).values():
        assert record.chunk_count == sum(1 for r in rows if r["doc_id"] == record.doc_id)
