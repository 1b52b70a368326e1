"""Retrieval latency and HNSW recall of Store.search on synthetic vectors.

    python -m bench.retrieval_latency --rows 100000[,1000000] [--queries 200]

Data (synthetic, seeded): 384-dimensional unit vectors drawn around 1000 Gaussian cluster
centres (centre + N(0, sigma^2 I) noise, renormalised), so neighbourhoods look like those of
real embeddings rather than uniform noise. Every row gets a "model" value out of 50, drawn
independently of its cluster with a Zipf-like skew whose exponent is solved so that the rarest
model holds --rare-share of the rows (0.1% by default); the most common holds about 45%.
Queries are fresh draws from the same clusters.

Loading: Store.ensure_collection creates the collection exactly as chop does (same columns,
generated tsvector, foreign key, indexes). Its HNSW index is then dropped, the rows are written
with binary COPY, and the index is recreated from the definition PostgreSQL reported for it
(pg_indexes), so the bench always measures chop's own index: one bulk HNSW build is much
faster than growing the graph row by row during COPY, and it is what gets timed. The btree
and GIN indexes stay in place during COPY (cheap to maintain). The build runs with
maintenance_work_mem large enough to keep the graph in memory (--maintenance-work-mem).

Measured for each --rows: HNSW build seconds; p50/p95/p99 latency of top-k Store.search
(unfiltered, filtered on the most common model, on a ~1% model, on the rarest model); how many
queries returned fewer than k rows (must be none: filtered scans use pgvector's iterative
scan); which indexes served them; recall@k against exact brute force (numpy) on
--recall-queries queries, for each variant. Writes bench/results/retrieval_latency.json and
.md (results of other row counts already there are kept). Exit status 1 if any query came
back short.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from psycopg import sql

from bench.report import RESULTS, log, script_parser, write_report
from chop_rag.config import Context
from chop_rag.store import EXACT_SCAN_ROWS, SearchFilter, Store, store_for

DEFAULT_OUT = RESULTS
DIM = 384
BATCH = 20_000
ROWS_PER_DOCUMENT = 1000
COPY_COLUMNS = (
    "id, doc_id, doc_title, chunk_index, text, prefix, category, nouns, model, cnm_source, "
    "continuity, embedding_key, char_start, char_end, embedding"
)
COPY_TYPES = [
    "int8", "text", "text", "int4", "text", "text", "text", "text[]", "text", "text", "text",
    "text", "int4", "int4", "vector",
]  # fmt: skip


# --------------------------------------------------------------------------- synthetic data
@dataclass(frozen=True)
class Synthetic:
    """The seeded generator of rows, models and queries."""

    rows: int
    clusters: int = 1000
    models: int = 50
    rare_share: float = 0.001
    sigma: float = 0.06  # per-dimension noise; cosine to the centre is about 0.65
    seed: int = 0

    def centres(self) -> np.ndarray:
        rng = np.random.default_rng([self.seed, 1])
        return _unit(rng.standard_normal((self.clusters, DIM)).astype(np.float32))

    def model_shares(self) -> np.ndarray:
        """Zipf-like shares p_i ~ i^-s, s solved so the last model holds rare_share."""
        ranks = np.arange(1, self.models + 1, dtype=np.float64)

        def last_share(s: float) -> float:
            weights = ranks**-s
            return float(weights[-1] / weights.sum())

        low, high = 0.0, 10.0
        if last_share(low) < self.rare_share:
            raise ValueError("rare share too large for that many models")
        for _ in range(100):
            mid = (low + high) / 2
            if last_share(mid) > self.rare_share:
                low = mid
            else:
                high = mid
        weights = ranks ** -((low + high) / 2)
        return weights / weights.sum()

    @staticmethod
    def model_name(index: int) -> str:
        return f"Model {index + 1:02d}"

    def draw(self, rng: np.random.Generator, n: int, centres: np.ndarray) -> np.ndarray:
        which = rng.integers(0, self.clusters, size=n)
        noise = rng.standard_normal((n, DIM)).astype(np.float32) * np.float32(self.sigma)
        return _unit(centres[which] + noise)

    def batches(self) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
        """(first row index, vectors, model indices) per batch, identical on every run."""
        centres = self.centres()
        shares = self.model_shares()
        for number, start in enumerate(range(0, self.rows, BATCH)):
            rng = np.random.default_rng([self.seed, 2, number])
            n = min(BATCH, self.rows - start)
            vectors = self.draw(rng, n, centres)
            models = rng.choice(self.models, size=n, p=shares)
            yield start, vectors, models

    def queries(self, n: int) -> np.ndarray:
        return self.draw(np.random.default_rng([self.seed, 3]), n, self.centres())


def _unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


class ExactTopK:
    """Running exact top-k by cosine (dot product of unit vectors) over streamed batches."""

    def __init__(self, queries: np.ndarray, k: int) -> None:
        self.queries = queries
        self.k = k
        self.scores = np.full((len(queries), k), -np.inf, dtype=np.float32)
        self.ids = np.full((len(queries), k), -1, dtype=np.int64)

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        if len(ids) == 0:
            return
        scores = self.queries @ vectors.T
        all_scores = np.concatenate([self.scores, scores], axis=1)
        all_ids = np.concatenate([self.ids, np.broadcast_to(ids, scores.shape)], axis=1)
        top = np.argpartition(-all_scores, self.k - 1, axis=1)[:, : self.k]
        self.scores = np.take_along_axis(all_scores, top, axis=1)
        self.ids = np.take_along_axis(all_ids, top, axis=1)

    def sets(self) -> list[set[int]]:
        return [set(int(i) for i in row if i >= 0) for row in self.ids]


# --------------------------------------------------------------------------- loading
def track_exact(
    exact: dict[str, ExactTopK],
    counts: dict[str, int],
    variants: dict[str, int | None],
    ids: np.ndarray,
    vectors: np.ndarray,
    models: np.ndarray,
) -> None:
    """Feed one batch of rows to each variant's exact top-k (and count the rows it matches)."""
    for name, model_index in variants.items():
        mask = np.ones(len(models), bool) if model_index is None else models == model_index
        exact[name].add(ids[mask], vectors[mask])
        counts[name] += int(mask.sum())


