"""The live progress of ``chop ingest``: the ingest graph's custom stream events turned into a
bar and the counts under it, and user text made safe for one console line."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from rich.console import Console, RenderableType
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.text import Text


def shown(text: object) -> str:
    """User text (a path, a reason, an error) for one console line: control characters such as
    a newline in a file name are written as escapes, and brackets are not read as markup (a path
    such as ``drafts[/old].md`` would otherwise end the run with rich's MarkupError)."""
    line = _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode(), str(text))
    return escape(line)


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class IngestProgress(Progress):
    """The bar on its own line, the counts under it: the bar takes what the few words beside
    it leave (about 50 of 80 columns), however large the counts grow.

        labelling ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╸━━━ 28/31 chunks 0:00:04
          docs 2/3 stored, LLM calls 57 (cached 0)
    """

    def get_renderables(self) -> Iterable[RenderableType]:
        yield self.make_tasks_table(self.tasks)
        for task in self.tasks:
            yield Text(f"  {task.fields['docs']}, {task.fields['calls']}", no_wrap=True)


def ingest_progress(output: Console, *, disable: bool = False) -> Progress:
    """The progress of ``chop ingest`` (fed by ProgressReporter)."""
    return IngestProgress(
        TextColumn("{task.description}"),
        BarColumn(bar_width=None),
        MofNCompleteColumn(),
        TextColumn("chunks"),
        TimeRemainingColumn(),
        console=output,
        transient=False,
        disable=disable,
    )


class ProgressReporter:
    """Turns the ingest graph's custom stream events into a live progress bar."""

    def __init__(self, progress: Progress, *, quiet: bool = False) -> None:
        self.progress = progress
        self.quiet = quiet
        self.reported: set[tuple[str, str]] = set()  # problems already shown, not repeated
        self.llm_calls = 0
        self.cache_hits = 0
        self.documents = 0
        self.stored = 0
        self.chunks = 0
        self.task = progress.add_task("loading", total=None, docs=self._docs(), calls=self._calls())

    def _docs(self) -> str:
        return f"docs {self.stored}/{self.documents} stored"

    def _calls(self) -> str:
        return f"LLM calls {self.llm_calls} (cached {self.cache_hits})"

    def _count(self, event: dict[str, Any]) -> None:
        """Every LLM task's calls: the document profiles', the judgments', the labels'."""
        self.llm_calls += int(event.get("llm_calls", 0))
        self.cache_hits += int(event.get("cache_hits", 0))

    def __call__(self, event: dict[str, Any]) -> None:
        kind = event.get("event")
        if kind == "problem":
            if not self.quiet:
                self.progress.console.print(
                    f"[yellow]skipped[/] {shown(event['source'])}: {shown(event['reason'])}"
                )
                self.reported.add((event["source"], event["reason"]))
        elif kind == "warning":
            if not self.quiet:
                self.progress.console.print(
                    f"[yellow]warning[/] {shown(event['source'])}: {shown(event['reason'])}"
                )
                self.reported.add((event["source"], event["reason"]))
        elif kind == "resumed":
            self.progress.console.print(f"resuming unfinished run {event['thread_id']}")
        elif kind == "loaded":
            self.documents = int(event["documents"])
            self.progress.update(self.task, description="profiling", docs=self._docs())
        elif kind == "profiled":
            self._count(event)
            self.progress.update(self.task, calls=self._calls())
        elif kind == "split":  # documents are split as they start, so the total grows
            self.chunks += int(event["chunks"])
            self.progress.update(self.task, total=self.chunks, description="labelling")
        elif kind in ("decided", "llm"):
            self._count(event)
            self.progress.update(self.task, advance=int(kind == "decided"), calls=self._calls())
        elif kind == "stored":
            self.stored += 1
            self.progress.update(self.task, docs=self._docs())
