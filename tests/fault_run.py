"""Issue 13's scripted fault run: the real `chop ingest` CLI against the embedded PostgreSQL and
the stub LLM, through every fault the issue names, ends with the clean run's chunks.

    python -m tests.fault_run [--out bench/results/faults] [--good-documents 8]

A corpus of good documents (Markdown, HTML, text, PDF, E-Manual JSON) and 21 hostile files
(tests/fault_corpus.py) is ingested

- into collection A in one clean run: the reference;
- into collection B through: the LLM endpoint down (nothing listens), then hung (every request
  sleeps past the deadline), then up again with `kill -9` at five points, each rerun resuming
  the last (during loading, during the LLM phase, during embedding, during persist, right after
  a document's commit), a database restart in the middle of the run that finishes, and one more
  run that must find everything unchanged.

Each kill is timed by what the run has written to PostgreSQL (its checkpoints and stored
documents) or by the stub's request count, never by a sleep. The stub is the same on every B
step (one port, so one model identity: a restarted endpoint is the same endpoint); A's stub
listens on another port, so A's cached answers are not B's and B pays its own calls.

At the end B's stored chunk set must equal A's: per chunk (document path in the corpus, index,
title, text hash, prefix, category, nouns, model, CNM source, continuity decision, flags,
embedded-text hash, character span, metadata hash) and per document (title, chunk count,
profile); vectors compared by embedded-text hash. B's documents must all carry final
fingerprints (no label left to redo). Every run's stderr must be one known line per message
(no traceback, no stray output), and every completed run names each hostile file once.
Writes results.json and results.md to --out; exit 0 when every check holds.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import psycopg

from chop_rag.harness.stub_llm import StubServer
from chop_rag.models.embedders import minilm_tolerance
from chop_rag.nodes.persist import NEEDS_RELABEL
from chop_rag.reading.loaders import name_text
from chop_rag.store import (
    Store,
    get_store,
    release_embedded_server,
    resolve_database_url,
)
from tests.database import database_outage, restart_embedded_server
from tests.fault_corpus import Hostile, write_corpus

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "bench" / "results" / "faults"
RUN_TIMEOUT_S = 600.0  # plus the database outage, when there is one
MAX_FILE_MB = 1
LLM_DEADLINE_S = 2.0
STUB_LATENCY = (0.2, 0.4)  # long enough that the LLM phase outlasts the polling interval
POLL_S = 0.01
# Endpoint down or hung: a short deadline and more calls in flight, so every label's fallback
# costs seconds in all, not minutes.
OUTAGE = {"CHOP_LLM_DEADLINE_S": "1", "CHOP_MAX_CONCURRENCY": "8"}

Trigger = Callable[[], str | None]  # polled while the CLI runs: a reason to act, or None


# --------------------------------------------------------------------------- one CLI run
@dataclass
class Run:
    """One `chop ingest` process: what it printed, how it ended, and what was done to it."""

    step: str
    action: str
    exit_code: int | None = None
    seconds: float = 0.0
    stderr: list[str] = field(default_factory=list)
    stdout: str = ""
    acted: str | None = None  # what the trigger saw when it fired (kill, restart)
    llm_requests: int = 0
    checks: list[str] = field(default_factory=list)  # failed checks of this step
    happened: str = ""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def stub_at(port: int, **options: Any) -> Iterator[StubServer]:
    """The stub LLM on ``port``; a client killed mid-request is not the stub's error to print."""
    server = StubServer(port=port, latency=STUB_LATENCY, **options)
    server._httpd.handle_error = lambda request, client_address: None  # type: ignore[method-assign]
    server.start()
    try:
        yield server
    finally:
        server.stop()


