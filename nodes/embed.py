"""embed: one batched pass over the document's prefixed chunks; stored vectors are reused.

A stored chunk whose embedded text (prefix + chunk) and embedder are unchanged keeps its
vector, so re-ingesting a changed document only pays for the chunks that changed.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from langgraph.runtime import Runtime

from chop.config import Context
from chop.models import get_embedder
from chop.state import DocumentState
from chop.store import embedding_key, store_for


def embed(state: DocumentState, runtime: Runtime[Context]) -> dict[str, Any]:
    ctx = runtime.context
    embedder = get_embedder(ctx)
    store = store_for(ctx)
    prepared = state.get("prepared", [])
    keys = [embedding_key(p["embedded_text"], embedder.name) for p in prepared]
    known: dict[str, np.ndarray] = store.embeddings_by_key(
        ctx.collection, state["document"]["doc_id"]
    )
    missing = [i for i, key in enumerate(keys) if key not in known]
    started = time.perf_counter()
    fresh = embedder.embed([prepared[i]["embedded_text"] for i in missing])
    seconds = time.perf_counter() - started
    vectors: list[list[float]] = [[] for _ in prepared]
    for row, i in enumerate(missing):
        vectors[i] = fresh[row].tolist()
    for i, key in enumerate(keys):
        if not vectors[i]:
            vectors[i] = known[key].tolist()
    runtime.stream_writer({"event": "embedded", "chunks": len(missing)})
    return {
        "embeddings": vectors,
        "stats": {
            "embedded": len(missing),
            "embeddings_reused": len(prepared) - len(missing),
            "embed_seconds": seconds,
        },
    }
