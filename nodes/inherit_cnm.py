"""inherit_cnm: TRUE branch: the chunk keeps the previous chunk's CNM (resolved in prefix)."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from chop.config import Context
from chop.state import ChunkDecision, ChunkLabel


def inherit_cnm(state: ChunkDecision, runtime: Runtime[Context]) -> dict[str, Any]:
    chunk = state["chunk"]
    label = ChunkLabel(
        doc_id=chunk["doc_id"],
        index=chunk["index"],
        same_topic=True,
        decided_by=state["decided_by"],
        cnm=None,
        cnm_source="inherited",
        flags=[],
    )
    runtime.stream_writer({"event": "decided", "same_topic": True})
    return {"labels": [label], "stats": {"cnm_inherited": 1}}