class FaultRun:
    def __init__(self, work: Path, *, good_documents: int, db_outage_s: float = 0.0) -> None:
        self.work = work
        self.db_outage_s = db_outage_s  # the database step: a restart (0) or an outage this long
        self.corpus = work / "corpus"
        self.data_dir = work / "data"
        self.hostile: list[Hostile] = write_corpus(
            self.corpus, good_documents=good_documents, max_file_mb=MAX_FILE_MB
        )
        self.url = resolve_database_url("", self.data_dir)  # started here, before any CLI
        self.store: Store = get_store("", self.data_dir)
        self.runs: list[Run] = []
        self.port_b = free_port()
        self.stub: StubServer | None = None  # the stub answering B's port, if any
        self._conn: psycopg.Connection[Any] | None = None

    # ----------------------------------------------------------------- running the CLI
    def env(self, port: int) -> dict[str, str]:
        inherited = {k: v for k, v in os.environ.items() if k != "CHOP_DATABASE_URL"}
        return {  # CHOP_DATABASE_URL unset: the embedded server (set but empty would warn)
            **inherited,
            "PYTHONPATH": str(ROOT),
            "HF_HUB_OFFLINE": "1",
            "LANGSMITH_TRACING": "false",
            "CHOP_DATA_DIR": str(self.data_dir),
            "CHOP_CHAT_PROVIDER": "openai",
            "CHOP_OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1",
            "CHOP_CHAT_MODEL": "stub",
            "CHOP_MAX_FILE_MB": str(MAX_FILE_MB),
            "CHOP_MAX_CONCURRENCY": "2",
            "CHOP_LLM_TIMEOUT_S": "1",
            "CHOP_LLM_DEADLINE_S": str(LLM_DEADLINE_S),
        }

    def ingest(
        self,
        step: str,
        action: str,
        collection: str,
        port: int,
        *,
        trigger: Trigger | None = None,
        on_trigger: str = "kill",
        settings: dict[str, str] | None = None,
    ) -> Run:
        """Run `chop ingest CORPUS --collection C`; when ``trigger`` fires, SIGKILL the process
        (``on_trigger="kill"``) or restart the database and let the run go on ("restart")."""
        run = Run(step=step, action=action)
        requests_before = self.stub.requests if self.stub else 0
        command = [
            sys.executable,
            "-m",
            "chop_rag.cli",
            "ingest",
            str(self.corpus),
            "--collection",
            collection,
        ]
        started = time.monotonic()
        process = subprocess.Popen(
            command,
            cwd=ROOT,
            env={**self.env(port), **(settings or {})},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            errors="backslashreplace",
        )
        stderr = process.stderr
        assert stderr is not None and process.stdout is not None
        reader = threading.Thread(target=lambda: run.stderr.extend(stderr), daemon=True)
        reader.start()
        while process.poll() is None:
            if time.monotonic() - started > RUN_TIMEOUT_S + self.db_outage_s:
                process.kill()
                run.checks.append(f"did not finish within {RUN_TIMEOUT_S:.0f} s")
                break
            if trigger is not None and run.acted is None and (seen := trigger()):
                run.acted = seen
                if on_trigger == "kill":
                    os.kill(process.pid, signal.SIGKILL)
                elif self.db_outage_s:
                    database_outage(str(self.data_dir), self.db_outage_s)
                else:
                    restart_embedded_server(str(self.data_dir))
            time.sleep(POLL_S)
        run.exit_code = process.wait()
        reader.join(timeout=10)
        run.stdout = process.stdout.read()
        run.stderr = [line.rstrip("\n") for line in run.stderr if line.strip()]
        run.seconds = round(time.monotonic() - started, 1)
        run.llm_requests = (self.stub.requests if self.stub else 0) - requests_before
        if trigger is not None and run.acted is None:
            run.checks.append(f"the {on_trigger} point was never reached")
        self.runs.append(run)
        return run

    # ----------------------------------------------------------------- what PostgreSQL shows
    def query(self, text: str, *params: Any) -> list[tuple[Any, ...]]:
        """Rows of a read; none while the database restarts (the next poll reconnects)."""
        for _ in range(2):  # a connection the restart cut is replaced once
            try:
                if self._conn is None or self._conn.closed:
                    self._conn = psycopg.connect(self.url, autocommit=True, connect_timeout=5)
                return self._conn.execute(text, params).fetchall()
            except psycopg.OperationalError:
                if self._conn is not None:
                    self._conn.close()
                self._conn = None
        return []

    def writes(self, collection: str, channel: str) -> int:
        rows = self.query(
            "SELECT count(*) FROM checkpoint_writes WHERE starts_with(thread_id, %s) "
            "AND channel = %s",
            f"ingest-{collection}-",
            channel,
        )
        return int(rows[0][0]) if rows else 0

    def root_steps(self, collection: str) -> list[int]:
        rows = self.query(
            "SELECT (metadata->>'step')::int FROM checkpoints WHERE starts_with(thread_id, %s) "
            "AND checkpoint_ns = ''",
            f"ingest-{collection}-",
        )
        return sorted(int(r[0]) for r in rows)

    def final_documents(self, collection: str) -> int:
        return sum(
            not record.fingerprint.startswith(NEEDS_RELABEL)
            for record in self.store.documents(collection).values()
        )

    # ----------------------------------------------------------------- triggers
    def loading(self, collection: str) -> Trigger:
        """The run's first loop checkpoint is written and load has not finished."""

        def fire() -> str | None:
            steps = self.root_steps(collection)
            return (
                "load running (root checkpoint at step 0, none after)"
                if steps and max(steps) == 0
                else None
            )

        return fire

    def llm_requests(self, count: int) -> Trigger:
        assert self.stub is not None
        stub, before = self.stub, self.stub.requests
        return lambda: f"{count} LLM requests sent" if stub.requests - before >= count else None

    def new_writes(self, collection: str, channel: str, meaning: str) -> Trigger:
        before = self.writes(collection, channel)
        return lambda: meaning if self.writes(collection, channel) > before else None

    def new_commit(self, collection: str) -> Trigger:
        before = self.final_documents(collection)

        def fire() -> str | None:
            now = self.final_documents(collection)
            return f"document {now} of the run committed" if now > before else None

        return fire

    # ----------------------------------------------------------------- the stored chunk set
    def chunk_set(self, collection: str) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
        """(chunks, documents) as comparable tuples, paths relative to the corpus."""
        root = str(self.corpus.resolve()) + "/"
        chunks = sorted(
            (
                row["doc_id"].removeprefix(root),
                row["chunk_index"],
                row["doc_title"],
                _digest(row["text"]),
                row["prefix"],
                row["category"],
                tuple(row["nouns"] or ()),
                row["model"],
                row["cnm_source"],
                row["continuity"],
                tuple(row["flags"] or ()),
                row["embedding_key"],
                row["char_start"],
                row["char_end"],
                _digest(json.dumps(row["metadata"], sort_keys=True)),
            )
            for row in self.store.chunks(collection)
        )
        documents = sorted(
            (
                record.doc_id.removeprefix(root),
                record.title,
                record.chunk_count,
                json.dumps(record.metadata.get("profile"), sort_keys=True),
            )
            for record in self.store.documents(collection).values()
        )
        return chunks, documents

    def vector_difference(self, a: str, b: str) -> float:
        """Largest difference between A's and B's vector of the same embedded text."""
        worst = 0.0
        for doc_id in self.store.documents(a):
            left = self.store.embeddings_by_key(a, doc_id)
            right = self.store.embeddings_by_key(b, doc_id)
            if left.keys() != right.keys():
                return float("inf")
            for key, vector in left.items():
                worst = max(worst, float(np.max(np.abs(vector - right[key]))))
        return worst

    # ----------------------------------------------------------------- message rules
    def check_messages(self, run: Run, *, completed: bool) -> None:
        """One known line per message, no traceback; a completed run names each hostile
        file exactly once, with its reason, and no other file."""
        lines = run.stderr
        for line in lines:
            if "Traceback" in line or not any(p.match(line) for p in KNOWN_LINES):
                run.checks.append(f"unexpected stderr line: {line[:160]!r}")
        reported = [m for line in lines if (m := REPORT_LINE.match(line))]
        shown_paths = [(m["kind"], m["path"]) for m in reported]
        for kind, path in set(shown_paths):
            if shown_paths.count((kind, path)) > 1:
                run.checks.append(f"{path} reported {shown_paths.count((kind, path))} times")
        if not completed:
            return
        expected = {
            (h.expect, printed_path(h.path)): h for h in self.hostile if h.expect != "ingested"
        }
        for match in reported:
            hostile = expected.get((match["kind"], match["path"]))
            if hostile is None:
                run.checks.append(f"unexpected {match['kind']} line for {match['path']}")
            elif hostile.reason not in match["reason"]:
                run.checks.append(f"{hostile.name}: reason {match['reason']!r}")
        for kind, path in expected.keys() - set(shown_paths):
            run.checks.append(f"no {kind} line for {path}")


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def printed_path(path: Path) -> str:
    """How chop prints a path: control characters as escapes (chop_rag.cli.shown)."""
    return re.sub(
        r"[\x00-\x1f\x7f]",
        lambda m: m.group().encode("unicode_escape").decode(),
        name_text(str(path)),
    )


