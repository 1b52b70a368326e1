"""Where an ingest's time and CPU went, per stage: parse, llm, split, embed, persist.

Nodes record spans: a stage, its start and end (``time.time()``, so the spans of a run that
was resumed in another process still line up) and the CPU seconds it was given. Spans travel
in the graph state (``stage_spans``, reduced by :func:`add_spans`) like the other counters, and
chop_rag.api turns them into the report's ``stage_profile`` (:func:`stage_profile`).

What each stage's span covers:
- parse: chop_rag.reading.loaders reading the input files (nodes/load.py), PDF workers included;
- llm: one span per LLM request sent (chop_rag.models.llm.structured_call; the document profile's
and
  the chunk decisions'), from holding a slot (or llama.cpp's lock) to the reply: answers
  from the cache make none;
- split, embed, persist: the whole node of each document (graphs/ingest.py wraps them with
  :func:`timed_node`), so a node waiting for the embedder's lock is in its stage meanwhile.

Wall time per stage: ``busy_s`` is the union of the stage's spans (the wall seconds at least
one document was in it); ``summed_s`` adds them up (documents waiting for the embedder's lock
count each, so it can exceed the run's wall). ``overlap_s`` is the busy seconds of all stages
added up minus the union of every span: the wall seconds stages ran side by side.
``with_embed_s`` is a stage's busy seconds while embed was busy too (embed is the critical
path of a large ingest).

CPU (``cpu_s``): the process's CPU clock (every thread: torch's and llama.cpp's own threads
too) is read each time a span opens or closes. The CPU spent between two such events goes to
the spans open meanwhile, in proportion to the CPU of the threads that opened them (a node
waiting on a lock or an HTTP reply gets little; evenly where none of them ran); with no span
open it is left to ``cpu_outside_stages_s``. So the stages' CPU adds up to the process's CPU
while spans were open, exactly, and is shared out by a rule: CPU that other threads burn
while a span is open (the graph's own bookkeeping, another ingest in the same process) is
counted in that span. The parse span adds its worker processes' CPU (the children reaped
while it ran). The run's ``cpu_s`` is the process's CPU plus its reaped children's.
"""

from __future__ import annotations

import functools
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, ParamSpec

from typing_extensions import TypedDict

STAGES = ("parse", "llm", "split", "embed", "persist")
CRITICAL = "embed"
P = ParamSpec("P")
Interval = tuple[float, float]


class Span(TypedDict):
    """Time a stage was at work: one interval, or several of one stage that overlapped or
    touched, merged (``seconds`` and ``count`` add theirs up)."""

    stage: str
    start: float  # time.time()
    end: float
    seconds: float  # the merged intervals' lengths added up (>= end - start)
    cpu: float  # CPU seconds given to it (module docstring)
    count: int  # intervals merged into it


class StageTimes(TypedDict):
    busy_s: float  # union of the stage's spans
    summed_s: float  # its spans' lengths added up
    cpu_s: float
    spans: int
    with_embed_s: float  # busy while embed was busy too


class StageProfile(TypedDict):
    wall_s: float
    cpu_s: float  # process + children
    cpu_process_s: float
    cpu_children_s: float
    stages: dict[str, StageTimes]
    busy_s: float  # union of every stage's spans
    overlap_s: float  # sum of the stages' busy_s minus busy_s
    idle_s: float  # wall_s minus busy_s: no stage at work (model loading, the graph's steps)
    cpu_outside_stages_s: float


# ------------------------------------------------------------------ interval arithmetic
def union(intervals: Iterable[Interval]) -> list[Interval]:
    """``intervals`` merged where they overlap or touch, in order."""
    merged: list[Interval] = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def length(intervals: Iterable[Interval]) -> float:
    """Seconds covered by ``intervals`` (each counted once where they overlap)."""
    return sum(end - start for start, end in union(intervals))


