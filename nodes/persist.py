"""persist: replace each document's chunks in pgvector, one transaction per document."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from langgraph.runtime import Runtime

from chop.config import Context
from chop.models import get_embedder
from chop.state import IngestState
from chop.store import ChunkRow, DocumentRecord, store_for
from nodes.embed import embedding_key


def persist(state: IngestState, runtime: Runtime[Context]) -> dict[str, Any]:
    ctx = runtime.context
    store = store_for(ctx)
    embedder_name = get_embedder(ctx).name
    rows: dict[str, list[ChunkRow]] = defaultdict(list)
    for item, vector in zip(state.get("prepared", []), state.get("embeddings", []), strict=True):
        chunk, cnm = item["chunk"], item["cnm"]
        rows[chunk["doc_id"]].append(
            ChunkRow(
                doc_id=chunk["doc_id"],
                doc_title=chunk["doc_title"],
                chunk_index=chunk["index"],
                text=chunk["text"],
                prefix=item["prefix"],
                category=cnm["category"],
                nouns=cnm["nouns"],
                model=cnm["model"],
                cnm_source=item["cnm_source"],
                continuity=item["decided_by"],
                flags=item["flags"],
                content_hash=embedding_key(item["embedded_text"], embedder_name),
                char_start=chunk["char_start"],
                char_end=chunk["char_end"],
                embedding=vector,
                metadata=chunk["metadata"],
            )
        )
    profiles = state.get("profiles", {})
    for document in state.get("pending", []):
        doc_rows = rows.get(document["doc_id"], [])
        record = DocumentRecord(
            doc_id=document["doc_id"],
            title=document["title"],
            source=document["source"],
            content_hash=document["metadata"]["fingerprint"],
            chunk_count=len(doc_rows),
            metadata={
                **{k: v for k, v in document["metadata"].items() if k != "fingerprint"},
                "profile": profiles.get(document["doc_id"]),
            },
        )
        store.replace_document(ctx.collection, record, doc_rows)
        runtime.stream_writer(
            {"event": "stored", "doc_id": document["doc_id"], "chunks": len(doc_rows)}
        )
    report = {**state.get("report", {}), "chunks_stored": sum(len(r) for r in rows.values())}
    return {"report": report}
