"""The stage profile: interval arithmetic on hand-made spans, CPU shared out by the threads
that ran, and a real ingest reporting every stage."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from chop_rag.api import ingest
from chop_rag.config import Context
from chop_rag.stage_profile import (
    STAGES,
    Span,
    add_spans,
    coalesced,
    length,
    overlap,
    stage_profile,
    timed,
    union,
)
from chop_rag.store import Store
from tests.fakes import ScriptedChatModel


def span(stage: str, start: float, end: float, cpu: float = 0.0) -> Span:
    return Span(stage=stage, start=start, end=end, seconds=end - start, cpu=cpu, count=1)


def test_union_length_and_overlap_count_each_second_once() -> None:
    assert union([(3, 5), (0, 1), (1, 2), (4, 6)]) == [(0, 2), (3, 6)]
    assert length([(0, 2), (1, 3), (5, 6)]) == 4
    assert overlap([(0, 4), (6, 8)], [(3, 7)]) == 2
    assert overlap([(0, 1)], [(2, 3)]) == 0
    assert length([]) == 0 and overlap([], [(0, 1)]) == 0


def test_spans_of_a_stage_that_overlap_merge_keeping_their_summed_seconds_and_cpu() -> None:
    merged = coalesced(
        [span("embed", 3, 6, 1.0), span("embed", 4, 7, 2.0), span("embed", 8, 9), span("llm", 5, 6)]
    )
    assert merged == [
        Span(stage="embed", start=3, end=7, seconds=6, cpu=3.0, count=2),
        span("embed", 8, 9),
        span("llm", 5, 6),
    ]
    assert add_spans(None, [span("llm", 0, 1)]) == [span("llm", 0, 1)]


def test_the_profile_adds_busy_seconds_overlaps_and_cpu_per_stage() -> None:
    spans = [
        span("parse", 100, 102, cpu=4.0),
        span("llm", 101, 103, cpu=1.0),
        span("llm", 102, 104, cpu=1.0),
        span("embed", 103, 106, cpu=3.0),
        span("embed", 104, 107, cpu=0.5),  # a second document waiting for the lock
        span("persist", 106, 108, cpu=0.5),
        span("embed", 90, 95, cpu=9.0),  # an earlier process's part of a resumed run
    ]
    profile = stage_profile(spans, started=100, ended=110, cpu_process=9.0, cpu_children=3.0)
    stages = profile["stages"]
    assert list(stages) == list(STAGES)
    assert stages["parse"] == {
        "busy_s": 2, "summed_s": 2, "cpu_s": 4.0, "spans": 1, "with_embed_s": 0
    }  # fmt: skip
    assert (stages["llm"]["busy_s"], stages["llm"]["summed_s"]) == (3, 4)
    assert (stages["embed"]["busy_s"], stages["embed"]["summed_s"], stages["embed"]["spans"]) == (
        4,
        6,
        2,
    )
    assert stages["llm"]["with_embed_s"] == 1  # 103-104
    assert stages["persist"]["with_embed_s"] == 1  # 106-107
    assert stages["split"] == {
        "busy_s": 0, "summed_s": 0, "cpu_s": 0, "spans": 0, "with_embed_s": 0
    }  # fmt: skip
    assert profile["wall_s"] == 10 and profile["busy_s"] == 8  # 100-108
    assert profile["overlap_s"] == (2 + 3 + 4 + 2) - 8
    assert profile["idle_s"] == 2
    assert profile["cpu_s"] == 12.0
    assert profile["cpu_outside_stages_s"] == pytest.approx(12.0 - 10.0)


def test_a_span_still_open_at_the_end_is_clipped_to_the_run() -> None:
    profile = stage_profile(
        [span("embed", 5, 20)], started=0, ended=10, cpu_process=0, cpu_children=0
    )
    assert profile["stages"]["embed"]["busy_s"] == 5 and profile["idle_s"] == 5


def test_cpu_goes_to_the_span_whose_thread_ran_not_to_one_that_waited() -> None:
    spans: list[Span] = []
    spinning_done = threading.Event()

    def spin() -> None:
        with timed("embed", spans):
            begun = time.thread_time()
            while time.thread_time() - begun < 0.2:
                pass
        spinning_done.set()

    def wait() -> None:
        with timed("persist", spans):
            spinning_done.wait()

    threads = [threading.Thread(target=wait), threading.Thread(target=spin)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    cpu = {s["stage"]: s["cpu"] for s in spans}
    assert cpu["embed"] >= 0.15
    assert cpu["persist"] < 0.05


def test_an_ingest_reports_every_stage_within_its_wall_time(
    context: Context, store: Store, scripted: ScriptedChatModel, tmp_path: Path
) -> None:
    for name, topic in (("coolwave-225b.md", "Filter"), ("coolwave-330c.md", "Tank")):
        text = f"# Coolwave {name[9:13].upper()}\n\n" + "\n\n".join(
            f"## {topic} {i}\n\n" + f"{topic} care step {i} uses warm water and a soft cloth. " * 8
            for i in range(4)
        )
        (tmp_path / name).write_text(text, encoding="utf-8")
    llm = context.with_overrides(continuity_mode="llm", chunk_tokens=40, chunk_overlap=0)
    report = ingest([tmp_path], context=llm)
    assert report["added"] == 2
    profile = report["stage_profile"]
    assert set(STAGES) <= set(profile["stages"])
    for stage in STAGES:
        times = profile["stages"][stage]
        assert times["spans"] >= 1, stage
        assert 0 < times["busy_s"] <= profile["wall_s"], stage
        assert times["busy_s"] <= times["summed_s"] + 1e-9, stage
        assert times["cpu_s"] >= 0, stage
    assert profile["stages"]["llm"]["spans"] == report["stats"]["llm_calls"]
    assert profile["busy_s"] <= profile["wall_s"]
    assert profile["overlap_s"] >= -1e-9
    assert profile["cpu_outside_stages_s"] >= -0.05  # os.times() counts children in ticks
