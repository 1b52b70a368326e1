"""load: read the given paths, and keep only documents that are new or changed."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from langgraph.config import get_config
from langgraph.runtime import Runtime
from langgraph.types import Overwrite

from chop_rag import prompts
from chop_rag.config import Context
from chop_rag.labelling.identity import input_meta
from chop_rag.labelling.profile import instructions_note, stored_profile
from chop_rag.models.construction import chat_model_identity, get_embedder
from chop_rag.models.embedders import embedder_prefixes
from chop_rag.reading.allowed import refuse_documents_outside, refuse_paths_outside, run_folders
from chop_rag.reading.documents import (
    Problem,
    SourceDocument,
    input_doc_ids,
    input_paths,
    source_documents,
)
from chop_rag.reading.loaders import load_paths
from chop_rag.stage_profile import Span, timed
from chop_rag.state import DocumentTask, IngestState
from chop_rag.store import store_for

LABELLING_VERSION = 4  # bump when code that shapes stored labels or prefixes changes
INGEST_PROMPTS = ("profile_document", "continuity", "judge_and_extract", "extract_cnm")


def fingerprint(document: SourceDocument, ctx: Context, embedder_name: str) -> str:
    """Changes when the document, any setting or prompt that shapes its stored chunks, or the
    labelling code changes: an edited prompt re-labels on the next ingest (unchanged LLM
    answers still come from the cache)."""
    settings = [
        LABELLING_VERSION,
        [prompts.template(name) for name in INGEST_PROMPTS],
        ctx.chunk_tokens,
        ctx.chunk_overlap,
        ctx.chunking,
        ctx.continuity_mode,
        ctx.gate_low,
        ctx.gate_high,
        ctx.joint_extraction,
        ctx.section_weight,
        chat_model_identity(ctx),
        embedder_name,
    ]
    identity = document["metadata"].get("identity") or {}  # fields a user set
    structure = [span["meta"] for span in document["spans"]]  # a better loader relabels
    payload = json.dumps(
        [document["title"], document["text"], structure, identity, settings], sort_keys=True
    )
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()


def collection_settings(ctx: Context) -> dict[str, Any]:
    """The model settings a new collection records beside its embedder (chop_collections),
    with the task prefixes its passages were embedded with (questions need the same model's)."""
    return {
        "embedder_prefixes": embedder_prefixes(get_embedder(ctx)),
        "chat_model": chat_model_identity(ctx),
        "chunk_tokens": ctx.chunk_tokens,
        "chunk_overlap": ctx.chunk_overlap,
        "chunking": ctx.chunking,
        "continuity_mode": ctx.continuity_mode,
        "section_weight": ctx.section_weight,
    }


def load(state: IngestState, runtime: Runtime[Context]) -> dict[str, Any]:
    ctx = runtime.context
    # Checked before anything is touched: a bad input is one clear error and changes nothing.
    paths = input_paths(state.get("paths"))
    documents = source_documents(state.get("documents"))
    to_delete = input_doc_ids(state.get("delete"))
    # A server run reads only under the deployment's folders, whichever way its paths came:
    # the input, a command's update or Send, a thread's state (chop_rag.reading.allowed).
    folders = run_folders(get_config())
    if folders is not None:
        refuse_paths_outside(paths, folders)
        refuse_documents_outside(documents, folders)
    store = store_for(ctx)
    embedder = get_embedder(ctx)
    store.ensure_collection(
        ctx.collection,
        embedder.dimension,
        embedder=embedder.name,
        settings=collection_settings(ctx),
    )

    spans: list[Span] = []
    with timed("parse", spans, children=True):  # PDF worker processes' CPU included
        loaded, problems = load_paths(paths, max_file_mb=ctx.max_file_mb, within=folders)
    parse_seconds = spans[0]["seconds"]
    by_id: dict[str, SourceDocument] = {}
    meta = input_meta(state.get("meta"))
    for document in [*loaded, *documents]:
        if meta:  # fields set for this run win over a sidecar file's
            identity = {**(document["metadata"].get("identity") or {}), **meta}
            document = {**document, "metadata": {**document["metadata"], "identity": identity}}
        if document["doc_id"] in by_id:
            problems.append(Problem(source=document["source"], reason="duplicate document id"))
        by_id[document["doc_id"]] = document

    deleted = [doc_id for doc_id in to_delete if store.delete_document(ctx.collection, doc_id)]
    stored = store.documents(ctx.collection)
    changed: list[DocumentTask] = []
    unchanged: list[str] = []
    for doc_id, document in by_id.items():
        printed = fingerprint(document, ctx, embedder.name)
        record = stored.get(doc_id)
        if record is not None and record.fingerprint == printed:
            unchanged.append(doc_id)
        else:
            changed.append(DocumentTask(document=document, fingerprint=printed))
    warnings = [
        Problem(source=d["source"], reason=note)
        for d in by_id.values()
        for note in d["metadata"].get("warnings", [])
    ]
    for doc_id in unchanged:  # said again while the document holds them (profile_document)
        if note := instructions_note(stored_profile(stored[doc_id].metadata)):
            warnings.append(Problem(source=by_id[doc_id]["source"], reason=note))
    for problem in problems:
        runtime.stream_writer({"event": "problem", **problem})
    for warning in warnings:
        runtime.stream_writer({"event": "warning", **warning})
    runtime.stream_writer(
        {"event": "loaded", "documents": len(changed), "unchanged": len(unchanged)}
    )
    # A thread may run many ingests: inputs are consumed and per-run tallies start afresh.
    return {
        "paths": [],
        "delete": [],
        "meta": {},
        "documents": [],
        "pending": changed,
        "stats": Overwrite({"parse_seconds": parse_seconds}),
        "stage_spans": Overwrite(spans),
        "problems": Overwrite(problems),
        "warnings": Overwrite(warnings),
        "unchanged": unchanged,
        "report": Overwrite(
            {
                "added": 0,  # counted by persist as each document is written
                "updated": 0,
                "unchanged": len(unchanged),
                "deleted": len(deleted),
                "chunks_stored": 0,
            }
        ),
    }
