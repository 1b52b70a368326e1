"""The formats chop reads, in one registry: a file's suffix names its format, and a JSON file
is read as the JSON format whose shape it has (an E-Manual corpus: ``section_N`` objects),
never for its suffix alone: any other JSON is not a format chop reads."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chop_rag.reading.documents import SourceDocument
from chop_rag.reading.loaders.common import LoadError, decode, read_bytes, read_json
from chop_rag.reading.loaders.emanual import NOT_EMANUAL, emanual_document, is_emanual
from chop_rag.reading.loaders.html import load_html
from chop_rag.reading.loaders.markdown import load_markdown
from chop_rag.reading.loaders.pdf import load_pdf
from chop_rag.reading.loaders.text import load_text

NOT_A_FORMAT = f"{NOT_EMANUAL}: not a format chop reads"


@dataclass(frozen=True)
class Format:
    """A format: the suffixes that name it, and how a file of it becomes a document."""

    name: str
    suffixes: frozenset[str]
    load: Callable[[Path, int], SourceDocument]  # (path, max_file_mb); LoadError when unusable


@dataclass(frozen=True)
class JsonFormat:
    """A JSON format: recognised by the shape of the parsed value."""

    name: str
    recognises: Callable[[Any], bool]
    load: Callable[[Path, Any], SourceDocument]  # (path, parsed value)


def decoded(read: Callable[[Path, str], SourceDocument]) -> Callable[[Path, int], SourceDocument]:
    """A text format's loader: the bytes decoded first; replaced bad bytes noted as a warning."""

    def load(path: Path, max_file_mb: int) -> SourceDocument:
        notes: list[str] = []
        document = read(path, decode(read_bytes(path, max_file_mb), notes))
        if notes:
            document["metadata"]["warnings"] = notes
        return document

    return load


JSON_FORMATS = (JsonFormat("emanual", is_emanual, emanual_document),)


def load_json(path: Path, max_file_mb: int) -> SourceDocument:
    """A JSON file as the JSON format whose shape it has."""
    data = read_json(path, max_file_mb)
    if isinstance(data, dict) and not data:
        raise LoadError("empty: no sections")
    for json_format in JSON_FORMATS:
        if json_format.recognises(data):
            return json_format.load(path, data)
    raise LoadError(NOT_A_FORMAT)


FORMATS = (
    Format("text", frozenset({".txt", ".text"}), decoded(load_text)),
    Format("markdown", frozenset({".md", ".markdown"}), decoded(load_markdown)),
    Format("html", frozenset({".html", ".htm"}), decoded(load_html)),
    Format("pdf", frozenset({".pdf"}), load_pdf),
    Format("json", frozenset({".json"}), load_json),
)
SUPPORTED_SUFFIXES: frozenset[str] = frozenset().union(*(f.suffixes for f in FORMATS))
PDF_SUFFIXES = next(f.suffixes for f in FORMATS if f.name == "pdf")


def load_file(path: Path, *, max_file_mb: int = 50) -> list[SourceDocument]:
    """Load one file by its format; raises LoadError(reason) when it cannot be used."""
    path = Path(path)
    suffix = path.suffix.lower()
    for file_format in FORMATS:
        if suffix in file_format.suffixes:
            return [file_format.load(path, max_file_mb)]
    raise LoadError(unsupported_reason(suffix))


def unsupported_reason(suffix: str) -> str:
    known = ", ".join(sorted(SUPPORTED_SUFFIXES))
    if not suffix:
        return f"unsupported file type (no suffix; supported: {known})"
    return f"unsupported file type '{suffix}' (supported: {known})"