REPORT_LINE = re.compile(r"^(?P<kind>skipped|warning) (?P<path>/.*?): (?P<reason>.+)$")
KNOWN_LINES = (
    REPORT_LINE,
    re.compile(r"^added \d+, updated \d+, unchanged \d+, deleted \d+; \d+ chunks stored"),
    re.compile(r"^resuming unfinished run ingest-\w+-[0-9a-f]+-[0-9a-f]+$"),
    re.compile(r"^LLM unavailable: \d+ of \d+ LLM answers failed \(last: .+\); their chunks"),
    re.compile(r"^LLM cache (read|write) failed \(.+\); (asking the model|the answer is used)"),
    re.compile(r"^database unreachable \(.+\); waiting up to \d+ s for it$"),
    re.compile(r"^database back after \d+ s$"),
    re.compile(r"^(loading|profiling documents|labelling chunks, \d+/\d+ documents stored)"),
    # chop_rag.terminal.progress: the bar on its line, the counts under it
    re.compile(r"^(loading|profiling|labelling)\b.*(chunks|\d+/\d+|\d:\d\d:\d\d)"),
    re.compile(r"^\s*docs \d+/\d+ stored, LLM calls \d+ \(cached \d+\)$"),
)


# --------------------------------------------------------------------------- the scenario
def scenario(run: FaultRun, log: Callable[[str], None]) -> dict[str, Any]:
    a, b = "fault_a", "fault_b"
    for collection in (a, b):
        run.store.drop_collection(collection)

    with stub_at(free_port()) as reference:
        run.stub = reference
        clean = run.ingest(
            "clean", "collection A: one run, the endpoint answering", a, reference.port
        )
        run.stub = None
    run.check_messages(clean, completed=True)
    expect_exit(clean, 0)
    clean.happened = summary_line(clean)
    log(f"clean run: {clean.happened}")

    down = run.ingest(
        "llm-down", "B: nothing listens on the LLM endpoint", b, run.port_b, settings=OUTAGE
    )
    run.check_messages(down, completed=True)
    expect_exit(down, 3)
    expect_one(down, "LLM unavailable")
    expect_all_documents(run, b, down, needs_relabel=True)
    down.happened = "labels fell back; documents stored to be relabelled"
    log(f"endpoint down: exit {down.exit_code}")

    with stub_at(run.port_b, faults=["timeout"] * 100_000, timeout_sleep=600) as hung:
        run.stub = hung
        stalled = run.ingest(
            "llm-hung", "B: the endpoint accepts and never answers", b, run.port_b, settings=OUTAGE
        )
        run.stub = None
    run.check_messages(stalled, completed=True)
    expect_exit(stalled, 3)
    expect_one(stalled, "LLM unavailable", containing="Timeout")
    expect_all_documents(run, b, stalled, needs_relabel=True)
    expect_bounded(stalled)
    stalled.happened = (
        f"every LLM task ended at its {OUTAGE['CHOP_LLM_DEADLINE_S']} s deadline "
        f"({stalled.llm_requests} requests, {OUTAGE['CHOP_MAX_CONCURRENCY']} at a time)"
    )
    log(f"endpoint hung: exit {stalled.exit_code} in {stalled.seconds} s")

    with stub_at(run.port_b) as up:
        run.stub = up
        kills: list[tuple[str, str, Callable[[], Trigger]]] = [
            ("kill-loading", "kill -9 while load runs", lambda: run.loading(b)),
            ("kill-llm", "kill -9 in the LLM phase", lambda: run.llm_requests(5)),
            (
                "kill-embed",
                "kill -9 while a document is embedded",
                lambda: run.new_writes(b, "branch:to:embed", "a document's prefix step done"),
            ),
            (
                "kill-persist",
                "kill -9 while a document is stored",
                lambda: run.new_writes(b, "branch:to:persist", "a document's vectors done"),
            ),
            (
                "kill-after-commit",
                "kill -9 right after a document's commit",
                lambda: run.new_commit(b),
            ),
        ]
        for step, action, make_trigger in kills:
            trigger = make_trigger()  # its baseline is what the runs before left
            killed = run.ingest(step, action, b, run.port_b, trigger=trigger)
            run.check_messages(killed, completed=False)
            expect_exit(killed, -signal.SIGKILL)
            if step != "kill-loading" and not any(
                line.startswith("resuming") for line in killed.stderr
            ):
                killed.checks.append("did not resume the killed run")
            killed.happened = f"killed at: {killed.acted}; {run.final_documents(b)} stored"
            log(f"{step}: {killed.happened}")

        restarted = run.ingest(
            "db-restart",
            f"PostgreSQL stopped for {run.db_outage_s:.0f} s mid-run; the run goes on"
            if run.db_outage_s
            else "PostgreSQL restarted mid-run; the run goes on",
            b,
            run.port_b,
            trigger=run.new_commit(b),
            on_trigger="restart",
        )
        run.check_messages(restarted, completed=True)
        expect_exit(restarted, 0)
        expect_all_documents(run, b, restarted, needs_relabel=False)
        restarted.happened = f"restarted at: {restarted.acted}; {summary_line(restarted)}"
        log(f"db restart: {restarted.happened}")

        again = run.ingest("rerun", "B: the same command once more", b, run.port_b)
        run.check_messages(again, completed=True)
        expect_exit(again, 0)
        if again.llm_requests or not re.search(
            r"added 0, updated 0, unchanged \d+", summary_line(again)
        ):
            again.checks.append("the rerun was not all unchanged and free")
        again.happened = summary_line(again)
        run.stub = None

    chunks_a, documents_a = run.chunk_set(a)
    chunks_b, documents_b = run.chunk_set(b)
    vectors = run.vector_difference(a, b)
    leftover = run.query(
        "SELECT count(*) FROM checkpoints WHERE starts_with(thread_id, %s)", f"ingest-{b}-"
    )
    comparison = {
        "chunks_a": len(chunks_a),
        "chunks_b": len(chunks_b),
        "documents_a": len(documents_a),
        "documents_b": len(documents_b),
        "chunks_equal": chunks_a == chunks_b,
        "documents_equal": documents_a == documents_b,
        "chunks_only_in_a": [list(c) for c in sorted(set(chunks_a) - set(chunks_b))][:5],
        "chunks_only_in_b": [list(c) for c in sorted(set(chunks_b) - set(chunks_a))][:5],
        "documents_only_in_a": [list(d) for d in sorted(set(documents_a) - set(documents_b))],
        "documents_only_in_b": [list(d) for d in sorted(set(documents_b) - set(documents_a))],
        "max_vector_difference": vectors,
        "vector_tolerance": minilm_tolerance(),
        # a fallback's flag; "rejected ..." flags are the label checks, the same in A (the
        # stub's labels are random words the text does not write)
        "flagged_chunks_b": sum(
            any(not f.startswith("rejected") for f in c[10]) or c[9] == "llm-fallback"
            for c in chunks_b
        ),
        "checkpoints_left_b": int(leftover[0][0]) if leftover else -1,
    }
    problems = [f"{r.step}: {c}" for r in run.runs for c in r.checks]
    if not (comparison["chunks_equal"] and comparison["documents_equal"]):
        problems.append("B's stored chunk set differs from A's")
    if vectors > comparison["vector_tolerance"]:
        problems.append(f"B's vectors differ from A's by up to {vectors:.2e}")
    if comparison["flagged_chunks_b"]:
        problems.append(f"{comparison['flagged_chunks_b']} chunks of B still carry fallbacks")
    if comparison["checkpoints_left_b"]:
        problems.append(f"{comparison['checkpoints_left_b']} checkpoints of B were left behind")
    return {"comparison": comparison, "problems": problems}


