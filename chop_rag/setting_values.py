"""What a setting's value may be: the environment's text parsed as the setting's type, the
type of a value given directly, the ranges and the rules between settings (a gate band's low
end at most its high end). Every problem is found, not just the first (chop_rag.config.Context
reports them in one SettingsError)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal, get_args, get_origin

from pydantic import TypeAdapter, ValidationError

_WHAT = {bool: "true/false, yes/no, on/off or 1/0 (any case)", int: "a whole number"}


class SettingsError(ValueError):
    """Settings that cannot run, every one at once: each problem names its environment
    variable first (``CHOP_K: ...``), whether the value came from it, a CLI flag or a run's
    ``context``, so a wrong .env is fixed in one pass."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        if len(problems) == 1:
            super().__init__(problems[0])
        else:
            super().__init__(f"{len(problems)} settings are wrong: {'; '.join(problems)}")


@dataclass(frozen=True)
class Unparsed:
    """An environment variable's text that is not of its setting's type, held in the field
    until Context reports it with every other problem."""

    env: str
    raw: str
    what: str


def read_env(name: str, default: str | bool | float) -> Any:
    """The environment variable as ``default``'s type, or an :class:`Unparsed` when it is
    not one; unset, or empty for a flag or a number, the default.

    Flags and numbers are parsed by pydantic's lax validators (what pydantic-settings does):
    a flag is true/false, yes/no, on/off, 1/0 (or t/f, y/n) in any case. Before, only "0"/"1"
    counted and CHOP_USE_CACHE=false left the cache on, silently."""
    raw = os.environ.get(name)
    if raw is None or (raw.strip() == "" and not isinstance(default, str)):
        return default
    if isinstance(default, str):
        return raw
    kind = type(default)
    try:
        return TypeAdapter(kind).validate_python(raw.strip(), strict=False)
    except ValidationError:
        return Unparsed(name, raw, _WHAT.get(kind, "a number"))


def setting_problem(name: str, value: Any, expected: Any) -> str | None:
    """What is wrong with ``value`` for the type of the setting ``name``; None when it fits."""
    if get_origin(expected) is Literal:
        choices = get_args(expected)
        if value not in choices:
            return f"setting {name!r} must be one of {', '.join(map(repr, choices))}, got {value!r}"
        return None
    if expected is bool:
        fits = isinstance(value, bool)
    elif expected is int:
        fits = isinstance(value, int) and not isinstance(value, bool)
    elif expected is float:
        fits = isinstance(value, int | float) and not isinstance(value, bool)
    else:
        fits = isinstance(value, expected)
    if fits:
        return None
    return f"setting {name!r} must be {expected.__name__}, got {type(value).__name__} {value!r}"


def value_problems(
    ctx: Any, wrong_type: set[str], max_k: int
) -> Iterator[tuple[tuple[str, ...], str]]:
    """(the settings, what is wrong) for each of ``ctx``'s values of the right type that
    cannot run (those in ``wrong_type`` are not looked at); a check of several settings only
    where each one alone is fine."""
    bad = set(wrong_type)

    def fails(names: tuple[str, ...], problem: str) -> tuple[tuple[str, ...], str]:
        bad.update(names)
        return names, problem

    for name, low in (("max_concurrency", 1), ("k", 1), ("chunk_tokens", 1), ("ef_search", 1)):
        if name not in bad and getattr(ctx, name) < low:
            yield fails(
                (name,),
                f"{name} must be a whole number of at least {low}, not {getattr(ctx, name)!r}",
            )
    if "k" not in bad and ctx.k > max_k:
        yield fails(("k",), f"k must be at most {max_k}, not {ctx.k}")
    for name in ("section_weight", "gate_low", "gate_high"):
        if name not in bad and not 0 <= getattr(ctx, name) <= 1:
            yield fails((name,), f"{name} must be between 0 and 1, not {getattr(ctx, name)!r}")
    for name in (
        "llm_timeout_s",
        "llm_deadline_s",
        "checkpoint_retention_days",
        "database_outage_s",
    ):
        if name not in bad and not getattr(ctx, name) > 0:
            yield fails((name,), f"{name} must be positive, not {getattr(ctx, name)!r}")
    if {"chunk_overlap", "chunk_tokens"}.isdisjoint(bad) and not (
        0 <= ctx.chunk_overlap < ctx.chunk_tokens
    ):
        yield fails(
            ("chunk_overlap", "chunk_tokens"),
            "chunk_overlap must be at least 0 and smaller than chunk_tokens, not "
            f"{ctx.chunk_overlap} with chunk_tokens {ctx.chunk_tokens}",
        )
    if {"gate_low", "gate_high"}.isdisjoint(bad) and ctx.gate_low > ctx.gate_high:
        yield fails(
            ("gate_low", "gate_high"),
            f"gate_low must be at most gate_high, not {ctx.gate_low!r} with gate_high "
            f"{ctx.gate_high!r}",
        )
