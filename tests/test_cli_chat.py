"""`chop chat` and `chop ask --thread`: a conversation typed on stdin, resumed by its id."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from chop_rag.cli import main
from chop_rag.config import Context
from tests.ingest_runs import twin_manuals

ROOT = Path(__file__).resolve().parents[1]


def chop_chat(ctx: Context, stdin: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`chop chat` in its own process, answering extractively (no LLM needed)."""
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "HF_HUB_OFFLINE": "1",
        "CHOP_DATA_DIR": ctx.data_dir,
        "CHOP_DATABASE_URL": ctx.database_url,
        "CHOP_ANSWER": "quote",
    }
    return subprocess.run(
        [sys.executable, "-m", "chop_rag.cli", "chat", "--collection", ctx.collection, *args],
        input=stdin, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


def test_chop_chat_keeps_the_manual_across_turns_and_resumes_a_thread(
    context: Context, store, scripted
) -> None:  # type: ignore[no-untyped-def]
    ctx = twin_manuals(context)
    turns = "How often do I clean the filter of the Coolwave 330C?\n\nWhat about the 225B?\n"
    done = chop_chat(ctx, turns, "--thread", "desk")
    assert done.returncode == 0, done.stderr[-2000:]
    answers = done.stdout.strip().splitlines()
    assert len(answers) == 2, "one answer a question; the empty line is skipped"
    assert "every 4 weeks" in answers[0] and "every 2 weeks" in answers[1]
    assert "switch_same_question: only names Coolwave 225B" in done.stderr
    assert "asked as: [Coolwave 225B] How often do I clean the filter?" in done.stderr

    resumed = chop_chat(ctx, "How do I empty the water tank?\n/history\n", "--thread", "desk")
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert "resuming thread desk (2 questions so far)" in resumed.stderr
    assert "continue: names no document: still about Coolwave 225B" in resumed.stderr
    assert "225B" in resumed.stdout.splitlines()[0]
    history = [line for line in resumed.stdout.splitlines() if line.startswith("you> ")]
    assert history == [
        "you> How often do I clean the filter of the Coolwave 330C?",
        "you> What about the 225B?",
        "you> How do I empty the water tank?",
    ]


def test_chop_ask_thread_follows_up_and_chop_threads_lists_and_deletes(
    context: Context, store, scripted, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:  # type: ignore[no-untyped-def]
    ctx = twin_manuals(context)
    for name, value in (
        ("CHOP_DATA_DIR", ctx.data_dir),
        ("CHOP_DATABASE_URL", ctx.database_url),
        ("CHOP_ANSWER", "quote"),
        ("CHOP_COLLECTION", ctx.collection),
    ):
        monkeypatch.setenv(name, value)  # fmt: skip
    question = "How often do I clean the filter of the Coolwave 225B?"
    assert main(["ask", question, "--thread", "t1"]) == 0
    assert main(["ask", "How do I empty the water tank?", "--thread", "t1"]) == 0
    out = capsys.readouterr()
    assert "continue: names no document: still about Coolwave 225B" in out.err
    assert "Coolwave 225B" in out.out.split("\n", 3)[-1]
    assert main(["threads"]) == 0
    assert "t1" in capsys.readouterr().out
    assert main(["threads", "--delete", "t1"]) == 0
    assert main(["threads", "--delete", "t1"]) == 1
    assert "no thread t1" in capsys.readouterr().err
