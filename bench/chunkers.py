"""The baseline chunkers of the paper's comparison: fixed token windows and cosine chunking."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Sequence

import numpy as np

from chop_rag.models.embedders import Tokenizer
from chop_rag.reading.chunking import TextSpan, sentence_spans, token_windows

EmbedFn = Callable[[Sequence[str]], np.ndarray]

COSINE_THRESHOLD = 0.35  # the paper's θ for semantic (cosine) chunking


def naive_spans(text: str, tokenizer: Tokenizer, size: int, overlap: int) -> list[TextSpan]:
    """Fixed windows of ``size`` tokens sharing ``overlap``, cut wherever the count ends."""
    return token_windows(text, tokenizer, size, overlap, snap=False)


def sentence_units(text: str, tokenizer: Tokenizer, max_tokens: int) -> list[tuple[TextSpan, int]]:
    """Sentences with their token counts; a sentence longer than ``max_tokens`` is cut into
    consecutive pieces of ``max_tokens`` tokens so the embedder never truncates one silently."""
    tokens = tokenizer.token_spans(text)
    starts = [start for start, _ in tokens]
    units: list[tuple[TextSpan, int]] = []
    for sentence in sentence_spans(text):
        first, last = bisect_left(starts, sentence.start), bisect_left(starts, sentence.end)
        if last - first <= max_tokens:
            units.append((sentence, last - first))
            continue
        for piece in range(first, last, max_tokens):
            end = min(piece + max_tokens, last)
            units.append((TextSpan(tokens[piece][0], tokens[end - 1][1]), end - piece))
    return units


def cosine_spans(
    text: str,
    tokenizer: Tokenizer,
    embed: EmbedFn,
    max_tokens: int,
    threshold: float = COSINE_THRESHOLD,
) -> list[TextSpan]:
    """Sentence-level cosine chunking: a new chunk starts where two adjacent sentences' cosine
    falls below ``threshold``, or where the chunk would exceed ``max_tokens`` tokens."""
    units = sentence_units(text, tokenizer, max_tokens)
    if not units:
        return []
    vectors = embed([text[span.start : span.end] for span, _ in units])
    chunks: list[TextSpan] = []
    start, end, count = units[0][0].start, units[0][0].end, units[0][1]
    for i in range(1, len(units)):
        span, n = units[i]
        similarity = float(np.dot(vectors[i - 1], vectors[i]))
        if similarity < threshold or count + n > max_tokens:
            chunks.append(TextSpan(start, end))
            start, count = span.start, 0
        end, count = span.end, count + n
    chunks.append(TextSpan(start, end))
    return chunks