def load_collection(
    store: Store,
    collection: str,
    data: Synthetic,
    variants: dict[str, int | None],
    recall_queries: np.ndarray,
    k: int,
    maintenance_work_mem: str,
    build_workers: int | None,
    previous: dict[str, Any] | None = None,
) -> tuple[dict[str, Any], dict[str, ExactTopK], dict[str, int]]:
    """Create, fill and index the collection; exact top-k for each variant along the way.

    With ``previous`` (a kept collection of the same rows and seed, and its recorded load
    timings) only the exact top-k are recomputed from the regenerated data.
    """
    if previous is not None:
        exact = {name: ExactTopK(recall_queries, k) for name in variants}
        counts = {name: 0 for name in variants}
        for start, vectors, models in data.batches():
            ids = np.arange(start + 1, start + 1 + len(vectors), dtype=np.int64)
            track_exact(exact, counts, variants, ids, vectors, models)
        return {**previous, "reused": True}, exact, counts
    store.drop_collection(collection)
    store.ensure_collection(collection, DIM)
    chunks = sql.Identifier(f"chop_{collection}_chunks")
    documents = sql.Identifier(f"chop_{collection}_documents")
    hnsw_name = f"chop_{collection}_hnsw_idx"
    with store.transaction() as conn:
        row = conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexname = %s", (hnsw_name,)
        ).fetchone()
        if row is None:
            raise RuntimeError(f"ensure_collection made no index {hnsw_name}")
        hnsw_definition = str(row[0])
        conn.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(hnsw_name)))

    timings: dict[str, Any] = {"hnsw_definition": hnsw_definition}
    exact = {name: ExactTopK(recall_queries, k) for name in variants}
    counts = {name: 0 for name in variants}
    started = time.perf_counter()
    n_docs = math.ceil(data.rows / ROWS_PER_DOCUMENT)
    with (
        store.transaction() as conn,
        conn.cursor() as cur,
        cur.copy(
            sql.SQL("COPY {} (doc_id, title, source, fingerprint, chunk_count) FROM STDIN").format(
                documents
            )
        ) as copy,
    ):
        for d in range(n_docs):
            doc_id = f"synthetic-{d:05d}"
            copy.write_row((doc_id, f"Synthetic {d}", doc_id, "", ROWS_PER_DOCUMENT))
    copy_sql = sql.SQL("COPY {} ({}) FROM STDIN WITH (FORMAT BINARY)").format(
        chunks, sql.SQL(COPY_COLUMNS)
    )
    names = [data.model_name(i) for i in range(data.models)]
    for start, vectors, models in data.batches():
        ids = np.arange(start + 1, start + 1 + len(vectors), dtype=np.int64)
        with store.transaction() as conn, conn.cursor() as cur, cur.copy(copy_sql) as copy:
            copy.set_types(COPY_TYPES)
            for i in range(len(vectors)):
                row_id = int(ids[i])
                doc = (row_id - 1) // ROWS_PER_DOCUMENT
                model = names[int(models[i])]
                copy.write_row(
                    (
                        row_id,
                        f"synthetic-{doc:05d}",
                        f"Synthetic {doc}",
                        (row_id - 1) % ROWS_PER_DOCUMENT,
                        f"synthetic row {row_id}",
                        model,
                        "synthetic",
                        [],
                        model,
                        "synthetic",
                        "synthetic",
                        "",
                        0,
                        0,
                        vectors[i],
                    )
                )
        track_exact(exact, counts, variants, ids, vectors, models)
        log(f"  copied {start + len(vectors):,} / {data.rows:,} rows")
    timings["generate_and_copy_s"] = time.perf_counter() - started

    started = time.perf_counter()
    with store.transaction() as conn:
        conn.execute(
            sql.SQL("SET LOCAL maintenance_work_mem = {}").format(sql.Literal(maintenance_work_mem))
        )
        if build_workers is not None:
            conn.execute(
                sql.SQL("SET LOCAL max_parallel_maintenance_workers = {}").format(
                    sql.Literal(build_workers)
                )
            )
        conn.execute(hnsw_definition)  # PostgreSQL's own definition of the index
    timings["hnsw_build_s"] = time.perf_counter() - started
    started = time.perf_counter()
    with store.pool.connection() as conn:
        conn.autocommit = True
        try:
            conn.execute(sql.SQL("VACUUM (ANALYZE) {}").format(chunks))
        finally:
            conn.autocommit = False
    timings["vacuum_analyze_s"] = time.perf_counter() - started
    with store.transaction() as conn:
        row = conn.execute(
            "SELECT pg_relation_size(%s::regclass), pg_total_relation_size(%s::regclass)",
            (hnsw_name, f"chop_{collection}_chunks"),
        ).fetchone()
    assert row is not None
    timings["hnsw_index_mb"] = row[0] / 2**20
    timings["table_total_mb"] = row[1] / 2**20
    return timings, exact, counts


