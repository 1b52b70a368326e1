"""Turn paths (files or directories) into SourceDocuments, reporting each bad input once.

Ingesting a folder of manuals should never stop at the first odd file: every file that
cannot be used becomes one Problem with a short reason, and the rest of the batch loads.
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import math
import os
import pickle
import re
import stat
import subprocess
import sys
from collections.abc import Iterator, Sequence
from io import BytesIO
from pathlib import Path
from typing import Any

from bs4 import BeautifulSoup, NavigableString, Tag
from bs4.element import PreformattedString
from markdown_it import MarkdownIt
from pypdf import PasswordType, PdfReader
from pypdf.errors import DependencyError

from chop.documents import Problem, SourceDocument, Span, make_document
from chop.identity import is_identifier, user_card
from chop.pdf_layout import (
    Heading,
    PdfPage,
    layout_headings,
    outline_headings,
    page_spans,
    read_page,
)

__all__ = [
    "SIDECAR_SUFFIX",
    "SUPPORTED_SUFFIXES",
    "LoadError",
    "clean_title",
    "emanual_device_name",
    "files_to_load",
    "input_file_hashes",
    "load_emanual",
    "load_file",
    "load_one",
    "load_paths",
    "normalize_text",
]

TEXT_SUFFIXES = frozenset({".txt", ".text"})
MARKDOWN_SUFFIXES = frozenset({".md", ".markdown"})
HTML_SUFFIXES = frozenset({".html", ".htm"})
PDF_SUFFIXES = frozenset({".pdf"})
PARALLEL_PDF_BYTES = 2 * 1024 * 1024  # less PDF than this parses faster than workers start
JSON_SUFFIXES = frozenset({".json"})
SUPPORTED_SUFFIXES: frozenset[str] = (
    TEXT_SUFFIXES | MARKDOWN_SUFFIXES | HTML_SUFFIXES | PDF_SUFFIXES | JSON_SUFFIXES
)

SIDECAR_SUFFIX = ".meta.json"  # "report.pdf.meta.json": identity fields a user sets
MAX_SIDECAR_BYTES = 64 * 1024  # a few identity fields; a link to a big file is not read
# pypdf logs damage it works around ("EOF marker not found") without naming the file; an
# unreadable PDF is reported once, with its path, as a skipped file instead.
logging.getLogger("pypdf").setLevel(logging.ERROR)

NOT_EMANUAL = "JSON is not an E-Manual corpus (expected section_N objects)"
_MB = 1024 * 1024
_MAX_REASON = 240


class LoadError(Exception):
    """A file that cannot become a document; str(err) is a one-line human reason."""

    def __init__(self, reason: str) -> None:
        self.reason = _one_line(reason)
        super().__init__(self.reason)


# --------------------------------------------------------------------------- public API


def load_paths(
    paths: Sequence[str | Path], *, max_file_mb: int = 50, workers: int | None = None
) -> tuple[list[SourceDocument], list[Problem]]:
    """Load every supported file under `paths`; bad inputs become Problems, never exceptions.

    Parsing a PDF is pure-Python CPU work (about 0.1 s a page with pypdf), so a batch of PDFs
    is parsed by one worker process per core (``workers``: default the number of cores);
    documents keep the order of the files either way.
    """
    problems: list[Problem] = []
    files = files_to_load(paths, problems)
    pdf_bytes = sum(_size(path) for path in files if path.suffix.lower() in PDF_SUFFIXES)
    if workers is None:
        many = pdf_bytes >= PARALLEL_PDF_BYTES
        workers = min(os.cpu_count() or 1, len(files)) if many else 1
    results = _load_in_workers(files, max_file_mb, workers)
    documents: list[SourceDocument] = []
    for loaded, found in results:
        documents.extend(loaded)
        problems.extend(found)
    return documents, problems


def files_to_load(paths: Sequence[str | Path], problems: list[Problem]) -> list[Path]:
    """The supported files under ``paths``, each once: a file reached twice (named directly
    and inside a named directory, or through a symlink) is loaded once. What cannot be listed
    is a Problem."""
    seen: set[str] = set()
    files: list[Path] = []
    for raw in paths:
        for file_path, named in _expand(Path(raw), problems):
            try:
                key = str(file_path.resolve())
            except (OSError, RuntimeError):
                key = str(file_path.absolute())
            if key in seen:
                continue
            seen.add(key)
            if not named and file_path.suffix.lower() not in SUPPORTED_SUFFIXES:
                continue
            if file_path.name.endswith(SIDECAR_SUFFIX):
                continue  # read with the document it describes
            files.append(file_path)
    return files


def load_one(file_path: Path, max_file_mb: int = 50) -> tuple[list[SourceDocument], list[Problem]]:
    """One file's documents and problems; never raises, so one bad file sinks nothing else."""
    problems: list[Problem] = []
    try:
        docs = load_file(file_path, max_file_mb=max_file_mb)
        return _with_sidecar(file_path, docs, problems), problems
    except LoadError as err:
        problems.append(Problem(source=str(file_path), reason=str(err)))
    except Exception as err:  # a loader bug must not sink the whole batch
        reason = f"unexpected error: {type(err).__name__}: {err}"
        problems.append(Problem(source=str(file_path), reason=_one_line(reason)))
    return [], problems


