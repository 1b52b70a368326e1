"""How chop_rag/terminal/coordinator.py splits a corpus into batch threads (no server needed): the
same files always give the same threads, a changed file a new one, and bad arguments one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from chop_rag.harness.sample_corpus import write_sample_corpus
from chop_rag.terminal.coordinator import plan_batches

ROOT = Path(__file__).resolve().parents[1]


def test_batches_are_sorted_files_with_thread_ids_that_depend_on_collection_and_contents(
    tmp_path: Path,
) -> None:
    files = write_sample_corpus(tmp_path / "corpus")
    (tmp_path / "corpus" / "notes.xyz").write_text("not a supported file")
    batches = plan_batches([str(tmp_path / "corpus")], "manuals", 2)
    assert [list(b.files) for b in batches] == [
        sorted(str(f.resolve()) for f in files)[:2],
        sorted(str(f.resolve()) for f in files)[2:],
    ]
    named = plan_batches([str(f) for f in reversed(files)], "manuals", 2)
    assert [b.thread_id for b in named] == [b.thread_id for b in batches]
    other = plan_batches([str(tmp_path / "corpus")], "other", 2)
    assert not {b.thread_id for b in other} & {b.thread_id for b in batches}

    last = Path(batches[1].files[0])
    last.write_text(last.read_text() + "\nOne more line.\n")
    changed = plan_batches([str(tmp_path / "corpus")], "manuals", 2)
    assert changed[0].thread_id == batches[0].thread_id
    assert changed[1].thread_id != batches[1].thread_id


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["/no/such/folder"], "error: no such file or folder: /no/such/folder"),
        (["{corpus}", "--jobs", "0"], "error: --jobs must be at least 1"),
        (["{corpus}", "--batch-size", "0"], "error: --batch-size must be at least 1"),
        (
            ["{corpus}"],
            "error: cannot use the LangGraph server at http://127.0.0.1:9: "
            "[Errno 111] Connection refused",
        ),
    ],
)
def test_bad_arguments_are_one_line_and_exit_1(
    tmp_path: Path, arguments: list[str], message: str
) -> None:
    write_sample_corpus(tmp_path)
    command = [sys.executable, "-m", "chop_rag.cli", "ingest"]
    command += [a.format(corpus=tmp_path) for a in arguments]
    command += ["--server", "http://127.0.0.1:9"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 1
    assert done.stderr.strip() == message
