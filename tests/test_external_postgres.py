"""Issue 41: ingest workers started together on one external PostgreSQL, as users run it.

A separate server (chop_rag.harness.standalone_pg: its own data folder, a TCP port, initdb and
pg_ctl), an application role that is not a superuser and owns its database, the ``vector`` extension
created by the administrator. Four ``chop ingest`` processes start at once on a fresh
database over disjoint and overlapping batches of one collection, with the stub LLM server
(its request count is what the model was paid). They must end in bounded time (on the code
before this issue, durable runs hung forever in the checkpointer's setup), leave exactly the
chunks of a one-process run, pay each prompt once between them, and answer as that run's
database does. A worker killed midway resumes when run again, nothing lost or doubled.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
import pytest
from langgraph.checkpoint.postgres import PostgresSaver

from chop_rag.api import ask, one_run_per_thread
from chop_rag.cli import main
from chop_rag.config import Context
from chop_rag.deploy.checkpointer import setup_checkpoint_tables
from chop_rag.harness.sample_corpus import write_sample_corpus
from chop_rag.harness.standalone_pg import StandaloneServer
from chop_rag.harness.stub_llm import StubServer
from chop_rag.store.checkpoints import durable_checkpointer

pytestmark = pytest.mark.external

ROOT = Path(__file__).resolve().parents[1]
WORKER_TIMEOUT_S = float(os.environ.get("CHOP_TEST_WORKER_TIMEOUT_S", "420"))
COLLECTION = "manuals"
QUESTION = "How often should the Coolwave 330C filter be cleaned?"
SETTINGS = {  # many small chunks, each judged by the LLM: many prompts to pay once
    "CHOP_CONTINUITY_MODE": "llm",
    "CHOP_CHUNK_TOKENS": "80",
    "CHOP_CHUNK_OVERLAP": "10",
    "CHOP_MAX_CONCURRENCY": "4",
}
CHUNK_COLUMNS = "doc_id, chunk_index, text, prefix, category, model, continuity, cnm_source"


@dataclass
class Worker:
    batch: list[Path]
    process: subprocess.Popen[str]
    output: str = ""
    killed: bool = False


@dataclass
class Database:
    url: str
    name: str
    requests: int = 0  # LLM requests its ingests paid
    notes: list[str] = field(default_factory=list)


@pytest.fixture(scope="module")
def server() -> Iterator[StandaloneServer]:
    # Not under pytest's basetemp: another pytest session on the machine may prune it.
    folder = Path(tempfile.mkdtemp(prefix="chop-external-pg-"))
    pg = StandaloneServer(folder).start()
    try:
        yield pg
    finally:
        pg.stop()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def stub() -> Iterator[StubServer]:
    llm = StubServer(latency=(0.01, 0.03)).start()
    yield llm
    llm.stop()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Four manuals: the sample three and a near-twin of the first (shared passages give
    shared prompts across documents, hence across workers)."""
    folder = tmp_path_factory.mktemp("corpus")
    paths = write_sample_corpus(folder)
    twin = folder / "coolwave-225b-kitchen.md"
    twin.write_text(paths[0].read_text().replace("Coolwave 225B", "Coolwave 225B Kitchen"))
    return [*paths, twin]


@pytest.fixture(scope="module")
def reference(
    server: StandaloneServer, stub: StubServer, corpus: list[Path], data_dir: Path
) -> Database:
    """The whole corpus ingested by one process on its own fresh database."""
    db = fresh_database(server)
    before = stub.requests
    [worker] = run_workers(db, [corpus], stub=stub, data_dir=data_dir, durable=True)
    assert worker.process.returncode == 0, worker.output
    db.requests = stub.requests - before
    return db


def fresh_database(server: StandaloneServer) -> Database:
    name = f"chop_{uuid.uuid4().hex[:10]}"
    return Database(server.create_database(name, owner="chop_app", password="app-pw"), name)


