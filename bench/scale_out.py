"""Scale-out: ingest throughput with 1, 2 and 4 `chop ingest` worker processes on one external
PostgreSQL, the LLM a stub of fixed latency standing in for a remote model server.

    python -m bench.scale_out [--workers 1,2,4] [--documents 12] [--latency 0.5]

A separate PostgreSQL 18 + pgvector (chop_rag.harness.standalone_pg: initdb and pg_ctl on a TCP
port, a non-superuser role owning each database, the extension made by the administrator) serves
every run; each worker count gets a fresh database. The corpus (sample manuals as revisions, each
with its own doc id and title) is split round-robin into one disjoint batch per worker, and the
workers start at once as separate processes (`python -m chop_rag.cli ingest BATCH...`, durable,
the default), each with CHOP_MAX_CONCURRENCY LLM calls in flight. continuity_mode=llm and the
LLM cache off, so every configuration pays the same calls. The stub (chop_rag.harness.stub_llm, in
this process) answers every call after exactly --latency seconds: numbers say how scheduling and the
database behave, never anything about label quality.

Measured per worker count: wall time from the first start to the last exit (process start and
model loading included, as a deployment pays it), documents and chunks per second, the
slowest worker's own run time (chop's report line), LLM requests, and the database's share:
PostgreSQL's time executing statements for this database (pg_stat_database.active_time, all
sessions, read after the workers exit) over the workers' summed wall time. All worker counts
are measured in one invocation, so ratios between them share the machine's conditions.
Writes bench/results/scale_out.json and .md.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg

from bench.ingest_throughput import revision_text
from bench.report import REPO_ROOT, RESULTS, log, script_parser, write_report
from chop_rag.harness.sample_corpus import SAMPLE_MODELS
from chop_rag.harness.standalone_pg import StandaloneServer
from chop_rag.harness.stub_llm import STUB_NOTICE, StubServer

DEFAULT_OUT = RESULTS
RUN_SECONDS = re.compile(r"chunks stored, .*?([0-9.]+) s\s*$", re.MULTILINE)


def write_corpus(folder: Path, documents: int) -> list[Path]:
    """``documents`` manuals: the sample models in turn, revision 1, 2, ... each."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(documents):
        model = SAMPLE_MODELS[i % len(SAMPLE_MODELS)]
        revision = i // len(SAMPLE_MODELS) + 1
        path = folder / f"{model.lower().replace(' ', '-')}-r{revision:02d}.md"
        path.write_text(revision_text(model, revision), encoding="utf-8")
        paths.append(path)
    return paths


def worker_env(url: str, stub: StubServer, data_dir: str, concurrency: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHOP_")}
    return {
        **env,
        "PYTHONPATH": str(REPO_ROOT),
        "HF_HUB_OFFLINE": "1",
        "LANGSMITH_TRACING": "false",
        "CHOP_DATABASE_URL": url,
        "CHOP_DATA_DIR": data_dir,  # the local embedder's files
        "CHOP_CHAT_PROVIDER": "openai",
        "CHOP_OPENAI_BASE_URL": stub.base_url + "/v1",
        "CHOP_CHAT_MODEL": "stub",
        "CHOP_CONTINUITY_MODE": "llm",
        "CHOP_USE_CACHE": "0",
        "CHOP_MAX_CONCURRENCY": str(concurrency),
    }


def active_ms(url: str) -> float:
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT active_time FROM pg_stat_database WHERE datname = current_database()"
        ).fetchone()
    return float(row[0] or 0.0) if row else 0.0


