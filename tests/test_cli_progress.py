"""The ingest progress bar follows the graph's custom stream events."""

from __future__ import annotations

import io

from rich.console import Console
from rich.progress import Progress

from chop.cli import ProgressReporter


def test_the_bar_grows_as_documents_are_split_and_counts_stored_documents() -> None:
    progress = Progress(console=Console(file=io.StringIO()))
    reporter = ProgressReporter(progress)
    reporter({"event": "loaded", "documents": 2, "unchanged": 0})
    reporter({"event": "split", "doc_id": "a", "chunks": 3})
    reporter({"event": "split", "doc_id": "b", "chunks": 2})
    for _ in range(3):
        reporter({"event": "decided", "same_topic": False, "llm_calls": 1, "cache_hits": 0})
    reporter({"event": "llm", "llm_calls": 0, "cache_hits": 1})
    reporter({"event": "stored", "doc_id": "a", "chunks": 3})
    task = progress.tasks[0]
    assert (task.total, task.completed) == (5, 3)
    assert task.description == "labelling chunks, 1/2 documents stored"
    assert task.fields["calls"] == "LLM calls 3, cache hits 1"
