"""What the documents' text tells of a question's words shaped like names: a brand, a code.

A word the question writes is looked up in the documents' text (``Listed``: the word as the
question writes it, lowercase → the documents whose text holds it; chop_rag.store's
documents_listing, asked once per question by chop_rag.retrieval.retrieve and the chat graph's
resolve_turn). chop_rag.questions.matching uses it to tell:
- a brand: a capitalised word right before a model number that no document holds ("Coolwave"
  of "Coolwave 330C" where only a "Breeze 330C" is stored) is another brand's product;
- a code: a word shaped like a model number that is no stored model's name but a document's
  text holds ("E2", "CH05", "4C": an error code, a part number, a setting) is what the manuals
  that list it are about; asked about a named model whose manual does not list it, it is not
  covered.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence

from chop_rag.labelling.cards import DocumentCard
from chop_rag.questions.facts import QuestionFacts
from chop_rag.text.names import line_words, name_key, name_keys, name_tokens
from chop_rag.text.words import FUNCTION_WORDS

# capitalised at the start of a question without being a brand: "Does S10 ...", "Is Note 10 ..."
SENTENCE_WORDS = FUNCTION_WORDS | {"i", "if", "is", "should"}


# what a document's text holds: a word as the question writes it (lowercase) -> the documents
Listed = Mapping[str, Collection[str]]


def written_before(question_parts: Sequence[str], key: str) -> str | None:
    """The token the question writes right before the run of its tokens that spells ``key``
    ("coolwave" before "330c" in "... of the Coolwave 330C?")."""
    for start in range(len(question_parts)):
        run = ""
        for end in range(start, len(question_parts)):
            run += question_parts[end]
            if run == key:
                return question_parts[start - 1] if start else None
            if not key.startswith(run):
                break
    return None


def branded(card: DocumentCard) -> str:
    """A manual's model with its brand: the stored model, or, when that is a bare number
    ("330C"), with the word its title writes before it ("Breeze 330C")."""
    model = card.product_model or ""
    if len(name_tokens(model)) > 1 or not card.title:
        return model
    before = written_before(name_tokens(card.title), name_key(model))
    if not before or before in SENTENCE_WORDS or any(ch.isdigit() for ch in before):
        return model
    written = re.search(rf"(?i)\b({re.escape(before)})\W+{re.escape(model)}\b", card.title)
    return f"{written.group(1)} {model}" if written else model


def foreign_brand(facts: QuestionFacts, key: str, model: str, listed: Listed | None) -> str | None:
    """The model as the question writes it ("Coolwave 330C") when the capitalised word right
    before the model number ``key`` is a brand no document holds: another product than the
    stored ``model`` ("Breeze 330C"). A brand a document holds ("Samsung" before "Galaxy S10")
    and the sentence's own words ("Does 330C ...") are not."""
    if listed is None:
        return None
    before = written_before(facts.name_parts, key)
    capitalised = {w.lower(): w for w in facts.capitalised}
    if (
        before is None
        or before not in capitalised
        or before in SENTENCE_WORDS
        or before in name_tokens(model)
        or before in listed
    ):
        return None
    written = re.search(rf"(?i)\b{re.escape(capitalised[before])}\W+(\w[\w+-]*)", facts.text)
    return f"{capitalised[before]} {written.group(1)}" if written else capitalised[before]


def listing_words(facts: QuestionFacts) -> list[str]:
    """The words of a question whose presence in the documents' text tells what they are
    (``Listed``): those shaped like a model number and the capitalised ones, lowercase."""
    return list(dict.fromkeys(w.lower() for w in (*facts.model_like, *facts.capitalised)))


def brands_of(models: Sequence[str]) -> set[str]:
    """The first words of the models' names: their brands or lines ("coolwave", "breeze")."""
    return {parts[0] for m in models if len(parts := name_tokens(m)) > 1}


def codes_written(facts: QuestionFacts, models: Sequence[str]) -> list[str]:
    """The words of the question shaped like a model number that are no part of a stored
    model's name (an error code, a part number, a setting: "E2", "CH05"; not "S9" of the
    "Galaxy S9+")."""
    keys = {key.rstrip("+") for m in models for key in name_keys(m)}
    return [w for w in facts.model_like if name_key(w).rstrip("+") not in keys]


def coded(
    facts: QuestionFacts,
    cards: Sequence[DocumentCard],
    candidates: list[str],
    model: str | None,
    listed: Listed,
) -> tuple[list[str], str | None, list[str]]:
    """(documents, not covered, why) once the codes the question writes are read as codes:
    the documents that list them (among ``candidates`` when it names a model); a code the
    named model's manual does not list, or no manual lists, is not covered. A model number
    written after a brand word ("Galaxy S30") stays a model (unknown, as before)."""
    stored = [c.product_model for c in cards if c.product_model]
    lines = line_words(stored)
    codes = [
        code
        for code in codes_written(facts, stored)
        if written_before(facts.name_parts, name_key(code)) not in lines
    ]
    meant = list(candidates)
    why: list[str] = []
    for code in codes:
        holders = set(listed.get(code.lower(), ()))
        if candidates:
            if not holders & set(candidates):
                return (
                    candidates,
                    f"{code} in the {model or 'named'} manual",
                    [f"{code} is listed by no document named"],
                )
            continue
        if not holders:
            continue  # no document lists it: an unknown model or code, as before
        everyone = {c.doc_id for c in cards}
        if holders != everyone:
            meant = [d for d in (meant or [c.doc_id for c in cards]) if d in holders]
        why.append(f"{code} is a code the documents list, not a model")
    return meant, None, why
