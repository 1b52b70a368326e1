"""persist: replace the document's chunks in pgvector in one transaction.

Readers see the old version or the new one, never half of it; each document is stored as soon
as its own chunks are done, so a long run keeps what it finished.
"""

from __future__ import annotations

import time
from typing import Any

from langgraph.runtime import Runtime

from chop_rag.config import Context
from chop_rag.labelling.profile import STORED_KEY
from chop_rag.models.construction import get_embedder
from chop_rag.nodes.embed import vector_key
from chop_rag.state import DocumentState
from chop_rag.store import DocumentRecord, chunk_row, store_for

NEEDS_RELABEL = "needs-relabel:"


def llm_fallbacks(state: DocumentState) -> int:
    """How many of the document's labels (and its profile) are fallbacks for a failed LLM call."""
    profile = state.get("profile")
    # A failed profile call counts even when the title named the model: the category is
    # still the LLM's to give.
    failed = int(
        (profile is not None and profile["source"] == "fallback")
        or state.get("stats", {}).get("profile_fallbacks", 0) > 0
    )
    for item in state.get("prepared", []):
        failed += int(
            item["continuity"] == "llm-fallback"
            or any(flag.startswith("cnm_failed") for flag in item["flags"])
        )
    return failed


def persist(state: DocumentState, runtime: Runtime[Context]) -> dict[str, Any]:
    ctx = runtime.context
    embedder_name = get_embedder(ctx).name
    document = state["document"]
    rows = [
        chunk_row(
            item["chunk"],
            prefix=item["prefix"],
            cnm=item["cnm"],
            cnm_source=item["cnm_source"],
            continuity=item["continuity"],
            flags=item["flags"],
            embedding_key=vector_key(item, embedder_name, ctx.section_weight),
            embedding=vector,
        )
        for item, vector in zip(state.get("prepared", []), state.get("embeddings", []), strict=True)
    ]
    fallbacks = llm_fallbacks(state)
    fingerprint = state["fingerprint"]
    record = DocumentRecord(
        doc_id=document["doc_id"],
        title=document["title"],
        source=document["source"],
        # A label the LLM failed to give is not final: a fingerprint that never matches makes
        # the next ingest relabel the document (its good answers still come from the cache).
        fingerprint=f"{NEEDS_RELABEL}{fingerprint}" if fallbacks else fingerprint,
        chunk_count=len(rows),
        metadata={
            **document["metadata"],
            STORED_KEY: state.get("profile"),
            "llm_fallbacks": fallbacks,
        },
    )
    started = time.monotonic()
    replaced = store_for(ctx).replace_document(ctx.collection, record, rows)
    persist_seconds = time.monotonic() - started
    runtime.stream_writer({"event": "stored", "doc_id": document["doc_id"], "chunks": len(rows)})
    # added/updated are counted when written, so two runs storing one document agree
    report = {"chunks_stored": len(rows), "added": int(not replaced), "updated": int(replaced)}
    return {
        "report": report,
        "stats": {"documents_stored": 1, "persist_seconds": persist_seconds},
    }
