"""The passages an answer reads, as the graph's state keeps them: the retrieved sources' sections
(chop_rag.answers.answering.build_passages), each sentence scored against the question with the
embedder, the passage that answers best first (best_passage)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from chop_rag.answers.answering import Passage, build_passages, filing_units
from chop_rag.answers.figures import Row, row_for_line, row_line, table_rows
from chop_rag.answers.sections import SectionReader
from chop_rag.models.embedders import Embedder, embed_queries
from chop_rag.state import ReadPassage, Source

SWITCH_MARGIN = 0.1  # cosine points another passage's best sentence must win by


def read_passages(
    question: str,
    sources: Sequence[Source],
    sections: SectionReader,
    embedder: Embedder,
    filings: bool = False,
) -> list[ReadPassage]:
    """The sources' passages with their sentences' similarity to the question, the best one
    first (the others in rank order). In filings a passage's units are whole sentences and
    table rows with their periods, not a cut window."""
    passages = build_passages(sources, sections)
    if not passages:
        return []
    if filings:
        for passage in passages:
            pages = passage.source["metadata"].get("pages") or ()
            report = sections.report_period(passage.source["doc_id"])
            found = table_rows(passage.text, passage.source["number"], pages, report=report)

            def render(line: str, found: list[Row] = found) -> str | None:
                row = row_for_line(line, found)
                return row_line(row) if row is not None else None

            passage.sentences = filing_units(passage.text, render) or passage.sentences
    sentences = [sentence for passage in passages for sentence in passage.sentences]
    vectors = np.vstack([embed_queries(embedder, [question]), embedder.embed(sentences)])
    scores = sentence_scores(passages, vectors)
    best = best_passage(passages, scores)
    order = [best, *(i for i in range(len(passages)) if i != best)]
    return [to_state(passages[i], scores[i]) for i in order]


def content_indices(passage: Passage) -> list[int]:
    """The indices of the passage's sentences that may answer: not heading lines, nor lines
    that repeat the section's title or a piece of it (a PDF breaks a long title over lines:
    "Ulta Beauty Announces Fourth Quarter" / "Fiscal 2022 Results"). A title matches the
    question's names, never answers it."""
    heading = " ".join(passage.heading.lower().split())
    return [
        i
        for i, sentence in enumerate(passage.sentences)
        if not sentence.startswith("#") and not _repeats_title(sentence, heading)
    ]


def _repeats_title(sentence: str, heading: str) -> bool:
    line = " ".join(sentence.lower().split())
    return bool(line) and bool(heading) and f" {line} " in f" {heading} "


def best_passage(passages: Sequence[Passage], scores: Sequence[Sequence[float]]) -> int:
    """The passage the answer is taken from: retrieval's first unless another holds a sentence
    of content that matches the question clearly better (by SWITCH_MARGIN) than any of the
    first's."""
    best = [
        max((s[i] for i in content_indices(passage) if i < len(s)), default=-1.0)
        for passage, s in zip(passages, scores, strict=True)
    ]
    chosen = 0
    for index, value in enumerate(best[1:], start=1):
        if value > best[chosen] + SWITCH_MARGIN:
            chosen = index
    return chosen


def sentence_scores(passages: Sequence[Passage], vectors: np.ndarray) -> list[list[float]]:
    """Each passage's sentences' cosine similarity to the question (``vectors[0]``)."""
    unit = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    similarity = unit[1:] @ unit[0]
    scores: list[list[float]] = []
    offset = 0
    for passage in passages:
        count = len(passage.sentences)
        scores.append([float(x) for x in similarity[offset : offset + count]])
        offset += count
    return scores


def to_state(passage: Passage, scores: Sequence[float]) -> ReadPassage:
    return ReadPassage(
        source=passage.source,
        heading=passage.heading,
        text=passage.text,
        sentences=list(passage.sentences),
        scores=[float(s) for s in scores],
    )


def from_state(read: ReadPassage) -> Passage:
    return Passage(read["source"], read["heading"], read["text"], list(read["sentences"]))