def worker_env(db: Database, stub: StubServer, data_dir: Path) -> dict[str, str]:
    return {
        **os.environ,
        **SETTINGS,
        "PYTHONPATH": str(ROOT),
        "HF_HUB_OFFLINE": "1",
        "LANGSMITH_TRACING": "false",
        "CHOP_DATABASE_URL": db.url,
        "CHOP_DATA_DIR": str(data_dir),  # the local embedder's files only: no embedded server
        "CHOP_CHAT_PROVIDER": "openai",
        "CHOP_OPENAI_BASE_URL": stub.base_url + "/v1",
        "CHOP_CHAT_MODEL": "stub",
    }


def start_worker(
    db: Database, batch: list[Path], *, stub: StubServer, data_dir: Path, durable: bool
) -> Worker:
    command = [sys.executable, "-m", "chop_rag.cli", "ingest", *map(str, batch),
               "--collection", COLLECTION, *([] if durable else ["--no-durable"])]  # fmt: skip
    process = subprocess.Popen(
        command, cwd=ROOT, env=worker_env(db, stub, data_dir), text=True,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, errors="backslashreplace",
    )  # fmt: skip
    return Worker(batch, process)


def run_workers(
    db: Database,
    batches: list[list[Path]],
    *,
    stub: StubServer,
    data_dir: Path,
    durable: bool,
    kill: int | None = None,
    kill_after_requests: int = 0,
) -> list[Worker]:
    """All batches at once, one process each; worker ``kill`` gets SIGKILL once the stub has
    served ``kill_after_requests`` more requests. A run past WORKER_TIMEOUT_S is a hang:
    every worker is killed and the test fails, showing what the database was waiting on."""
    before = stub.requests
    workers = [start_worker(db, b, stub=stub, data_dir=data_dir, durable=durable) for b in batches]
    started = time.monotonic()
    while any(w.process.poll() is None for w in workers):
        if time.monotonic() - started > WORKER_TIMEOUT_S:
            waits = activity(db)
            for w in workers:
                w.process.kill()
            pytest.fail(f"{len(batches)} workers still running after {WORKER_TIMEOUT_S:.0f} s "
                        f"(a hang); the database's sessions: {waits}")  # fmt: skip
        if kill is not None and not workers[kill].killed:
            if workers[kill].process.poll() is not None:
                pytest.fail(f"worker {kill} ended before the kill point: {communicate(workers)}")
            if stub.requests - before >= kill_after_requests:
                os.kill(workers[kill].process.pid, signal.SIGKILL)
                workers[kill].killed = True
        time.sleep(0.1)
    for w in workers:
        w.output = w.process.communicate()[0]
    return workers


def communicate(workers: list[Worker]) -> str:
    return "\n".join(f"[{w.process.poll()}] {w.process.communicate()[0]}" for w in workers)


