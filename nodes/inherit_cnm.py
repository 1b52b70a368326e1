"""inherit_cnm: TRUE branch: the chunk keeps the previous chunk's CNM (resolved in prefix)."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from chop_rag.config import Context
from chop_rag.state import ChunkDecision, chunk_label


def inherit_cnm(state: ChunkDecision, runtime: Runtime[Context]) -> dict[str, Any]:
    label = chunk_label(state, None, "inherited")
    runtime.stream_writer({"event": "decided", "same_topic": True})
    return {"labels": [label], "stats": {"cnm_inherited": 1}}
