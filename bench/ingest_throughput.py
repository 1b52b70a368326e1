"""Ingest throughput against a stub LLM: how chop overlaps LLM calls, and what a re-ingest costs;
or, with --profile, a real ingest's stage profile beside raw ceilings (bench/ingest_profile.py).

    python -m bench.ingest_throughput [--concurrency 1,4,16] [--chunks 120]
    python -m bench.ingest_throughput --profile PATH [PATH ...]

The chat model is chop_rag.harness.stub_llm, an OpenAI-compatible LATENCY STAND-IN (seeded 300-800
ms per call, schema-shaped filler replies, no model): the numbers measure scheduling, not labels.
Embeddings are the real local embedder on this machine's CPU, so they are a fixed cost that
concurrency does not shrink.

1. Concurrency: the sample corpus, repeated as revisions (distinct doc ids and titles, one
   varied line of text each) up to about --chunks chunks, is ingested by chop_rag.api.ingest once
   per --concurrency value (Context.max_concurrency, which chop_rag.api.run_config puts in
   LangGraph's run config) into a fresh collection, with use_cache=False and
   continuity_mode="llm", so every adjacent pair is judged by the LLM and each run makes the
   same calls.
2. Re-ingest: the same corpus twice into one fresh collection with use_cache=True (a chat
   model name of its own, so the cache starts cold), then once more into another fresh
   collection with the now warm LLM cache.

Each measurement runs in a child process (models loaded and warmed before the clock starts),
so a run that hangs is stopped after --stall-timeout seconds without progress and reported as
HUNG instead of stalling the benchmark. The stub runs in this process and counts the requests
and their peak concurrency. Writes bench/results/ingest_throughput.json and .md.
"""

from __future__ import annotations

import argparse
import json
import queue
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

from bench.ingest_profile import DEFAULT_PROFILE_OUT, run_profile
from bench.report import (
    REPO_ROOT,
    RESULTS,
    dated,
    log,
    machine,
    machine_line,
    script_parser,
    write_report,
)
from chop_rag.api import ingest
from chop_rag.config import Context
from chop_rag.harness.sample_corpus import SAMPLE_MODELS, manual_filename, render_manual
from chop_rag.harness.stub_llm import STUB_NOTICE, StubServer, running_stub
from chop_rag.models.construction import get_embedder
from chop_rag.models.embedders import Tokenizer
from chop_rag.reading.chunking import token_windows
from chop_rag.reading.documents import SourceDocument
from chop_rag.reading.loaders import load_paths
from chop_rag.store import store_for

DEFAULT_OUT = RESULTS
DEFAULT_CONCURRENCY = (1, 4, 16)
DEFAULT_CHUNKS = 120
STAT_KEYS = ("llm_calls", "cache_hits", "llm_seconds", "embed_seconds", "chunks", "embedded")


# --------------------------------------------------------------------------- corpus
def revision_text(model: str, revision: int) -> str:
    """The sample manual of ``model`` as its ``revision``: a titled edition with one new line."""
    text = render_manual(model)
    first, _, rest = text.partition("\n")
    return (
        f"{first}, revision {revision}\n\n"
        f"This is revision {revision} of the manual, printed for production batch "
        f"B{revision:03d}.\n{rest}"
    )


def build_corpus(
    target_chunks: int,
    tokenizer: Tokenizer,
    *,
    chunk_tokens: int = 200,
    chunk_overlap: int = 40,
) -> list[SourceDocument]:
    """Sample manuals as revisions 1, 2, ... (cycling the models) until ~``target_chunks``.

    Every document has its own doc id ("bench/<model>-r<NN>"), title and revision line, so
    no two documents share a prompt (prompts carry the title) or a fingerprint. Documents are
    loaded by chop's Markdown loader, so their heading spans are the real ones.
    """
    documents: list[SourceDocument] = []
    total = 0
    revision = 0
    with tempfile.TemporaryDirectory(prefix="chop-bench-corpus-") as folder:
        while total < max(1, target_chunks):
            revision += 1
            for model in SAMPLE_MODELS:
                if total >= max(1, target_chunks):
                    break
                name = manual_filename(model).replace(".md", f"-r{revision:02d}.md")
                path = Path(folder) / name
                path.write_text(revision_text(model, revision), encoding="utf-8")
                loaded, problems = load_paths([path])
                if problems or len(loaded) != 1:
                    raise RuntimeError(f"could not load {path}: {problems}")
                doc_id = f"bench/{name}"
                document = SourceDocument(**loaded[0])
                document["doc_id"] = document["source"] = doc_id
                document["metadata"] = {**document["metadata"], "path": doc_id}
                windows = token_windows(document["text"], tokenizer, chunk_tokens, chunk_overlap)
                total += len(windows)
                documents.append(document)
    return documents


