"""Issue 13's target: a scripted fault run ends with the clean run's chunks and one clear line
per problem (tests/fault_run.py; the stub LLM, never the real model; minutes, so `slow`)."""

from __future__ import annotations

import os

import pytest

from tests.fault_run import fault_run

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        bool(os.environ.get("CHOP_DATABASE_URL")), reason="restarts the embedded server"
    ),
]

STEPS = [
    "clean",
    "llm-down",
    "llm-hung",
    "kill-loading",
    "kill-llm",
    "kill-embed",
    "kill-persist",
    "kill-after-commit",
    "db-restart",
    "rerun",
]


def test_every_fault_ends_with_the_clean_runs_chunks_and_one_line_per_problem() -> None:
    result = fault_run(good_documents=3)
    runs = {run["step"]: run for run in result["runs"]}
    assert list(runs) == STEPS
    assert result["hostile_files"] == 21

    comparison = result["comparison"]
    assert comparison["chunks_b"] == comparison["chunks_a"] > 0
    assert comparison["chunks_equal"] and comparison["documents_equal"], comparison
    assert comparison["max_vector_difference"] <= comparison["vector_tolerance"]
    assert comparison["flagged_chunks_b"] == 0 and comparison["checkpoints_left_b"] == 0

    assert [runs[s]["exit_code"] for s in STEPS] == [0, 3, 3, -9, -9, -9, -9, -9, 0, 0]
    assert all(run["acted"] for run in result["runs"] if run["step"].startswith("kill-"))
    for step in ("llm-down", "llm-hung"):
        said = [line for line in runs[step]["stderr"] if line.startswith("LLM unavailable")]
        assert len(said) == 1, (step, said)
    assert not any("Traceback" in line for run in result["runs"] for line in run["stderr"])
    assert result["problems"] == []  # every per-step message rule, listed by tests.fault_run