Loaded = tuple[list[SourceDocument], list[Problem]]


def _load_in_workers(files: list[Path], max_file_mb: int, workers: int) -> list[Loaded]:
    """Each file's result, in order, parsed by ``workers`` processes (``python -m
    chop.parse_worker``: a fresh interpreter, so nothing of the caller's script or threads is
    copied). A worker that fails leaves its files to this process."""
    if workers <= 1 or len(files) <= 1:
        return [load_one(path, max_file_mb) for path in files]
    shares: list[list[int]] = [[] for _ in range(workers)]
    loads = [0] * workers
    for index in sorted(range(len(files)), key=lambda i: -_size(files[i])):  # largest first
        least = loads.index(min(loads))
        shares[least].append(index)
        loads[least] += _size(files[index])
    package_root = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [package_root, *filter(None, [os.environ.get("PYTHONPATH")])]
    )}  # fmt: skip
    running: list[tuple[list[int], subprocess.Popen[bytes] | None]] = []
    try:
        for share in shares:
            running.append((share, _start_worker([str(files[i]) for i in share], max_file_mb, env)))
        results: dict[int, Loaded] = {}
        for share, worker in running:
            loaded = _worker_results(worker)
            if loaded is None or len(loaded) != len(share):
                loaded = [load_one(files[i], max_file_mb) for i in share]
            results.update(zip(share, loaded, strict=True))
        return [results[i] for i in range(len(files))]
    finally:
        for _, worker in running:
            if worker is not None and worker.poll() is None:
                worker.kill()
                worker.wait()