def activity(db: Database) -> list[tuple[Any, ...]]:
    with psycopg.connect(db.url) as conn:
        return conn.execute(
            "SELECT state, wait_event_type, wait_event, left(query, 90) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchall()


def query(db: Database, text: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(db.url) as conn:
        return conn.execute(text).fetchall()


def chunk_rows(db: Database) -> list[tuple[Any, ...]]:
    return query(db, f"SELECT {CHUNK_COLUMNS} FROM chop_{COLLECTION}_chunks ORDER BY 1, 2")


def assert_same_as_reference(db: Database, reference: Database, *, durable: bool = True) -> None:
    rows = chunk_rows(db)
    assert rows == chunk_rows(reference), "the chunks differ from a one-process run"
    keys = [(r[0], r[1]) for r in rows]
    assert len(keys) == len(set(keys)), "a chunk is stored twice"
    documents = query(db, f"SELECT doc_id, chunk_count FROM chop_{COLLECTION}_documents ORDER BY 1")
    assert documents == query(
        reference, f"SELECT doc_id, chunk_count FROM chop_{COLLECTION}_documents ORDER BY 1"
    )
    if durable:
        assert query(db, "SELECT count(*) FROM checkpoints") == [(0,)], "finished threads remain"


def answer(db: Database, stub: StubServer, data_dir: Path) -> dict[str, Any]:
    ctx = Context(
        database_url=db.url, data_dir=str(data_dir), collection=COLLECTION,
        chat_provider="openai", openai_base_url=stub.base_url + "/v1", chat_model="stub",
    )  # fmt: skip
    result = ask(QUESTION, context=ctx)
    return {"answer": result["answer"], "sources": [s["doc_id"] for s in result["sources"]]}


SETUP_WORKERS = 6
SETUP_TIMEOUT_S = 120


def set_up_checkpointer(url: str, kind: str) -> None:
    if kind == "ingest":  # what `chop ingest` (durable) opens
        with durable_checkpointer(url):
            pass
    else:  # what the LangGraph server's checkpointer factory runs (deploy/checkpointer.py)
        asyncio.run(setup_checkpoint_tables(url))


@pytest.mark.parametrize("kind", ["ingest", "server"])
def test_the_checkpointer_tables_are_set_up_by_many_workers_at_once_without_a_hang(
    server: StandaloneServer, kind: str
) -> None:
    """The setup's CREATE INDEX CONCURRENTLY waits for every older transaction; a worker
    blocked in pg_advisory_lock was one, waiting for the lock's holder: a hang before."""
    db = fresh_database(server)
    barrier = threading.Barrier(SETUP_WORKERS)
    errors: list[BaseException] = []

    def worker() -> None:
        barrier.wait()
        try:
            set_up_checkpointer(db.url, kind)
        except BaseException as exc:  # the test reports it
            errors.append(exc)

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(SETUP_WORKERS)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + SETUP_TIMEOUT_S
    for t in threads:
        t.join(timeout=max(0.0, deadline - time.monotonic()))
    if any(t.is_alive() for t in threads):
        waits = activity(db)
        with server.admin() as admin:  # let the stuck threads go
            admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                          "WHERE datname = %s", (db.name,))  # fmt: skip
        pytest.fail(f"checkpointer setup still running after {SETUP_TIMEOUT_S} s: {waits}")
    assert errors == []
    migrations = query(db, "SELECT count(*) FROM checkpoint_migrations")[0][0]
    assert migrations == len(PostgresSaver.MIGRATIONS)
    indexes = query(db, "SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
                        "WHERE c.relname LIKE 'checkpoint%%' AND NOT i.indisvalid")  # fmt: skip
    assert indexes == [(0,)], "an index left invalid by an interrupted concurrent build"


def batches_of(corpus: list[Path]) -> list[list[Path]]:
    """Four workers: one alone with a document nobody else has; the rest overlap."""
    a, b, c, d = corpus
    return [[a, b], [c], [b, c, d], [a, d]]


@pytest.mark.parametrize("durable", [True, False], ids=["durable", "no-durable"])
def test_four_workers_at_once_on_a_fresh_database_store_what_one_process_stores(
    server: StandaloneServer,
    stub: StubServer,
    corpus: list[Path],
    data_dir: Path,
    reference: Database,
    durable: bool,
) -> None:
    db = fresh_database(server)
    before = stub.requests
    workers = run_workers(db, batches_of(corpus), stub=stub, data_dir=data_dir, durable=durable)
    paid = stub.requests - before
    for w in workers:
        assert w.process.returncode == 0, w.output
        assert "Traceback" not in w.output, w.output
    assert_same_as_reference(db, reference, durable=durable)
    # The LLM cache is one table for all workers, and a prompt being asked is claimed: every
    # distinct prompt was paid once, between four processes as in one.
    assert paid == reference.requests, (paid, reference.requests)
    assert query(db, "SELECT count(*) FROM chop_llm_cache") == [(reference.requests,)]
    reply = answer(db, stub, data_dir)
    assert reply == answer(reference, stub, data_dir)
    assert reply["sources"] and "330c" in reply["sources"][0].lower()


def test_a_worker_killed_midway_resumes_and_nothing_is_lost_or_doubled(
    server: StandaloneServer,
    stub: StubServer,
    corpus: list[Path],
    data_dir: Path,
    reference: Database,
) -> None:
    db = fresh_database(server)
    batches = [[corpus[0]], [corpus[1]], list(corpus), [corpus[3]]]  # worker 2: all of it
    before = stub.requests
    workers = run_workers(
        db, batches, stub=stub, data_dir=data_dir, durable=True,
        kill=2, kill_after_requests=reference.requests // 3,
    )  # fmt: skip
    assert workers[2].killed and workers[2].process.returncode == -signal.SIGKILL
    for i in (0, 1, 3):
        assert workers[i].process.returncode == 0, workers[i].output
    threads = query(db, "SELECT DISTINCT thread_id FROM checkpoints")
    assert len(threads) == 1, "the killed worker's checkpoints are kept for its rerun"

    [rerun] = run_workers(db, [batches[2]], stub=stub, data_dir=data_dir, durable=True)
    assert rerun.process.returncode == 0, rerun.output
    assert f"resuming unfinished run {threads[0][0]}" in rerun.output
    assert_same_as_reference(db, reference)
    paid = stub.requests - before
    # Only answers paid but not yet cached when the worker died are paid again: an LLM slot is
    # held from the request to the cache write (chop_rag.models.llm), so at most max_concurrency.
    slots = int(SETTINGS["CHOP_MAX_CONCURRENCY"])
    assert reference.requests <= paid <= reference.requests + slots


def test_a_role_that_may_not_create_pgvector_is_told_the_sql_in_one_line(
    server: StandaloneServer,
    stub: StubServer,
    corpus: list[Path],
    data_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    name = f"chop_{uuid.uuid4().hex[:10]}"
    url = server.create_database(name, owner="chop_app", password="app-pw", vector=False)
    for name_, value in worker_env(Database(url, name), stub, data_dir).items():
        monkeypatch.setenv(name_, value)
    assert main(["ingest", str(corpus[0]), "--collection", COLLECTION, "--quiet"]) == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert lines == [
        f"error: the role 'chop_app' may not create the pgvector extension in database "
        f"'{name}' on 127.0.0.1:{server.port}; a superuser must run there once: "
        "CREATE EXTENSION vector;"
    ]
    with server.admin(name) as admin:  # what the line says, done: the next run works
        admin.execute("CREATE EXTENSION vector")
    assert main(["ingest", str(corpus[0]), "--collection", COLLECTION, "--quiet",
                 "--no-durable"]) == 0  # fmt: skip


def test_the_same_batch_started_twice_runs_its_thread_once_at_a_time(
    server: StandaloneServer, caplog: pytest.LogCaptureFixture
) -> None:
    """Two workers given one batch derive one thread id; the second waits for the first
    instead of running one checkpointed thread from two processes."""
    db = fresh_database(server)
    caplog.set_level(logging.WARNING, logger="chop_rag.api")
    order: list[str] = []
    first_holds = threading.Event()

    def second() -> None:
        first_holds.wait()
        with one_run_per_thread(db.url, "ingest-manuals-abc-def"):
            order.append("second runs")

    other = threading.Thread(target=second)
    other.start()
    with one_run_per_thread(db.url, "ingest-manuals-abc-def"):
        first_holds.set()
        time.sleep(1.5)
        order.append("first ends")
    other.join(timeout=30)
    assert order == ["first ends", "second runs"]
    assert [r.getMessage() for r in caplog.records] == [
        "another process is running this ingest (ingest-manuals-abc-def); waiting for it"
    ]
