"""Splitting text into chunks measured in the embedder's own tokens.

Chunks are sized by the tokenizer of the model that embeds them (MiniLM reads 256 tokens and
silently drops the rest), and a window prefers to end at a sentence or line end when one lies
in its last quarter, so chunks rarely stop mid-sentence.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from chop_rag.models.embedders import Tokenizer
from chop_rag.reading.documents import SourceDocument, span_meta_at
from chop_rag.types import Chunk

MAX_TOKEN_CHARS = 16  # longer "tokens" (unknown runs without spaces) count as several
MIN_CHUNKS_FOR_BACKGROUND = 5  # fewer chunks give too few pairs to know the background
BACKGROUND_SAMPLE = 64  # chunks spread over a long document: enough to know its background

_sentence_end = re.compile(r"(?<=[.!?:;])\s+|\n+")


@dataclass(frozen=True)
class TextSpan:
    start: int
    end: int


def token_windows(
    text: str, tokenizer: Tokenizer, size: int, overlap: int, *, snap: bool = True
) -> list[TextSpan]:
    """Character spans of windows of ``size`` tokens, consecutive ones sharing ``overlap``."""
    if size <= 0:
        raise ValueError("chunk size must be positive")
    if not 0 <= overlap < size:
        raise ValueError("overlap must be at least 0 and smaller than the chunk size")
    tokens = [piece for span in tokenizer.token_spans(text) for piece in _bounded(span)]
    if not tokens:
        return []
    boundaries = _sentence_boundaries(text) if snap else set()
    windows: list[TextSpan] = []
    first = 0
    while first < len(tokens):
        last = min(first + size, len(tokens)) - 1
        if snap and last < len(tokens) - 1:
            for candidate in range(last, first + (3 * size) // 4, -1):
                if tokens[candidate][1] in boundaries:
                    last = candidate
                    break
        windows.append(TextSpan(tokens[first][0], tokens[last][1]))
        if last == len(tokens) - 1:
            break
        first = max(last + 1 - overlap, first + 1)
    return windows


def section_windows(
    text: str,
    sections: list[TextSpan],
    tokenizer: Tokenizer,
    size: int,
    overlap: int,
    *,
    min_tokens: int | None = None,
) -> list[TextSpan]:
    """Chunks aligned to the document's sections: one chunk per section, a section shorter
    than ``min_tokens`` (a bare heading, a one-line note) joined with the sections after it,
    a section longer than ``size`` cut into token windows inside it. Text outside every
    section (a preamble) is a section of its own.

    A chunk that mixes the end of one section with the start of the next is labelled by
    neither well; on E-Manual questions, whose answers are sections, aligned chunks measured
    better than fixed windows (docs/benchmarks.md).
    """
    if size <= 0:
        raise ValueError("chunk size must be positive")
    floor = size // 10 if min_tokens is None else min_tokens
    tokens = tokenizer.token_spans(text)
    if not tokens:
        return []
    starts = [start for start, _end in tokens]

    def count(span: TextSpan) -> int:
        return bisect_left(starts, span.end) - bisect_left(starts, span.start)

    pieces: list[TextSpan] = []
    cursor = 0
    for section in sorted(sections, key=lambda s: s.start):
        if section.start > cursor and text[cursor : section.start].strip():
            pieces.append(TextSpan(cursor, section.start))
        start = max(section.start, cursor)
        if section.end > start:
            pieces.append(TextSpan(start, section.end))
            cursor = section.end
    if text[cursor:].strip():
        pieces.append(TextSpan(cursor, len(text)))

    groups: list[TextSpan] = []
    for piece in pieces:
        if groups and count(groups[-1]) < floor:
            groups[-1] = TextSpan(groups[-1].start, piece.end)
        else:
            groups.append(piece)
    windows: list[TextSpan] = []
    for group in groups:
        if count(group) == 0:
            continue
        if count(group) <= size:
            windows.append(group)
            continue
        inner = token_windows(text[group.start : group.end], tokenizer, size, overlap)
        windows.extend(TextSpan(group.start + w.start, group.start + w.end) for w in inner)
    return windows


def _bounded(span: tuple[int, int]) -> list[tuple[int, int]]:
    """A token as pieces of at most MAX_TOKEN_CHARS characters.

    A tokenizer reads a long run without spaces (a 300 KB base64 blob, a minified line) as one
    unknown token; counted as one, it would make one 300,000-character chunk sent whole to the
    LLM. Counted in pieces, every chunk stays within size * MAX_TOKEN_CHARS characters.
    """
    start, end = span
    if end - start <= MAX_TOKEN_CHARS:
        return [span]
    return [(i, min(i + MAX_TOKEN_CHARS, end)) for i in range(start, end, MAX_TOKEN_CHARS)]


def _sentence_boundaries(text: str) -> set[int]:
    """Offsets just after a sentence-final mark or at a line end."""
    ends = {m.start() for m in _sentence_end.finditer(text)}
    return ends | {len(text)}


def sentence_spans(text: str) -> list[TextSpan]:
    """Sentences (and lines) of ``text`` as character spans, whitespace trimmed."""
    spans: list[TextSpan] = []
    start = 0
    for match in _sentence_end.finditer(text):
        if text[start : match.start()].strip():
            spans.append(_trim(text, start, match.start()))
        start = match.end()
    if text[start:].strip():
        spans.append(_trim(text, start, len(text)))
    return spans


def chunks_at(document: SourceDocument, windows: Sequence[TextSpan]) -> list[Chunk]:
    """The document's text cut at ``windows``, in order, each chunk with the loader's
    metadata of the spans it overlaps (pages, heading); no similarity measured yet."""
    text = document["text"]
    return [
        Chunk(
            doc_id=document["doc_id"],
            doc_title=document["title"],
            index=index,
            text=text[window.start : window.end],
            char_start=window.start,
            char_end=window.end,
            metadata=span_meta_at(document["spans"], window.start, window.end),
            similarity_to_previous=None,
        )
        for index, window in enumerate(windows)
    ]


def _trim(text: str, start: int, end: int) -> TextSpan:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return TextSpan(start, end)


def _adjacent_cosines(unit: np.ndarray) -> np.ndarray:
    return np.sum(unit[1:] * unit[:-1], axis=1)


def _background(unit: np.ndarray, adjacent: np.ndarray) -> float | None:
    count = len(unit)
    if count < MIN_CHUNKS_FOR_BACKGROUND:
        return None
    total = unit.sum(axis=0)
    ordered_pairs = float(total @ total) - count  # every i != j (unit rows: i == i adds 1)
    return (ordered_pairs - 2 * float(adjacent.sum())) / ((count - 1) * (count - 2))


def background_similarity(unit: np.ndarray) -> float | None:
    """Mean cosine over all pairs of chunks at least two apart (exact, O(n)); None if too few.

    ``unit``: one unit-length embedding per chunk, as every chop_rag.models.embedders.Embedder
    returns."""
    return _background(unit, _adjacent_cosines(unit))


def relative_adjacent_similarity(unit: np.ndarray) -> list[float | None]:
    """Each chunk's cosine to the previous one, measured against the document's background.

    0 means "as similar as two chunks far apart in this document", 1 means identical.
    Embedders differ in where unrelated text lands (MiniLM near 0.25, E5-style models near
    0.75) and so do documents (a financial report is more uniform than a phone manual); on
    this scale one gate band fits them all: it is unchanged by any map cos -> a + (1 - a) cos.
    Too short a document, or one whose chunks are all alike, has no background: None, and the
    gate leaves such pairs to the LLM. ``unit`` as for background_similarity.
    """
    result: list[float | None] = [None] * len(unit)
    adjacent = _adjacent_cosines(unit)
    background = _background(unit, adjacent)
    if background is None or background > 1 - 1e-6:
        return result
    for i, cosine in enumerate(adjacent, start=1):
        result[i] = (float(cosine) - background) / (1 - background)
    return result


def settled_by_structure(headings: Sequence[str], text: str) -> bool:
    """Whether a chunk's continuity follows from the document's structure alone (its heading
    path, or a Markdown heading line): the gate needs no similarity for it."""
    return bool(headings) or text.lstrip().startswith("#")


def chunks_to_compare(open_pairs: Sequence[int], count: int) -> list[int]:
    """The chunks whose embeddings the gate needs: both chunks of each pair it may judge
    (chunk i and i - 1, for i in ``open_pairs``) and a sample spread over the document for its
    background. A structured filing leaves a few pairs open among hundreds of chunks, so
    embedding all of them for the gate would double the cost of its embedding."""
    if not open_pairs:
        return []
    wanted = {j for i in open_pairs for j in (i - 1, i)}
    step = max(1, count // BACKGROUND_SAMPLE)
    wanted.update(range(0, count, step))
    return sorted(wanted)


def sampled_relative_similarity(
    unit: np.ndarray, indices: Sequence[int], count: int
) -> list[float | None]:
    """relative_adjacent_similarity for a document of ``count`` chunks of which only those at
    ``indices`` (sorted) were embedded (``unit[j]`` is chunk ``indices[j]``): the background
    is the mean cosine of the embedded pairs at least two apart, and a chunk gets a value when
    it and its predecessor were both embedded. With every chunk embedded it equals
    relative_adjacent_similarity."""
    if len(indices) == count:
        return relative_adjacent_similarity(unit)
    result: list[float | None] = [None] * count
    position = np.asarray(indices)
    far = np.abs(position[:, None] - position[None, :]) >= 2
    if len(indices) < MIN_CHUNKS_FOR_BACKGROUND or not far.any():
        return result
    background = float((unit @ unit.T)[far].mean())
    if background > 1 - 1e-6:
        return result
    row = {index: j for j, index in enumerate(indices)}
    for index, j in row.items():
        if index - 1 in row:
            cosine = float(unit[j] @ unit[row[index - 1]])
            result[index] = (cosine - background) / (1 - background)
    return result
