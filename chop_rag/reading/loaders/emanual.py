"""E-Manual JSON (one device's manual as ``section_N`` objects): ONE document, one span per
section, titled by the device. A JSON file is read as one when it has that shape, not for its
suffix (see ``is_emanual``)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from chop_rag.reading.documents import SourceDocument, make_document
from chop_rag.reading.loaders.common import (
    LoadError,
    clean_title,
    doc_id_of,
    join_segments,
    normalize_text,
    read_json,
)

NOT_EMANUAL = "JSON is not an E-Manual corpus (expected section_N objects)"
_SECTION_KEY = re.compile(r"^section_(\d+)$")


def is_emanual(data: Any) -> bool:
    """Whether parsed JSON has the E-Manual shape: an object with ``section_N`` objects."""
    return isinstance(data, dict) and any(
        _SECTION_KEY.match(str(key)) and isinstance(value, dict) for key, value in data.items()
    )


def load_emanual(path: Path, title: str | None = None, *, max_file_mb: int = 50) -> SourceDocument:
    """One E-Manual corpus file as ONE document, one span per section (title = device name)."""
    path = Path(path)
    data = read_json(path, max_file_mb)
    if isinstance(data, dict) and not data:
        raise LoadError("empty: no sections")
    if not is_emanual(data):
        raise LoadError(NOT_EMANUAL)
    return emanual_document(path, data, title)


def emanual_document(path: Path, data: dict[str, Any], title: str | None = None) -> SourceDocument:
    """The document of an E-Manual corpus already parsed (``is_emanual(data)``)."""
    sections = emanual_sections(data)
    parts: list[tuple[str, dict[str, Any]]] = [
        (text, {"heading": heading, "section": key}) for key, _title, text, heading in sections
    ]
    text, spans = join_segments(parts)
    if not text:
        raise LoadError("empty: no text")
    doc_id = doc_id_of(path)
    return make_document(
        doc_id,
        title if title else emanual_device_name(path),
        text,
        source=doc_id,
        metadata={"path": doc_id, "format": "emanual", "sections": len(sections)},
        spans=spans,
    )


def emanual_device_name(path: str | Path) -> str:
    """The device a corpus file is about, from its name: "Galaxy_S10_corpus.json" → "Galaxy S10"."""
    stem = Path(path).stem
    stem = re.sub(r"[_\-\s]*(?:manual[_\-\s]*)?corpus$", "", stem, flags=re.IGNORECASE)
    stem = re.sub(r"[_\-\s]+manual$", "", stem, flags=re.IGNORECASE) or stem
    name = clean_title(stem) or clean_title(Path(path).stem)
    return name[:1].upper() + name[1:]


def emanual_sections(data: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """(key, title, text, heading path) of each section, in numeric section order.

    The heading path joins the titles of the section's ancestors ("section_hierarchy":
    "section_0>section_5" → "Features > Night mode"); a missing or broken hierarchy leaves
    the section's own title."""
    keyed = [(int(m.group(1)), key) for key in data if (m := _SECTION_KEY.match(str(key)))]
    if not keyed:
        raise LoadError(NOT_EMANUAL)
    titles = {
        key: " ".join(section["title"].split())
        for key, section in data.items()
        if isinstance(section, dict) and isinstance(section.get("title"), str)
    }
    items: list[tuple[str, str, str, str]] = []
    for _n, key in sorted(keyed):
        section = data[key]
        if not isinstance(section, dict):
            raise LoadError(f"{NOT_EMANUAL}: {key} is not an object")
        lines = section.get("text")
        if isinstance(lines, str):
            lines = [lines]
        if not isinstance(lines, list) or not all(isinstance(line, str) for line in lines):
            raise LoadError(f"{NOT_EMANUAL}: {key} has no 'text' list of strings")
        heading = section.get("title")
        heading = " ".join(heading.split()) if isinstance(heading, str) else ""
        text = " ".join(part for line in lines if (part := line.strip()))
        hierarchy = section.get("section_hierarchy")
        trail = hierarchy.split(">") if isinstance(hierarchy, str) else [key]
        heading_path = " > ".join(t for p in trail if (t := titles.get(p.strip(), ""))) or heading
        items.append((key, heading, normalize_text(text), heading_path))
    return items