# --------------------------------------------------------------------------- measuring
def index_scans(store: Store, collection: str) -> dict[str, int]:
    with store.transaction() as conn:
        conn.execute("SELECT pg_stat_clear_snapshot()")
        rows = conn.execute(
            "SELECT indexrelname, idx_scan FROM pg_stat_user_indexes WHERE relname = %s",
            (f"chop_{collection}_chunks",),
        ).fetchall()
    return {str(name): int(count or 0) for name, count in rows}


def scans_since(
    store: Store, collection: str, before: dict[str, int], expected: int, wait_s: float = 15.0
) -> dict[str, int] | None:
    """Index scans since ``before``; waits for the backends' statistics to be flushed."""
    deadline = time.monotonic() + wait_s
    while True:
        now = index_scans(store, collection)
        delta = {k: v - before.get(k, 0) for k, v in now.items() if v - before.get(k, 0)}
        if sum(delta.values()) >= expected:
            return delta
        if time.monotonic() > deadline:
            return delta or None
        time.sleep(0.5)


def percentiles(samples: Sequence[float]) -> dict[str, float]:
    values = np.asarray(samples, dtype=np.float64) * 1000.0
    return {
        "p50_ms": float(np.percentile(values, 50)),
        "p95_ms": float(np.percentile(values, 95)),
        "p99_ms": float(np.percentile(values, 99)),
        "mean_ms": float(values.mean()),
    }


