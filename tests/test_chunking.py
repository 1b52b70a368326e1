"""Chunk windows and the gate's similarity signal."""

from __future__ import annotations

import re

import numpy as np
import pytest

from chop_rag.reading.chunking import (
    MIN_CHUNKS_FOR_BACKGROUND,
    TextSpan,
    background_similarity,
    chunks_to_compare,
    relative_adjacent_similarity,
    sampled_relative_similarity,
    section_windows,
)


class WordTokenizer:
    """One token per word: sizes in the tests below are word counts."""

    def token_spans(self, text: str) -> list[tuple[int, int]]:
        return [m.span() for m in re.finditer(r"\S+", text)]


def sections_of(*parts: str) -> tuple[str, list[TextSpan]]:
    text, spans, offset = "", [], 0
    for part in parts:
        if text:
            text += "\n\n"
            offset += 2
        spans.append(TextSpan(offset, offset + len(part)))
        text += part
        offset += len(part)
    return text, spans


def test_section_chunks_follow_sections_join_short_ones_and_window_long_ones() -> None:
    long = " ".join(f"w{i}." for i in range(25))
    text, spans = sections_of("Features", "Night mode " + "dark " * 6, "Camera " * 9, long)
    chunks = section_windows(text, spans, WordTokenizer(), size=10, overlap=2, min_tokens=3)
    pieces = [text[c.start : c.end] for c in chunks]
    assert pieces[0].startswith("Features") and "Night mode" in pieces[0], "a bare heading joins"
    assert pieces[1].split() == ["Camera"] * 9
    assert all(len(p.split()) <= 10 for p in pieces)
    assert " ".join(pieces[2:]).split()[-1] == "w24.", "a long section is windowed to its end"
    assert all(spans[3].start <= c.start and c.end <= spans[3].end for c in chunks[2:])


def test_text_before_the_first_heading_is_its_own_chunk() -> None:
    text = "Preface words here.\n\nSetup plug it in."
    chunks = section_windows(text, [TextSpan(21, len(text))], WordTokenizer(), 10, 2, min_tokens=1)
    pieces = [text[c.start : c.end] for c in chunks]
    assert pieces == ["Preface words here.\n\n", "Setup plug it in."]


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def topic_runs(rng: np.random.Generator, topics: int, per_topic: int, dim: int = 64) -> np.ndarray:
    """Chunks in runs: each run's chunks are noisy copies of one topic direction."""
    centres = rng.normal(size=(topics, dim))
    rows = [c + 0.6 * rng.normal(size=dim) for c in centres for _ in range(per_topic)]
    return unit_rows(np.array(rows))


def compressed(vectors: np.ndarray, floor: float) -> np.ndarray:
    """The same chunks as an anisotropic embedder sees them: cos -> floor + (1 - floor) cos."""
    common = np.ones((len(vectors), 1))  # a direction every embedding shares
    return np.hstack([np.sqrt(1 - floor) * vectors, np.sqrt(floor) * common])


def test_the_first_chunk_has_no_previous_chunk() -> None:
    similarity = relative_adjacent_similarity(topic_runs(np.random.default_rng(0), 3, 4))
    assert similarity[0] is None
    assert all(s is not None for s in similarity[1:])


def test_neighbours_within_a_topic_score_above_neighbours_across_topics() -> None:
    similarity = relative_adjacent_similarity(topic_runs(np.random.default_rng(1), 4, 5))
    within = [s for i, s in enumerate(similarity) if i and i % 5]
    across = [s for i, s in enumerate(similarity) if i and not i % 5]
    assert min(within) > max(across)  # type: ignore[type-var]
    assert max(across) < 0.2  # type: ignore[operator]  # about as similar as distant chunks


@pytest.mark.parametrize("floor", [0.3, 0.75])
def test_the_scale_does_not_depend_on_where_the_embedder_puts_unrelated_text(
    floor: float,
) -> None:
    vectors = topic_runs(np.random.default_rng(2), 4, 5)
    squeezed = compressed(vectors, floor)

    def adjacent_cosines(rows: np.ndarray) -> np.ndarray:
        return np.sum(rows[1:] * rows[:-1], axis=1)

    assert adjacent_cosines(squeezed) == pytest.approx(
        floor + (1 - floor) * adjacent_cosines(vectors)
    )  # a fixed cosine band would judge the two embedders' pairs differently
    assert relative_adjacent_similarity(squeezed) == pytest.approx(
        relative_adjacent_similarity(vectors)
    )


def test_the_background_is_the_mean_cosine_of_chunks_at_least_two_apart() -> None:
    vectors = topic_runs(np.random.default_rng(4), 3, 3)
    cosines = vectors @ vectors.T
    far = [cosines[i, j] for i in range(9) for j in range(9) if abs(i - j) >= 2]
    assert background_similarity(vectors) == pytest.approx(np.mean(far))


def test_short_or_uniform_documents_leave_the_decision_to_the_llm() -> None:
    short = topic_runs(np.random.default_rng(3), 1, MIN_CHUNKS_FOR_BACKGROUND - 1)
    assert relative_adjacent_similarity(short) == [None] * len(short)
    uniform = np.tile(unit_rows(np.ones((1, 8))), (6, 1))
    assert relative_adjacent_similarity(uniform) == [None] * 6


def test_a_structured_document_embeds_only_the_pairs_its_headings_leave_open() -> None:
    indices = chunks_to_compare([1, 2], count=700)
    assert {0, 1, 2} <= set(indices)
    assert len(indices) < 80, "the open pairs and a background sample, not 700 chunks"
    assert chunks_to_compare([], count=700) == [], "headings settle every pair: no embedding"


def test_a_sampled_document_is_measured_on_the_same_scale_as_a_fully_embedded_one() -> None:
    vectors = topic_runs(np.random.default_rng(5), 12, 8)  # 96 chunks
    full = relative_adjacent_similarity(vectors)
    every = list(range(len(vectors)))
    assert sampled_relative_similarity(vectors, every, len(vectors)) == full
    indices = chunks_to_compare([17, 40], count=len(vectors))
    sampled = sampled_relative_similarity(vectors[indices], indices, len(vectors))
    assert sampled[17] == pytest.approx(full[17], abs=0.1)
    assert sampled[40] == pytest.approx(full[40], abs=0.1)
    measured = {i for i in indices if i - 1 in indices}
    assert {i for i, value in enumerate(sampled) if value is not None} == measured
