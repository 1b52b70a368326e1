"""The sections around retrieved chunks, read from the store once per answer.

A hit is one chunk; what answers is often its whole section (steps split over two chunks) or,
in a filing, the header rows above a table's continuation. ``SectionReader`` reads both, each
section once, for the nodes of the answer path that quote, compute or judge.
"""

from __future__ import annotations

from chop_rag.answers.answering import heading_path
from chop_rag.config import Context
from chop_rag.retrieval.retrieve import identity_cards
from chop_rag.state import Source
from chop_rag.store import Hit, Store
from chop_rag.text.periods import ReportPeriod
from chop_rag.types import plain_copy

SECTION_WINDOW = 6  # chunks on either side of a hit that may belong to its section


def to_source(number: int, hit: Hit) -> Source:
    """A store hit as the answer cites it: numbered, its span kept in its metadata."""
    metadata = {**hit.metadata, "char_start": hit.char_start, "char_end": hit.char_end}
    return plain_copy(Source, hit, number=number, chunk_id=hit.id, metadata=metadata)


class SectionReader:
    """Reads a source's section (its neighbours under the same heading path) and the chunks
    near it, from ``ctx.collection``; each section is read once."""

    def __init__(self, ctx: Context, store: Store) -> None:
        self.ctx, self.store = ctx, store
        self._sections: dict[int, list[Source]] = {}
        self._reports: dict[str, ReportPeriod] | None = None

    def report_period(self, doc_id: str) -> ReportPeriod | None:
        """The quarter ``doc_id`` reports, where it is a quarterly report (its identity card:
        "MGM ... Q4 2022 ER" is the fourth quarter of fiscal 2022); the cards are read once."""
        if self._reports is None:
            cards = identity_cards(self.store.documents(self.ctx.collection).values())
            self._reports = {
                card.doc_id: ReportPeriod(card.fiscal_quarter, card.fiscal_year, card.period_end)
                for card in cards
                if card.fiscal_quarter and card.fiscal_year
            }
        return self._reports.get(doc_id)

    def __call__(self, source: Source) -> list[Source]:
        """The chunks next to ``source`` under the same heading path, in order."""
        if source["chunk_id"] not in self._sections:
            self._sections[source["chunk_id"]] = self._section_around(source)
        return self._sections[source["chunk_id"]]

    def _section_around(self, source: Source) -> list[Source]:
        index = source["chunk_index"]
        path = heading_path(source)
        if not path:
            return [source]
        around = self.store.neighbours(
            self.ctx.collection, source["doc_id"], index - SECTION_WINDOW, index + SECTION_WINDOW
        )
        chunks = [to_source(source["number"], hit) for hit in around]
        at = next((i for i, c in enumerate(chunks) if c["chunk_id"] == source["chunk_id"]), None)
        if at is None:
            return [source]
        first = last = at
        while first > 0 and heading_path(chunks[first - 1]) == path:
            first -= 1
        while last + 1 < len(chunks) and heading_path(chunks[last + 1]) == path:
            last += 1
        return chunks[first : last + 1]

    def near(self, source: Source, first: int, last: int) -> tuple[str, list[int]]:
        """The text and pages of the chunks ``first``..``last`` places from ``source``: the
        header above a table's continuation, or the rest of a statement below its start."""
        index = source["chunk_index"]
        near = [
            to_source(source["number"], hit)
            for hit in self.store.neighbours(
                self.ctx.collection, source["doc_id"], index + first, index + last
            )
        ]
        pages = [p for chunk in near for p in chunk["metadata"].get("pages") or ()]
        return "\n".join(chunk["text"] for chunk in near), pages
