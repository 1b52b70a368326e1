"""What the store keeps and gives back: chunk rows, document records, hits, filters."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from chop_rag.types import CNM, Chunk


@dataclass
class ChunkFields:
    """What a stored chunk and a retrieved one both say: where its text stands in which
    document, and its CNM signature."""

    doc_id: str
    doc_title: str
    chunk_index: int
    text: str
    prefix: str
    category: str | None
    nouns: list[str]
    model: str | None
    cnm_source: str  # heading | extracted | profile | inherited | document | fallback
    char_start: int
    char_end: int


@dataclass
class ChunkRow(ChunkFields):
    """One stored chunk: the raw text, its CNM signature, and the embedded text's vector."""

    continuity: str  # first | rule:<why> | llm | llm-fallback
    embedding_key: str  # embedding_key(embedded text, embedder): finds the vector again
    embedding: Sequence[float] | np.ndarray
    flags: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)


NO_CNM = CNM(category=None, nouns=[], model=None)


def chunk_row(
    chunk: Chunk,
    *,
    prefix: str,
    cnm: CNM,
    cnm_source: str,
    continuity: str,
    embedding_key: str,
    embedding: Sequence[float] | np.ndarray,
    flags: Sequence[str] = (),
) -> ChunkRow:
    """The row that stores ``chunk``: where it stands (document, index, span, the loader's
    metadata) comes from the chunk; its labels and vector from the caller."""
    return ChunkRow(
        doc_id=chunk["doc_id"],
        doc_title=chunk["doc_title"],
        chunk_index=chunk["index"],
        text=chunk["text"],
        char_start=chunk["char_start"],
        char_end=chunk["char_end"],
        metadata=chunk["metadata"],
        prefix=prefix,
        category=cnm["category"],
        nouns=list(cnm["nouns"]),
        model=cnm["model"],
        cnm_source=cnm_source,
        continuity=continuity,
        flags=list(flags),
        embedding_key=embedding_key,
        embedding=embedding,
    )


@dataclass
class DocumentRecord:
    doc_id: str
    title: str
    source: str
    fingerprint: str  # chop_rag.nodes.load.fingerprint: unchanged means nothing to ingest again
    chunk_count: int
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class Hit(ChunkFields):
    """A retrieved chunk with its score (higher is better)."""

    id: int
    metadata: dict[str, Any]
    score: float


@dataclass(frozen=True)
class SearchFilter:
    """Equality filters on CNM columns (matched case-insensitively), and a LangChain metadata
    filter; always parameterised."""

    model: str | None = None
    category: str | None = None
    doc_ids: tuple[str, ...] = ()
    # a titled part of a document (a financial statement): the chunk's last heading matches
    # the first regex, or a line of its opening the second (PostgreSQL regexes, any case)
    titled: tuple[str, str] | None = None
    # LangChain's filter on a chunk's metadata ({"page": {"$gte": 3}}, "$and", "$or", ...),
    # as chop_rag.store.search.metadata_condition reads it
    metadata: Mapping[str, Any] | None = None


def embedding_key(embedded_text: str, embedder_name: str) -> str:
    """The key a stored vector is found again by: the same text from the same embedder."""
    payload = f"{embedder_name}\x00{embedded_text}".encode("utf-8", "surrogatepass")
    return hashlib.sha256(payload).hexdigest()


@dataclass(frozen=True)
class CollectionRecord:
    """What a collection was made with (``chop_collections``): its embedder and its width,
    and the settings of the run that made it (for the record; they do not bind later runs)."""

    embedder: str
    dimension: int
    settings: dict[str, Any] = field(default_factory=dict)
