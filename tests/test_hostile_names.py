"""File names are user input too: a name that is not UTF-8, holds a newline or looks like
console markup is one plain line or an ingested document, never a failed run (found by the
scripted fault run, tests/fault_run.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from chop_rag.api import ingest
from chop_rag.cli import main
from chop_rag.config import Context
from chop_rag.store import Store

MANUAL = "# Coolwave note\n\n" + "Clean the mesh filter with warm water and let it dry. " * 8


@pytest.mark.usefixtures("scripted")
def test_a_file_whose_name_is_not_utf8_is_stored_under_an_escaped_id(
    context: Context, store: Store, tmp_path: Path
) -> None:
    (tmp_path / os.fsdecode(b"caf\xe9-notes.md")).write_text(MANUAL, encoding="utf-8")
    (tmp_path / os.fsdecode(b"r\xe9sum\xe9.txt")).write_text(MANUAL[16:], encoding="utf-8")
    report = ingest([tmp_path], context=context)  # failed with UnicodeEncodeError before
    assert report["added"] == 2 and report["problems"] == []
    stored = store.documents(context.collection)
    assert sorted(Path(doc_id).name for doc_id in stored) == [
        "caf\\xe9-notes.md",
        "r\\xe9sum\\xe9.txt",
    ]
    assert {record.title for record in stored.values()} == {"Coolwave note", "r\\xe9sum\\xe9"}
    again = ingest([tmp_path], context=context)
    assert again["unchanged"] == 2, "the escaped id is stable across runs"


def test_a_path_with_markup_or_a_newline_is_reported_in_one_plain_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    markup, newline = tmp_path / "[/red] manual.md", tmp_path / "two\nlines.md"
    assert main(["ingest", str(markup), str(newline)]) == 1  # a traceback (MarkupError) before
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert lines == [
        f"error: no such file or folder: {markup}",
        f"error: no such file or folder: {tmp_path}/two\\nlines.md",
    ]


@pytest.mark.usefixtures("scripted")
def test_skipped_files_with_markup_or_newlines_in_their_names_do_not_stop_the_run(
    context: Context,
    store: Store,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "good.md").write_text(MANUAL, encoding="utf-8")
    (tmp_path / "drafts[").mkdir()
    (tmp_path / "drafts[" / "old].md").write_text(" \n")  # the path holds "[/old]"
    (tmp_path / "two\nlines.md").write_text(" \n")
    monkeypatch.setenv("CHOP_DATA_DIR", context.data_dir)
    argv = ["ingest", str(tmp_path), "--collection", context.collection, "--no-durable"]
    assert main(argv) == 0  # the markup ended the whole run with MarkupError before
    err = capsys.readouterr().err
    assert f"skipped {tmp_path}/drafts[/old].md: empty: no text" in err.splitlines()
    assert f"skipped {tmp_path}/two\\nlines.md: empty: no text" in err.splitlines()
    assert list(store.documents(context.collection)) == [str(tmp_path / "good.md")]