def measure_variant(
    store: Store,
    collection: str,
    model: str | None,
    warmup: np.ndarray,
    queries: np.ndarray,
    k: int,
    matching: int,
) -> dict[str, Any]:
    """Timed queries; "short" counts replies with fewer than min(k, matching rows) hits."""
    where = _where(model)
    expected = min(k, matching)
    for q in warmup:
        store.search(collection, q, k, where=where)
    time.sleep(1.1)  # let the warm-up's index statistics reach the collector first
    before = index_scans(store, collection)
    seconds: list[float] = []
    short = 0
    results: list[list[int]] = []
    wrong_model = 0
    for q in queries:
        began = time.perf_counter()
        hits = store.search(collection, q, k, where=where)
        seconds.append(time.perf_counter() - began)
        if len(hits) < expected:
            short += 1
        if model and any((h.model or "").lower() != model.lower() for h in hits):
            wrong_model += 1
        results.append([h.id for h in hits])
    return {
        **percentiles(seconds),
        "queries": len(queries),
        "short_results": short,
        "wrong_model_results": wrong_model,
        "index_scans": scans_since(store, collection, before, len(queries)),
        "ids": results,
    }


def recall_at_k(found: Sequence[Sequence[int]], exact: list[set[int]], k: int) -> float:
    total = 0.0
    for got, truth in zip(found, exact, strict=False):
        if truth:
            total += len(set(got[:k]) & truth) / min(k, len(truth))
    return total / max(1, len(exact))


def run_rows(args: argparse.Namespace, store: Store, rows: int) -> dict[str, Any]:
    data = Synthetic(
        rows=rows,
        clusters=args.clusters,
        models=args.models,
        rare_share=args.rare_share,
        seed=args.seed,
    )
    shares = data.model_shares()
    mid = int(np.argmin(np.abs(shares - 0.01)))
    variant_models: dict[str, int | None] = {
        "unfiltered": None,
        "common_model": 0,
        "mid_model": mid,
        "rare_model": data.models - 1,
    }
    collection = f"bench_rl_{_label(rows)}"
    queries = data.queries(max(args.queries, args.recall_queries) + args.warmup)
    warm, measured = queries[: args.warmup], queries[args.warmup :]
    recall_queries = measured[: args.recall_queries]
    mwm = args.maintenance_work_mem or auto_maintenance_work_mem(rows)
    log(f"{rows:,} rows -> {collection} (maintenance_work_mem {mwm})")
    previous = reusable_timings(args, store, collection, rows)
    timings, exact, counts = load_collection(
        store, collection, data, variant_models, recall_queries, args.k, mwm, args.build_workers,
        previous,
    )  # fmt: skip
    log(f"  HNSW build {timings['hnsw_build_s']:.1f} s, index {timings['hnsw_index_mb']:.0f} MB")
    variants: dict[str, Any] = {}
    try:
        for name, model_index in variant_models.items():
            model = None if model_index is None else data.model_name(model_index)
            log(f"  {name}: {args.queries} queries")
            result = measure_variant(
                store, collection, model, warm, measured[: args.queries], args.k, counts[name]
            )
            ids = result.pop("ids")
            # the measured queries start with the recall queries, in the same order
            found = ids[: args.recall_queries]
            if len(ids) < args.recall_queries:  # fewer latency queries than recall queries
                found = [
                    [h.id for h in store.search(collection, q, args.k, where=_where(model))]
                    for q in recall_queries
                ]
            variants[name] = {
                "model": model,
                "rows": counts[name],
                "share": counts[name] / rows,
                **result,
                "recall_at_k": recall_at_k(found, exact[name].sets(), args.k),
            }
    finally:
        if not args.keep:
            store.drop_collection(collection)
    with store.pool.connection() as conn:
        shared_buffers = conn.execute("SHOW shared_buffers").fetchone()
    return {
        "rows": rows,
        "shared_buffers": shared_buffers[0] if shared_buffers else None,
        "collection": collection,
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "maintenance_work_mem": mwm,
        "max_parallel_maintenance_workers": (
            args.build_workers if args.build_workers is not None else "server default"
        ),
        **timings,
        "variants": variants,
    }


