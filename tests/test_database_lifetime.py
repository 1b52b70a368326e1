"""Issues 41 and 36: the embedded server's life and the database errors a new user meets.

- Several first commands on a fresh data folder: one creates the database, the others wait
  (they raced in initdb: "directory exists but is not empty", "AssertionError: line_vars").
- The embedded server stops when the process that started it is killed (a watchdog).
- An empty ``CHOP_DATABASE_URL`` means the embedded server, said once; an unreachable or
  malformed URL is one line, at once, for the default (durable) ingest too.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import chop_rag.store.pgserver
from chop_rag.cli import main
from chop_rag.harness.sample_corpus import write_sample_corpus
from chop_rag.harness.standalone_pg import free_port
from chop_rag.store.pgserver import resolve_database_url

ROOT = Path(__file__).resolve().parents[1]
# A process that takes the embedded server (schema and all, as any command does) and waits.
USER = """
import sys, time
from chop_rag.store import get_store
store = get_store("", sys.argv[1])
print(store.collection_exists("nothing_here"), flush=True)
time.sleep(float(sys.argv[2]))
"""


def embedded_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "CHOP_DATABASE_URL"}
    return {**env, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}


def user_process(data_dir: Path, linger_s: float) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", USER, str(data_dir), str(linger_s)],
        env=embedded_env(), text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip


def postmaster_pid(data_dir: Path) -> int | None:
    try:
        return int((data_dir / "pgdata" / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def wait_until_stopped(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    return not alive(pid)


pytestmark = pytest.mark.skipif(
    bool(os.environ.get("CHOP_DATABASE_URL")), reason="the embedded server's life"
)


def test_three_first_commands_on_a_fresh_data_folder_share_one_new_database(
    tmp_path: Path,
) -> None:
    data_dir = tmp_path / "fresh"
    users = [user_process(data_dir, 3) for _ in range(3)]
    outputs = [p.communicate(timeout=300)[0] for p in users]
    for process, output in zip(users, outputs, strict=True):
        assert process.returncode == 0, output
        assert output.strip().splitlines()[-1] == "False", output
        assert "Traceback" not in output, output
    # each created nothing twice: one initdb, one server for all three
    assert (data_dir / "pgdata" / "PG_VERSION").read_text().strip() == "18"
    pid = postmaster_pid(data_dir)
    assert pid is None or wait_until_stopped(pid, 60), "the last user left; the server stays"


def test_the_embedded_server_stops_when_the_process_that_started_it_is_killed(
    tmp_path: Path,
) -> None:
    data_dir = tmp_path / "data"
    user = user_process(data_dir, 600)
    assert user.stdout is not None
    lines = iter(user.stdout.readline, "")
    assert any(line.strip() == "False" for line in lines)  # it holds the server now
    pid = postmaster_pid(data_dir)
    assert pid is not None and alive(pid)
    os.kill(user.pid, signal.SIGKILL)
    user.wait()
    assert wait_until_stopped(pid, 60), "the server outlived the process that started it"


def test_an_empty_database_url_means_the_embedded_server_and_says_so_once(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("CHOP_DATABASE_URL", "")
    monkeypatch.setattr(chop_rag.store.pgserver, "_said_empty", False)
    caplog.set_level(logging.WARNING, logger="chop_rag.store.pgserver")
    first = resolve_database_url("", data_dir)
    assert resolve_database_url("", data_dir) == first
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1, lines
    assert lines[0].startswith("CHOP_DATABASE_URL is set but empty: using the embedded PostgreSQL")
    monkeypatch.delenv("CHOP_DATABASE_URL")
    monkeypatch.setattr(chop_rag.store.pgserver, "_said_empty", False)
    resolve_database_url("", data_dir)
    assert len(caplog.records) == 1, "unset is the ordinary embedded case: nothing said"


@pytest.mark.parametrize(
    ("url", "says"),
    [
        (
            f"postgresql://chop:pw@127.0.0.1:{free_port()}/chop",
            "error: cannot reach the database: ",
        ),
        ("chop-db:5432", "error: CHOP_DATABASE_URL is not a PostgreSQL URL ("),
    ],
    ids=["unreachable", "malformed"],
)
def test_a_bad_database_url_ends_a_default_ingest_in_one_line_at_once(
    url: str,
    says: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    write_sample_corpus(tmp_path / "manuals")
    monkeypatch.setenv("CHOP_DATABASE_URL", url)
    started = time.monotonic()
    assert main(["ingest", str(tmp_path / "manuals"), "--quiet"]) == 2  # durable: the default
    assert time.monotonic() - started < 30, "not a wait for the outage bound (900 s)"
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(says), lines
