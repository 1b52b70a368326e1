"""Why chop hands the GIL back every 0.5 ms while MiniLM computes (chop_rag.models.embedders.
gil_handed_back_often): the local embedder's chunks/s alone and beside busy Python threads,
at Python's default switch interval (5 ms) and at chop's.

    python -m bench.studies.gil_contention [--chunks 320] [--rounds 2]

The embedder is chop's default (get_embedder, default Context), embedding the same synthetic
filing-like texts each time; the busy threads run a pure-Python loop, as the ingest graph's
own threads do. The switch interval chop sets inside ``embed`` is replaced for the 5 ms rows
by patching EMBEDDING_SWITCH_INTERVAL_S. Writes bench/results/gil-contention/results.{json,md}.
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
from pathlib import Path
from typing import Any

import chop_rag.models.embedders
from bench.emanual import DEFAULT_OUT
from bench.report import dated, keyed_table, machine, machine_line, page, script_main, script_parser
from chop_rag.config import Context
from chop_rag.models.construction import get_embedder

INTERVALS = (0.005, chop_rag.models.embedders.EMBEDDING_SWITCH_INTERVAL_S)
BUSY_THREADS = (0, 1, 3)
COLUMNS = {  # results.md's columns: the rows' keys
    "busy Python threads": "busy_threads",
    "switch interval ms": "switch_interval_ms",
    "chunks/s (median)": "median",
    "rounds": "chunks_per_s",
}


def busy(stop: threading.Event) -> None:
    while not stop.is_set():
        sum(i * i for i in range(1000))


def chunks_per_s(texts: list[str], threads: int, interval: float) -> float:
    embedder = get_embedder(Context())
    chop_rag.models.embedders.EMBEDDING_SWITCH_INTERVAL_S = interval
    stop = threading.Event()
    workers = [threading.Thread(target=busy, args=(stop,)) for _ in range(threads)]
    for worker in workers:
        worker.start()
    try:
        started = time.perf_counter()
        embedder.embed(texts)
        return len(texts) / (time.perf_counter() - started)
    finally:
        stop.set()
        for worker in workers:
            worker.join()


def run(args: argparse.Namespace) -> dict[str, Any]:
    line = "Net cash provided by operating activities was 1,234 million and capital expenditures "
    texts = [f"{line * 6} ({i})" for i in range(args.chunks)]
    get_embedder(Context()).embed(texts[:32])  # warm up
    chosen = chop_rag.models.embedders.EMBEDDING_SWITCH_INTERVAL_S
    rates: dict[str, list[float]] = {}
    try:
        for _ in range(args.rounds):
            for threads in BUSY_THREADS:
                for interval in INTERVALS:
                    key = f"{threads} {interval}"
                    rates.setdefault(key, []).append(chunks_per_s(texts, threads, interval))
    finally:
        chop_rag.models.embedders.EMBEDDING_SWITCH_INTERVAL_S = chosen
    rows = [
        {
            "busy_threads": int(key.split()[0]),
            "switch_interval_ms": float(key.split()[1]) * 1000,
            "chunks_per_s": [round(r, 1) for r in values],
            "median": round(statistics.median(values), 1),
        }
        for key, values in rates.items()
    ]
    return {
        "settings": dated(
            {
                "chunks": args.chunks,
                "rounds": args.rounds,
                "embedder": get_embedder(Context()).name,
                **machine(),
            }
        ),
        "rows": rows,
    }


def markdown(results: dict[str, Any]) -> str:
    s = results["settings"]
    return page(
        "MiniLM beside busy Python threads (bench.studies.gil_contention)",
        f"{s['date']} · {s['embedder']}, {s['chunks']} texts, {s['rounds']} rounds, "
        + machine_line(s),
        keyed_table(COLUMNS, results["rows"]),
    )


def parser() -> argparse.ArgumentParser:
    p = script_parser("bench.studies.gil_contention", __doc__)
    p.add_argument("--chunks", type=int, default=320)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--out", type=Path, default=DEFAULT_OUT / "gil-contention")
    return p


main = script_main(parser, run, markdown=markdown)


if __name__ == "__main__":
    raise SystemExit(main())
