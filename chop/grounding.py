"""Checks that a value the LLM gave is actually written in the text it was given."""

from __future__ import annotations

import re

_token = re.compile(r"[a-z0-9]+\+*")


def tokens(text: str) -> list[str]:
    """Lowercase alphanumeric tokens; a trailing '+' is kept (S9 and S9+ are different)."""
    return _token.findall(text.lower())


def is_grounded(value: str | None, *texts: str) -> bool:
    """True when every token of ``value`` occurs in one of ``texts``."""
    if not value:
        return False
    wanted = tokens(value)
    if not wanted:
        return False
    present = set()
    for text in texts:
        present.update(tokens(text))
    return all(token in present for token in wanted)
