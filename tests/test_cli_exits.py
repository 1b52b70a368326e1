"""The `chop` command says what went wrong in one line and exits non-zero; it never answers
"no passages" with success, never prints a traceback for a database it cannot reach."""

from __future__ import annotations

import argparse
import time
import uuid
from pathlib import Path

import pytest

from chop_rag.cli import build_parser, main
from chop_rag.config import Context
from chop_rag.harness.sample_corpus import write_sample_corpus
from chop_rag.store import store_for
from tests.fakes import ScriptedChatModel


def error_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def test_version_is_printed(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.startswith("chop ")


def test_every_argument_of_every_command_has_help() -> None:
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    undocumented = [
        f"{name} {action.dest}"
        for name, sub in commands.choices.items()
        for action in sub._actions
        if not isinstance(action, argparse._HelpAction) and not action.help
    ]
    assert undocumented == []


def test_a_path_that_does_not_exist_is_reported_once_and_at_once(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    missing = tmp_path / "no-such-manuals"
    started = time.perf_counter()
    assert main(["ingest", str(missing)]) == 1
    assert time.perf_counter() - started < 2  # no database, no model started for nothing
    assert error_lines(capsys.readouterr().err) == [f"error: no such file or folder: {missing}"]


def test_a_missing_path_beside_real_ones_is_reported_once(
    capsys: pytest.CaptureFixture[str],
    scripted: ScriptedChatModel,
    cli_env: Context,
    tmp_path: Path,
) -> None:
    write_sample_corpus(tmp_path / "manuals")
    missing = tmp_path / "no-such-manual.md"
    try:
        paths = [str(tmp_path / "manuals"), str(missing)]
        assert main(["ingest", *paths, "--quiet", "--collection", cli_env.collection]) == 0
        assert capsys.readouterr().err.count(str(missing)) == 1
    finally:
        store_for(cli_env).drop_collection(cli_env.collection)


def test_an_empty_question_exits_2_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ask", "   "]) == 2
    assert error_lines(capsys.readouterr().err) == ["error: the question is empty"]


def test_a_collection_without_documents_exits_1_in_one_line(
    capsys: pytest.CaptureFixture[str], cli_env: Context
) -> None:
    collection = f"t_none_{uuid.uuid4().hex[:8]}"
    assert main(["ask", "How do I clean the filter?", "--collection", collection]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert error_lines(captured.err) == [
        f"error: collection '{collection}' has no documents "
        f"(chop ingest PATH --collection {collection})"
    ]


def test_an_unreachable_database_is_one_line_without_traceback(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CHOP_DATABASE_URL", "postgresql://chop@127.0.0.1:9/chop?connect_timeout=3")
    assert main(["docs"]) == 2
    lines = error_lines(capsys.readouterr().err)
    assert len(lines) == 1 and lines[0].startswith("error: cannot reach the database: ")
    assert "Traceback" not in lines[0]


def test_chop_docs_at_80_columns_shows_every_doc_id_whole(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    scripted: ScriptedChatModel,
    cli_env: Context,
    tmp_path: Path,
) -> None:
    """`chop delete` takes the doc_id `chop docs` shows: a long one is folded, never cut."""
    folder = tmp_path / ("a-rather-long-folder-name-for-manuals-" * 2)
    write_sample_corpus(folder)
    monkeypatch.setenv("COLUMNS", "80")
    try:
        assert main(["ingest", str(folder), "--quiet", "--collection", cli_env.collection]) == 0
        capsys.readouterr()
        assert main(["docs", "--collection", cli_env.collection]) == 0
        lines = capsys.readouterr().out.splitlines()
        stored = store_for(cli_env).documents(cli_env.collection)
        assert all(len(line) <= 80 for line in lines)
        first_column = "".join(line.split("│")[1].strip() for line in lines if line.count("│") > 2)
        assert stored and all(len(doc_id) > 40 for doc_id in stored)
        assert all(doc_id in first_column for doc_id in stored), first_column
        assert "…" not in first_column
    finally:
        store_for(cli_env).drop_collection(cli_env.collection)


@pytest.mark.parametrize("args", [["docs", "--json"], ["threads", "--json"]])
def test_output_whose_reader_went_away_is_one_line_without_traceback(
    cli_env: Context, args: list[str]
) -> None:
    """``chop docs --json | true``: the pipe is closed before chop writes to it."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from chop_rag.cli import main; sys.exit(main())",
            *args,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(root)},
        text=True,
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # the reader is gone before chop writes
    err = process.stderr.read()
    assert process.wait(timeout=120) == 1
    assert error_lines(err) == ["chop: output closed before it was all written (broken pipe)"]
