"""profile_document: find once what holds for a whole document (category, model).

Manuals name their model in the title or on the first page, rarely in the body: a topic shift
deep inside a manual must not lose it, so every chunk's extraction is given this profile.
"""

from __future__ import annotations

from typing import Any, Literal

from langgraph.runtime import Runtime

import prompts
from chop.cnm import (
    DocumentProfileOutput,
    clean_category,
    clean_field,
    model_from_title,
    names_product,
)
from chop.config import Context
from chop.grounding import is_grounded
from chop.llm import structured_call
from chop.state import DocumentProfile, DocumentState
from chop.store import store_for

OPENING_CHARS = 1500


def profile_document(state: DocumentState, runtime: Runtime[Context]) -> dict[str, Any]:
    ctx = runtime.context
    document = state["document"]
    title, opening = document["title"], document["text"][:OPENING_CHARS]
    messages = prompts.render("profile_document", title=title, text=opening)
    result = structured_call(
        ctx, store_for(ctx), "document_profile", messages, DocumentProfileOutput
    )
    if result.value is None:
        runtime.stream_writer({"event": "llm_failed", "task": "profile", "error": result.error})
        profile = DocumentProfile(category=None, model=model_from_title(title), source="fallback")
    else:
        model = clean_field(result.value.model)
        if not is_grounded(model, title, opening):
            model = None  # an invented model name is worse than none
        source: Literal["llm", "title"] = "llm"
        if model is None and (model := model_from_title(title)):
            source = "title"
        category = clean_category(result.value.category)
        if category and names_product(category, model):
            category = None  # "Galaxy S10" is the model, not a product category
        profile = DocumentProfile(category=category, model=model, source=source)
    runtime.stream_writer({"event": "profiled", "doc_id": document["doc_id"], **profile})
    return {
        "profile": profile,
        "stats": {
            "llm_calls": result.llm_calls,
            "llm_seconds": result.seconds,
            "cache_hits": int(result.cached),
            "profile_fallbacks": int(result.value is None),
            "llm_tasks": 1,
            "llm_failures": int(result.value is None),
        },
    }