def overlap(a: Sequence[Interval], b: Sequence[Interval]) -> float:
    """Seconds covered by both ``a`` and ``b``."""
    first, second = union(a), union(b)
    total, i, j = 0.0, 0, 0
    while i < len(first) and j < len(second):
        low, high = max(first[i][0], second[j][0]), min(first[i][1], second[j][1])
        total += max(0.0, high - low)
        if first[i][1] < second[j][1]:
            i += 1
        else:
            j += 1
    return total


def coalesced(spans: Iterable[Span]) -> list[Span]:
    """Spans of one stage that overlap or touch merged into one: the union, the summed
    seconds and the CPU stay the same, the list stays short (documents waiting on one lock)."""
    merged: list[Span] = []
    for span in sorted(spans, key=lambda s: (s["stage"], s["start"], s["end"])):
        last = merged[-1] if merged else None
        if last is not None and last["stage"] == span["stage"] and span["start"] <= last["end"]:
            merged[-1] = Span(
                stage=last["stage"],
                start=last["start"],
                end=max(last["end"], span["end"]),
                seconds=last["seconds"] + span["seconds"],
                cpu=last["cpu"] + span["cpu"],
                count=last["count"] + span["count"],
            )
        else:
            merged.append(span)
    return merged


def add_spans(left: list[Span] | None, right: list[Span] | None) -> list[Span]:
    """The state's reducer: both lists' spans, coalesced."""
    return coalesced([*(left or []), *(right or [])])


def stage_profile(
    spans: Iterable[Span],
    *,
    started: float,
    ended: float,
    cpu_process: float,
    cpu_children: float,
) -> StageProfile:
    """The profile of a run from ``started`` to ``ended`` (``time.time()``) that used
    ``cpu_process`` and ``cpu_children`` CPU seconds; spans that began before it (the part of
    a resumed run done by an earlier process) are left out, and the rest clipped to it."""
    mine = [s for s in spans if s["start"] >= started]
    by_stage: dict[str, list[Span]] = {}
    for span in mine:
        by_stage.setdefault(span["stage"], []).append(span)
    wall = max(0.0, ended - started)

    def intervals(group: Iterable[Span]) -> list[Interval]:
        return [(s["start"], min(s["end"], ended)) for s in group if s["start"] < ended]

    critical = intervals(by_stage.get(CRITICAL, []))
    stages: dict[str, StageTimes] = {}
    for stage in [*STAGES, *sorted(set(by_stage) - set(STAGES))]:
        group = by_stage.get(stage, [])
        own = intervals(group)
        stages[stage] = StageTimes(
            busy_s=length(own),
            summed_s=sum(s["seconds"] for s in group),
            cpu_s=sum(s["cpu"] for s in group),
            spans=sum(s["count"] for s in group),
            with_embed_s=length(own) if stage == CRITICAL else overlap(own, critical),
        )
    busy = length(intervals(mine))
    cpu = cpu_process + cpu_children
    return StageProfile(
        wall_s=wall,
        cpu_s=cpu,
        cpu_process_s=cpu_process,
        cpu_children_s=cpu_children,
        stages=stages,
        busy_s=busy,
        overlap_s=sum(t["busy_s"] for t in stages.values()) - busy,
        idle_s=wall - busy,
        cpu_outside_stages_s=cpu - sum(t["cpu_s"] for t in stages.values()),
    )


# ------------------------------------------------------------------ CPU accounting
def _thread_clock() -> int | None:
    """The calling thread's CPU clock, readable from other threads (Linux), or None."""
    try:
        return time.pthread_getcpuclockid(threading.get_ident())
    except (AttributeError, OSError):
        return None


def _clock_seconds(clock: int | None) -> float:
    if clock is None:
        return 0.0
    try:
        return time.clock_gettime(clock)
    except OSError:
        return 0.0


class _Open:
    def __init__(self) -> None:
        self.clock = _thread_clock()
        self.thread_cpu = _clock_seconds(self.clock)
        self.cpu = 0.0