# --------------------------------------------------------------------------- runs
def timed_ingest(
    documents: Sequence[SourceDocument], ctx: Context, emit: Callable[[str], None]
) -> dict[str, Any]:
    """One timed ingest (models and database already warm); its stats and phase times."""
    times: dict[str, list[float]] = {}
    started = time.perf_counter()

    def on_event(event: dict[str, Any]) -> None:
        name = str(event.get("event"))
        times.setdefault(name, []).append(time.perf_counter() - started)
        emit(name)  # the parent's stall watchdog sees progress

    report = ingest(documents=documents, context=ctx, on_event=on_event)
    wall = time.perf_counter() - started
    stats = report.get("stats", {})
    llm_phase = None
    if times.get("loaded") and times.get("decided"):
        llm_phase = max(times["decided"]) - min(times["loaded"])
    llm_seconds = float(stats.get("llm_seconds", 0.0))
    chunks = int(report.get("chunks_stored", stats.get("chunks", 0)))
    return {
        "concurrency": ctx.max_concurrency,
        "use_cache": ctx.use_cache,
        "collection": ctx.collection,
        "documents": len(documents),
        "wall_s": wall,
        "chunks": chunks,
        "chunks_per_s": chunks / wall if wall else None,
        "llm_calls": int(stats.get("llm_calls", 0)),
        "cache_hits": int(stats.get("cache_hits", 0)),
        "llm_seconds": llm_seconds,
        "embed_seconds": float(stats.get("embed_seconds", 0.0)),
        "embedded": int(stats.get("embedded", 0)),
        "embeddings_reused": int(stats.get("embeddings_reused", 0)),
        "llm_phase_s": llm_phase,
        "effective_parallelism": llm_seconds / llm_phase if llm_phase else None,
        "added": int(report.get("added", 0)),
        "updated": int(report.get("updated", 0)),
        "unchanged": int(report.get("unchanged", 0)),
        "problems": report.get("problems", []),
        "stage_profile": report.get("stage_profile"),
    }


def worker(spec: dict[str, Any]) -> int:
    """Run the passes of ``spec`` in this process; one "result <json>" line per pass."""
    base = Context().with_overrides(**spec["context"])
    embedder = get_embedder(base)
    embedder.embed(["warm up the embedder before any timing"])
    store_for(base)  # start the database before any timing
    documents = build_corpus(
        spec["chunks"], embedder.tokenizer, chunk_tokens=base.chunk_tokens,
        chunk_overlap=base.chunk_overlap,
    )  # fmt: skip

    def emit(line: str) -> None:
        print(f"event {line}", flush=True)

    for overrides in spec["passes"]:
        emit("start")
        row = timed_ingest(documents, base.with_overrides(**overrides), emit)
        print("result " + json.dumps(row), flush=True)
    return 0


