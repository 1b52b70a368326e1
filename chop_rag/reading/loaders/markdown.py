"""Markdown: the source is the text (it reads fine); headings become spans."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from markdown_it import MarkdownIt

from chop_rag.reading.documents import SourceDocument
from chop_rag.reading.loaders.common import (
    HeadingTrail,
    LoadError,
    clean_title,
    file_document,
    join_segments,
)

_FRONT_MATTER_END = re.compile(r"^(?:---|\.\.\.)$")
_FRONT_MATTER_TITLE = re.compile(r"^title:\s*(.+?)\s*$", re.IGNORECASE)


def load_markdown(path: Path, text: str) -> SourceDocument:
    """Keep the Markdown source as the text (it reads fine); headings become spans."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = [line.rstrip() for line in text.split("\n")]
    body_start, front_title = _front_matter(lines)

    tokens = MarkdownIt("commonmark").parse("\n".join(lines[body_start:]))
    headings: list[tuple[int, int, str]] = []  # (line, level, text)
    for i, token in enumerate(tokens):
        if token.type == "heading_open" and token.map and i + 1 < len(tokens):
            heading = _inline_text(tokens[i + 1])
            if heading:
                headings.append((body_start + token.map[0], int(token.tag[1]), heading))

    segments: list[tuple[str, dict[str, Any]]] = []
    first = headings[0][0] if headings else len(lines)
    segments.append(("\n".join(lines[:first]), {}))
    trail = HeadingTrail()
    for n, (line, level, heading) in enumerate(headings):
        end = headings[n + 1][0] if n + 1 < len(headings) else len(lines)
        segments.append(("\n".join(lines[line:end]), {"heading": trail.enter(level, heading)}))

    body, spans = join_segments(segments)
    if not body.strip():
        raise LoadError("empty: no text")
    h1 = next((h for _line, level, h in headings if level == 1), "")
    title = h1 or front_title or clean_title(path.stem)
    return file_document(path, title, body, "markdown", spans)


def _front_matter(lines: list[str]) -> tuple[int, str]:
    """(first body line, title) past a YAML front-matter block, so it is not read as headings."""
    if not lines or lines[0] != "---":
        return 0, ""
    for i in range(1, min(len(lines), 200)):
        if _FRONT_MATTER_END.match(lines[i]):
            title = ""
            for line in lines[1:i]:
                found = _FRONT_MATTER_TITLE.match(line)
                if found:
                    title = " ".join(found.group(1).strip("\"'").split())
                    break
            return i + 1, title
    return 0, ""


def _inline_text(token: Any) -> str:
    """Plain text of a heading's inline token (markup such as ** and ` removed)."""
    if token.type != "inline":
        return ""
    pieces: list[str] = []
    for child in token.children or []:
        if child.type in {"text", "code_inline", "image", "html_inline"}:
            pieces.append(child.content)
        elif child.type in {"softbreak", "hardbreak"}:
            pieces.append(" ")
    return " ".join("".join(pieces).split())
