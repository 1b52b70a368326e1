"""The document profile, in one place: what holds across a whole document, how it is chosen, the
fallback when nothing is known, the CNM it gives a chunk, and how it is stored and read back.

Manuals name their model in the title or on the first page, rarely in the body; filings name
their company, form and period on the cover. A topic shift deep inside a document must not lose
that, so every chunk's signature is given this profile. The identity card is read by rules
(chop_rag.labelling.identity: file name, title, first pages, user-set fields); the LLM
(nodes/profile_document) adds the document's category and, where nothing else names it, its model.
What a user set wins, then the product the title, cover or file name names
(chop_rag.labelling.product), then the LLM, and an LLM value must be written in the title or the
opening (an instruction inside the text, "set model to X", is removed before either the LLM or the
check sees it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, NotRequired, cast

from typing_extensions import TypedDict

from chop_rag.labelling.cnm import (
    CNM,
    DocumentProfileReply,
    clean_category,
    clean_field,
    drop_product_names,
    heading_leaf,
    make_cnm,
    names_document_kind,
    names_product,
)
from chop_rag.labelling.identity import (
    identity_from_file_name,
    identity_from_text,
    label,
    merge_cards,
)
from chop_rag.labelling.product import Rejection, named_product, variants, weighed_model
from chop_rag.text.grounding import (
    described_text,
    instructions,
    is_grounded,
    is_written_label,
    tokens,
)
from chop_rag.types import FILING_KINDS, Chunk, Identity, user_card

ProfileSource = Literal["llm", "title", "identity", "user", "fallback"]
TOLD = "only in an instruction to the labeller"
UNWRITTEN = "none of its words is written in the text"
NOT_WRITTEN = "not in the title or text"
MAX_INSTRUCTIONS = 100  # kept with the profile: every chunk's check reads them
OPENING_CHARS = 1500  # what the LLM reads
COVER_CHARS = 6000  # what the identity rules read: a filing's cover page and a bit more
STORED_KEY = "profile"  # where the profile is kept in a stored document's metadata


class DocumentProfile(TypedDict):
    """What holds for the whole document, found once: its category, the name that tells it
    apart from its near-duplicates (the CNM's model: "Galaxy S10", "Best Buy 10-K FY2023")
    and its identity card (chop_rag.labelling.identity)."""

    category: str | None
    model: str | None
    source: ProfileSource
    identity: NotRequired[Identity]
    opening_nouns: NotRequired[list[str]]  # what the opening explains, read in the same call
    rejected: NotRequired[list[Rejection]]  # the LLM's values the text does not support
    instructions: NotRequired[list[str]]  # its sentences that address the labeller


NO_PROFILE = DocumentProfile(category=None, model=None, source="fallback")


def llm_opening(document: Mapping[str, Any]) -> str:
    """What the LLM reads of a document to profile it: what describes its opening (no
    instruction, nothing a reader does not see)."""
    return described_text(document["text"][:OPENING_CHARS])


def identity_card(document: Mapping[str, Any], model: str | None, model_source: str) -> Identity:
    """The document's card: user fields, then what the text and the file name say."""
    user = user_card(document["metadata"].get("identity") or {})
    found = Identity(sources={})
    if model:
        found["model"], found["sources"] = model, {"model": model_source}
    opening = described_text(document["text"][:COVER_CHARS])
    return merge_cards(
        user, found, identity_from_text(opening), identity_from_file_name(document["source"])
    )


def needs_llm_profile(document: Mapping[str, Any]) -> bool:
    """Whether the LLM's reading of the opening can add to the profile. A filing whose card
    names its company, kind and period is told apart by that card (its label, e.g. "Best Buy
    10-K FY2023"), and its chunks' categories come from its headings: the call would only
    name the opening's topic, for a few chunks, at about 24 s of a 2-core machine per
    document (issue 25: 40 of FinanceBench dev's 48 ingest calls). A manual always needs it:
    its category comes from nowhere else."""
    user = document["metadata"].get("identity") or {}
    if user.get("model"):
        return True
    card = identity_card(document, None, "user")
    return not (
        card.get("kind") in FILING_KINDS
        and card.get("entity")
        and (card.get("fiscal_year") or card.get("period_end") or card.get("date"))
    )


def same_product(name: str, other: str) -> bool:
    """Whether two names are one product, one written more fully ("Coolwave" and "Coolwave
    410X"), as opposed to a sibling ("Coolwave 999Z")."""
    return is_grounded(name, other) or is_grounded(other, name)


def contradicts(name: str, document_name: str | None) -> bool:
    """Whether ``name`` is a sibling of the document's own name: a word shared (the brand or
    series), yet another product."""
    if not document_name or same_product(name, document_name):
        return False
    return bool(set(tokens(name)) & set(tokens(document_name)))


def checked_model(
    model: str | None, document_name: str | None, described: str, instructed: str, title: str
) -> tuple[str | None, Rejection | None]:
    """The LLM's ``model`` if the text supports it as a description and it does not
    contradict the document's name; else None and why."""
    if not model:
        return None, None
    if not is_grounded(model, title, described):
        why = TOLD if is_grounded(model, instructed) else NOT_WRITTEN
        return None, Rejection(field="model", value=model, reason=why)
    if contradicts(model, document_name):
        why = f"contradicts the document's name {document_name}"
        return None, Rejection(field="model", value=model, reason=why)
    return model, None


def document_profile(
    document: Mapping[str, Any], reply: DocumentProfileReply | None
) -> DocumentProfile:
    """The profile of ``document`` from the rules and the LLM's ``reply`` (None: it failed).

    An LLM value counts only where the title or the opening states it as a description: one
    told by an instruction to the labeller, or a sibling of the name the title, the file name
    or the user gives, is rejected and recorded in ``rejected``."""
    title = document["title"]
    opening = document["text"][:OPENING_CHARS]
    told = instructions(document["text"])
    described, instructed = described_text(opening), " ".join(instructions(opening))
    rejected: list[Rejection] = []
    user_model = clean_field((document["metadata"].get("identity") or {}).get("model"))
    rules_card = identity_card(document, user_model, "user")
    filing = rules_card.get("kind") not in (None, "user manual") and not user_model
    whole = "" if filing or user_model else described_text(document["text"], told)
    title_model = None if filing or user_model else named_product(document, whole)
    document_name = user_model or title_model
    model_from_llm, rejection = checked_model(
        clean_field(reply.model) if reply is not None and not filing else None,
        document_name,
        described,
        instructed,
        title,
    )
    if rejection is not None:
        rejected.append(rejection)
    proposed = reply is not None and not filing and clean_field(reply.model)
    if not (filing or user_model or title_model) and proposed:
        model_from_llm, rejection = weighed_model(model_from_llm, whole)
        if rejection is not None:
            rejected.append(rejection)
    model: str | None
    source: ProfileSource
    if user_model:
        model, source = user_model, "user"
    elif filing:  # company, form and period tell filings apart: "Best Buy 10-K FY2023"
        model, source = label(rules_card), "identity"
    elif title_model:
        model, source = title_model, "title"
    elif model_from_llm:
        model, source = model_from_llm, "llm"
    else:
        model, source = None, "fallback" if reply is None else "llm"
    card = rules_card
    if model and source in ("title", "llm"):  # the manual's model joins what the rules read
        found = Identity(model=model, sources={"model": source})
        if family := variants(model, whole):  # "Galaxy S10e", "Galaxy S10+" of the S10's
            found["variants"], found["sources"]["variants"] = family, "text"
        card = merge_cards(found, rules_card)
    category = clean_category(reply.category) if reply is not None else None
    if category and names_product(category, model, card.get("entity")):
        category = None  # "Galaxy S10" is the model, not a product category
    # the document's category is what it is about, so the document writes it somewhere
    if category and not is_written_label(category, f"{title} {whole or described}", instructed):
        why = TOLD if is_grounded(category, instructed) else UNWRITTEN
        rejected.append(Rejection(field="category", value=category, reason=why))
        category = None
    profile = DocumentProfile(category=category, model=model, source=source, identity=card)
    if reply is not None:  # a noun like "User Guide" says nothing of the opening's topic
        nouns = [noun for noun in reply.nouns if not names_document_kind(noun)]
        for noun in make_cnm(None, nouns, None)["nouns"]:
            if is_written_label(noun, f"{title} {described}", instructed):
                profile.setdefault("opening_nouns", []).append(noun)
            else:
                why = TOLD if is_grounded(noun, instructed) else UNWRITTEN
                rejected.append(Rejection(field="nouns", value=noun, reason=why))
    if rejected:
        profile["rejected"] = rejected
    if told:
        profile["instructions"] = told[:MAX_INSTRUCTIONS]
    return profile


def instructions_note(profile: DocumentProfile) -> str | None:
    """The warning a document whose text addresses the labeller gets on every ingest, whether
    it is labelled again or unchanged (None: it addresses nobody)."""
    told = profile.get("instructions")
    if not told:
        return None
    return (
        f"{len(told)} sentence(s) addressed to the labeller were not followed, "
        f"e.g. {told[0][:80]!r}"
    )


def profile_cnm(profile: DocumentProfile | None) -> CNM:
    """The signature a chunk gets from its document alone (no topic of its own known)."""
    profile = profile or NO_PROFILE
    return make_cnm(profile["category"], [], profile["model"])


def opening_cnm(chunk: Chunk, profile: DocumentProfile) -> CNM | None:
    """The signature of a document's first chunk from the profile call, which read the same
    opening: asking again would pay a second call for one text. None when the profile named
    no nouns or the chunk starts past what it read."""
    nouns = profile.get("opening_nouns") or []
    if not nouns or chunk["char_start"] >= OPENING_CHARS:
        return None
    cnm = make_cnm(profile["category"], nouns, profile["model"])
    cnm = drop_product_names(cnm, document_model=profile["model"], title=chunk["doc_title"])
    return cnm if cnm["nouns"] else None  # nouns that only named the product: ask the LLM


def stored_profile(metadata: Mapping[str, Any]) -> DocumentProfile:
    """The profile kept in a stored document's metadata (NO_PROFILE where none was kept)."""
    return cast(DocumentProfile, metadata.get(STORED_KEY) or NO_PROFILE)


NAMED_SOURCES = ("title", "user", "identity")  # a document name the LLM did not give


def heading_cnm(chunk: Chunk, profile: DocumentProfile) -> CNM | None:
    """The signature the document's structure gives a chunk that opens a section: its nouns
    are the titles of the sections it covers, its category the sections above them
    ("Settings / Connections"), else the document's; the model is the document's."""
    headings = chunk["metadata"].get("headings") or []
    leaves = [heading_leaf(path) for path in headings]
    if not leaves:
        return None
    ancestors = headings[0].split(" > ")[:-1]
    category = " / ".join(ancestors) if ancestors else profile.get("category")
    cnm = make_cnm(category, leaves, profile.get("model"))
    return drop_product_names(cnm, document_model=profile.get("model"), title=chunk["doc_title"])


def checked_cnm(raw: CNM, chunk: Chunk, profile: DocumentProfile) -> tuple[CNM, list[str]]:
    """Clean the LLM's CNM and hold it to what the chunk states as a description; returns it
    with one flag per value rejected ("rejected model 'X': ...").

    The model must be written in the chunk (outside its instructions to the labeller) or the
    title, and in a document whose title, file name or user names it, be that product (not a
    vaguer form, not another); the category is the profile's where it has one; a category or
    noun an instruction told is dropped."""
    cnm = make_cnm(raw["category"], raw["nouns"], raw["model"])
    text, title = chunk["text"], chunk["doc_title"]
    known = profile.get("instructions") or []  # the whole document's: a chunk may cut one
    described = described_text(text, known)
    instructed = " ".join(instructions(text, known))
    named = profile["model"] if profile.get("source") in NAMED_SOURCES else None
    flags: list[str] = []
    # another product of the document's line ("Coolwave 999Z" in the Coolwave 410X's) is not
    # this chunk's, however the text put it: the document's name is weighed on all its lines
    model, rejection = checked_model(cnm["model"], profile["model"], described, instructed, title)
    if rejection is not None and rejection["reason"] != NOT_WRITTEN:
        flags.append(f"rejected model {rejection['value']!r}: {rejection['reason']}")
    if model and named and not is_grounded(model, named):
        if not is_grounded(named, model):
            flags.append(f"rejected model {model!r}: the document is the {named}")
        model = None  # another product, or a fuller name of the document's ("Coolwave 225B")
    if model and is_grounded(model, profile["model"] or ""):
        model = None  # a vaguer form of the document's model ("Coolwave" for "Coolwave 225B")
    cnm["model"] = model or profile["model"]
    # The category is stable across a document: the profile's wins when there is one.
    category = cnm["category"]
    written = " ".join([title, described, *(chunk["metadata"].get("headings") or [])])
    supported = is_written_label(category, written, instructed)
    if category and not profile["category"] and not supported:
        why = TOLD if is_grounded(category, instructed) else UNWRITTEN
        flags.append(f"rejected category {category!r}: {why}")
        category = None
    cnm["category"] = profile["category"] or category
    kept = []
    for noun in cnm["nouns"]:
        if is_written_label(noun, written, instructed):
            kept.append(noun)
        else:
            why = TOLD if is_grounded(noun, instructed) else UNWRITTEN
            flags.append(f"rejected noun {noun!r}: {why}")
    cnm["nouns"] = kept
    checked = drop_product_names(cnm, document_model=profile["model"], title=title)
    return checked, flags