def run_worker(
    spec: dict[str, Any], stub: StubServer, stall_s: float
) -> list[dict[str, Any] | None]:
    """Run ``spec`` in a child process; a pass that shows no progress for ``stall_s`` is hung.

    Returns one row per pass (None for a pass that hung or failed); the stub's request count
    and peak concurrency are added to each row (``reset_peak`` at each pass start).
    """
    child = subprocess.Popen(
        [sys.executable, "-m", "bench.ingest_throughput", "--worker"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO_ROOT,
    )
    assert child.stdin is not None and child.stdout is not None
    child.stdin.write(json.dumps(spec))
    child.stdin.close()
    lines: queue.Queue[str | None] = queue.Queue()

    def pump(stream: IO[str]) -> None:
        for line in stream:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, args=(child.stdout,), daemon=True).start()
    rows: list[dict[str, Any] | None] = []
    requests_at_start = 0
    started = False
    try:
        while True:
            try:
                line = lines.get(timeout=stall_s if started else max(stall_s, 300.0))
            except queue.Empty:
                log(f"no progress for {stall_s:.0f} s: the run is hung; stopping the worker")
                break
            if line is None:
                break
            if line.startswith("event start"):
                started = True
                stub.reset_peak()
                requests_at_start = stub.stats()["requests"]
            elif line.startswith("result "):
                row = json.loads(line[len("result ") :])
                served = stub.stats()
                row["stub_requests"] = served["requests"] - requests_at_start
                row["stub_peak_in_flight"] = served["peak_in_flight"]
                rows.append(row)
                started = False
    finally:
        if child.poll() is None:
            child.kill()
        child.wait()
    return rows + [None] * (len(spec["passes"]) - len(rows))


def hung_row(concurrency: int, stall_s: float, collection: str) -> dict[str, Any]:
    return {
        "concurrency": concurrency,
        "collection": collection,
        "hung": True,
        "note": f"no progress for {stall_s:.0f} s; worker stopped",
    }


