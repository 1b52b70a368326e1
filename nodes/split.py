"""split: cut the document into chunks, in order, and measure adjacent similarity.

Where the document has headings, chunks follow its sections (Context.chunking="sections");
elsewhere, and in the paper's llm mode, they are token windows.

The similarity of each chunk to the one before it is the cheapest continuity signal; the gate
in judge_continuity reads it, so it is computed once here for the whole document, relative to
the document's background similarity (see chop_rag.reading.chunking.relative_adjacent_similarity).
"""

from __future__ import annotations

import time
from typing import Any

from langgraph.runtime import Runtime

from chop_rag.config import Context
from chop_rag.models.construction import get_embedder
from chop_rag.reading.chunking import (
    TextSpan,
    chunks_at,
    chunks_to_compare,
    sampled_relative_similarity,
    section_windows,
    settled_by_structure,
    token_windows,
)
from chop_rag.state import DocumentState


def split(state: DocumentState, runtime: Runtime[Context]) -> dict[str, Any]:
    ctx = runtime.context
    embedder = get_embedder(ctx)
    document = state["document"]
    text = document["text"]
    sections = [
        TextSpan(span["start"], span["end"])
        for span in document["spans"]
        if span["meta"].get("heading")
    ]
    if ctx.chunking == "sections" and ctx.continuity_mode != "llm" and sections:
        windows = section_windows(
            text, sections, embedder.tokenizer, ctx.chunk_tokens, ctx.chunk_overlap
        )
    else:
        windows = token_windows(text, embedder.tokenizer, ctx.chunk_tokens, ctx.chunk_overlap)
    chunks = chunks_at(document, windows)
    seconds = 0.0
    open_pairs = [
        i
        for i, chunk in enumerate(chunks[1:], start=1)
        if not settled_by_structure(chunk["metadata"].get("headings") or [], chunk["text"])
    ]
    if ctx.continuity_mode != "llm" and open_pairs:  # the gate needs their similarity
        indices = chunks_to_compare(open_pairs, len(chunks))
        started = time.perf_counter()
        vectors = embedder.embed([chunks[i]["text"] for i in indices])
        seconds = time.perf_counter() - started
        similarities = sampled_relative_similarity(vectors, indices, len(chunks))
        for chunk, similarity in zip(chunks, similarities, strict=True):
            chunk["similarity_to_previous"] = similarity
    runtime.stream_writer({"event": "split", "doc_id": document["doc_id"], "chunks": len(chunks)})
    return {"chunks": chunks, "stats": {"chunks": len(chunks), "embed_seconds": seconds}}
