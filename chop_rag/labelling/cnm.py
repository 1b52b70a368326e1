"""The CNM signature {category, nouns, model}: its JSON schemas, validation and the prefix.
What a chunk's signature may say given its document (heading_cnm: read from the headings;
checked_cnm: an LLM's held to the document) is chop_rag.labelling.profile's.

``*Reply`` classes are what the LLM must answer (held to them by chop_rag.models.llm); a graph's
result is an ``*Output`` (chop_rag.state).

Field lengths are capped in the schema (so a constrained decoder cannot run away mid-string)
and every value is cleaned before it is stored or embedded: control characters, markup and
anything that is not a plain product word are removed.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Annotated

from pydantic import BaseModel, Field, StringConstraints

from chop_rag.text.grounding import is_grounded
from chop_rag.types import CNM, Chunk

FIELD_CHARS = 60
_not_allowed = re.compile(r"[^\w\s\-+./&(),'#]")
_space = re.compile(r"\s+")

ShortText = Annotated[str, StringConstraints(max_length=FIELD_CHARS)]


class CNMReply(BaseModel):
    """What the LLM must return for a chunk (the paper's strict JSON)."""

    category: ShortText = Field(description="broad product family or document kind")
    nouns: list[ShortText] = Field(min_length=1, max_length=2, description="1-2 key nouns")
    model: ShortText | None = Field(description="product model or series, or null")


class DocumentProfileReply(BaseModel):
    """What is stable across a whole document: found once, given to every chunk's extraction;
    and, read in the same call, what its opening is about (the first chunk's nouns)."""

    category: ShortText
    model: ShortText | None
    nouns: list[ShortText] = Field(max_length=2, description="what the opening explains")


class ContinuityReply(BaseModel):
    same_topic: bool


# pydantic takes the bases' fields from the last base to the first: same_topic comes first.
class JudgedCNMReply(CNMReply, ContinuityReply):
    """The judgment and the next chunk's CNM in one call (Context.joint_extraction)."""


def clean_field(value: str | None) -> str | None:
    """A safe, short, single-line field value; None when nothing meaningful is left."""
    if value is None:
        return None
    text = unicodedata.normalize("NFKC", value)
    # control characters go; a line break or tab still separates words
    text = "".join(ch if ch.isprintable() else " " if ch.isspace() else "" for ch in text)
    text = _space.sub(" ", _not_allowed.sub(" ", text)).strip(" -.,'")
    if not text or text.lower() in {"null", "none", "n/a", "unknown"}:
        return None
    return text[:FIELD_CHARS].strip()


GENERIC_CATEGORIES = {
    "technical document", "document", "manual", "user manual", "guide", "product manual",
    "user guide", "technical", "documentation", "text",
}  # fmt: skip
NOUN_WORDS = 5


def clean_category(value: str | None) -> str | None:
    """A category that names a product family; "document" or "manual" says nothing."""
    category = clean_field(value)
    return None if category is None or category.lower() in GENERIC_CATEGORIES else category


def clean_noun(value: str | None) -> str | None:
    """A short noun phrase: a long run-on sentence is cut to its first words."""
    noun = clean_field(value)
    return " ".join(noun.split()[:NOUN_WORDS]) if noun else None


def make_cnm(category: str | None, nouns: list[str] | None, model: str | None) -> CNM:
    cleaned = [n for n in (clean_noun(x) for x in (nouns or [])) if n]
    unique = list(dict.fromkeys(cleaned))[:2]
    return CNM(category=clean_category(category), nouns=unique, model=clean_field(model))


_generic_title_words = re.compile(
    r"\b(user|owner'?s?|operating|quick[- ]start|installation|service|reference)?\s*"
    r"(e-?manual|manual|guide|handbook|instructions?|documentation)\b",
    re.IGNORECASE,
)
_contents_words = re.compile(r"\b((table of )?contents|index)\b", re.IGNORECASE)
_corpus_words = re.compile(r"\b(corpus|e-?manual|manual|guide)\b", re.IGNORECASE)


def name_in_title(title: str) -> str | None:
    """The title minus words like "User Manual" or a data set's "corpus": what may name the
    product ("Galaxy Tab S6 User Manual" -> "Galaxy Tab S6"); None when nothing is left.
    Whether it names a product is chop_rag.labelling.profile's to say."""
    return clean_field(_corpus_words.sub(" ", _generic_title_words.sub(" ", title)))


def names_document_kind(noun: str) -> bool:
    """Whether ``noun`` only says what any document has ("User Guide", "Table of Contents"),
    not what this text is about."""
    return not _contents_words.sub(" ", _generic_title_words.sub(" ", noun)).strip()


def names_product(text: str, *names: str | None) -> bool:
    """Whether ``text`` only repeats a product name or title ("Galaxy S10", "S10")."""
    return any(is_grounded(text, name) for name in names if name)


def drop_product_names(cnm: CNM, *, document_model: str | None, title: str) -> CNM:
    """A category that merely repeats a model name, or a noun that repeats a model name, the
    category or the title, says nothing about the topic: "Galaxy S10 | Galaxy S10 | ..." only
    doubles the model. A category found in the title is kept: "remote" in "Samsung Smart TV
    remote" names the product family."""
    models = (cnm["model"], document_model)
    category = cnm["category"]
    if category and names_product(category, *models):
        category = None
    kept = [n for n in cnm["nouns"] if not names_product(n, *models, cnm["category"], title)]
    return CNM(category=category, nouns=kept, model=cnm["model"])


def heading_leaf(path: str) -> str:
    """The title a heading path ends in: "Settings > Connections > Wi-Fi" -> "Wi-Fi"."""
    return path.split(" > ")[-1]


def section_title(chunk: Chunk) -> str | None:
    """What the document's structure says a chunk is about: the titles of the sections it
    opens, else of the section it continues; None for a chunk under no heading."""
    paths = chunk["metadata"].get("headings") or [chunk["metadata"].get("heading") or ""]
    leaves = [clean for path in paths if (clean := heading_leaf(path).strip())]
    return ", ".join(leaves) or None


def prefix_line(cnm: CNM, title: str | None = None) -> str:
    """PFX(CNM): one readable line put before the chunk text that is embedded.

    The document is always named: by its model, or by its title where no model is known
    (a question names its document, and the chunk's embedding should say which it is)."""
    name = cnm["model"] or (clean_field(title) if title else None)
    parts = [name, cnm["category"], ", ".join(cnm["nouns"]) or None]
    return " | ".join(p for p in parts if p)


def embedded_text(cnm: CNM, chunk_text: str, title: str | None = None) -> str:
    prefix = prefix_line(cnm, title)
    return f"{prefix}\n{chunk_text}" if prefix else chunk_text
