"""The shapes every layer shares: a chunk as split from its document, its CNM signature, and a
document's identity card with the fields a user may set (checked by ``user_card``).

A leaf module: it imports nothing from chop, so the modules that build on these shapes
(chop_rag.labelling.cnm, chop_rag.labelling.profile, chop_rag.state) do not import each other to
name them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from typing_extensions import TypedDict


class CNM(TypedDict):
    category: str | None
    nouns: list[str]
    model: str | None


class Chunk(TypedDict):
    """A chunk as split from its document, before CHOP labels it."""

    doc_id: str
    doc_title: str
    index: int
    text: str
    char_start: int
    char_end: int
    metadata: dict[str, Any]
    similarity_to_previous: float | None  # gate signal: cosine above the document's background


class Identity(TypedDict, total=False):
    """What tells a document apart from its near-duplicates, as stored in its metadata; every
    field may be missing."""

    entity: str  # brand or company: "Best Buy Co., Inc."
    aliases: list[str]  # other names of the entity: "Best Buy", "MGM"
    tickers: list[str]  # stock symbols, written in capitals: "BBY"
    filed_as: str  # the company word of the file name: "BESTBUY" of BESTBUY_2023_10K.pdf
    model: str  # product model with its variant: "Galaxy Note 10+" (never a filing's label)
    variants: list[str]  # the family's others a manual also covers: "Galaxy S10e", "Galaxy S10+"
    kind: str  # "user manual", "10-K", "10-Q", "8-K", "earnings release", "annual report"
    fiscal_year: int  # the year's name as the filing gives it ("fiscal 2022")
    fiscal_quarter: int  # 1-4 for quarterly documents
    period_end: str  # ISO date the reported period ends
    date: str  # ISO date of the report or event (8-K, press release)
    edition: str
    authoritative: bool  # set by a user: where documents disagree, this one wins
    sources: dict[str, str]  # field -> where it was found: file name, title, text, user, llm


USER_FIELDS = ("entity", "aliases", "tickers", "model", "variants", "kind", "fiscal_year",
               "fiscal_quarter", "period_end", "date", "edition", "authoritative")  # fmt: skip
KINDS = ("10-K", "10-Q", "8-K", "20-F", "earnings release", "annual report", "user manual")
PERIODIC_KINDS = {"10-K", "10-Q", "20-F", "earnings release", "annual report"}
FILING_KINDS = PERIODIC_KINDS | {"8-K"}
ANNUAL_KINDS = {"10-K", "20-F", "annual report"}  # the reference report of a fiscal year


def user_card(values: Mapping[str, Any]) -> Identity:
    """Fields a user set (sidecar file or ``--meta``), checked and typed."""
    card = Identity(sources={})
    for key, value in values.items():
        if key not in USER_FIELDS:
            raise ValueError(f"unknown identity field {key!r} (known: {', '.join(USER_FIELDS)})")
        if key in ("fiscal_year", "fiscal_quarter"):
            try:
                value = int(value)
            except (TypeError, ValueError):
                raise ValueError(
                    f"identity field {key!r} must be a whole number, not {value!r}"
                ) from None
        elif key in ("aliases", "tickers", "variants"):
            value = [str(v) for v in value] if isinstance(value, list) else str(value).split(",")
        elif key == "authoritative":
            value = truth(value, key)
        else:
            value = str(value)
        card[key] = value  # type: ignore[literal-required]
        card["sources"][key] = "user"
    return card


_TRUE, _FALSE = ("true", "yes", "1"), ("false", "no", "0")


def truth(value: Any, key: str) -> bool:
    """A yes/no field as a user writes it: a JSON boolean, or true/false, yes/no, 1/0."""
    if isinstance(value, bool):
        return value
    if str(value).strip().lower() in _TRUE + _FALSE:
        return str(value).strip().lower() in _TRUE
    raise ValueError(f"identity field {key!r} must be true or false, not {value!r}")


Plain = TypeVar("Plain")


def plain_copy(kind: type[Plain], record: object, **given: Any) -> Plain:
    """The TypedDict ``kind`` filled from ``record``: each key from ``given``, else from the
    record's attribute of that name (a tuple or list copied as a list, as JSON keeps it).
    The graphs' state keeps records (a Resolution, a retrieved chunk, a conversation's turn)
    as plain values; one copy of the fields, in the order ``kind`` lists them."""
    values: dict[str, Any] = {}
    for key in kind.__annotations__:
        if key in given:
            values[key] = given[key]
        elif hasattr(record, key):
            value = getattr(record, key)
            values[key] = list(value) if isinstance(value, tuple | list) else value
        elif key in getattr(kind, "__required_keys__", ()):
            raise TypeError(f"{kind.__name__} needs {key!r}: {type(record).__name__} has none")
    return cast(Plain, values)
