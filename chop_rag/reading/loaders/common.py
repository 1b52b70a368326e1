"""What every format's loader shares: the one-line LoadError, reading a file's bytes within
the size limit, decoding them to text, normalising it, and making the document with its spans."""

from __future__ import annotations

import json
import math
import os
import re
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from chop_rag.reading.allowed import OutsideFolders, open_for_reading
from chop_rag.reading.documents import SourceDocument, Span, make_document

MB = 1024 * 1024
_MAX_REASON = 240


class LoadError(Exception):
    """A file that cannot become a document; str(err) is a one-line human reason."""

    def __init__(self, reason: str) -> None:
        self.reason = one_line(reason)
        super().__init__(self.reason)


def clean_title(stem: str) -> str:
    """A readable title from a file stem: "_" and "-" become spaces, whitespace collapsed."""
    return " ".join(name_text(stem).replace("_", " ").replace("-", " ").split())


def name_text(name: str) -> str:
    """A file name or path as text PostgreSQL can store: bytes of a name that is not UTF-8
    (Python holds them as lone surrogates, which no text column accepts) are written as
    ``\\xff`` escapes, so the file is still ingested, under a readable, stable id."""
    if not SURROGATES.search(name):
        return name
    try:
        return os.fsencode(name).decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a surrogate that did not come from a file name's bytes
        return SURROGATES.sub("\ufffd", name)


def normalize_text(text: str) -> str:
    """Uniform text so hashes and chunk offsets are stable: LF line ends, no trailing spaces,
    at most two blank lines in a row, no leading/trailing blank lines. Content is kept."""
    text = clean_chars(text.replace("\r\n", "\n").replace("\r", "\n"))
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    text = re.sub(r"\n{4,}", "\n\n\n", text)
    return text.strip("\n")


def read_bytes(path: Path, max_file_mb: int) -> bytes:
    """The file's bytes, refusing (by stat, before reading) anything over the size limit."""
    try:
        st = path.stat()
        if not stat.S_ISREG(st.st_mode):
            raise LoadError("not a regular file")
        limit = max_file_mb * MB if max_file_mb > 0 else 0
        if limit and st.st_size > limit:
            raise LoadError(too_big(st.st_size, max_file_mb))
        with open_for_reading(path) as handle:  # a server run's folders, checked at open
            data = handle.read(limit + 1) if limit else handle.read()
    except OutsideFolders as err:
        raise LoadError(str(err)) from None
    except FileNotFoundError:
        raise LoadError("no such file or directory") from None
    except PermissionError:
        raise LoadError("permission denied") from None
    except IsADirectoryError:
        raise LoadError("is a directory") from None
    except OSError as err:
        raise LoadError(os_reason(err)) from None
    if limit and len(data) > limit:  # grew between stat and read
        raise LoadError(too_big(len(data), max_file_mb))
    if not data.strip():
        raise LoadError("empty: no text")
    return data


_CONTROL_BYTES = bytes([*range(0x00, 0x09), *range(0x0E, 0x1B), *range(0x1C, 0x20), 0x7F])
_HIGH_BYTES = bytes(range(0x80, 0x100))
MAX_BAD_UTF8_SHARE = 0.01  # more bad UTF-8 than this: a legacy (cp1252) file, not a few typos


def decode(data: bytes, notes: list[str] | None = None) -> str:
    """Bytes → str: UTF-8 (BOM or not); UTF-8 with a few bad bytes replaced (U+FFFD) and a
    note saying so; else cp1252 when that is clean and text-like.

    A UTF-8 file with one bad byte must not turn into cp1252 mojibake ("â€™" for every
    apostrophe): only when bad sequences are more than MAX_BAD_UTF8_SHARE of the text is it
    read as cp1252 (a whole legacy Western file).
    """
    if b"\x00" in data or _share(data, _CONTROL_BYTES) > 0.05:
        raise LoadError("binary file, not text")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    text = data.decode("utf-8-sig", errors="replace")
    bad = text.count("\ufffd")
    if bad <= max(1, int(len(text) * MAX_BAD_UTF8_SHARE)):
        if notes is not None:
            notes.append(f"{bad} byte sequence(s) not valid UTF-8, replaced with U+FFFD")
        return text
    try:
        text = data.decode("cp1252")
    except UnicodeDecodeError:
        raise LoadError("not valid UTF-8 text") from None
    if _share(data, _HIGH_BYTES) > 0.3:  # Western text is mostly ASCII
        raise LoadError("not valid UTF-8 text")
    return text


