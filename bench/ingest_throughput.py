"""Ingest throughput against a stub LLM: how chop overlaps LLM calls, and what a re-ingest costs.

    python -m bench.ingest_throughput [--concurrency 1,4,16] [--chunks 120]

The chat model is bench.stub_llm, an OpenAI-compatible LATENCY STAND-IN (seeded 300-800 ms per
call, schema-shaped filler replies, no model): the numbers measure scheduling, not labels.
Embeddings are the real local embedder on this machine's CPU, so they are a fixed cost that
concurrency does not shrink.

1. Concurrency: the sample corpus, repeated as revisions (distinct doc ids and titles, one
   varied line of text each) up to about --chunks chunks, is ingested once per
   --concurrency value (Context.max_concurrency, which chop.api.run_config puts in LangGraph's
   run config) into a fresh collection, with use_cache=False and continuity_mode="llm", so
   every adjacent pair is judged by the LLM and each run makes the same calls.
2. Re-ingest: the same corpus twice into one fresh collection with use_cache=True (a chat
   model name of its own, so the cache starts cold), then once more into another fresh
   collection with the now warm LLM cache.

Writes bench/results/ingest_throughput.json and .md (--out to change the folder).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.stub_llm import STUB_NOTICE, StubServer, running_stub
from chop.api import ingest
from chop.chunking import token_windows
from chop.config import Context
from chop.documents import SourceDocument
from chop.loaders import load_paths
from chop.models import Tokenizer, get_embedder
from chop.sample_corpus import SAMPLE_MODELS, manual_filename, render_manual
from chop.store import store_for

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO_ROOT / "bench" / "results"
DEFAULT_CONCURRENCY = (1, 4, 16)
DEFAULT_CHUNKS = 120
STAT_KEYS = ("llm_calls", "cache_hits", "llm_seconds", "embed_seconds", "chunks", "embedded")


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


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
def ingest_once(
    documents: Sequence[SourceDocument], ctx: Context, stub: StubServer
) -> dict[str, Any]:
    """One timed ingest; its stats, phase times, and what the stub saw."""
    times: dict[str, list[float]] = {}
    requests_before = stub.stats()["requests"]
    stub.reset_peak()
    started = time.perf_counter()

    def on_event(event: dict[str, Any]) -> None:
        times.setdefault(str(event.get("event")), []).append(time.perf_counter() - started)

    report = ingest(documents=documents, context=ctx, on_event=on_event)
    wall = time.perf_counter() - started
    stats = report.get("stats", {})
    served = stub.stats()
    llm_phase = None
    if times.get("loaded") and times.get("decided"):
        llm_phase = max(times["decided"]) - min(times["loaded"])
    llm_seconds = float(stats.get("llm_seconds", 0.0))
    chunks = int(report.get("chunks_stored", stats.get("chunks", 0)))
    return {
        "concurrency": ctx.max_concurrency,
        "use_cache": ctx.use_cache,
        "collection": ctx.collection,
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
        "stub_requests": served["requests"] - requests_before,
        "stub_peak_in_flight": served["peak_in_flight"],
        "added": int(report.get("added", 0)),
        "updated": int(report.get("updated", 0)),
        "unchanged": int(report.get("unchanged", 0)),
        "problems": report.get("problems", []),
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    base = Context()
    embedder = get_embedder(base)
    embedder.embed(["warm up the embedder before any timing"])
    store = store_for(base)  # start the database before any timing
    documents = build_corpus(
        args.chunks, embedder.tokenizer, chunk_tokens=base.chunk_tokens,
        chunk_overlap=base.chunk_overlap,
    )  # fmt: skip
    log(f"corpus: {len(documents)} documents, target ~{args.chunks} chunks")
    tag = uuid.uuid4().hex[:8]
    created: list[str] = []
    results: dict[str, Any] = {
        "settings": {
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "stub": STUB_NOTICE,
            "stub_latency_s": list(args.latency),
            "seed": args.seed,
            "documents": len(documents),
            "target_chunks": args.chunks,
            "embedder": embedder.name,
            "chunk_tokens": base.chunk_tokens,
            "chunk_overlap": base.chunk_overlap,
            "continuity_mode": "llm",
            "structured_output": "json_schema",
            "cpu_count": os.cpu_count(),
            "load_average_at_start": list(os.getloadavg()),
        },
        "concurrency": [],
    }
    try:
        with running_stub(latency=tuple(args.latency), seed=args.seed) as stub:
            common = {
                "chat_provider": "openai",
                "openai_base_url": stub.base_url + "/v1",
                "structured_output": "json_schema",
                "continuity_mode": "llm",
            }
            for concurrency in args.concurrency:
                collection = f"bench_tp_{tag}_c{concurrency}"
                created.append(collection)
                ctx = base.with_overrides(
                    **common,
                    chat_model="stub",
                    use_cache=False,
                    max_concurrency=concurrency,
                    collection=collection,
                )
                log(f"concurrency {concurrency}: ingesting into {collection}")
                row = ingest_once(documents, ctx, stub)
                log(
                    f"concurrency {concurrency}: {row['wall_s']:.1f} s, "
                    f"{row['llm_calls']} LLM calls, peak in flight {row['stub_peak_in_flight']}"
                )
                results["concurrency"].append(row)
                if not args.keep:
                    store.drop_collection(collection)
            rows = results["concurrency"]
            lowest = min(rows, key=lambda r: r["concurrency"])
            highest = max(rows, key=lambda r: r["concurrency"])
            results["speedup"] = {
                "from": lowest["concurrency"],
                "to": highest["concurrency"],
                "wall": lowest["wall_s"] / highest["wall_s"],
                "llm_phase": (
                    lowest["llm_phase_s"] / highest["llm_phase_s"]
                    if lowest["llm_phase_s"] and highest["llm_phase_s"]
                    else None
                ),
            }

            # re-ingest: cold cache, then unchanged documents, then a warm cache elsewhere
            concurrency = max(args.concurrency)
            model_name = f"stub-reingest-{tag}"  # its own cache identity: starts cold
            collection = f"bench_tp_{tag}_re"
            created.append(collection)
            ctx = base.with_overrides(
                **common,
                chat_model=model_name,
                use_cache=True,
                max_concurrency=concurrency,
                collection=collection,
            )
            log(f"re-ingest: first pass into {collection} (cache on, cold)")
            first = ingest_once(documents, ctx, stub)
            log("re-ingest: second pass, same collection")
            second = ingest_once(documents, ctx, stub)
            warm_collection = f"bench_tp_{tag}_warm"
            created.append(warm_collection)
            log(f"re-ingest: third pass into {warm_collection} (cache warm)")
            third = ingest_once(documents, ctx.with_overrides(collection=warm_collection), stub)
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
    lines = [
        "# Ingest throughput (stub LLM)",
        "",
        f"> {s['stub']}: {s['stub_latency_s'][0]}-{s['stub_latency_s'][1]} s per call "
        f"(seed {s['seed']}). {s['documents']} documents, continuity_mode=llm, "
        f"embedder {s['embedder']} on {s['cpu_count']} CPU cores "
        f"(load average at start {s['load_average_at_start'][0]:.1f}), {s['date']}.",
        "",
        "## Concurrency (use_cache=False)",
        "",
        "| max_concurrency | chunks | wall s | chunks/s | LLM calls | LLM phase s "
        "| LLM s (sum) | effective parallelism | peak in flight | embed s |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results["concurrency"]:
        lines.append(
            f"| {r['concurrency']} | {r['chunks']} | {_f(r['wall_s'])} | "
            f"{_f(r['chunks_per_s'], 2)} | {r['llm_calls']} | {_f(r['llm_phase_s'])} | "
            f"{_f(r['llm_seconds'])} | {_f(r['effective_parallelism'])} | "
            f"{r['stub_peak_in_flight']} | {_f(r['embed_seconds'])} |"
        )
    sp = results["speedup"]
    lines += [
        "",
        f"Speed-up {sp['to']} vs {sp['from']}: wall {_f(sp['wall'])}x, "
        f"LLM phase {_f(sp['llm_phase'])}x.",
        "",
        "LLM phase: from the 'loaded' event to the last chunk decision. Effective "
        "parallelism: summed LLM call seconds / LLM phase. Peak in flight: most concurrent "
        "requests the stub saw.",
    ]
    re = results.get("reingest")
    if re:
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
    return "\n".join(lines) + "\n"


def write_outputs(results: dict[str, Any], out: Path) -> str:
    out.mkdir(parents=True, exist_ok=True)
    table = markdown(results)
    (out / "ingest_throughput.json").write_text(json.dumps(results, indent=2) + "\n")
    (out / "ingest_throughput.md").write_text(table)
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
    p = argparse.ArgumentParser(
        prog="python -m bench.ingest_throughput",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--concurrency", type=_int_list, default=list(DEFAULT_CONCURRENCY), help="e.g. 1,4,16"
    )
    p.add_argument("--chunks", type=int, default=DEFAULT_CHUNKS, help="corpus size, ~chunks")
    p.add_argument("--latency", type=_latency, default=(0.3, 0.8), help="stub LOW,HIGH seconds")
    p.add_argument("--seed", type=int, default=0, help="stub latency seed")
    p.add_argument("--out", default=str(DEFAULT_OUT), help="folder for the .json and .md")
    p.add_argument("--keep", action="store_true", help="keep the bench collections")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    results = run(args)
    table = write_outputs(results, Path(args.out))
    print(table)
    log(f"wrote {Path(args.out) / 'ingest_throughput.json'}, .md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
