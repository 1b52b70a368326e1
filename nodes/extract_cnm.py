"""extract_cnm: FALSE branch: a new CNM {category, nouns, model} for a chunk that starts a topic.

Where the document's structure names the topic (the chunk opens a section under headings),
the signature is read from the heading path with no LLM call; a document's first chunk takes
the nouns the profile call read in the same opening; elsewhere the LLM extracts it as strict
JSON (the paper's path, and always in continuity_mode="llm").

(With Context.joint_extraction the judgment already returned one: it is checked the same way,
and no second call is made.)

The rules are chop_rag.labelling.cnm's (heading_cnm, checked_cnm): the document profile is given as
context and fills what the chunk does not say. A model name
is kept only if it is written in the chunk or the document title and is not a vaguer form of
the document's model; otherwise the document's model is used, so neither a hallucination nor
an instruction hidden in the text can relabel the chunk as another product. On failure the
chunk is flagged and prefix falls back to the previous chunk's CNM (or the document profile at
a document's start).
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from chop_rag import prompts
from chop_rag.config import Context
from chop_rag.labelling.cnm import CNM, CNMReply
from chop_rag.labelling.profile import checked_cnm, heading_cnm, opening_cnm
from chop_rag.models.llm import structured_call
from chop_rag.state import ChunkDecision, chunk_label
from chop_rag.store import store_for


def extract_cnm(state: ChunkDecision, runtime: Runtime[Context]) -> dict[str, Any]:
    ctx = runtime.context
    chunk, profile = state["chunk"], state["profile"]
    structured = heading_cnm(chunk, profile) if ctx.continuity_mode != "llm" else None
    if structured is not None:  # free: the headings name the topic (or only the document)
        runtime.stream_writer({"event": "decided", "same_topic": False})
        return {
            "labels": [chunk_label(state, structured, "heading")],
            "stats": {"cnm_from_headings": 1},
        }
    first = state.get("continuity") == "first" and ctx.continuity_mode != "llm"
    opening = opening_cnm(chunk, profile) if first else None
    if opening is not None:  # the profile call read this opening already
        runtime.stream_writer({"event": "decided", "same_topic": False})
        return {
            "labels": [chunk_label(state, opening, "profile")],
            "stats": {"cnm_from_profile": 1},
        }
    proposed = state.get("proposed_cnm")
    if proposed is not None:  # labelled by the joint judgment: checked here, no second call
        runtime.stream_writer({"event": "decided", "same_topic": False})
        cnm, rejected = checked_cnm(proposed, chunk, profile)
        return {
            "labels": [chunk_label(state, cnm, "extracted", rejected)],
            "stats": {"cnm_extracted": 1, "cnm_joint": 1},
        }
    messages = prompts.render(
        "extract_cnm",
        title=chunk["doc_title"],
        doc_category=profile.get("category") or "technical",
        text=chunk["text"],
    )
    result = structured_call(ctx, store_for(ctx), "cnm", messages, CNMReply)
    stats = result.stats()
    runtime.stream_writer({"event": "decided", "same_topic": False, **result.progress()})
    if result.value is None:
        runtime.stream_writer({"event": "llm_failed", "task": "cnm", "error": result.error})
        label = chunk_label(state, None, "fallback", [f"cnm_failed: {result.error}"])
        return {
            "labels": [label],
            "stats": {**stats, "cnm_fallbacks": 1},
            "stage_spans": result.spans,
        }
    raw = CNM(category=result.value.category, nouns=result.value.nouns, model=result.value.model)
    cnm, rejected = checked_cnm(raw, chunk, profile)
    label = chunk_label(state, cnm, "extracted", rejected)
    return {
        "labels": [label],
        "stats": {**stats, "cnm_extracted": 1},
        "stage_spans": result.spans,
    }
