"""Settings from the environment: every usual spelling of a flag, one error naming the
variable for anything else, and `chop settings` showing what chop reads."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from chop_rag.config import PROCESS_SETTINGS, Context, SettingsError, context_default, env_setting
from chop_rag.terminal.settings_docs import settings_markdown

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
        (
            "CHOP_USE_CACHE",
            "maybe",
            "CHOP_USE_CACHE: use_cache must be true/false, yes/no, on/off or 1/0",
        ),
        (
            "CHOP_JOINT_EXTRACTION",
            "2",
            "CHOP_JOINT_EXTRACTION: joint_extraction must be true/false",
        ),
        ("CHOP_K", "five", "CHOP_K: k must be a whole number, not 'five'"),
        ("CHOP_K", "5.5", "CHOP_K: k must be a whole number, not '5.5'"),
        ("CHOP_GATE_LOW", "low", "CHOP_GATE_LOW: gate_low must be a number, not 'low'"),
        ("CHOP_LLM_THREADS", "many", "CHOP_LLM_THREADS: must be a whole number, not 'many'"),
    ],
)
def test_a_value_that_does_not_parse_is_one_error_naming_the_variable(
    variable: str, value: str, message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(SettingsError, match="^" + message):
        read_every_setting()


def test_every_bad_setting_is_reported_at_once_each_by_its_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two wrong values in a .env are two problems in one error, not one per attempt."""
    monkeypatch.setenv("CHOP_K", "five")
    monkeypatch.setenv("CHOP_USE_CACHE", "maybe")
    with pytest.raises(SettingsError) as raised:
        Context(search="foo", chunk_overlap=-1)  # type: ignore[arg-type]
    variables = [problem.split(":")[0] for problem in raised.value.problems]
    assert variables == [
        "CHOP_USE_CACHE",
        "CHOP_K",
        "CHOP_SEARCH",
        "CHOP_CHUNK_OVERLAP, CHOP_CHUNK_TOKENS",
    ]
    assert str(raised.value).startswith("4 settings are wrong: CHOP_USE_CACHE: use_cache must")


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"k": 0}, "CHOP_K: k must be a whole number of at least 1, not 0"),
        ({"k": "5"}, "CHOP_K: setting 'k' must be int, got str '5'"),
        ({"section_weight": 1.5}, "CHOP_SECTION_WEIGHT: section_weight must be between 0 and 1"),
        ({"llm_deadline_s": 0}, "CHOP_LLM_DEADLINE_S: llm_deadline_s must be positive, not 0"),
        ({"collection": "Bad Name"}, "CHOP_COLLECTION: collection name 'Bad Name' must be"),
    ],
)
def test_a_value_given_directly_is_named_by_its_variable_too(
    given: dict[str, object], message: str
) -> None:
    with pytest.raises(SettingsError, match="^" + re.escape(message)):
        Context(**given)  # type: ignore[arg-type]


def test_the_gate_band_must_lie_within_0_and_1_with_its_low_end_at_most_its_high_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CHOP_GATE_LOW", "2")  # the default gate_high is 0.3
    with pytest.raises(SettingsError, match=r"^CHOP_GATE_LOW: gate_low must be between 0 and 1"):
        Context()
    monkeypatch.setenv("CHOP_GATE_LOW", "0.5")
    with pytest.raises(SettingsError) as raised:
        Context()
    assert raised.value.problems == [
        "CHOP_GATE_LOW, CHOP_GATE_HIGH: gate_low must be at most gate_high, not 0.5 with "
        "gate_high 0.3"
    ]
    with pytest.raises(SettingsError, match=r"^CHOP_GATE_HIGH: gate_high must be between 0 and 1"):
        Context(gate_high=-0.1)
    assert Context(gate_high=0.5).gate_low == 0.5  # a band of one point is a band


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
        [sys.executable, "-m", "chop_rag.cli", *args],
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
    assert "CHOP_USE_CACHE: use_cache must be true/false" in wrong.stderr


def test_chop_settings_shows_a_process_default_in_the_words_of_the_table() -> None:
    """CHOP_LLM_THREADS unset means every core: shown as the table's "CPU count", not 0; a key
    is never printed."""
    environment = {"COLUMNS": "200", "CHOP_API_KEYS": "secret-1,secret-2", "CHOP_LLM_THREADS": ""}
    shown = run_cli("settings", env=environment)
    assert shown.returncode == 0, shown.stderr
    rows = {line.split()[1]: line for line in shown.stdout.splitlines() if "CHOP_" in line}
    assert "CPU count" in rows["CHOP_LLM_THREADS"]
    assert "(set)" in rows["CHOP_API_KEYS"] and "secret" not in shown.stdout
    assert "the shipped prompts/" in rows["CHOP_PROMPTS_DIR"]


def test_two_bad_variables_are_both_on_chops_one_error_line() -> None:
    wrong = run_cli("settings", env={"CHOP_K": "five", "CHOP_GATE_LOW": "2"})
    assert wrong.returncode == 2
    assert "CHOP_K: k must be a whole number" in wrong.stderr
    assert "CHOP_GATE_LOW: gate_low must be between 0 and 1, not 2.0" in wrong.stderr
