"""Parsing in worker processes: a batch of PDFs is CPU work that holds its process (PDFium
reads one document at a time; pypdf is pure Python), one process per core."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

from chop_rag.config import python_path_with_chop
from chop_rag.reading.allowed import Folders
from chop_rag.reading.documents import Problem, SourceDocument
from chop_rag.reading.loaders.files import load_one

Loaded = tuple[list[SourceDocument], list[Problem]]


def load_in_workers(
    files: list[Path], max_file_mb: int, workers: int, within: Folders | None = None
) -> list[Loaded]:
    """Each file's result, in order, parsed by ``workers`` processes (``python -m
    chop_rag.reading.parse_worker``: a fresh interpreter, so nothing of the caller's script or
    threads is copied). A worker that fails leaves its files to this process. ``within``: the
    folders the files opened must lie under (a server run's), checked by whichever process opens
    them."""
    if workers <= 1 or len(files) <= 1:
        return [load_one(path, max_file_mb, within) for path in files]
    shares: list[list[int]] = [[] for _ in range(workers)]
    loads = [0] * workers
    for index in sorted(range(len(files)), key=lambda i: -file_size(files[i])):  # largest first
        least = loads.index(min(loads))
        shares[least].append(index)
        loads[least] += file_size(files[index])
    env = {**os.environ, "PYTHONPATH": python_path_with_chop()}
    running: list[tuple[list[int], subprocess.Popen[bytes] | None]] = []
    try:
        for share in shares:
            names = [str(files[i]) for i in share]
            running.append((share, _start_worker(names, max_file_mb, within, env)))
        results: dict[int, Loaded] = {}
        for share, worker in running:
            loaded = _worker_results(worker)
            if loaded is None or len(loaded) != len(share):
                loaded = [load_one(files[i], max_file_mb, within) for i in share]
            results.update(zip(share, loaded, strict=True))
        return [results[i] for i in range(len(files))]
    finally:
        for _, worker in running:
            if worker is not None and worker.poll() is None:
                worker.kill()
                worker.wait()


def _start_worker(
    paths: list[str], max_file_mb: int, within: Folders | None, env: dict[str, str]
) -> subprocess.Popen[bytes] | None:
    """A parse worker given its files, or None when it cannot start."""
    try:
        worker = subprocess.Popen(
            [sys.executable, "-m", "chop_rag.reading.parse_worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
    except OSError:
        return None
    try:
        assert worker.stdin is not None
        worker.stdin.write(pickle.dumps((paths, max_file_mb, within)))
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


def file_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