def stored_rows(store: Store, collection: str) -> int:
    with store.pool.connection() as conn:
        row = conn.execute(
            sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(f"chop_{collection}_chunks"))
        ).fetchone()
    return int(row[0]) if row else 0


TIMING_KEYS = ("hnsw_definition", "generate_and_copy_s", "hnsw_build_s", "vacuum_analyze_s",
               "hnsw_index_mb", "table_total_mb", "maintenance_work_mem",
               "max_parallel_maintenance_workers")  # fmt: skip


def reusable_timings(
    args: argparse.Namespace, store: Store, collection: str, rows: int
) -> dict[str, Any] | None:
    """The recorded load of a kept collection with these rows and seed, when --reuse allows."""
    if not args.reuse or not store.collection_exists(collection):
        return None
    path = Path(args.out) / "retrieval_latency.json"
    if not path.exists():
        return None
    recorded = json.loads(path.read_text())
    run = recorded.get("runs", {}).get(str(rows))
    same_data = all(
        recorded["settings"].get(key) == getattr(args, key)
        for key in ("seed", "clusters", "models", "rare_share")
    )
    if run is None or not same_data or stored_rows(store, collection) != rows:
        return None
    log(f"  reusing {collection} (loaded {run['date']})")
    return {key: run[key] for key in TIMING_KEYS if key in run}


def _where(model: str | None) -> SearchFilter | None:
    return SearchFilter(model=model) if model else None


def _label(rows: int) -> str:
    if rows % 1_000_000 == 0:
        return f"{rows // 1_000_000}m"
    if rows % 1000 == 0:
        return f"{rows // 1000}k"
    return str(rows)


def auto_maintenance_work_mem(rows: int) -> str:
    """Room for the whole HNSW graph (vectors + neighbour lists, ~1.5x the raw vectors)."""
    needed_mb = math.ceil(rows * DIM * 4 * 1.5 / 2**20)
    return f"{max(1024, needed_mb)}MB"


# --------------------------------------------------------------------------- output
def markdown(results: dict[str, Any]) -> str:
    s = results["settings"]
    lines = [
        "# Retrieval latency (synthetic vectors, Store.search)",
        "",
        f"> Synthetic data, seed {s['seed']}: {DIM}-d unit vectors around {s['clusters']} "
        f"Gaussian clusters (sigma {s['sigma']}), {s['models']} models with a Zipf-like skew "
        f"(rarest {s['rare_share']:.2%}), independent of the clusters. Top-{s['k']} via "
        f"Store.search (HNSW cosine, ef_search 100; a filter matching at most "
        f"{s.get('exact_scan_rows', '?'):,} rows is searched exactly, a broader one by "
        f"pgvector's iterative scan); latency "
        f"measured in the client, {s['queries']} queries per variant after "
        f"{s['warmup']} warm-up. Recall@{s['k']} vs exact numpy brute force on "
        f"{s['recall_queries']} queries. {s['cpu_count']} CPU cores.",
        "",
    ]
    for key in sorted(results["runs"], key=int):
        run = results["runs"][key]
        lines += [
            f"## {run['rows']:,} rows ({run['date']})",
            "",
            f"COPY {run['generate_and_copy_s']:.1f} s (generation included), HNSW build "
            f"{run['hnsw_build_s']:.1f} s (maintenance_work_mem {run['maintenance_work_mem']}, "
            f"parallel workers {run['max_parallel_maintenance_workers']}), index "
            f"{run['hnsw_index_mb']:.0f} MB, table with indexes "
            f"{run['table_total_mb']:.0f} MB; shared_buffers {run.get('shared_buffers', '?')}"
            + (
                " (collection loaded by an earlier run, measured again with --reuse)."
                if run.get("reused")
                else "."
            ),
            "",
            f"| query | filter | rows matching | p50 ms | p95 ms | p99 ms | short (<k) "
            f"| recall@{s['k']} | index scans |",
            "|---|---|---:|---:|---:|---:|---:|---:|---|",
        ]
        for name, v in run["variants"].items():
            scans = v["index_scans"]
            scan_text = (
                ", ".join(
                    f"{_short_index(n)} {c / v['queries']:.2g}/q" for n, c in sorted(scans.items())
                )
                if scans
                else "-"
            )
            lines.append(
                f"| {name} | {v['model'] or '-'} | {v['rows']:,} ({v['share']:.2%}) | "
                f"{v['p50_ms']:.1f} | {v['p95_ms']:.1f} | {v['p99_ms']:.1f} | "
                f"{v['short_results']}/{v['queries']} | {v['recall_at_k']:.3f} | {scan_text} |"
            )
        lines.append("")
    lines.append(
        "Index scans: per query, from pg_stat_user_indexes (hnsw: the HNSW index; model: the "
        "btree on lower(model): the matching rows are read and sorted by exact distance; the "
        "planner's row estimate for the filter picks the path)."
    )
    return "\n".join(lines) + "\n"


