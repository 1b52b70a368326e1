"""A document-parsing worker: ``python -m chop_rag.reading.parse_worker`` reads a pickled (paths,
max_file_mb, folders) on stdin and writes the pickled [(documents, problems), ...] of each path to
stdout. chop_rag.reading.loaders.workers starts one per core for a batch of PDFs: PDFium reads one
document at a time per process and pypdf is pure Python, so threads would share one core. A
worker whose parent dies (a killed ``chop ingest`` cannot clean up) exits within
PARENT_CHECK_S instead of parsing on for nobody."""

from __future__ import annotations

import os
import pickle
import sys
import threading
import time
from pathlib import Path

from chop_rag.reading.loaders.files import load_one

PARENT_CHECK_S = 0.5


def exit_with_parent(parent: int) -> None:
    """Exit at once when the process that started this one is gone (this one is re-parented)."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK_S)
        os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def main() -> None:
    exit_with_parent(os.getppid())
    paths, max_file_mb, within = pickle.loads(sys.stdin.buffer.read())
    results = [load_one(Path(path), max_file_mb, within) for path in paths]
    sys.stdout.buffer.write(pickle.dumps(results, protocol=pickle.HIGHEST_PROTOCOL))


if __name__ == "__main__":
    main()
