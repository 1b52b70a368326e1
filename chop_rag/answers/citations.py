"""An answer's citations where LangChain puts them: ``[n]`` markers in the text and a standard
``citation`` annotation per cited span (langchain_core.messages.content), so a generic chat
front end (Agent Chat UI, any LangChain client reading ``content_blocks``) shows the sources.

The answer is cut into sentences and lines; each is attributed to the cited source that writes
most of its words (a quote is its source's own words; a figure's row names its source as
``[n]`` already), a sentence no source writes to the one before it. Each run of sentences from
one source ends in its ``[n]`` marker (unless it already names it) and gets one annotation:
its span of the text, the source's document, section, pages and the quoted words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages.content import (
    Citation,
    ContentBlock,
    TextContentBlock,
    create_citation,
)

from chop_rag.answers.answering import heading_path, words_written_in
from chop_rag.state import Source

ATTRIBUTED_SHARE = 0.5  # of a sentence's content words its source must write
CITED_TEXT_CHARS = 500  # of the source's words an annotation carries
# a sentence's end (kept with it) or a line break: the units an answer is cited and streamed by
_unit = re.compile(r".*?(?:[.!?](?=\s)|\n|$)\s*", re.DOTALL)
# a marker the text already has: "[3]", or a computed figure's "[source 3, page 5]"
_named = re.compile(r"\[(?:[^\[\]]*?\bsources? )?(\d+)[^\[\]]*\]")


@dataclass(frozen=True)
class Span:
    """A stretch of the answer text (``start``..``end``) taken from source ``number``."""

    start: int
    end: int
    number: int


def sentence_units(text: str) -> list[tuple[int, int]]:
    """The text cut after each sentence end and line break, as (start, end) pieces that
    together are the whole text."""
    units: list[tuple[int, int]] = []
    for match in _unit.finditer(text):
        if match.end() > match.start():
            units.append((match.start(), match.end()))
    return units


def cited_spans(
    text: str, citations: Sequence[int], sources: Sequence[Source]
) -> tuple[list[Span], list[int]]:
    """The text cut into spans, each from one cited source, in text order; and the cited
    sources no sentence could be attributed to (cited for the whole answer)."""
    by_number = {source["number"]: source for source in sources}
    cited = [n for n in dict.fromkeys(citations) if n in by_number]
    if not cited or not text.strip():
        return [], cited
    spans: list[Span] = []
    previous = cited[0]
    for start, end in sentence_units(text):
        piece = text[start:end]
        named = [int(n) for n in _named.findall(piece) if int(n) in cited]
        owner = previous
        if named:
            owner = named[-1]
        elif piece.strip():
            share, best = max((words_written_in(piece, [by_number[n]["text"]]), n) for n in cited)
            owner = best if share >= ATTRIBUTED_SHARE else previous
        if spans and spans[-1].number == owner:
            spans[-1] = Span(spans[-1].start, end, owner)
        else:
            spans.append(Span(start, end, owner))
        previous = owner
    placed = {span.number for span in spans}
    return spans, [n for n in cited if n not in placed]


def marked_answer(
    text: str, citations: Sequence[int], sources: Sequence[Source]
) -> tuple[str, list[Citation]]:
    """The answer with a ``[n]`` marker after each cited span (where the span does not name
    its source already), and one citation annotation per span, its indices in the marked
    text."""
    by_number = {source["number"]: source for source in sources}
    spans, unplaced = cited_spans(text, citations, sources)
    if not spans:
        return text, []
    marked, annotations = "", []
    for span in spans:
        piece = text[span.start : span.end]
        body = piece.rstrip()
        begin = len(marked) + len(body) - len(body.lstrip())
        if span.number not in {int(n) for n in _named.findall(piece)}:
            body += f" [{span.number}]"
        marked += body
        annotations.append(
            source_citation(by_number[span.number], start=begin, end=len(marked), quoted=piece)
        )
        marked += piece[len(piece.rstrip()) :]
    for number in unplaced:  # backs the answer as a whole
        body = marked.rstrip()
        trailing = marked[len(body) :]
        marked = f"{body} [{number}]"
        annotations.append(source_citation(by_number[number], start=0, end=len(marked), quoted=""))
        marked += trailing
    return marked, annotations


def source_citation(source: Source, *, start: int, end: int, quoted: str) -> Citation:
    """A standard citation annotation for ``source``: its document's title, the span of the
    answer it backs, the source's words it quotes, and chop's own fields in ``extras``."""
    metadata = source.get("metadata") or {}
    quoted = " ".join(quoted.split())
    cited_text = quoted if quoted and quoted in " ".join(source["text"].split()) else ""
    extras: dict[str, Any] = {
        "number": source["number"],
        "doc_id": source["doc_id"],
        "chunk_id": source["chunk_id"],
        "chunk_index": source["chunk_index"],
        "section": " › ".join(heading_path(source)),
        "pages": list(metadata.get("pages") or []),
        "model": source.get("model"),
    }
    return create_citation(
        title=source["doc_title"],
        start_index=start,
        end_index=end,
        cited_text=cited_text or " ".join(source["text"].split())[:CITED_TEXT_CHARS],
        **extras,
    )


def answer_content(
    text: str, citations: Sequence[int], sources: Sequence[Source]
) -> list[ContentBlock]:
    """An AI message's content: one text block, the answer with its ``[n]`` markers, its
    citations as the block's annotations (none for an answer that cites nothing)."""
    marked, annotations = marked_answer(text, citations, sources)
    block = TextContentBlock(type="text", text=marked)
    if annotations:
        block["annotations"] = list(annotations)
    return [block]