def _share(data: bytes, which: bytes) -> float:
    """Fraction of `data` made of the byte values in `which` (C speed, no Python loop)."""
    if not data:
        return 0.0
    return (len(data) - len(data.translate(None, which))) / len(data)


class HeadingTrail:
    """The path of open headings, so a section is labelled "H1 > H2 > H3"."""

    def __init__(self) -> None:
        self._open: list[tuple[int, str]] = []

    def enter(self, level: int, heading: str) -> str:
        while self._open and self._open[-1][0] >= level:
            self._open.pop()
        self._open.append((level, heading))
        return " > ".join(h for _level, h in self._open)


def join_segments(segments: Sequence[tuple[str, dict[str, Any]]]) -> tuple[str, list[Span]]:
    """Normalise each segment, join the non-empty ones with a blank line, and span them.

    Spans are computed on the final text, so their offsets are exact. Segments with empty
    meta contribute text but no span.
    """
    pieces: list[str] = []
    spans: list[Span] = []
    offset = 0
    for raw, meta in segments:
        text = normalize_text(raw)
        if not text.strip():
            continue
        if pieces:
            offset += 2  # the "\n\n" separator
        if meta:
            spans.append(Span(start=offset, end=offset + len(text), meta=dict(meta)))
        pieces.append(text)
        offset += len(text)
    return "\n\n".join(pieces), spans


def file_document(path: Path, title: str, text: str, fmt: str, spans: list[Span]) -> SourceDocument:
    doc_id = doc_id_of(path)
    title = " ".join(title.split()) or clean_title(path.stem) or path.name
    return make_document(
        doc_id,
        title,
        text,
        source=doc_id,
        metadata={"path": doc_id, "format": fmt},
        spans=spans,
    )


def doc_id_of(path: Path) -> str:
    """The resolved absolute path: stable across runs and working directories."""
    try:
        return name_text(str(path.resolve()))
    except (OSError, RuntimeError):
        return name_text(str(path.absolute()))


SURROGATES = re.compile("[\ud800-\udfff]")


def clean_chars(text: str) -> str:
    """Drop NULs and lone surrogates, which PostgreSQL text columns reject."""
    if "\x00" in text:
        text = text.replace("\x00", "")
    return SURROGATES.sub("\ufffd", text)


def too_big(size: int, max_file_mb: int) -> str:
    shown = round(size / MB, 1)
    if shown <= max_file_mb:  # "1 MB is over the 1 MB limit" would read as a bug
        shown = math.ceil(size / MB * 10) / 10
    return f"{shown:g} MB is over the {max_file_mb} MB limit (CHOP_MAX_FILE_MB)"


def os_reason(err: OSError) -> str:
    return (err.strerror or type(err).__name__).lower()


def one_line(text: str) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= _MAX_REASON else line[: _MAX_REASON - 1] + "…"


def read_json(path: Path, max_file_mb: int) -> Any:
    """The file's JSON value; LoadError naming where it is broken."""
    try:
        return json.loads(decode(read_bytes(path, max_file_mb)))
    except json.JSONDecodeError as err:
        raise LoadError(
            f"invalid JSON: {err.msg} (line {err.lineno}, column {err.colno})"
        ) from None
    except RecursionError:
        raise LoadError("invalid JSON: nested too deeply") from None
