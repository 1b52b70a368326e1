"""Turn paths (files or directories) into SourceDocuments, reporting each bad input once.

Ingesting a folder of manuals should never stop at the first odd file: every file that
cannot be used becomes one Problem with a short reason, and the rest of the batch loads.

One module a format (text, markdown, html, pdf, emanual), one registry of them (formats);
files: which files a path means, with their sidecars; workers: PDFs parsed one process a core.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from chop_rag.reading.allowed import Folders
from chop_rag.reading.documents import Problem, SourceDocument
from chop_rag.reading.loaders.common import LoadError, clean_title, name_text, normalize_text
from chop_rag.reading.loaders.emanual import emanual_device_name, load_emanual
from chop_rag.reading.loaders.files import (
    SIDECAR_SUFFIX,
    files_to_load,
    input_file_hashes,
    load_one,
)
from chop_rag.reading.loaders.formats import PDF_SUFFIXES, SUPPORTED_SUFFIXES, load_file
from chop_rag.reading.loaders.workers import file_size, load_in_workers

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
    "name_text",
    "normalize_text",
]

PARALLEL_PDF_BYTES = 2 * 1024 * 1024  # less PDF than this parses faster than workers start


def load_paths(
    paths: Sequence[str | Path],
    *,
    max_file_mb: int = 50,
    workers: int | None = None,
    within: Folders | None = None,
) -> tuple[list[SourceDocument], list[Problem]]:
    """Load every supported file under `paths`; bad inputs become Problems, never exceptions.

    Parsing a PDF is CPU work that holds its process (PDFium, about 7 ms a page, reads one
    document at a time; pypdf, its fallback, is pure Python), so a batch of PDFs is parsed by
    one worker process per core (``workers``: default the number of cores); documents keep
    the order of the files either way. ``within`` (a server run's folders,
    chop_rag.reading.allowed): no folder is walked and no file is read that resolves outside them;
    each is a Problem.
    """
    problems: list[Problem] = []
    files = files_to_load(paths, problems, within)
    pdf_bytes = sum(file_size(path) for path in files if path.suffix.lower() in PDF_SUFFIXES)
    if workers is None:
        many = pdf_bytes >= PARALLEL_PDF_BYTES
        workers = min(os.cpu_count() or 1, len(files)) if many else 1
    results = load_in_workers(files, max_file_mb, workers, within)
    documents: list[SourceDocument] = []
    for loaded, found in results:
        documents.extend(loaded)
        problems.extend(found)
    return documents, problems