def speedup(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    done = [r for r in rows if not r.get("hung")]
    if len(done) < 2:
        return None
    lowest = min(done, key=lambda r: r["concurrency"])
    highest = max(done, key=lambda r: r["concurrency"])
    # the lowest run's LLM seconds, one after another, plus its time outside the LLM phase
    serial = lowest["llm_seconds"] + lowest["wall_s"] - (lowest["llm_phase_s"] or 0.0)
    return {
        "from": lowest["concurrency"],
        "to": highest["concurrency"],
        "wall": lowest["wall_s"] / highest["wall_s"],
        "serial_estimate_s": serial,
        "wall_vs_serial_estimate": serial / highest["wall_s"],
        "llm_phase": (
            lowest["llm_phase_s"] / highest["llm_phase_s"]
            if lowest["llm_phase_s"] and highest["llm_phase_s"]
            else None
        ),
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    base = Context()
    store = store_for(base)
    tag = uuid.uuid4().hex[:8]
    created: list[str] = []
    results: dict[str, Any] = {
        "settings": dated(
            {
                "stub": STUB_NOTICE,
                "stub_latency_s": list(args.latency),
                "seed": args.seed,
                "target_chunks": args.chunks,
                "embedder": base.embedding_model,
                "chunk_tokens": base.chunk_tokens,
                "chunk_overlap": base.chunk_overlap,
                "continuity_mode": "llm",
                "structured_output": "json_schema",
                "stall_timeout_s": args.stall_timeout,
                **machine(),
            }
        ),
        "concurrency": [],
    }
    try:
        with running_stub(latency=tuple(args.latency), seed=args.seed) as stub:
            common = {
                "database_url": base.database_url,
                "data_dir": base.data_dir,
                "chat_provider": "openai",
                "openai_base_url": stub.base_url + "/v1",
                "structured_output": "json_schema",
                "continuity_mode": "llm",
            }
            rows: list[dict[str, Any]] = []
            for concurrency in args.concurrency:
                collection = f"bench_tp_{tag}_c{concurrency}"
                created.append(collection)
                log(f"max_concurrency {concurrency}: ingesting into {collection}")
                spec = {
                    "context": {**common, "chat_model": "stub"},
                    "chunks": args.chunks,
                    "passes": [
                        {
                            "use_cache": False,
                            "max_concurrency": concurrency,
                            "collection": collection,
                        }
                    ],
                }
                row = run_worker(spec, stub, args.stall_timeout)[0]
                row = row or hung_row(concurrency, args.stall_timeout, collection)
                rows.append(row)
                if row.get("hung"):
                    log(f"max_concurrency {concurrency}: HUNG")
                else:
                    log(
                        f"max_concurrency {concurrency}: {row['wall_s']:.1f} s, "
                        f"{row['llm_calls']} LLM calls, "
                        f"peak in flight {row['stub_peak_in_flight']}"
                    )
                if not args.keep:
                    store.drop_collection(collection)
            results["concurrency"] = rows
            results["speedup"] = speedup(rows)

            # re-ingest: cold cache, then unchanged documents, then a warm cache elsewhere
            concurrency = max(args.concurrency)
            first_collection = f"bench_tp_{tag}_re"
            warm_collection = f"bench_tp_{tag}_warm"
            created += [first_collection, warm_collection]
            passes = [
                {"use_cache": True, "max_concurrency": concurrency, "collection": c}
                for c in (first_collection, first_collection, warm_collection)
            ]
            log("re-ingest: cold cache; the same corpus again; a new collection, warm cache")
            spec = {
                # a chat model name of its own: its own cache identity, so the cache starts cold
                "context": {**common, "chat_model": f"stub-reingest-{tag}"},
                "chunks": args.chunks,
                "passes": passes,
            }
            first, second, third = run_worker(spec, stub, args.stall_timeout)
            if first is not None and second is not None:
                results["reingest"] = {
                    "concurrency": concurrency,
                    "first": first,
                    "second": second,
                    "warm_cache_new_collection": third,
                    "ratio_second_first": {
                        "wall": second["wall_s"] / first["wall_s"],
                        "llm_calls": _ratio(second["llm_calls"], first["llm_calls"]),
                        "embedded": _ratio(second["embedded"], first["embedded"]),
                    },
                }
            else:
                results["reingest"] = {"concurrency": concurrency, "hung": True}
    finally:
        if not args.keep:
            for collection in created:
                store.drop_collection(collection)
    return results


def _ratio(a: float, b: float) -> float | None:
    return a / b if b else None


# --------------------------------------------------------------------------- output
def _f(value: Any, digits: int = 1) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def markdown(results: dict[str, Any]) -> str:
    s = results["settings"]
    documents = next((r["documents"] for r in results["concurrency"] if "documents" in r), "?")
    lines = [
        "# Ingest throughput (stub LLM)",
        "",
        f"> {s['stub']}: {s['stub_latency_s'][0]}-{s['stub_latency_s'][1]} s per call "
        f"(seed {s['seed']}). {documents} documents, continuity_mode=llm, "
        f"embedder {s['embedder']} on {machine_line(s)}, {s['date']}.",
        "",
        "## Concurrency (use_cache=False)",
        "",
        "| max_concurrency | chunks | wall s | chunks/s | LLM calls | LLM phase s "
        "| LLM s (sum) | effective parallelism | peak in flight | embed s |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results["concurrency"]:
        if r.get("hung"):
            lines.append(f"| {r['concurrency']} | - | HUNG | - | - | - | - | - | - | - |")
            continue
        lines.append(
            f"| {r['concurrency']} | {r['chunks']} | {_f(r['wall_s'])} | "
            f"{_f(r['chunks_per_s'], 2)} | {r['llm_calls']} | {_f(r['llm_phase_s'])} | "
            f"{_f(r['llm_seconds'])} | {_f(r['effective_parallelism'])} | "
            f"{r['stub_peak_in_flight']} | {_f(r['embed_seconds'])} |"
        )
    lines.append("")
    sp = results.get("speedup")
    if sp is None:
        lines.append("Speed-up: fewer than two runs finished.")
    else:
        lines.append(
            f"Speed-up {sp['to']} vs {sp['from']}: wall {_f(sp['wall'])}x, "
            f"LLM phase {_f(sp['llm_phase'])}x; {sp['to']} vs one call at a time "
            f"(estimated {_f(sp.get('serial_estimate_s'))} s: the LLM seconds of the "
            f"{sp['from']} run back to back, plus its time outside the LLM phase): "
            f"{_f(sp.get('wall_vs_serial_estimate'))}x."
        )
    lines += [
        "",
        f"HUNG: no progress for {s['stall_timeout_s']:.0f} s. LLM phase: from the 'loaded' "
        "event to the last chunk decision (documents embed and store while others are still "
        "in it). Effective parallelism: summed LLM call seconds / LLM phase. Peak in flight: "
        "most concurrent requests the stub saw. embed s: summed embedding seconds.",
    ]
    re = results.get("reingest")
    if re and not re.get("hung"):
        lines += [
            "",
            f"## Re-ingest (use_cache=True, max_concurrency {re['concurrency']})",
            "",
            "| pass | wall s | LLM calls | cache hits | embedded | reused | added | unchanged |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for label, key in (
            ("first (cold cache, empty collection)", "first"),
            ("second (same corpus, same collection)", "second"),
            ("third (warm cache, new collection)", "warm_cache_new_collection"),
        ):
            r = re[key]
            if r is None:
                lines.append(f"| {label} | HUNG | - | - | - | - | - | - |")
                continue
            lines.append(
                f"| {label} | {_f(r['wall_s'], 2)} | {r['llm_calls']} | {r['cache_hits']} | "
                f"{r['embedded']} | {r['embeddings_reused']} | {r['added']} | "
                f"{r['unchanged']} |"
            )
        ratio = re["ratio_second_first"]
        lines += [
            "",
            f"Second / first: wall {_f(ratio['wall'], 3)}, LLM calls "
            f"{_f(ratio['llm_calls'], 3)}, embedded {_f(ratio['embedded'], 3)}.",
        ]
    elif re:
        lines += ["", "## Re-ingest", "", "HUNG (no progress); no numbers."]
    return "\n".join(lines) + "\n"


def write_outputs(results: dict[str, Any], out: Path) -> str:
    table = markdown(results)
    write_report(out, "ingest_throughput", json.dumps(results, indent=2), table)
    return table


def _int_list(value: str) -> list[int]:
    try:
        values = sorted({int(v) for v in value.split(",") if v.strip()})
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not a list of integers: {value!r}") from exc
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError("concurrency values must be positive integers")
    return values


def _latency(value: str) -> tuple[float, float]:
    low, _, high = value.partition(",")
    return float(low), float(high or low)


def parser() -> argparse.ArgumentParser:
    p = script_parser("bench.ingest_throughput", __doc__)
    p.add_argument(
        "--concurrency", type=_int_list, default=list(DEFAULT_CONCURRENCY), help="e.g. 1,4,16"
    )
    p.add_argument("--chunks", type=int, default=DEFAULT_CHUNKS, help="corpus size, ~chunks")
    p.add_argument("--latency", type=_latency, default=(0.3, 0.8), help="stub LOW,HIGH seconds")
    p.add_argument("--seed", type=int, default=0, help="stub latency seed")
    p.add_argument(
        "--out",
        default=None,
        help=f"folder for the .json and .md (default {DEFAULT_OUT}; with --profile "
        f"{DEFAULT_PROFILE_OUT})",
    )
    p.add_argument(
        "--profile",
        nargs="+",
        metavar="PATH",
        help="ingest these files or folders with the default settings and report the stage "
        "profile beside PDF, embedding and COPY ceilings measured in the same run",
    )
    p.add_argument("--keep", action="store_true", help="keep the bench collections")
    p.add_argument(
        "--stall-timeout",
        type=float,
        default=60.0,
        help="seconds without progress after which a run counts as hung (default 60)",
    )
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.worker:
        return worker(json.loads(sys.stdin.read()))
    if args.profile:
        out = Path(args.out or DEFAULT_PROFILE_OUT)
        run_profile(args.profile, out, keep=args.keep)
        log(f"wrote {out / 'results.json'}, .md")
        return 0
    out = Path(args.out or DEFAULT_OUT)
    results = run(args)
    table = write_outputs(results, out)
    print(table)
    log(f"wrote {out / 'ingest_throughput.json'}, .md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
