"""Which files a run the LangGraph server started may read: one rule for every way it names one.

A server run names files by its input ``paths``, by a ``command`` that updates the state or
sends to a node, by a thread's state updated and resumed, and by the id of documents it hands
over (``doc_id``, else ``source``: the page later serves a stored PDF by it). Whatever the
route, a name is resolved (links followed, ``..`` and relative names against the server's
folder) and must lie under the folders ``CHOP_SERVER_PATHS`` lists. The check is repeated where
the file is opened, on the file actually opened (``/proc/self/fd``): a name that becomes a link
after the first check, or a file reached through a linked folder, is refused all the same.

Python callers (``chop_rag.api``, the CLI, ``graph.invoke``) are the deployment: no folders apply.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterable, Iterator, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import IO, Any
from urllib.parse import unquote, urlsplit

from chop_rag.config import context_default, env_setting
from chop_rag.reading.documents import InvalidInput, SourceDocument

Folders = tuple[Path, ...]
SERVER_RUN_MARK = "langgraph_request_id"  # the server stamps every run's configurable with it


class OutsideFolders(InvalidInput):
    """A file a server run may not read, in one sentence that names it and the folders."""

    def __init__(self, what: str, folders: Folders, hint: str = "") -> None:
        super().__init__(
            f"{what} is outside the folders a server run may read "
            f"({', '.join(map(str, folders))}); the deployment sets them (CHOP_SERVER_PATHS)"
            f"{hint}"
        )


def is_server_run(config: Any) -> bool:
    """Whether the LangGraph server started this run (it stamps every run with a request id)."""
    configurable = config.get("configurable") if isinstance(config, dict) else None
    return isinstance(configurable, dict) and SERVER_RUN_MARK in configurable


def server_folders() -> Folders:
    """The folders a server run may read (CHOP_SERVER_PATHS; empty: the server's folder and its
    data folder), resolved."""
    configured = str(env_setting("CHOP_SERVER_PATHS"))
    roots = [r for r in configured.split(os.pathsep) if r.strip()] or [
        os.getcwd(),
        str(context_default("data_dir")),
    ]
    return tuple(Path(root).expanduser().resolve() for root in roots)


def run_folders(config: Any) -> Folders | None:
    """The folders a run may read: the server's for a server run, None (anything) otherwise."""
    return server_folders() if is_server_run(config) else None


def is_within(real: Path, folders: Folders) -> bool:
    """Whether the resolved path ``real`` is one of ``folders`` or lies under one. Compared by
    name, then by identity (device and inode), so a case-insensitive or normalising file system
    that spells a folder differently still matches it, and nothing else does."""
    if any(real == folder or folder in real.parents for folder in folders):
        return True
    identities = set()
    for folder in folders:
        with contextlib.suppress(OSError, ValueError):
            found = folder.stat()
            identities.add((found.st_dev, found.st_ino))
    for ancestor in (real, *real.parents):
        with contextlib.suppress(OSError, ValueError):
            found = ancestor.stat()
            if (found.st_dev, found.st_ino) in identities:
                return True
    return False


def resolved(name: str | Path) -> Path:
    """``name`` as the server would open it: absolute, links followed, ``..`` applied."""
    try:
        return Path(name).resolve()
    except (OSError, RuntimeError, ValueError):  # a loop, a NUL: judged by the name as written
        return Path(os.path.abspath(name))


def refuse_paths_outside(names: Iterable[str], folders: Folders) -> None:
    """Raise OutsideFolders for the first name that does not resolve under ``folders``."""
    for name in names:
        if not is_within(resolved(name), folders):
            raise OutsideFolders(f"path {name!r}", folders)


def named_file(name: str) -> Path | None:
    """The server file a document's id names: a ``file:`` URI, an absolute name, or one that
    climbs with ``..``; None for an id (``manual-7``, ``reports/acme.pdf``, a web address).
    A relative id is still resolved against the server's folder where a file is opened."""
    if name.lower().startswith("file:"):
        return Path(unquote(urlsplit(name).path) or "/")
    if "://" in name:
        return None
    if os.path.isabs(name) or ".." in Path(name).parts:
        return Path(name)
    return None


def refuse_documents_outside(documents: Sequence[SourceDocument], folders: Folders) -> None:
    """Raise OutsideFolders for a document whose id names a file outside ``folders``: the page
    hands back a stored PDF by its id (its ``source`` is only a label, never opened)."""
    for document in documents:
        name = str(document.get("doc_id") or "")
        path = named_file(name)
        if path is not None and not is_within(resolved(path), folders):
            raise OutsideFolders(
                f"document {name!r}",
                folders,
                hint="; a document loaded elsewhere needs a doc_id that is no path on the server",
            )


_READING_WITHIN: ContextVar[Folders | None] = ContextVar("chop_reading_within", default=None)


@contextlib.contextmanager
def reading_within(folders: Folders | None) -> Iterator[None]:
    """Files opened by open_for_reading in this context must lie under ``folders`` (None:
    anywhere)."""
    token = _READING_WITHIN.set(folders)
    try:
        yield
    finally:
        _READING_WITHIN.reset(token)


def opened_path(fd: int, name: Path) -> Path:
    """The real path of the file open as ``fd``: what the kernel opened, not what the name
    says now. Without /proc, the resolved name, refused unless it is the same file."""
    with contextlib.suppress(OSError):
        return Path(os.readlink(f"/proc/self/fd/{fd}"))
    real = name.resolve(strict=True)
    if not os.path.samestat(os.fstat(fd), real.stat()):
        raise PermissionError(f"{name} changed while it was opened")
    return real


def open_for_reading(path: Path) -> IO[bytes]:
    """``path`` opened for reading, a regular file only (a FIFO would block), and under the
    folders of the current reading_within context (OutsideFolders otherwise), checked on the
    file actually opened."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        folders = _READING_WITHIN.get()
        if folders is not None and not is_within(opened_path(fd, path), folders):
            raise OutsideFolders(f"{str(path)!r}", folders)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def walk_within(directory: Path, folders: Folders | None) -> bool:
    """Whether a folder walk may enter ``directory``: always for a Python caller, and for a
    server run only when the folder it resolves to (a linked one included) is allowed."""
    return folders is None or is_within(resolved(directory), folders)