def _start_worker(
    paths: list[str], max_file_mb: int, env: dict[str, str]
) -> subprocess.Popen[bytes] | None:
    """A parse worker given its files, or None when it cannot start."""
    try:
        worker = subprocess.Popen(
            [sys.executable, "-m", "chop.parse_worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
    except OSError:
        return None
    try:
        assert worker.stdin is not None
        worker.stdin.write(pickle.dumps((paths, max_file_mb)))
        worker.stdin.close()
    except OSError:
        worker.kill()
        worker.wait()
        return None
    return worker


def _worker_results(worker: subprocess.Popen[bytes] | None) -> list[Loaded] | None:
    """What a worker parsed, or None when it failed."""
    if worker is None or worker.stdout is None:
        return None
    try:
        output = worker.stdout.read()
        loaded = pickle.loads(output) if worker.wait() == 0 else None
    except (OSError, pickle.UnpicklingError, EOFError, ValueError):
        return None
    return loaded if isinstance(loaded, list) else None


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def input_file_hashes(paths: Sequence[str | Path], *, max_file_mb: int = 50) -> list[list[str]]:
    """[resolved path, sha256 of its bytes] of every file an ingest of ``paths`` would read.

    A resumed run compares these with what its thread saw: another folder, or a file edited,
    added or deleted since, is a different input and is read again from disk. Files over the
    size limit are skipped by the loader anyway and are keyed by size and time only.
    """
    hashes: dict[str, str] = {}
    for raw in paths:
        for file_path, named in _expand(Path(raw), []):
            if not named and file_path.suffix.lower() not in SUPPORTED_SUFFIXES:
                continue
            key = _doc_id(file_path)
            if key in hashes:
                continue
            try:
                st = file_path.stat()
                if max_file_mb > 0 and st.st_size > max_file_mb * _MB:
                    hashes[key] = f"size:{st.st_size}:{st.st_mtime_ns}"
                    continue
                digest = hashlib.sha256()
                with file_path.open("rb") as handle:
                    while block := handle.read(1 << 20):
                        digest.update(block)
                hashes[key] = digest.hexdigest()
            except OSError as err:
                hashes[key] = f"error:{_os_reason(err)}"
    return sorted([path, digest] for path, digest in hashes.items())


def load_file(path: Path, *, max_file_mb: int = 50) -> list[SourceDocument]:
    """Load one file by its suffix; raises LoadError(reason) when it cannot be used."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        raise LoadError(_unsupported_reason(suffix))
    if suffix in PDF_SUFFIXES:
        return [_load_pdf(path, max_file_mb)]
    if suffix in JSON_SUFFIXES:
        return [load_emanual(path, max_file_mb=max_file_mb)]
    notes: list[str] = []
    text = _decode(_read_bytes(path, max_file_mb), notes)
    if suffix in MARKDOWN_SUFFIXES:
        document = _load_markdown(path, text)
    elif suffix in HTML_SUFFIXES:
        document = _load_html(path, text)
    else:
        document = _load_text(path, text)
    if notes:
        document["metadata"]["warnings"] = notes
    return [document]


def load_emanual(path: Path, title: str | None = None, *, max_file_mb: int = 50) -> SourceDocument:
    """One E-Manual corpus file as ONE document, one span per section (title = device name)."""
    path = Path(path)
    sections = _emanual_items(path, max_file_mb)
    parts: list[tuple[str, dict[str, Any]]] = [
        (text, {"heading": path, "section": key}) for key, _title, text, path in sections
    ]
    text, spans = _join_segments(parts)
    if not text:
        raise LoadError("empty: no text")
    doc_id = _doc_id(path)
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


def clean_title(stem: str) -> str:
    """A readable title from a file stem: "_" and "-" become spaces, whitespace collapsed."""
    return " ".join(name_text(stem).replace("_", " ").replace("-", " ").split())


def name_text(name: str) -> str:
    """A file name or path as text PostgreSQL can store: bytes of a name that is not UTF-8
    (Python holds them as lone surrogates, which no text column accepts) are written as
    ``\\xff`` escapes, so the file is still ingested, under a readable, stable id."""
    if not _SURROGATES.search(name):
        return name
    try:
        return os.fsencode(name).decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a surrogate that did not come from a file name's bytes
        return _SURROGATES.sub("\ufffd", name)


def normalize_text(text: str) -> str:
    """Uniform text so hashes and chunk offsets are stable: LF line ends, no trailing spaces,
    at most two blank lines in a row, no leading/trailing blank lines. Content is kept."""
    text = _clean_chars(text.replace("\r\n", "\n").replace("\r", "\n"))
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    text = re.sub(r"\n{4,}", "\n\n\n", text)
    return text.strip("\n")


# --------------------------------------------------------------------------- walking


def _expand(path: Path, problems: list[Problem]) -> Iterator[tuple[Path, bool]]:
    """Files named by one input path: (file, named_directly). Reports missing/odd paths."""
    try:
        st = path.stat()
    except FileNotFoundError:
        problems.append(Problem(source=str(path), reason="no such file or directory"))
        return
    except PermissionError:
        problems.append(Problem(source=str(path), reason="permission denied"))
        return
    except OSError as err:
        problems.append(Problem(source=str(path), reason=_os_reason(err)))
        return
    if stat.S_ISDIR(st.st_mode):
        found = False
        for file_path in _walk(path, problems):
            found = True
            yield file_path, False
        if not found:
            problems.append(Problem(source=str(path), reason="no supported files in directory"))
    elif stat.S_ISREG(st.st_mode):
        yield path, True
    else:
        problems.append(Problem(source=str(path), reason="not a regular file"))


def _walk(root: Path, problems: list[Problem]) -> Iterator[Path]:
    """Supported files under root, depth first in sorted order, hidden entries skipped.

    Iterative (deep trees cannot overflow the stack) and loop-safe for symlinked directories.
    """
    visited: set[tuple[int, int]] = set()
    stack: list[Path] = [root]
    while stack:
        directory = stack.pop()
        try:
            st = directory.stat()
            ident = (st.st_dev, st.st_ino)
            if ident in visited:
                if directory.is_symlink():
                    reason = "symbolic link loop (a folder already read), not followed"
                    problems.append(Problem(source=str(directory), reason=reason))
                continue
            visited.add(ident)
            with os.scandir(directory) as scan:
                entries = sorted(scan, key=lambda e: e.name)
        except OSError as err:
            problems.append(Problem(source=str(directory), reason=_os_reason(err)))
            continue
        subdirs: list[Path] = []
        for entry in entries:
            if entry.name.startswith("."):
                continue
            try:
                if entry.is_symlink() and (broken := _broken_link(entry)):
                    problems.append(Problem(source=entry.path, reason=broken))
                elif entry.is_dir():
                    subdirs.append(Path(entry.path))
                elif entry.is_file() and Path(entry.name).suffix.lower() in SUPPORTED_SUFFIXES:
                    yield Path(entry.path)
            except OSError:
                continue  # vanished or unreadable entry: nothing to load
        stack.extend(reversed(subdirs))


# --------------------------------------------------------------------------- user metadata


def _with_sidecar(
    path: Path, documents: list[SourceDocument], problems: list[Problem]
) -> list[SourceDocument]:
    """Attach the identity fields of ``<file>.meta.json`` (or ``<stem>.meta.json``), if any.

    A broken sidecar is one problem line; the document is still ingested without it. A
    sidecar is read only from the document's own folder (a link elsewhere, to another user's
    file, is refused) and only while it is small.
    """
    for sidecar in (path.with_name(path.name + SIDECAR_SUFFIX), path.with_suffix(SIDECAR_SUFFIX)):
        if not sidecar.is_file():
            continue
        try:
            if sidecar.resolve().parent != sidecar.parent.resolve():
                raise ValueError("it links outside the document's folder")
            if sidecar.stat().st_size > MAX_SIDECAR_BYTES:
                raise ValueError(f"larger than {MAX_SIDECAR_BYTES // 1024} KB")
            values = json.loads(sidecar.read_text(encoding="utf-8"))
            if not isinstance(values, dict):
                raise ValueError("expected a JSON object of identity fields")
            user_card(values)  # checks names and types
        except (OSError, ValueError) as err:
            problems.append(Problem(source=str(sidecar), reason=f"metadata ignored: {err}"))
            return documents
        for document in documents:
            document["metadata"]["identity"] = values
        return documents
    return documents


def _broken_link(entry: os.DirEntry[str]) -> str | None:
    """Why a symbolic link under a folder cannot be followed (None: it can).

    Links to files of other types are ignored like those files; a link that points nowhere
    or into a loop is reported, since it may well stand for a document the user expects.
    """
    suffix = Path(entry.name).suffix.lower()
    reason: str
    try:
        os.stat(entry.path)
        return None
    except FileNotFoundError:
        reason = f"broken symbolic link (to {os.readlink(entry.path)})"
    except OSError as err:
        if err.errno != errno.ELOOP:
            return _os_reason(err)
        reason = "symbolic link loop"
    return reason if not suffix or suffix in SUPPORTED_SUFFIXES else None


# --------------------------------------------------------------------------- reading bytes


def _read_bytes(path: Path, max_file_mb: int) -> bytes:
    """The file's bytes, refusing (by stat, before reading) anything over the size limit."""
    try:
        st = path.stat()
        if not stat.S_ISREG(st.st_mode):
            raise LoadError("not a regular file")
        limit = max_file_mb * _MB if max_file_mb > 0 else 0
        if limit and st.st_size > limit:
            raise LoadError(_too_big(st.st_size, max_file_mb))
        with path.open("rb") as handle:
            data = handle.read(limit + 1) if limit else handle.read()
    except FileNotFoundError:
        raise LoadError("no such file or directory") from None
    except PermissionError:
        raise LoadError("permission denied") from None
    except IsADirectoryError:
        raise LoadError("is a directory") from None
    except OSError as err:
        raise LoadError(_os_reason(err)) from None
    if limit and len(data) > limit:  # grew between stat and read
        raise LoadError(_too_big(len(data), max_file_mb))
    if not data.strip():
        raise LoadError("empty: no text")
    return data


_CONTROL_BYTES = bytes([*range(0x00, 0x09), *range(0x0E, 0x1B), *range(0x1C, 0x20), 0x7F])
_HIGH_BYTES = bytes(range(0x80, 0x100))
MAX_BAD_UTF8_SHARE = 0.01  # more bad UTF-8 than this: a legacy (cp1252) file, not a few typos


def _decode(data: bytes, notes: list[str] | None = None) -> str:
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


# --------------------------------------------------------------------------- plain text


def _load_text(path: Path, text: str) -> SourceDocument:
    text = normalize_text(text)
    if not text.strip():
        raise LoadError("empty: no text")
    return _document(path, clean_title(path.stem), text, "text", [])


# --------------------------------------------------------------------------- markdown

_FRONT_MATTER_END = re.compile(r"^(?:---|\.\.\.)$")
_FRONT_MATTER_TITLE = re.compile(r"^title:\s*(.+?)\s*$", re.IGNORECASE)


def _load_markdown(path: Path, text: str) -> SourceDocument:
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
    trail = _HeadingTrail()
    for n, (line, level, heading) in enumerate(headings):
        end = headings[n + 1][0] if n + 1 < len(headings) else len(lines)
        segments.append(("\n".join(lines[line:end]), {"heading": trail.enter(level, heading)}))

    body, spans = _join_segments(segments)
    if not body.strip():
        raise LoadError("empty: no text")
    h1 = next((h for _line, level, h in headings if level == 1), "")
    title = h1 or front_title or clean_title(path.stem)
    return _document(path, title, body, "markdown", spans)


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


class _HeadingTrail:
    """The path of open headings, so a section is labelled "H1 > H2 > H3"."""

    def __init__(self) -> None:
        self._open: list[tuple[int, str]] = []

    def enter(self, level: int, heading: str) -> str:
        while self._open and self._open[-1][0] >= level:
            self._open.pop()
        self._open.append((level, heading))
        return " > ".join(h for _level, h in self._open)


# --------------------------------------------------------------------------- html

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


def _load_html(path: Path, markup: str) -> SourceDocument:
    """Readable text of the page; scripts, styles and navigation dropped; headings → spans."""
    soup = BeautifulSoup(markup, "html.parser")
    title_tag = soup.find("title")
    title = " ".join(title_tag.get_text(" ").split()) if isinstance(title_tag, Tag) else ""

    out = _HtmlText()
    trail = _HeadingTrail()
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
    body, spans = _join_segments(segments)
    if not body.strip():
        raise LoadError("empty: no text")
    return _document(path, title or first_h1 or clean_title(path.stem), body, "html", spans)


# --------------------------------------------------------------------------- pdf

_JUNK_TITLES = frozenset(
    {"untitled", "untitled document", "no title", "title", "document", "unknown", "none", "null"}
)
_JUNK_TITLE_PREFIX = re.compile(
    r"^(?:microsoft (?:word|powerpoint|excel)|untitled)\b|"
    r"^united states securities and exchange commission$|"  # the regulator's heading
    r"\.(?:docx?|pdf|pptx?|xlsx?|rtf|odt|indd|qxd|tex|dvi|tmp|txt|html?)$",
    re.IGNORECASE,
)


def _load_pdf(path: Path, max_file_mb: int) -> SourceDocument:
    """Text per page joined by blank lines; spans carry the page (1-based) and, where the
    outline or the layout shows one, the heading path: {"page": N, "heading": "A > B"}."""
    data = _read_bytes(path, max_file_mb)
    if b"%PDF" not in data[:1024]:
        raise LoadError("unreadable PDF: no %PDF header")
    try:
        reader = PdfReader(BytesIO(data))
        if reader.is_encrypted and reader.decrypt("") == PasswordType.NOT_DECRYPTED:
            raise LoadError("encrypted PDF")
        pages = list(reader.pages)
    except LoadError:
        raise
    except DependencyError:
        raise LoadError("encrypted PDF (needs the 'cryptography' package to open)") from None
    except Exception as err:  # pypdf raises many kinds on damaged files
        raise LoadError(f"unreadable PDF: {_pdf_reason(err)}") from None
    if not pages:
        raise LoadError("unreadable PDF: no pages")

    pdf_pages: list[PdfPage] = []
    failed: list[int] = []
    for number, page in enumerate(pages, start=1):
        try:
            pdf_page = read_page(page, number)
        except Exception:  # one broken page should not lose the others
            pdf_page = PdfPage(number=number, text="")
            failed.append(number)
        pdf_page.text = normalize_text(pdf_page.text)
        pdf_pages.append(pdf_page)
    if not any(page.text.strip() for page in pdf_pages):
        if failed and len(failed) == len(pages):
            raise LoadError("unreadable PDF: text extraction failed on every page")
        raise LoadError("PDF has no extractable text (scanned?)")
    text, spans = page_spans(pdf_pages, _pdf_headings(reader, pdf_pages))

    doc = _document(path, _pdf_title(reader) or clean_title(path.stem), text, "pdf", spans)
    doc["metadata"]["pages"] = len(pages)
    if failed:
        doc["metadata"]["unreadable_pages"] = failed
    return doc


def _pdf_headings(reader: PdfReader, pages: list[PdfPage]) -> list[Heading]:
    """The outline's headings when the file has a usable outline, else the layout's."""
    try:
        headings = outline_headings(reader, pages)
    except Exception:  # a damaged outline only costs the bookmarks; the layout still speaks
        headings = []
    return headings or layout_headings(pages)


def _pdf_title(reader: PdfReader) -> str:
    """The /Title from metadata unless it is missing or junk ("Microsoft Word - x.doc")."""
    try:
        meta = reader.metadata
        raw = meta.title if meta is not None else None
    except Exception:
        return ""
    if not isinstance(raw, str):
        return ""
    title = " ".join(_clean_chars(raw).split())
    if not re.search(r"\w", title) or title.lower() in _JUNK_TITLES:
        return ""
    if _JUNK_TITLE_PREFIX.search(title) or is_identifier(title):
        return ""  # an SEC accession number ("0000764478-23-000006") names no document
    return title


def _pdf_reason(err: Exception) -> str:
    message = str(err).strip() or type(err).__name__
    return message[0].lower() + message[1:] if message[:2].istitle() else message


# --------------------------------------------------------------------------- e-manual json

_SECTION_KEY = re.compile(r"^section_(\d+)$")


def _emanual_items(path: Path, max_file_mb: int) -> list[tuple[str, str, str, str]]:
    """(key, title, text, heading path) of each section, in numeric section order.

    The heading path joins the titles of the section's ancestors ("section_hierarchy":
    "section_0>section_5" → "Features > Night mode"); a missing or broken hierarchy leaves
    the section's own title."""
    raw = _decode(_read_bytes(path, max_file_mb))
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as err:
        raise LoadError(
            f"invalid JSON: {err.msg} (line {err.lineno}, column {err.colno})"
        ) from None
    except RecursionError:
        raise LoadError("invalid JSON: nested too deeply") from None
    if not isinstance(data, dict):
        raise LoadError(NOT_EMANUAL)
    if not data:
        raise LoadError("empty: no sections")
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


# --------------------------------------------------------------------------- helpers


def _join_segments(segments: Sequence[tuple[str, dict[str, Any]]]) -> tuple[str, list[Span]]:
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


def _document(path: Path, title: str, text: str, fmt: str, spans: list[Span]) -> SourceDocument:
    doc_id = _doc_id(path)
    title = " ".join(title.split()) or clean_title(path.stem) or path.name
    return make_document(
        doc_id,
        title,
        text,
        source=doc_id,
        metadata={"path": doc_id, "format": fmt},
        spans=spans,
    )


def _doc_id(path: Path) -> str:
    """The resolved absolute path: stable across runs and working directories."""
    try:
        return name_text(str(path.resolve()))
    except (OSError, RuntimeError):
        return name_text(str(path.absolute()))


_SURROGATES = re.compile("[\ud800-\udfff]")


def _clean_chars(text: str) -> str:
    """Drop NULs and lone surrogates, which PostgreSQL text columns reject."""
    if "\x00" in text:
        text = text.replace("\x00", "")
    return _SURROGATES.sub("\ufffd", text)


def _too_big(size: int, max_file_mb: int) -> str:
    shown = round(size / _MB, 1)
    if shown <= max_file_mb:  # "1 MB is over the 1 MB limit" would read as a bug
        shown = math.ceil(size / _MB * 10) / 10
    return f"{shown:g} MB is over the {max_file_mb} MB limit (CHOP_MAX_FILE_MB)"


def _unsupported_reason(suffix: str) -> str:
    known = ", ".join(sorted(SUPPORTED_SUFFIXES))
    if not suffix:
        return f"unsupported file type (no suffix; supported: {known})"
    return f"unsupported file type '{suffix}' (supported: {known})"


def _os_reason(err: OSError) -> str:
    return (err.strerror or type(err).__name__).lower()


def _one_line(text: str) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= _MAX_REASON else line[: _MAX_REASON - 1] + "…"
