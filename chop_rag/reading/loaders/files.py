"""Which files an ingest reads: paths walked (each file once, hidden entries skipped, broken
links reported), one file loaded with its sidecar of identity fields, and the inputs' hashes."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path

from chop_rag.reading.allowed import Folders, open_for_reading, reading_within, walk_within
from chop_rag.reading.documents import Problem, SourceDocument
from chop_rag.reading.loaders.common import MB, LoadError, doc_id_of, one_line, os_reason
from chop_rag.reading.loaders.formats import SUPPORTED_SUFFIXES, load_file
from chop_rag.types import user_card

SIDECAR_SUFFIX = ".meta.json"  # "report.pdf.meta.json": identity fields a user sets
MAX_SIDECAR_BYTES = 64 * 1024  # a few identity fields; a link to a big file is not read


def files_to_load(
    paths: Sequence[str | Path], problems: list[Problem], within: Folders | None = None
) -> list[Path]:
    """The supported files under ``paths``, each once: a file reached twice (named directly
    and inside a named directory, or through a symlink) is loaded once. What cannot be listed
    is a Problem; so is a folder that resolves outside ``within`` (a server run's folders)."""
    seen: set[str] = set()
    files: list[Path] = []
    for raw in paths:
        for file_path, named in expand(Path(raw), problems, within):
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


def load_one(
    file_path: Path, max_file_mb: int = 50, within: Folders | None = None
) -> tuple[list[SourceDocument], list[Problem]]:
    """One file's documents and problems; never raises, so one bad file sinks nothing else.
    With ``within`` (a server run's folders), the file and its sidecar are read only if the
    files actually opened lie under them."""
    problems: list[Problem] = []
    try:
        with reading_within(within):
            docs = load_file(file_path, max_file_mb=max_file_mb)
            return with_sidecar(file_path, docs, problems), problems
    except LoadError as err:
        problems.append(Problem(source=str(file_path), reason=str(err)))
    except Exception as err:  # a loader bug must not sink the whole batch
        reason = f"unexpected error: {type(err).__name__}: {err}"
        problems.append(Problem(source=str(file_path), reason=one_line(reason)))
    return [], problems


def input_file_hashes(paths: Sequence[str | Path], *, max_file_mb: int = 50) -> list[list[str]]:
    """[resolved path, sha256 of its bytes] of every file an ingest of ``paths`` would read.

    A resumed run compares these with what its thread saw: another folder, or a file edited,
    added or deleted since, is a different input and is read again from disk. Files over the
    size limit are skipped by the loader anyway and are keyed by size and time only.
    """
    hashes: dict[str, str] = {}
    for raw in paths:
        for file_path, named in expand(Path(raw), []):
            if not named and file_path.suffix.lower() not in SUPPORTED_SUFFIXES:
                continue
            key = doc_id_of(file_path)
            if key in hashes:
                continue
            try:
                st = file_path.stat()
                if max_file_mb > 0 and st.st_size > max_file_mb * MB:
                    hashes[key] = f"size:{st.st_size}:{st.st_mtime_ns}"
                    continue
                digest = hashlib.sha256()
                with file_path.open("rb") as handle:
                    while block := handle.read(1 << 20):
                        digest.update(block)
                hashes[key] = digest.hexdigest()
            except OSError as err:
                hashes[key] = f"error:{os_reason(err)}"
    return sorted([path, digest] for path, digest in hashes.items())


def expand(
    path: Path, problems: list[Problem], within: Folders | None = None
) -> Iterator[tuple[Path, bool]]:
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
        problems.append(Problem(source=str(path), reason=os_reason(err)))
        return
    if stat.S_ISDIR(st.st_mode):
        found = False
        for file_path in _walk(path, problems, within):
            found = True
            yield file_path, False
        if not found:
            problems.append(Problem(source=str(path), reason="no supported files in directory"))
    elif stat.S_ISREG(st.st_mode):
        yield path, True
    else:
        problems.append(Problem(source=str(path), reason="not a regular file"))


def _walk(root: Path, problems: list[Problem], within: Folders | None = None) -> Iterator[Path]:
    """Supported files under root, depth first in sorted order, hidden entries skipped.

    Iterative (deep trees cannot overflow the stack) and loop-safe for symlinked directories;
    with ``within``, a folder that resolves outside those folders (a link out) is not entered.
    """
    visited: set[tuple[int, int]] = set()
    stack: list[Path] = [root]
    while stack:
        directory = stack.pop()
        if not walk_within(directory, within):
            reason = (
                "a link out of the folders a server run may read (CHOP_SERVER_PATHS), not followed"
            )
            problems.append(Problem(source=str(directory), reason=reason))
            continue
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
            problems.append(Problem(source=str(directory), reason=os_reason(err)))
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


def with_sidecar(
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
            with open_for_reading(sidecar) as handle:  # a server run's folders, at open
                values = json.loads(handle.read(MAX_SIDECAR_BYTES + 1).decode("utf-8"))
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
            return os_reason(err)
        reason = "symbolic link loop"
    return reason if not suffix or suffix in SUPPORTED_SUFFIXES else None
