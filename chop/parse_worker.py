"""A document-parsing worker: ``python -m chop.parse_worker`` reads a pickled (paths,
max_file_mb) on stdin and writes the pickled [(documents, problems), ...] of each path to
stdout. chop.loaders.workers starts one per core for a batch of PDFs: parsing them is pure
Python, so threads would share one core."""

from __future__ import annotations

import pickle
import sys
from pathlib import Path

from chop.loaders.files import load_one


def main() -> None:
    paths, max_file_mb = pickle.loads(sys.stdin.buffer.read())
    results = [load_one(Path(path), max_file_mb) for path in paths]
    sys.stdout.buffer.write(pickle.dumps(results, protocol=pickle.HIGHEST_PROTOCOL))


if __name__ == "__main__":
    main()
