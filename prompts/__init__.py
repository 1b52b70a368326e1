"""Prompt templates as editable Markdown files: a '## system' and a '## user' section each.

Placeholders use str.format syntax ({title}); double the braces for literal JSON.
Set CHOP_PROMPTS_DIR to a folder of files with the same names to use your own wording.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

_HERE = Path(__file__).resolve().parent
_SECTION = re.compile(r"^## (system|user)\s*$", re.MULTILINE)


@lru_cache(maxsize=32)
def _load(path: Path) -> tuple[str, str]:
    parts = _SECTION.split(path.read_text(encoding="utf-8"))
    sections = {parts[i]: parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}
    if set(sections) != {"system", "user"}:
        raise ValueError(f"{path} needs a '## system' and a '## user' section")
    return sections["system"], sections["user"]


def prompt_path(name: str) -> Path:
    folder = Path(os.environ.get("CHOP_PROMPTS_DIR", _HERE))
    return folder / f"{name}.md"


def template(name: str) -> tuple[str, str]:
    """The (system, user) templates of prompt ``name``, as the files hold them."""
    return _load(prompt_path(name))


def render(name: str, **values: object) -> list[BaseMessage]:
    """The chat messages of prompt ``name`` with ``values`` filled in."""
    system, user = _load(prompt_path(name))
    return [SystemMessage(content=system), HumanMessage(content=user.format(**values))]