def rows(url: str, table: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute(f"SELECT count(*) FROM {table}").fetchone()
    return int(row[0]) if row else 0


def measure(
    server: StandaloneServer,
    stub: StubServer,
    corpus: list[Path],
    workers: int,
    *,
    data_dir: str,
    concurrency: int,
    timeout_s: float,
) -> dict[str, Any]:
    url = server.create_database(f"scale_{workers}_{uuid.uuid4().hex[:6]}", owner="chop_bench",
                                 password="bench-pw")  # fmt: skip
    batches = [corpus[i::workers] for i in range(workers)]
    env = worker_env(url, stub, data_dir, concurrency)
    active_before, requests_before = active_ms(url), stub.requests
    started = time.monotonic()
    command = [sys.executable, "-m", "chop_rag.cli", "ingest", "--collection", "bench"]
    processes = [
        subprocess.Popen(
            [*command, *map(str, batch)],
            env=env,
            cwd=REPO_ROOT,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        for batch in batches
    ]
    outputs, ends = [], []
    for p in processes:
        out, _ = p.communicate(timeout=max(1.0, timeout_s - (time.monotonic() - started)))
        ends.append(time.monotonic() - started)
        outputs.append(out)
        if p.returncode != 0:
            raise RuntimeError(f"a worker failed ({p.returncode}): {out[-2000:]}")
    wall = time.monotonic() - started
    chunks, documents = rows(url, "chop_bench_chunks"), rows(url, "chop_bench_documents")
    database_s = (active_ms(url) - active_before) / 1000
    run_s = [float(m.group(1)) for out in outputs if (m := RUN_SECONDS.search(out))]
    return {
        "workers": workers,
        "documents": documents,
        "chunks": chunks,
        "wall_s": round(wall, 1),
        "documents_per_s": round(documents / wall, 3),
        "chunks_per_s": round(chunks / wall, 2),
        "slowest_run_s": max(run_s) if run_s else None,
        "llm_requests": stub.requests - requests_before,
        "database_active_s": round(database_s, 2),
        "database_share": round(database_s / sum(ends), 4),
    }


def markdown(result: dict[str, Any]) -> str:
    rows = result["runs"]
    base = rows[0]
    lines = [
        "# Scale-out: ingest workers on one external PostgreSQL",
        "",
        f"Command: `{result['command']}` ({result['date']}).",
        "",
        f"{result['documents']} documents, stub LLM at {result['latency_s']} s per call "
        f"({STUB_NOTICE}), CHOP_MAX_CONCURRENCY={result['concurrency']} per worker, "
        "continuity_mode=llm, LLM cache off, durable runs; PostgreSQL "
        f"{result['postgres']} with pgvector on 127.0.0.1, a fresh database per row. "
        f"Machine: {result['machine']}.",
        "",
        "| workers | wall s | docs/s | chunks/s | speed-up | slowest run s | LLM requests "
        "| database active s | database share |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['workers']} | {r['wall_s']} | {r['documents_per_s']} | {r['chunks_per_s']} "
            f"| {base['wall_s'] / r['wall_s']:.2f}× | {r['slowest_run_s']} | {r['llm_requests']} "
            f"| {r['database_active_s']} | {r['database_share']:.1%} |"
        )
    lines += [
        "",
        "Wall time includes each worker's process start and model loading. Database share: "
        "PostgreSQL's statement time for the database (pg_stat_database.active_time) over the "
        "workers' summed wall time.",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = script_parser("bench.scale_out", __doc__)
    parser.add_argument("--workers", default="1,2,4", help="worker counts (default 1,2,4)")
    parser.add_argument("--documents", type=int, default=12, help="documents (default 12)")
    parser.add_argument("--latency", type=float, default=0.5, help="stub s per call (0.5)")
    parser.add_argument("--concurrency", type=int, default=4, help="LLM calls per worker (4)")
    parser.add_argument("--timeout", type=float, default=1800, help="per worker count, s")
    parser.add_argument("--data-dir", default=os.environ.get("CHOP_DATA_DIR", ".chop"),
                        help="CHOP_DATA_DIR with the local embedder's files")  # fmt: skip
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    counts = [int(w) for w in args.workers.split(",")]
    work = Path(tempfile.mkdtemp(prefix="chop-scale-out-"))
    server = StandaloneServer(work / "pg").start()
    stub = StubServer(latency=(args.latency, args.latency)).start()
    try:
        corpus = write_corpus(work / "corpus", args.documents)
        with server.admin() as conn:
            version = conn.execute("SHOW server_version").fetchone()
        runs = []
        for workers in counts:
            log(f"{workers} worker(s)...")
            runs.append(measure(server, stub, corpus, workers, data_dir=args.data_dir,
                                concurrency=args.concurrency, timeout_s=args.timeout))  # fmt: skip
            log(json.dumps(runs[-1]))
    finally:
        stub.stop()
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    result = {
        "command": "python -m bench.scale_out " + " ".join(argv or sys.argv[1:]),
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "documents": args.documents,
        "latency_s": args.latency,
        "concurrency": args.concurrency,
        "postgres": version[0] if version else "?",
        "machine": f"{os.cpu_count()} CPU cores, shared with other work while measured",
        "runs": runs,
    }
    write_report(args.out, "scale_out", json.dumps(result, indent=2), markdown(result))
    print(markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
