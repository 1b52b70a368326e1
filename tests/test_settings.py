"""Settings from the environment: every usual spelling of a flag, one error naming the
variable for anything else, and `chop settings` showing what chop reads."""

from __future__ import annotations

import subprocess
import sys

import pytest

from chop.config import PROCESS_SETTINGS, Context, context_default, env_setting
from chop.terminal.settings_docs import settings_markdown

TRUE = ["true", "True", "TRUE", "yes", "Yes", "on", "ON", "1", " true "]
FALSE = ["false", "False", "FALSE", "no", "NO", "off", "Off", "0"]


@pytest.mark.parametrize("spelling", TRUE)
def test_a_flag_is_on_in_every_usual_spelling(
    spelling: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CHOP_JOINT_EXTRACTION", spelling)  # default off
    monkeypatch.setenv("CHOP_EMBED_FLOAT32", spelling)  # a process setting, same parser
    assert Context().joint_extraction is True
    assert env_setting("CHOP_EMBED_FLOAT32") is True


@pytest.mark.parametrize("spelling", FALSE)
def test_a_flag_is_off_in_every_usual_spelling(
    spelling: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CHOP_USE_CACHE", spelling)  # default on: "false" used to leave it on
    assert Context().use_cache is False


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("CHOP_USE_CACHE", "maybe", "CHOP_USE_CACHE must be true/false, yes/no, on/off or 1/0"),
        ("CHOP_JOINT_EXTRACTION", "2", "CHOP_JOINT_EXTRACTION must be true/false"),
        ("CHOP_K", "five", "CHOP_K must be a whole number, not 'five'"),
        ("CHOP_K", "5.5", "CHOP_K must be a whole number, not '5.5'"),
        ("CHOP_GATE_LOW", "low", "CHOP_GATE_LOW must be a number, not 'low'"),
        ("CHOP_LLM_THREADS", "many", "CHOP_LLM_THREADS must be a whole number, not 'many'"),
    ],
)
def test_a_value_that_does_not_parse_is_one_error_naming_the_variable(
    variable: str, value: str, message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(ValueError, match="^" + message):
        read_every_setting()


def read_every_setting() -> None:
    Context()
    for setting in PROCESS_SETTINGS:
        env_setting(setting.env)


def test_numbers_parse_with_spaces_and_an_empty_value_is_the_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CHOP_K", " 7 ")
    monkeypatch.setenv("CHOP_GATE_HIGH", "0.45")
    monkeypatch.setenv("CHOP_USE_CACHE", "")  # `CHOP_USE_CACHE=` in a .env file
    monkeypatch.setenv("CHOP_MAX_CONCURRENCY", "")
    ctx = Context()
    assert (ctx.k, ctx.gate_high, ctx.use_cache, ctx.max_concurrency) == (7, 0.45, True, 4)
    monkeypatch.setenv("CHOP_EMBEDDING_MODEL", "all-MiniLM-L6-v2-int8")
    assert context_default("embedding_model") == "all-MiniLM-L6-v2-int8"


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run(
        [sys.executable, "-m", "chop.cli", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=120,
    )


def test_chop_settings_shows_the_values_and_the_docs_table() -> None:
    shown = run_cli("settings", env={"CHOP_USE_CACHE": "off", "COLUMNS": "120"})
    assert shown.returncode == 0, shown.stderr
    assert any("CHOP_USE_CACHE" in line and "False" in line for line in shown.stdout.splitlines())
    assert run_cli("settings", "--markdown").stdout == settings_markdown()
    wrong = run_cli("settings", env={"CHOP_USE_CACHE": "nope"})
    assert wrong.returncode == 2
    assert "CHOP_USE_CACHE must be true/false" in wrong.stderr