def summary_line(run: Run) -> str:
    return next((line for line in run.stderr if line.startswith("added ")), "")


def expect_exit(run: Run, code: int) -> None:
    if run.exit_code != code:
        run.checks.append(f"exit code {run.exit_code}, expected {code}")


def expect_one(run: Run, start: str, containing: str = "") -> None:
    found = [line for line in run.stderr if line.startswith(start)]
    if len(found) != 1 or containing not in found[0]:
        run.checks.append(f"expected one {start!r} line with {containing!r}, got {found}")


def expect_bounded(run: Run) -> None:
    """A hung endpoint costs each LLM task one deadline: M tasks, so many at a time, plus
    the minute a CLI may take to start and load its models."""
    found = [m for line in run.stderr if (m := re.search(r"\d+ of (\d+) LLM answers", line))]
    tasks = int(found[0].group(1)) if found else 0
    deadline = float(OUTAGE["CHOP_LLM_DEADLINE_S"])
    bound = 60 + 2 * deadline * tasks / int(OUTAGE["CHOP_MAX_CONCURRENCY"])
    if run.seconds > bound:
        run.checks.append(f"{run.seconds} s for {tasks} LLM tasks: over the {bound:.0f} s bound")


def expect_all_documents(run: FaultRun, collection: str, step: Run, *, needs_relabel: bool) -> None:
    records = run.store.documents(collection).values()
    wrong = [r.doc_id for r in records if r.fingerprint.startswith(NEEDS_RELABEL) != needs_relabel]
    if not records or wrong:
        state = "to be relabelled" if needs_relabel else "final"
        step.checks.append(f"documents not {state}: {wrong[:3]} ({len(records)} stored)")


