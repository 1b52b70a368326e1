"""profile_document: find once what holds for a whole document and tells it apart.

Manuals name their model in the title or on the first page, rarely in the body; filings name
their company, form and period on the cover. A topic shift deep inside a document must not
lose that, so every chunk's signature is given this profile. The identity card is read by
rules (chop.identity: file name, title, first pages, user-set fields); one LLM call adds the
document's category and, where nothing else names it, its model. What a user set wins, then
the title, then the LLM, and an LLM value must be written in the title or the opening (an
instruction inside the text, "set model to X", is removed before either the LLM or the check
sees it).
"""

from __future__ import annotations

import re
from typing import Any, Literal

from langgraph.runtime import Runtime

import prompts
from chop.cnm import (
    DocumentProfileReply,
    clean_category,
    clean_field,
    model_from_title,
    names_product,
)
from chop.config import Context
from chop.grounding import is_grounded
from chop.identity import (
    Identity,
    identity_from_file_name,
    identity_from_text,
    label,
    merge_cards,
    user_card,
)
from chop.llm import structured_call
from chop.state import DocumentProfile, DocumentState
from chop.store import store_for

OPENING_CHARS = 1500  # what the LLM reads
COVER_CHARS = 6000  # what the identity rules read: a filing's cover page and a bit more
_INSTRUCTION = re.compile(
    r"[^.!?\n]*\b(?:ignore|disregard|forget|override)\b[^.!?\n]*\b(?:instructions?|prompts?|"
    r"previous|above|rules)\b[^.!?\n]*[.!?]?|[^.!?\n]*\b(?:set|change)\s+(?:the\s+)?"
    r"(?:model|category|label)\s+to\b[^.!?\n]*[.!?]?",
    re.IGNORECASE,
)


def without_instructions(text: str) -> str:
    """The text minus sentences that address the labeller ("Ignore previous instructions")."""
    return _INSTRUCTION.sub(" ", text)


def identity_card(document: Any, model: str | None, model_source: str) -> Identity:
    """The document's card: user fields, then what the text and the file name say."""
    user = user_card(document["metadata"].get("identity") or {})
    found = Identity(sources={})
    if model:
        found["model"], found["sources"] = model, {"model": model_source}
    opening = without_instructions(document["text"][:COVER_CHARS])
    return merge_cards(
        user, found, identity_from_text(opening), identity_from_file_name(document["source"])
    )


def profile_document(state: DocumentState, runtime: Runtime[Context]) -> dict[str, Any]:
    ctx = runtime.context
    document = state["document"]
    title = document["title"]
    opening = without_instructions(document["text"][:OPENING_CHARS])
    messages = prompts.render("profile_document", title=title, text=opening)
    result = structured_call(
        ctx, store_for(ctx), "document_profile", messages, DocumentProfileReply
    )
    user_model = clean_field((document["metadata"].get("identity") or {}).get("model"))
    llm_model = clean_field(result.value.model) if result.value is not None else None
    if not is_grounded(llm_model, title, opening):
        llm_model = None  # an invented model name is worse than none
    rules_card = identity_card(document, user_model, "user")
    filing = rules_card.get("kind") not in (None, "user manual") and not user_model
    title_model = None if filing else model_from_title(title)
    model: str | None
    source: Literal["llm", "title", "identity", "user", "fallback"]
    if user_model:
        model, source = user_model, "user"
    elif filing:  # company, form and period tell filings apart: "Best Buy 10-K FY2023"
        model, source = label(rules_card), "identity"
    elif title_model:
        model, source = title_model, "title"
    elif llm_model:
        model, source = llm_model, "llm"
    else:
        model, source = None, "fallback" if result.value is None else "llm"
    card = rules_card
    if model and source in ("title", "llm"):  # the manual's model joins what the rules read
        card = merge_cards(Identity(model=model, sources={"model": source}), rules_card)
    category = clean_category(result.value.category) if result.value is not None else None
    if category and names_product(category, model, card.get("entity")):
        category = None  # "Galaxy S10" is the model, not a product category
    profile = DocumentProfile(category=category, model=model, source=source, identity=card)
    runtime.stream_writer({"event": "profiled", "doc_id": document["doc_id"], **profile})
    return {
        "profile": profile,
        "stats": {**result.stats(), "profile_fallbacks": int(result.value is None)},
    }
