"""profile_document: find once what holds for a whole document and tells it apart.

One LLM call reads the document's title and opening for its category and, where nothing else
names it, its model; chop_rag.labelling.profile decides the profile from that reply and the rules
(user-set fields, the title, the identity card read from the file name and the first pages). A
filing whose card the rules complete is profiled without the call
(chop_rag.labelling.profile.needs_llm_profile).
"""

from __future__ import annotations

from typing import Any

from langgraph.config import get_config
from langgraph.runtime import Runtime

from chop_rag import prompts
from chop_rag.config import Context
from chop_rag.labelling.cnm import DocumentProfileReply
from chop_rag.labelling.profile import (
    document_profile,
    instructions_note,
    llm_opening,
    needs_llm_profile,
)
from chop_rag.models.llm import structured_call
from chop_rag.reading.allowed import refuse_documents_outside, run_folders
from chop_rag.reading.documents import Problem, SourceDocument
from chop_rag.state import DocumentState
from chop_rag.store import store_for


def profile_document(state: DocumentState, runtime: Runtime[Context]) -> dict[str, Any]:
    ctx = runtime.context
    document = state["document"]
    if (folders := run_folders(get_config())) is not None:  # a server run's Send straight here
        refuse_documents_outside([document], folders)
    if not needs_llm_profile(document):
        return profiled(document, None, runtime, {"profile_calls_skipped": 1.0})
    messages = prompts.render(
        "profile_document", title=document["title"], text=llm_opening(document)
    )
    result = structured_call(
        ctx, store_for(ctx), "document_profile", messages, DocumentProfileReply
    )
    if result.value is None:  # reported like every other failed LLM task
        runtime.stream_writer(
            {"event": "llm_failed", "task": "document_profile", "error": result.error}
        )
    stats = {**result.stats(), "profile_fallbacks": float(result.value is None)}
    made = profiled(document, result.value, runtime, stats, result.progress())
    return {**made, "stage_spans": result.spans}


def profiled(
    document: SourceDocument,
    reply: DocumentProfileReply | None,
    runtime: Runtime[Context],
    stats: dict[str, float],
    calls: dict[str, int] | None = None,
) -> dict[str, Any]:
    """The profile from the rules and ``reply``, its warnings said and streamed; the event
    carries the LLM ``calls`` the profile took (the CLI counts them with the labels')."""
    profile = document_profile(document, reply)
    warnings: list[Problem] = []
    if note := instructions_note(profile):  # not followed; said once per document
        warnings.append(Problem(source=document["source"], reason=note))
        runtime.stream_writer({"event": "warning", **warnings[0]})
    runtime.stream_writer(
        {"event": "profiled", "doc_id": document["doc_id"], **profile, **(calls or {})}
    )
    return {
        "profile": profile,
        "warnings": warnings,
        "stats": stats,
    }
