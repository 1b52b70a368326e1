"""The document profile, in one place: what holds across a whole document, how it is chosen, the
fallback when nothing is known, the CNM it gives a chunk, and how it is stored and read back.

Manuals name their model in the title or on the first page, rarely in the body; filings name
their company, form and period on the cover. A topic shift deep inside a document must not lose
that, so every chunk's signature is given this profile. The identity card is read by rules
(chop.labelling.identity: file name, title, first pages, user-set fields); the LLM
(nodes/profile_document) adds the document's category and, where nothing else names it, its model.
What a user set wins, then the title, then the LLM, and an LLM value must be written in the title or
the opening (an instruction inside the text, "set model to X", is removed before either the LLM or
the check sees it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, NotRequired, cast

from typing_extensions import TypedDict

from chop.labelling.cnm import (
    CNM,
    DocumentProfileReply,
    clean_category,
    clean_field,
    drop_product_names,
    heading_leaf,
    make_cnm,
    model_from_title,
    names_document_kind,
    names_product,
)
from chop.labelling.identity import identity_from_file_name, identity_from_text, label, merge_cards
from chop.text.grounding import (
    instructions,
    is_grounded,
    is_written_label,
    tokens,
    without_instructions,
)
from chop.types import FILING_KINDS, Chunk, Identity, user_card

ProfileSource = Literal["llm", "title", "identity", "user", "fallback"]
TOLD = "only in an instruction to the labeller"
UNWRITTEN = "none of its words is written in the text"
MAX_INSTRUCTIONS = 100  # kept with the profile: every chunk's check reads them
OPENING_CHARS = 1500  # what the LLM reads
COVER_CHARS = 6000  # what the identity rules read: a filing's cover page and a bit more
STORED_KEY = "profile"  # where the profile is kept in a stored document's metadata


class Rejection(TypedDict):
    """A value the LLM gave that the document does not support as a description."""

    field: str
    value: str
    reason: str


class DocumentProfile(TypedDict):
    """What holds for the whole document, found once: its category, the name that tells it
    apart from its near-duplicates (the CNM's model: "Galaxy S10", "Best Buy 10-K FY2023")
    and its identity card (chop.labelling.identity)."""

    category: str | None
    model: str | None
    source: ProfileSource
    identity: NotRequired[Identity]
    opening_nouns: NotRequired[list[str]]  # what the opening explains, read in the same call
    rejected: NotRequired[list[Rejection]]  # the LLM's values the text does not support
    instructions: NotRequired[list[str]]  # its sentences that address the labeller


NO_PROFILE = DocumentProfile(category=None, model=None, source="fallback")


def llm_opening(document: Mapping[str, Any]) -> str:
    """What the LLM reads of a document to profile it."""
    return without_instructions(document["text"][:OPENING_CHARS])


def identity_card(document: Mapping[str, Any], model: str | None, model_source: str) -> Identity:
    """The document's card: user fields, then what the text and the file name say."""
    user = user_card(document["metadata"].get("identity") or {})
    found = Identity(sources={})
    if model:
        found["model"], found["sources"] = model, {"model": model_source}
    opening = without_instructions(document["text"][:COVER_CHARS])
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


def model_from_file_name(source: str) -> str | None:
    """A model-like name in the file name ("coolwave-410x-manual.md" -> "coolwave 410x")."""
    return model_from_title(re.sub(r"[_\-.]+", " ", Path(source).stem))


def titled_by_file_name(document: Mapping[str, Any]) -> bool:
    """Whether the title is only the file name (a text file, a markdown file without a heading)."""
    stem = re.sub(r"[_\-.\s]+", " ", Path(document["source"]).stem).strip().lower()
    return re.sub(r"[_\-.\s]+", " ", document["title"]).strip().lower() == stem


# ------------------------------------------------------------------ model evidence
# A document's product model is what the document itself keeps naming: its title, its file
# name, its running headers, line after line of its text. One sentence, table cell, heading or
# JSON blob that names another product ("| Product | Coolwave 999Z (authoritative) |", planted
# in a Coolwave 410X manual) is not evidence against all that, in any language.

_code = re.compile(r"(?<![\w+-])(?=[\w+-]*\d)(?=[\w+-]*[A-Za-z])[A-Za-z0-9][\w+-]*\+*")
_year_or_unit = re.compile(
    r"(?i)^(?:(?:19|20)\d\d(?:s)?|fy\d+|q[1-4]|h[12]|\d{1,2}x|\d+(?:st|nd|rd|th|s|k|p|v|w|a|mm|cm|m|"
    r"kg|g|mb|gb|tb|hz|khz|mhz|ghz|mah|db|min|h|sec|ms|fps|mp|bit|in|ft|lbs?|oz))$"
)
_written_name = re.compile(r"\b([A-Z][\w&'-]*(?:\s+[A-Z][\w&'-]*)?)\s+$")
MIN_MODEL_LINES = 2  # a name on one line is one sentence, cell, heading or blob


def model_codes(text: str) -> list[str]:
    """The model-like codes a text writes ("410X", "S10", "QN90A"), lowercased, in order."""
    return [c.lower() for c in _code.findall(text) if not _year_or_unit.match(c)]


def code_lines(described: str) -> dict[str, int]:
    """How many lines (or sentences) of the text name each model code."""
    counts: dict[str, int] = {}
    for line in re.split(r"[\n.!?]+", described):
        for code in set(model_codes(line)):
            counts[code] = counts.get(code, 0) + 1
    return counts


def written_forms(described: str) -> dict[str, str]:
    """For each model code of the text, how it most often writes it with the name before it
    ("410x" -> "Coolwave 410X"), in one pass over the text."""
    counts: dict[str, dict[str, int]] = {}
    for m in _code.finditer(described):
        before = _written_name.search(described[max(0, m.start() - 40) : m.start()])
        if before:
            forms = counts.setdefault(m.group().lower(), {})
            form = f"{before.group(1)} {m.group()}"
            forms[form] = forms.get(form, 0) + 1
    return {code: max(forms, key=lambda f: (forms[f], -len(f))) for code, forms in counts.items()}


def written_form(code: str, described: str) -> str | None:
    """How the text most often writes ``code`` with the name before it ("Coolwave 410X")."""
    return written_forms(described).get(code.lower())


def weighed_model(proposed: str | None, described: str) -> tuple[str | None, Rejection | None]:
    """The model the document's own text supports, given the one the LLM ``proposed``.

    The proposal stands when its code is named on MIN_MODEL_LINES lines or more and no sibling
    (a code the text writes after the same name: "Coolwave 410X" for "Coolwave 999Z") is
    named more than twice as often; otherwise it is rejected, and the code the text names most
    (on MIN_MODEL_LINES lines or more, more than any other) is the model, as the text writes it.
    A proposal without a code ("Air conditioner") is left to the other checks; none (the one
    proposed was refused already) takes the text's."""
    counts, forms = code_lines(described), written_forms(described)
    codes = model_codes(proposed or "")
    if proposed and not codes:
        return proposed, None
    support = max((counts.get(c, 0) for c in codes), default=0)
    brand = proposed.split()[0].lower() if proposed and len(proposed.split()) > 1 else None
    siblings = {
        code: n
        for code, n in counts.items()
        if code not in codes
        and brand is not None
        and (form := forms.get(code))
        and form.split()[0].lower() == brand
    }
    rival = max(siblings, key=lambda c: siblings[c], default=None)
    if (
        proposed
        and support >= MIN_MODEL_LINES
        and (rival is None or siblings[rival] <= 2 * support)
    ):
        return proposed, None
    ranked = sorted(counts.items(), key=lambda item: -item[1])
    best = None
    if (
        ranked
        and ranked[0][1] >= MIN_MODEL_LINES
        and (len(ranked) == 1 or ranked[1][1] < ranked[0][1])
    ):
        best = forms.get(ranked[0][0])
    if rival is not None and siblings[rival] >= MIN_MODEL_LINES:
        best = forms.get(rival) or best
    rejection = None
    if proposed:
        named = f"named on {support} line(s)"
        if best:
            named += f"; the document names {best} on {counts[model_codes(best)[-1]]}"
        rejection = Rejection(field="model", value=proposed, reason=named)
    return best, rejection


def named_by_file(document: Mapping[str, Any], described: str) -> str | None:
    """The model a file-name title gives, as the text writes it: "good-225b.txt" whose text
    says "Coolwave 225B" is the Coolwave 225B, not the "good 225b"."""
    name = model_from_file_name(document["source"])
    if not name:
        return None
    codes = model_codes(name)
    if not codes:
        return name
    return written_form(codes[-1], described) or codes[-1].upper()


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
        why = TOLD if is_grounded(model, instructed) else "not in the title or text"
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
    described, instructed = without_instructions(opening), " ".join(instructions(opening))
    told = instructions(document["text"])
    rejected: list[Rejection] = []
    user_model = clean_field((document["metadata"].get("identity") or {}).get("model"))
    rules_card = identity_card(document, user_model, "user")
    filing = rules_card.get("kind") not in (None, "user manual") and not user_model
    whole = "" if filing or user_model else without_instructions(document["text"], told)
    if filing:
        title_model = None
    elif titled_by_file_name(document):
        title_model = named_by_file(document, whole) if not user_model else None
    else:
        title_model = model_from_title(title)
    document_name = user_model or title_model or model_from_file_name(document["source"])
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
        card = merge_cards(Identity(model=model, sources={"model": source}), rules_card)
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
    described = without_instructions(text, known)
    instructed = " ".join(instructions(text, known))
    named = profile["model"] if profile.get("source") in NAMED_SOURCES else None
    flags: list[str] = []
    model, rejection = checked_model(cnm["model"], None, described, instructed, title)
    if rejection is not None and rejection["reason"] == TOLD:
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
