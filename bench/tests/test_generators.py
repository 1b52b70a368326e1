"""bench.studies.generators: models named on the command line, and figures per model beside
the 1.5B."""

from __future__ import annotations

import argparse
from typing import Any

import pytest

from bench.studies.generators import Generator, markdown, parse_model, probe_summary, summaries


def record(model: str, seconds: float, **extra: Any) -> dict[str, Any]:
    return {
        "model": model,
        "mode": "quote",
        "seconds": seconds,
        "llm_seconds": seconds - 0.5,
        "rouge_l": 0.5,
        "lead": None,
        "model_failed": False,
        **extra,
    }


def test_a_model_is_name_equals_a_gguf_path() -> None:
    assert parse_model("small=/m/x.gguf") == Generator("small", "/m/x.gguf")
    for wrong in ("/m/x.gguf", "small=/m/x.bin", "=/m/x.gguf"):
        with pytest.raises(argparse.ArgumentTypeError):
            parse_model(wrong)


def test_each_model_is_summarised_with_its_time_as_a_ratio_to_the_baseline() -> None:
    records = {
        "remote Yes/No": [
            record("big", 10.5, yes_no_right=True, yes_no_unsaid=False),
            record("big", 8.5, yes_no_right=True, yes_no_unsaid=False),
            record("small", 5.5, yes_no_right=False, yes_no_unsaid=False),
            record("small", 4.5, yes_no_right=True, yes_no_unsaid=True, verdict="overruled"),
        ],
        "emanual (lead)": [
            {**record("big", 9.5), "mode": "lead", "lead": "backed"},
            {**record("small", 3.5), "mode": "lead", "lead": "unbacked", "model_failed": True},
        ],
    }
    rows = summaries(records, ["big", "small"])
    yes_no = rows["remote Yes/No"]
    assert yes_no["big"]["seconds_p50"] == 9.5 and yes_no["big"]["seconds_p50_ratio"] == 1.0
    assert yes_no["small"]["seconds_p50"] == 5.0 and yes_no["small"]["seconds_p50_ratio"] == 0.53
    assert yes_no["small"]["yes_no_right"] == 0.5 and yes_no["small"]["yes_no_unsaid"] == 0.5
    assert yes_no["small"]["verdict_overruled"] == 0.5 and yes_no["big"]["verdict_overruled"] == 0
    assert yes_no["big"]["lead_shown"] is None, "no lead is asked for in quote mode"
    lead = rows["emanual (lead)"]
    assert lead["big"]["lead_shown"] == 1.0 and lead["small"]["lead_dropped"] == 1.0
    assert lead["small"]["model_failed"] == 1.0
    text = markdown(
        {
            "summaries": rows,
            "models": {"big": {"bytes": 2**21, "sha256": "ab"}, "small": {"bytes": 2**20}},
            "settings": {},
        }
    )
    assert "| remote Yes/No | small | 1 | 2 | 5.0 |" in text


def test_the_probe_scores_each_models_own_verdicts_on_yes_and_no_passages() -> None:
    records: list[dict[str, Any]] = [
        {"model": "big", "expected": "yes", "verdict": "yes"},
        {"model": "big", "expected": "no", "verdict": "no"},
        {"model": "small", "expected": "yes", "verdict": "yes"},
        {"model": "small", "expected": "no", "verdict": "yes"},
        {"model": "small", "expected": "no", "verdict": None},
    ]
    rows = probe_summary(records, ["big", "small"])
    assert rows["big"] == {
        "passages": 2, "right": 1.0, "right_on_yes": 1.0, "right_on_no": 1.0, "failed": 0.0
    }  # fmt: skip
    assert rows["small"]["right"] == 0.333 and rows["small"]["right_on_no"] == 0.0
    assert rows["small"]["failed"] == 0.333
