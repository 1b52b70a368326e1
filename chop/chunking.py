"""Splitting text into chunks measured in the embedder's own tokens.

Chunks are sized by the tokenizer of the model that embeds them (MiniLM reads 256 tokens and
silently drops the rest), and a window prefers to end at a sentence or line end when one lies
in its last quarter, so chunks rarely stop mid-sentence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from chop.models import Tokenizer

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
    tokens = tokenizer.token_spans(text)
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


def _trim(text: str, start: int, end: int) -> TextSpan:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return TextSpan(start, end)