# --------------------------------------------------------------------------- reporting
def messages_of(run: Run) -> list[str]:
    """The lines worth showing in the table: everything but skipped/warning/progress lines,
    which are counted instead."""
    shown = [
        line
        for line in run.stderr
        if not REPORT_LINE.match(line) and not KNOWN_LINES[-1].match(line)
    ]
    skipped = sum(bool(REPORT_LINE.match(line)) for line in run.stderr)
    return [*shown, f"({skipped} skipped/warning lines)"] if skipped else shown


def markdown(result: dict[str, Any]) -> str:
    lines = [
        "# Scripted fault run (issue 13)",
        "",
        f"`{result['command']}` — {result['good_documents']} good documents, "
        f"{result['hostile_files']} hostile files, stub LLM ({STUB_LATENCY[0]}–{STUB_LATENCY[1]} s"
        f" per call), embedded PostgreSQL, real MiniLM; {result['seconds']} s in all.",
        "",
        "| step | what happened | exit | chop's lines | s | checks |",
        "| --- | --- | ---: | --- | ---: | --- |",
    ]
    for run in result["runs"]:
        said = "<br>".join(_cell(m) for m in run["messages"]) or "—"
        checks = "ok" if not run["checks"] else "<br>".join(_cell(c) for c in run["checks"])
        lines.append(
            f"| {run['step']} | {_cell(run['action'])}: {_cell(run['happened'])} | "
            f"{run['exit_code']} | {said} | {run['seconds']} | {checks} |"
        )
    comparison = result["comparison"]
    lines += [
        "",
        f"Stored chunk set: A {comparison['chunks_a']} chunks in {comparison['documents_a']} "
        f"documents, B {comparison['chunks_b']} in {comparison['documents_b']}; equal: "
        f"{comparison['chunks_equal'] and comparison['documents_equal']}; largest vector "
        f"difference {comparison['max_vector_difference']:.1e}; B's chunks with fallback "
        f"labels {comparison['flagged_chunks_b']}; B's checkpoints left "
        f"{comparison['checkpoints_left_b']}.",
        "",
        "Outcome: " + ("every check holds." if not result["problems"] else "FAILED"),
        *[f"- {p}" for p in result["problems"]],
        "",
        "Hostile files and what chop said (clean run):",
        "",
        "| file | expected | chop's line |",
        "| --- | --- | --- |",
    ]
    clean = next(r for r in result["runs"] if r["step"] == "clean")
    for hostile in result["hostile"]:
        said = next(
            (line for line in clean["stderr"] if f" {hostile['printed']}: " in line), "(stored)"
        ).replace(result["corpus"] + "/", "")
        lines.append(
            f"| `{_cell(hostile['name'])}` | {hostile['expect']}: "
            f"{_cell(hostile['reason'])} | {_cell(said)} |"
        )
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.fault_run",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="results folder")
    parser.add_argument("--good-documents", type=int, default=8, help="3 to 8")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    parser.add_argument(
        "--db-outage-s",
        type=float,
        default=0.0,
        help="the database step stops PostgreSQL this long (0: a restart), e.g. 600",
    )
    args = parser.parse_args(argv)
    result = fault_run(args.good_documents, keep=args.keep, db_outage_s=args.db_outage_s)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(result, indent=2, default=str) + "\n")
    (args.out / "results.md").write_text(markdown(result))
    print(markdown(result))
    return 0 if not result["problems"] else 1