def _short_index(name: str) -> str:
    for part in ("hnsw", "model", "category", "tsv", "pkey"):
        if part in name:
            return part
    return name


def write_outputs(results: dict[str, Any], out: Path) -> str:
    path = out / "retrieval_latency.json"
    if path.exists():  # keep the runs of other row counts
        try:
            previous = json.loads(path.read_text())
            runs = {**previous.get("runs", {}), **results["runs"]}
            results = {**results, "runs": runs}
        except (json.JSONDecodeError, AttributeError):
            pass
    table = markdown(results)
    write_report(out, "retrieval_latency", json.dumps(results, indent=2), table)
    return table


def _rows(value: str) -> list[int]:
    try:
        rows = [int(v.replace("_", "")) for v in value.split(",") if v.strip()]
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not a list of row counts: {value!r}") from exc
    if not rows or min(rows) < 1:
        raise argparse.ArgumentTypeError("row counts must be positive")
    return rows


def parser() -> argparse.ArgumentParser:
    p = script_parser("bench.retrieval_latency", __doc__)
    p.add_argument("--rows", type=_rows, default=[100_000], help="e.g. 100000,1000000")
    p.add_argument("--queries", type=int, default=200, help="timed queries per variant")
    p.add_argument("--recall-queries", type=int, default=50)
    p.add_argument("--warmup", type=int, default=20, help="untimed queries per variant")
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--clusters", type=int, default=1000)
    p.add_argument("--models", type=int, default=50)
    p.add_argument("--rare-share", type=float, default=0.001)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--maintenance-work-mem",
        default=None,
        help="for the HNSW build (default: 1GB, or enough for the graph of larger tables)",
    )
    p.add_argument(
        "--build-workers",
        type=int,
        default=None,
        help="max_parallel_maintenance_workers for the build (default: the server's)",
    )
    p.add_argument("--keep", action="store_true", help="keep the collection afterwards")
    p.add_argument(
        "--reuse",
        action="store_true",
        help="measure a collection kept by an earlier --keep run of the same rows and seed "
        "instead of loading and indexing it again (its recorded load timings are kept)",
    )
    p.add_argument("--out", default=str(DEFAULT_OUT))
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    store = store_for(Context())
    results: dict[str, Any] = {
        "settings": {
            "seed": args.seed,
            "dim": DIM,
            "clusters": args.clusters,
            "sigma": Synthetic(rows=1).sigma,
            "models": args.models,
            "rare_share": args.rare_share,
            "k": args.k,
            "queries": args.queries,
            "warmup": args.warmup,
            "recall_queries": args.recall_queries,
            "cpu_count": os.cpu_count(),
            "exact_scan_rows": EXACT_SCAN_ROWS,
            "data": "synthetic (seeded Gaussian clusters), not embeddings of real text",
        },
        "runs": {},
    }
    for rows in args.rows:
        results["runs"][str(rows)] = run_rows(args, store, rows)
    table = write_outputs(results, Path(args.out))
    print(table)
    short = sum(
        v["short_results"] for run in results["runs"].values() for v in run["variants"].values()
    )
    if short:
        log(f"FAIL: {short} queries returned fewer than k={args.k} rows")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
