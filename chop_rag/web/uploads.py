"""Files a person adds from the page: where they go, which names and contents are refused.

An upload lands in its collection's folder (``<data_dir>/uploads/<collection>/``) under its own
base name and nowhere else: a name with a folder part, ``..``, a leading dot, a control
character, an invisible or direction-changing character (a right-to-left override shows
``report\u202efdp.exe`` as another name) or a reserved character is refused rather than
cleaned, so what is stored is what the person named. Contents are checked before anything is
written: a format chop reads (by suffix), a PDF that starts like one, text without NUL bytes,
within the size limit. A file whose bytes are already stored in the collection under another
name is refused (one copy each); the same name again replaces the file, and the ingest then
finds it changed or unchanged.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from chop_rag.config import validate_collection
from chop_rag.reading.loaders import SIDECAR_SUFFIX
from chop_rag.reading.loaders.formats import PDF_SUFFIXES, SUPPORTED_SUFFIXES, unsupported_reason

MAX_NAME_CHARS = 200
_REFUSED_CHARACTERS = re.compile(r'[\x00-\x1f\x7f/\\:*?"<>|]')


class UploadRefused(ValueError):
    """An upload that is not stored, with the one sentence the page shows."""


@dataclass(frozen=True)
class Stored:
    """Where an upload was written, and whether the same bytes were there already."""

    path: Path
    unchanged: bool


def upload_folder(data_dir: str | Path, collection: str) -> Path:
    """The collection's folder of uploads (not created here)."""
    return Path(data_dir).expanduser().absolute() / "uploads" / validate_collection(collection)


def checked_name(name: str) -> str:
    """``name`` as the file's base name, or UploadRefused saying what is wrong with it."""
    if not name or not name.strip():
        raise UploadRefused("the file has no name")
    if len(name) > MAX_NAME_CHARS:
        raise UploadRefused(f"the file name is longer than {MAX_NAME_CHARS} characters")
    if _REFUSED_CHARACTERS.search(name) or name in {".", ".."}:
        raise UploadRefused(
            f"the file name {name!r} may not contain a folder, '..', control characters "
            'or any of \\ / : * ? " < > |'
        )
    if invisible := [c for c in name if unicodedata.category(c) == "Cf"]:
        codes = ", ".join(dict.fromkeys(f"U+{ord(c):04X}" for c in invisible))
        raise UploadRefused(
            f"the file name '{name.encode('ascii', 'backslashreplace').decode()}' holds an "
            f"invisible or direction-changing character ({codes}), so it would show as another name"
        )
    if name.startswith(".") or name != name.strip():
        raise UploadRefused(f"the file name {name!r} starts or ends with a dot or a space")
    if name.lower().endswith(SIDECAR_SUFFIX):
        raise UploadRefused(f"{name!r} is an identity sidecar, not a document")
    suffix = Path(name).suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        raise UploadRefused(f"{name!r} is not a document chop reads: {unsupported_reason(suffix)}")
    return name


def checked_content(name: str, data: bytes, max_file_mb: int) -> None:
    """Refuse what no loader could read, before it is written."""
    if not data:
        raise UploadRefused(f"{name!r} is empty")
    if max_file_mb > 0 and len(data) > max_file_mb * 1024 * 1024:
        raise UploadRefused(f"{name!r} is larger than the limit of {max_file_mb} MB")
    if Path(name).suffix.lower() in PDF_SUFFIXES:
        if not data.lstrip()[:5] == b"%PDF-":
            raise UploadRefused(f"{name!r} is not a PDF (it does not start with %PDF-)")
    elif b"\x00" in data[: 1 << 16]:
        raise UploadRefused(f"{name!r} is not a text document (it holds binary data)")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_sha256(path: Path) -> str | None:
    digest = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            while block := handle.read(1 << 20):
                digest.update(block)
    except OSError:
        return None
    return digest.hexdigest()


def same_bytes_elsewhere(data: bytes, target: Path, stored: Iterable[str]) -> Path | None:
    """A file other than ``target`` among ``stored`` (document ids: paths) and the upload
    folder's files whose bytes are ``data``."""
    digest = sha256(data)
    candidates = {Path(p) for p in stored}
    if target.parent.is_dir():
        candidates.update(p for p in target.parent.iterdir() if p.is_file())
    for path in sorted(candidates):
        if path == target or not path.is_file():
            continue
        try:
            if path.stat().st_size != len(data):
                continue
        except OSError:
            continue
        if file_sha256(path) == digest:
            return path
    return None


def store_upload(
    folder: Path, name: str, data: bytes, *, max_file_mb: int, stored: Iterable[str] = ()
) -> Stored:
    """Write ``data`` as ``folder/name`` (atomically), or raise UploadRefused.

    ``stored`` are the collection's document ids; an upload whose bytes one of them (or another
    upload) already has is refused, naming it.
    """
    checked_name(name)
    checked_content(name, data, max_file_mb)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / name
    if target.resolve().parent != folder.resolve():  # belt and braces: a symlinked name
        raise UploadRefused(f"the file name {name!r} points outside the collection's folder")
    if twin := same_bytes_elsewhere(data, target, stored):
        raise UploadRefused(f"{name!r} is already stored as {twin.name} (the same bytes)")
    if target.is_file() and file_sha256(target) == sha256(data):
        return Stored(target, unchanged=True)
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=".upload-")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return Stored(target, unchanged=False)