class _Ledger:
    """The open spans of this process, and the process CPU shared out among them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: dict[int, _Open] = {}
        self._last = time.process_time()
        self._next = 0

    def _settle(self) -> None:
        """Share the process CPU since the last event among the spans open since then."""
        now = time.process_time()
        spent, self._last = now - self._last, now
        if not self._open:
            return
        ran: dict[int, float] = {}
        for key, span in self._open.items():
            thread_cpu = _clock_seconds(span.clock)
            ran[key] = max(0.0, thread_cpu - span.thread_cpu)
            span.thread_cpu = thread_cpu
        total = sum(ran.values())
        for key, span in self._open.items():
            span.cpu += spent * (ran[key] / total if total > 0 else 1 / len(self._open))

    def open(self) -> int:
        with self._lock:
            self._settle()
            self._next += 1
            self._open[self._next] = _Open()
            return self._next

    def close(self, key: int) -> float:
        """The CPU seconds the span ``key`` was given."""
        with self._lock:
            self._settle()
            return self._open.pop(key).cpu


_LEDGER = _Ledger()


def _children_cpu() -> float:
    times = os.times()
    return times.children_user + times.children_system


def process_cpu() -> tuple[float, float]:
    """CPU seconds of this process (every thread; the clock the spans share out) and of its
    reaped children so far."""
    return time.process_time(), _children_cpu()


@contextmanager
def timed(stage: str, into: list[Span], *, children: bool = False) -> Iterator[None]:
    """Add a span of ``stage`` to ``into`` for the block (also when it raises);
    ``children``: count the CPU of child processes reaped meanwhile (parse workers)."""
    key = _LEDGER.open()
    children_before = _children_cpu() if children else 0.0
    start = time.time()
    try:
        yield
    finally:
        end = time.time()
        cpu = _LEDGER.close(key)
        if children:
            cpu += _children_cpu() - children_before
        into.append(Span(stage=stage, start=start, end=end, seconds=end - start, cpu=cpu, count=1))


def timed_node(stage: str, node: Callable[P, dict[str, Any]]) -> Callable[P, dict[str, Any]]:
    """``node`` (a graph node returning a dict) with a span of ``stage`` added to its result;
    its signature is kept, so LangGraph still gives it the runtime it asks for."""

    @functools.wraps(node)
    def run(*args: P.args, **kwargs: P.kwargs) -> dict[str, Any]:
        spans: list[Span] = []
        with timed(stage, spans):
            result = node(*args, **kwargs)
        return {**result, "stage_spans": [*result.get("stage_spans", []), *spans]}

    return run


PROFILE_COLUMNS = ("stage", "busy s", "summed s", "CPU s", "with embed s", "spans")


def profile_rows(profile: StageProfile) -> list[list[str]]:
    """The profile as table rows (PROFILE_COLUMNS): one per stage, then the whole run."""
    rows = [
        [
            stage,
            f"{t['busy_s']:.1f}",
            f"{t['summed_s']:.1f}",
            f"{t['cpu_s']:.1f}",
            f"{t['with_embed_s']:.1f}",
            str(t["spans"]),
        ]
        for stage, t in profile["stages"].items()
    ]
    outside = f"{profile['cpu_outside_stages_s']:.1f}"
    rows.append(["(no stage)", f"{profile['idle_s']:.1f}", "", outside, "", ""])
    rows.append(["run", f"{profile['wall_s']:.1f}", "", f"{profile['cpu_s']:.1f}", "", ""])
    return rows


def profile_note(profile: StageProfile) -> str:
    """One line under the table: the overlap and where the run's CPU came from."""
    return (
        f"stages overlapped {profile['overlap_s']:.1f} s of {profile['wall_s']:.1f} s wall; "
        f"CPU {profile['cpu_process_s']:.1f} s in this process, "
        f"{profile['cpu_children_s']:.1f} s in parse workers"
    )