def fault_run(
    good_documents: int = 8,
    *,
    keep: bool = False,
    log: Callable[[str], None] | None = None,
    db_outage_s: float = 0.0,
) -> dict[str, Any]:
    """The whole run in a fresh folder and a fresh embedded database; returns the results."""
    say = log or (lambda message: print(message, file=sys.stderr, flush=True))
    work = Path(tempfile.mkdtemp(prefix="chop-faults-"))
    started = time.monotonic()
    try:
        run = FaultRun(work, good_documents=good_documents, db_outage_s=db_outage_s)
        try:
            outcome = scenario(run, say)
        finally:
            if run._conn is not None:
                run._conn.close()
            release_embedded_server(run.data_dir)
        return {
            "command": f"python -m tests.fault_run --good-documents {good_documents}"
            + (f" --db-outage-s {db_outage_s:g}" if db_outage_s else ""),
            "good_documents": good_documents,
            "hostile_files": len(run.hostile),
            "seconds": round(time.monotonic() - started, 1),
            "corpus": printed_path(run.corpus),
            "runs": [{**asdict(r), "messages": messages_of(r)} for r in run.runs],
            "hostile": [
                {
                    "name": printed_path(h.path.relative_to(run.corpus)),
                    "printed": printed_path(h.path),
                    "expect": h.expect,
                    "reason": h.reason,
                }
                for h in run.hostile
            ],
            **outcome,
        }
    finally:
        if keep:
            say(f"work folder kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
