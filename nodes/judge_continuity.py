"""judge_continuity: does this chunk continue the previous chunk's topic (TRUE) or not (FALSE)?

Modes (Context.continuity_mode):
- "llm": the paper: the LLM judges every adjacent pair.
- "gate" (default): clear pairs are decided by cheap signals, only the ambiguous band goes to
  the LLM. Signals: the first chunk of a document; the document's own headings (a chunk under
  the same sections as the one before continues it, any other heading starts a new topic,
  which extract_cnm then labels from the heading path without an LLM); where there are no
  headings, the similarity of the two chunks' embeddings, relative to the document's
  background (above gate_high: same topic; below gate_low: a shift; unknown in very short
  documents: the LLM decides).
- "rules": the signals alone; the ambiguous band is split at its middle.
Every label records which path decided it. An LLM failure after retries counts as a topic
shift: a fresh extraction is the safe side (it can only cost a call, not mislabel a chunk).
With Context.joint_extraction the LLM also labels the chunk in the same call; extract_cnm then
checks that label instead of asking again.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from chop_rag import prompts
from chop_rag.config import Context
from chop_rag.labelling.cnm import CNM, ContinuityReply, JudgedCNMReply
from chop_rag.models.llm import structured_call
from chop_rag.reading.chunking import settled_by_structure
from chop_rag.state import Chunk, ChunkDecision
from chop_rag.store import store_for

CONTEXT_CHARS = 600  # the boundary decides; whole chunks would double the prompt


def tail(text: str, chars: int) -> str:
    """The last ``chars`` characters, starting at a word."""
    if len(text) <= chars:
        return text
    cut = text[-chars:]
    return cut[cut.find(" ") + 1 :] if " " in cut else cut


def rule_decision(chunk: Chunk, previous: Chunk | None, ctx: Context) -> tuple[bool, str] | None:
    """(same_topic, reason) when a cheap signal settles the pair, else None."""
    if previous is None or previous["doc_id"] != chunk["doc_id"]:
        return False, "first"
    if ctx.continuity_mode == "llm":
        return None
    headings = chunk["metadata"].get("headings") or []
    if settled_by_structure(headings, chunk["text"]):
        # the document's structure decides: same sections continue, others shift
        same = bool(headings) and headings == (previous["metadata"].get("headings") or [])
        return (True, "rule:same-heading") if same else (False, "rule:heading")
    similarity = chunk["similarity_to_previous"]
    if similarity is None:
        return None
    if similarity >= ctx.gate_high:
        return True, "rule:similar"
    if similarity < ctx.gate_low:
        return False, "rule:dissimilar"
    if ctx.continuity_mode == "rules":
        return similarity >= (ctx.gate_low + ctx.gate_high) / 2, "rule:midpoint"
    return None


def judge_continuity(state: ChunkDecision, runtime: Runtime[Context]) -> dict[str, Any]:
    ctx = runtime.context
    chunk, previous = state["chunk"], state.get("previous")
    decided = rule_decision(chunk, previous, ctx)
    if decided is not None:
        same_topic, reason = decided
        return {
            "same_topic": same_topic,
            "continuity": reason,
            "stats": {"continuity_rule": int(reason != "first")},
        }
    assert previous is not None
    schema: type[ContinuityReply]
    if ctx.joint_extraction:  # one call for the judgment and, on a shift, the chunk's CNM
        task, schema = "judged_cnm", JudgedCNMReply
        messages = prompts.render(
            "judge_and_extract",
            title=chunk["doc_title"],
            doc_category=state["profile"]["category"] or "technical",
            previous=tail(previous["text"], CONTEXT_CHARS),
            current=chunk["text"],
        )
    else:
        task, schema = "continuity", ContinuityReply
        messages = prompts.render(
            "continuity",
            title=chunk["doc_title"],
            previous=tail(previous["text"], CONTEXT_CHARS),
            current=chunk["text"][:CONTEXT_CHARS],
        )
    result = structured_call(ctx, store_for(ctx), task, messages, schema)
    stats = {**result.stats(), "continuity_llm": 1}
    runtime.stream_writer({"event": "llm", **result.progress()})
    if result.value is None:
        runtime.stream_writer({"event": "llm_failed", "task": task, "error": result.error})
        return {
            "same_topic": False,
            "continuity": "llm-fallback",
            "proposed_cnm": None,
            "stats": {**stats, "continuity_fallbacks": 1},
            "stage_spans": result.spans,
        }
    value = result.value
    proposed = None
    if isinstance(value, JudgedCNMReply) and not value.same_topic:  # checked by extract_cnm
        proposed = CNM(category=value.category, nouns=list(value.nouns), model=value.model)
    return {
        "same_topic": value.same_topic,
        "continuity": "llm",
        "proposed_cnm": proposed,
        "stats": stats,
        "stage_spans": result.spans,
    }
