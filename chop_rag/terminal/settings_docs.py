"""The settings table of README.md and docs/deploy.md, made from chop_rag.config's definitions
(``chop settings --markdown`` / ``--write FILE``), so the docs cannot drift from the code:
tests/test_docs_consistency.py checks that the docs hold it."""

from __future__ import annotations

from dataclasses import fields

from chop_rag.config import (
    CALLER_SETTINGS,
    PROCESS_SETTINGS,
    Context,
    ProcessSetting,
    env_of,
    env_setting,
)


def _shown(default: object) -> str:
    if default == "":
        return "*(empty)*"
    if isinstance(default, bool):
        return f"`{str(default).lower()}`"
    return f"`{default}`"


def settings_markdown() -> str:
    """The settings table of README.md and docs/deploy.md, made from the definitions above
    (`chop settings --markdown`); tests/test_docs_consistency.py checks the docs hold it."""
    rows = ["| variable | context key | default | meaning |", "|---|---|---|---|"]
    for spec in fields(Context):
        env, default = env_of(spec)["env"], env_of(spec)["default_when_unset"]
        text = str(spec.metadata["description"]).replace("|", "\\|")
        key = (
            f"`{spec.name}`"
            if spec.name in CALLER_SETTINGS
            else f"`{spec.name}` (not per server run)"
        )
        rows.append(f"| `{env}` | {key} | {_shown(default)} | {text} |")
    for setting in PROCESS_SETTINGS:
        text = setting.description.replace("|", "\\|")
        rows.append(f"| `{setting.env}` | (process) | {setting.shown_default} | {text} |")
    return "\n".join(rows) + "\n"


SETTINGS_TABLE_START = "<!-- settings table: `chop settings --write FILE` makes it -->"
SETTINGS_TABLE_END = "<!-- end of settings table -->"


def with_settings_table(document: str) -> str:
    """``document`` with the text between the settings-table markers replaced by
    :func:`settings_markdown`; ValueError when the markers are missing."""
    start, end = document.find(SETTINGS_TABLE_START), document.find(SETTINGS_TABLE_END)
    if start < 0 or end < start:
        raise ValueError(f"no {SETTINGS_TABLE_START} ... {SETTINGS_TABLE_END} markers")
    head = document[: start + len(SETTINGS_TABLE_START)]
    return f"{head}\n{settings_markdown()}{document[end:]}"


def process_setting_shown(setting: ProcessSetting) -> str:
    """A process setting's value as `chop settings` shows it: a key only as "(set)", and the
    default in the words of the docs' table ("CPU count", not the 0 that stands for it)."""
    value = env_setting(setting.env)
    if value == setting.default:
        return setting.shown_default.strip("*")
    return "(set)" if setting.env.endswith(("_KEY", "_KEYS")) else repr(value)
