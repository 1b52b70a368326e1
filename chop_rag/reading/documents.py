"""Documents as loaders hand them to the ingest graph."""

from __future__ import annotations

import hashlib
import os
from typing import Any

from typing_extensions import TypedDict


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


class InvalidInput(ValueError):
    """A graph input that cannot be used; the message says which field and what it needs."""


class PathNotFound(FileNotFoundError):
    """``ingest`` was given paths of which none exists: nothing to index (``chop ingest`` exits
    1 for the same). A missing path beside existing ones is a problem in the report instead,
    as the CLI reports it and goes on."""

    def __init__(self, paths: list[str]) -> None:
        super().__init__(f"no such file or folder: {', '.join(paths)}")
        self.paths = paths


def missing_paths(paths: list[str]) -> list[str]:
    """The paths that do not exist, in order."""
    return [path for path in paths if not os.path.exists(path)]


def _string_list(name: str, value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, list | tuple):
        raise InvalidInput(f"{name!r} must be a list of strings, got {type(value).__name__}")
    if not all(isinstance(item, str) for item in value):
        raise InvalidInput(f"{name!r} must be a list of strings")
    if any("\x00" in item for item in value):  # no file name or stored id holds one
        raise InvalidInput(f"{name!r} may not contain a NUL character")
    return list(value)


def input_paths(value: Any) -> list[str]:
    """The ingest input's ``paths``: a list of file or folder names."""
    return _string_list("paths", value)


def input_doc_ids(value: Any) -> list[str]:
    """The ingest input's ``delete``: a list of doc_ids."""
    return _string_list("delete", value)


def _langchain_parts(item: Any) -> tuple[str, dict[str, Any], str | None] | None:
    """(text, metadata, id) of a LangChain ``Document`` or its JSON form; None otherwise."""
    from langchain_core.documents import Document

    if isinstance(item, Document):
        return item.page_content, dict(item.metadata), item.id
    if isinstance(item, dict) and isinstance(item.get("page_content"), str):
        return item["page_content"], dict(item.get("metadata") or {}), item.get("id")
    return None


def source_documents(items: Any) -> list[SourceDocument]:
    """Documents for the ingest graph: chop's ``SourceDocument`` dicts and LangChain ``Document``s.

    LangChain loaders often yield one ``Document`` per page of a file; consecutive pages with the
    same id (``metadata["doc_id"]``, else ``Document.id``, else ``metadata["source"]``) are joined
    into one document, each page a span, so CHOP's continuity runs across page breaks.
    """
    if items is None:
        return []
    if isinstance(items, str | dict) or not isinstance(items, list | tuple):
        raise InvalidInput(f"'documents' must be a list, got {type(items).__name__}")
    documents: list[SourceDocument] = []
    previous_langchain_id: str | None = None  # the last document, if it came from LangChain
    for position, item in enumerate(items):
        parts = _langchain_parts(item)
        if parts is None:
            documents.append(_checked_source_document(position, item))
            previous_langchain_id = None
            continue
        text, metadata, lc_id = parts
        source = str(metadata.get("source") or "")
        fallback_id = f"document-{content_hash(text)[:16]}"
        doc_id = str(metadata.get("doc_id") or lc_id or source or fallback_id)
        page = metadata.get("page")
        if doc_id == previous_langchain_id:
            last = documents[-1]
            start = len(last["text"]) + 2
            last["text"] = f"{last['text']}\n\n{text}"
            if page is not None:
                last["spans"].append(Span(start=start, end=len(last["text"]), meta={"page": page}))
            continue
        title = str(metadata.get("title") or (source.rsplit("/", 1)[-1] if source else doc_id))
        spans = [Span(start=0, end=len(text), meta={"page": page})] if page is not None else []
        documents.append(
            make_document(
                doc_id,
                title,
                text,
                source=source or doc_id,
                metadata={k: v for k, v in _plain(metadata).items() if k != "page"},
                spans=spans,
            )
        )
        previous_langchain_id = doc_id
    return documents


def _plain(metadata: dict[str, Any]) -> dict[str, Any]:
    """The JSON-safe part of a loader's metadata (it is stored as jsonb)."""
    kept: dict[str, Any] = {}
    for key, value in metadata.items():
        if isinstance(value, str | int | float | bool) or value is None:
            kept[str(key)] = value
    return kept


def _checked_source_document(position: int, item: Any) -> SourceDocument:
    if not isinstance(item, dict):
        raise InvalidInput(
            f"documents[{position}] must be a chop SourceDocument dict or a LangChain Document, "
            f"got {type(item).__name__}"
        )
    missing = [key for key in ("doc_id", "text") if not isinstance(item.get(key), str)]
    if missing:
        raise InvalidInput(f"documents[{position}] needs string field(s): {', '.join(missing)}")
    return make_document(
        item["doc_id"],
        str(item.get("title") or item["doc_id"]),
        item["text"],
        source=item.get("source"),
        metadata=dict(item.get("metadata") or {}),
        spans=list(item.get("spans") or []),
    )
