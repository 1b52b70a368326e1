"""The ingest progress bar follows the graph's custom stream events, counts every LLM call
the run made, and stays readable at 80 columns."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console
from rich.progress import Progress

from chop_rag.api import ingest
from chop_rag.config import Context
from chop_rag.harness.sample_corpus import write_sample_corpus
from chop_rag.terminal.progress import ProgressReporter, ingest_progress
from tests.fakes import ScriptedChatModel


def test_the_bar_grows_as_documents_are_split_and_counts_stored_documents() -> None:
    progress = Progress(console=Console(file=io.StringIO()))
    reporter = ProgressReporter(progress)
    reporter({"event": "loaded", "documents": 2, "unchanged": 0})
    reporter({"event": "profiled", "doc_id": "a", "llm_calls": 1, "cache_hits": 0})
    reporter({"event": "split", "doc_id": "a", "chunks": 3})
    reporter({"event": "split", "doc_id": "b", "chunks": 2})
    for _ in range(3):
        reporter({"event": "decided", "same_topic": False, "llm_calls": 1, "cache_hits": 0})
    reporter({"event": "llm", "llm_calls": 0, "cache_hits": 1})
    reporter({"event": "stored", "doc_id": "a", "chunks": 3})
    task = progress.tasks[0]
    assert (task.total, task.completed) == (5, 3)
    assert task.description == "labelling"
    assert task.fields["docs"] == "docs 1/2 stored"
    assert task.fields["calls"] == "LLM calls 4 (cached 1)"


def rendered(progress: Progress, width: int) -> list[str]:
    out = Console(file=io.StringIO(), width=width, color_system=None, legacy_windows=False)
    out.print(progress.get_renderable())
    return out.file.getvalue().splitlines()  # type: ignore[attr-defined]


@pytest.mark.usefixtures("store")
def test_at_80_columns_the_line_fits_with_a_wide_bar_and_the_run_s_llm_calls(
    scripted: ScriptedChatModel, context: Context, tmp_path: Path
) -> None:
    """The events of a real ingest (3 manuals; the scripted model answers every LLM task)."""
    write_sample_corpus(tmp_path)
    events: list[dict[str, object]] = []
    report = ingest([tmp_path], context=context.with_overrides(continuity_mode="llm"),
                    on_event=events.append)  # fmt: skip
    calls = int(report["stats"]["llm_calls"])
    assert calls == len(scripted.calls) > 0

    progress = ingest_progress(Console(file=io.StringIO(), width=80))
    reporter = ProgressReporter(progress, quiet=True)
    for event in events:
        reporter(event)
    bar, counts = rendered(progress, 80)
    assert len(bar) <= 80 and len(counts) <= 80
    assert bar.count("━") >= 40, bar  # the bar keeps half the line at least
    assert bar.startswith("labelling ") and bar.endswith(" chunks 0:00:00"), bar
    assert f"LLM calls {calls} (cached 0)" in counts  # the summary's count, profiles included
    assert "docs 3/3 stored" in counts
    wide, _ = rendered(progress, 160)
    assert wide.count("━") > bar.count("━")  # a wider terminal: a longer bar
