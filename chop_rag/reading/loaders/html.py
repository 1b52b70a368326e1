"""HTML: the readable text of the page; scripts, styles and navigation dropped; headings
become spans."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bs4 import BeautifulSoup, NavigableString, Tag
from bs4.element import PreformattedString

from chop_rag.reading.documents import SourceDocument
from chop_rag.reading.loaders.common import (
    HeadingTrail,
    LoadError,
    clean_title,
    file_document,
    join_segments,
)

_HTML_SKIP = frozenset({"script", "style", "nav", "noscript", "template", "head", "title"})
_HTML_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_HTML_PARAGRAPH = frozenset(
    {
        *_HTML_HEADINGS,
        "p",
        "pre",
        "blockquote",
        "table",
        "ul",
        "ol",
        "dl",
        "figure",
        "hr",
        "section",
        "article",
        "header",
        "footer",
        "main",
        "aside",
        "form",
        "fieldset",
        "address",
        "details",
    }
)
_HTML_LINE = frozenset(
    {
        "div",
        "li",
        "tr",
        "dt",
        "dd",
        "caption",
        "figcaption",
        "summary",
        "legend",
        "body",
        "html",
        "center",
        "option",
        "thead",
        "tbody",
        "tfoot",
    }
)


class _HtmlText:
    """Collects readable text per heading section, with newlines between block elements."""

    def __init__(self) -> None:
        self.segments: list[tuple[list[str], dict[str, Any]]] = [([], {})]
        self._newlines = 1  # trailing newlines of the current segment; >0 means "at line start"
        self._space = True

    def start_section(self, meta: dict[str, Any]) -> None:
        self.segments.append(([], meta))
        self._newlines, self._space = 1, True

    def block(self, newlines: int) -> None:
        parts = self.segments[-1][0]
        if parts and self._newlines < newlines:
            parts.append("\n" * (newlines - self._newlines))
            self._newlines, self._space = newlines, True

    def raw(self, text: str) -> None:
        """Text whose whitespace matters (<pre>, <br>)."""
        if text:
            self.segments[-1][0].append(text)
            stripped = text.rstrip("\n")
            self._newlines = len(text) - len(stripped) if stripped else self._newlines + len(text)
            self._space = text[-1].isspace()

    def text(self, text: str) -> None:
        """Ordinary HTML text: any run of whitespace is one space."""
        collapsed = " ".join(text.split())
        if not collapsed:
            if text and not self._space:
                self.segments[-1][0].append(" ")
                self._space = True
            return
        if text[0].isspace() and not self._space:
            collapsed = " " + collapsed
        if text[-1].isspace():
            collapsed += " "
        self.segments[-1][0].append(collapsed)
        self._newlines, self._space = 0, collapsed.endswith(" ")


def load_html(path: Path, markup: str) -> SourceDocument:
    """Readable text of the page; scripts, styles and navigation dropped; headings → spans."""
    soup = BeautifulSoup(markup, "html.parser")
    title_tag = soup.find("title")
    title = " ".join(title_tag.get_text(" ").split()) if isinstance(title_tag, Tag) else ""

    out = _HtmlText()
    trail = HeadingTrail()
    first_h1 = ""
    pre_depth = 0
    stack: list[tuple[Any, bool]] = [(soup, False)]
    while stack:
        node, leaving = stack.pop()
        if isinstance(node, Tag):
            name = node.name.lower()
            if leaving:
                if name == "pre":
                    pre_depth -= 1
                if name in _HTML_PARAGRAPH:
                    out.block(2)
                elif name in _HTML_LINE:
                    out.block(1)
                continue
            if name in _HTML_SKIP:
                continue
            if name in _HTML_HEADINGS:
                heading = " ".join(node.get_text(" ").split())
                if heading:
                    level = _HTML_HEADINGS[name]
                    first_h1 = first_h1 or (heading if level == 1 else "")
                    out.start_section({"heading": trail.enter(level, heading)})
            if name in _HTML_PARAGRAPH:
                out.block(2)
            elif name in _HTML_LINE:
                out.block(1)
            if name == "br":
                out.raw("\n")
            elif name == "pre":
                pre_depth += 1
            elif name == "li":
                out.text("- ")
            elif name in {"td", "th"} and isinstance(node.find_previous_sibling(), Tag):
                out.text(" | ")
            stack.append((node, True))
            stack.extend((child, False) for child in reversed(node.contents))
        elif isinstance(node, NavigableString) and not isinstance(node, PreformattedString):
            if pre_depth:
                out.raw(str(node))
            else:
                out.text(str(node))

    segments = [("".join(parts), meta) for parts, meta in out.segments]
    body, spans = join_segments(segments)
    if not body.strip():
        raise LoadError("empty: no text")
    return file_document(path, title or first_h1 or clean_title(path.stem), body, "html", spans)
