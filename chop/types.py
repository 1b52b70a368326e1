"""The two shapes every layer shares: a chunk as split from its document, and its CNM signature.

A leaf module: it imports nothing from chop, so the modules that build on these shapes
(chop.cnm, chop.profile, chop.state) do not import each other to name them.
"""

from __future__ import annotations

from typing import Any

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
