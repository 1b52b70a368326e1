"""Documents as loaders hand them to the ingest graph."""

from __future__ import annotations

import hashlib
from typing import Any, TypedDict


class Span(TypedDict):
    """A labelled stretch of a document's text: a page, or the text under a heading."""

    start: int
    end: int
    meta: dict[str, Any]  # e.g. {"page": 3} or {"heading": "Cleaning > Filter"}


class SourceDocument(TypedDict):
    """One document: its stable id, its title (where the model name often lives), its text."""

    doc_id: str
    title: str
    source: str
    text: str
    metadata: dict[str, Any]
    spans: list[Span]


class Problem(TypedDict):
    """A file or document that was skipped, and why (one clear line each)."""

    source: str
    reason: str


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def make_document(
    doc_id: str,
    title: str,
    text: str,
    *,
    source: str | None = None,
    metadata: dict[str, Any] | None = None,
    spans: list[Span] | None = None,
) -> SourceDocument:
    return SourceDocument(
        doc_id=doc_id,
        title=title,
        source=source or doc_id,
        text=text,
        metadata=metadata or {},
        spans=spans or [],
    )


def span_meta_at(spans: list[Span], start: int, end: int) -> dict[str, Any]:
    """The metadata of the spans that overlap [start, end): pages as a list, the first heading,
    and the heading paths that cover a real share of the chunk ("headings", document order).

    A chunk often crosses a section boundary; "headings" keeps the sections it is mostly
    about (at least a quarter of its characters, or the largest one), at most three, so a
    heading-derived signature describes the chunk's content and not a last line it borrows.
    """
    pages: list[Any] = []
    heading: str | None = None
    covered: dict[str, int] = {}
    for span in spans:
        if span["start"] < end and start < span["end"]:
            meta = span["meta"]
            if "page" in meta and meta["page"] not in pages:
                pages.append(meta["page"])
            if meta.get("heading"):
                heading = heading or meta["heading"]
                overlap = min(end, span["end"]) - max(start, span["start"])
                covered[meta["heading"]] = covered.get(meta["heading"], 0) + overlap
    found: dict[str, Any] = {}
    if pages:
        found["pages"] = pages
    if heading:
        found["heading"] = heading
    if covered:
        largest = max(covered.values())
        share = max(1, (end - start) // 4)
        found["headings"] = [h for h, n in covered.items() if n >= share or n == largest][:3]
    return found
