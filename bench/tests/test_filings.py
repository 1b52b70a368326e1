"""bench.filings: one command for both FinanceBench sets; a set it does not know is one line."""

from __future__ import annotations

import pytest

from bench import filings


def test_both_sets_are_run_by_default_each_in_its_own_collection() -> None:
    args = filings.parser().parse_args([])
    assert args.sets == ["dev", "wide"]
    assert filings.COLLECTIONS == {"dev": "fin_dev", "wide": "fin_wide"}


def test_an_unknown_set_is_one_clear_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert filings.main(["--sets", "dev,nope"]) == 2
    assert capsys.readouterr().err.strip() == "unknown set(s): nope; choose from dev, wide"
