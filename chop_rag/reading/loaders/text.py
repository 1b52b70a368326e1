"""Plain text: the file's text, titled by its file name."""

from __future__ import annotations

from pathlib import Path

from chop_rag.reading.documents import SourceDocument
from chop_rag.reading.loaders.common import LoadError, clean_title, file_document, normalize_text


def load_text(path: Path, text: str) -> SourceDocument:
    text = normalize_text(text)
    if not text.strip():
        raise LoadError("empty: no text")
    return file_document(path, clean_title(path.stem), text, "text", [])
