"""Thread storage: the checkpoint rows and bytes one conversation thread holds as it grows.

    python -m bench.thread_storage --turns 200 [--every 50] [--label after]

One thread of ``--turns`` turns through chop_rag.api.Conversations (the chat graph on chop's
PostgreSQL checkpointer, as ``chop chat`` and ``ask(..., thread_id=...)`` run it), in a fresh
embedded PostgreSQL under a temporary folder (``--data-dir`` to keep it). The collection is
the three-manual sample corpus (chop_rag.harness.sample_corpus); the turns cycle through a first
question, a follow-up and a "what about" switch. The LLM is chop's stub
(chop_rag.harness.stub_llm, no latency) and the embedder chop's default local MiniLM: what is
measured is what the checkpointer stores per turn, which neither model's quality changes.

Measured every ``--every`` turns: rows and bytes of the thread in ``checkpoints`` (the JSON
of each checkpoint and its metadata), ``checkpoint_blobs`` (channel values) and
``checkpoint_writes`` (each step's writes), as the saver wrote them (``octet_length``, before
PostgreSQL's TOAST compression), and the three tables' size on disk. Linear growth shows as
a constant number of bytes per turn between measurements. Writes
bench/results/thread_storage.json and .md; runs of other labels already there are kept (the
"before" row was measured on the commit before the messages channel became a DeltaChannel).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.report import RESULTS, dated, log, machine, md_table, page, script_parser, write_report

DEFAULT_OUT = RESULTS
STEM = "thread_storage"
QUESTIONS = (
    "How often do I clean the filter of the Coolwave 330C?",
    "How do I empty the water tank?",
    "What about the 225B?",
)
TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")
SIZES = {
    "checkpoints": "octet_length(checkpoint::text) + octet_length(metadata::text)",
    "checkpoint_blobs": "coalesce(octet_length(blob), 0)",
    "checkpoint_writes": "octet_length(blob)",
}


def thread_storage(url: str, thread_id: str) -> dict[str, Any]:
    """Rows and bytes of ``thread_id`` in each checkpoint table, and the tables' disk size."""
    import psycopg

    found: dict[str, Any] = {}
    with psycopg.connect(url) as conn:
        for table in TABLES:
            row = conn.execute(
                f"SELECT count(*), coalesce(sum({SIZES[table]}), 0) FROM {table} "
                "WHERE thread_id = %s",
                (thread_id,),
            ).fetchone()
            assert row is not None
            found[f"{table}_rows"], found[f"{table}_bytes"] = int(row[0]), int(row[1])
        disk = conn.execute(
            "SELECT " + " + ".join(f"pg_total_relation_size('{t}')" for t in TABLES)
        ).fetchone()
        assert disk is not None
    found["bytes"] = sum(found[f"{t}_bytes"] for t in TABLES)
    found["disk_bytes"] = int(disk[0])
    return found


def run(turns: int, every: int, data_dir: Path) -> list[dict[str, Any]]:
    """The thread's storage after every ``every`` turns (and after the last)."""

    from chop_rag.api import conversations, ingest
    from chop_rag.config import Context
    from chop_rag.harness.sample_corpus import write_sample_corpus
    from chop_rag.harness.stub_llm import serve_stub
    from chop_rag.store.pgserver import resolve_database_url

    corpus = data_dir / "corpus"
    write_sample_corpus(corpus)
    points: list[dict[str, Any]] = []
    with serve_stub(latency=(0.0, 0.0)) as base_url:
        ctx = Context(
            data_dir=str(data_dir / "data"),
            collection="thread_storage",
            chat_provider="openai",
            openai_base_url=f"{base_url}/v1",
            chat_model="stub",
            use_cache=False,
        )
        ingest([str(corpus)], context=ctx)
        url = resolve_database_url(ctx.database_url, ctx.data_dir)
        started = time.monotonic()
        with conversations(ctx) as talk:
            stored = talk.config("bench")["configurable"]["thread_id"]
            for turn in range(1, turns + 1):
                talk.ask(QUESTIONS[(turn - 1) % len(QUESTIONS)], "bench")
                if turn % every == 0 or turn == turns:
                    point = {"turns": turn, **thread_storage(url, stored)}
                    point["seconds"] = round(time.monotonic() - started, 1)
                    points.append(point)
                    log(f"{turn} turns: {point['checkpoint_blobs_rows']} blobs, "
                        f"{point['bytes'] / 1e6:.2f} MB")  # fmt: skip
    return points


COLUMNS = {
    "turns": "turns",
    "checkpoints": "checkpoints_rows",
    "blobs": "checkpoint_blobs_rows",
    "blob MB": "checkpoint_blobs_mb",
    "writes": "checkpoint_writes_rows",
    "write MB": "checkpoint_writes_mb",
    "all MB": "mb",
    "KB per turn since the last row": "kb_per_turn",
    "on disk MB": "disk_mb",
}


def table_rows(points: list[dict[str, Any]]) -> list[list[Any]]:
    rows = []
    previous = {"turns": 0, "bytes": 0}
    for point in points:
        added = (point["bytes"] - previous["bytes"]) / (point["turns"] - previous["turns"])
        shown = {
            **point,
            "checkpoint_blobs_mb": f"{point['checkpoint_blobs_bytes'] / 1e6:.2f}",
            "checkpoint_writes_mb": f"{point['checkpoint_writes_bytes'] / 1e6:.2f}",
            "mb": f"{point['bytes'] / 1e6:.2f}",
            "kb_per_turn": f"{added / 1e3:.1f}",
            "disk_mb": f"{point['disk_bytes'] / 1e6:.2f}",
        }
        rows.append([shown[key] for key in COLUMNS.values()])
        previous = point
    return rows


def markdown(results: dict[str, Any]) -> str:
    blocks = [
        "One conversation thread through chop_rag.api.Conversations (stub LLM, the local MiniLM): "
        "the checkpoint rows and bytes it holds (bytes as the saver wrote them, before TOAST "
        "compression; on disk: the three checkpoint tables' size). Linear storage is a "
        "constant number of KB per turn."
    ]
    for label, run_ in results["runs"].items():
        settings = run_["settings"]
        blocks.append(f"### {label}: {settings.get('note', '')} ({settings['date']})")
        blocks.append(md_table(list(COLUMNS), table_rows(run_["points"])))
    return page("Thread storage", *blocks)


def parser() -> argparse.ArgumentParser:
    p = script_parser("bench.thread_storage", __doc__)
    p.add_argument("--turns", type=int, default=200)
    p.add_argument("--every", type=int, default=50, help="measure after every N turns")
    p.add_argument("--label", default="after", help="this run's name in the results")
    p.add_argument("--note", default="", help="what this run measured (the code it ran)")
    p.add_argument("--data-dir", default=None, help="keep the database here (default: a temp)")
    p.add_argument("--out", default=str(DEFAULT_OUT))
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.turns < 1 or args.every < 1:
        parser().error("--turns and --every must be positive")
    out = Path(args.out)
    previous = out / f"{STEM}.json"
    results: dict[str, Any] = {"runs": {}}
    if previous.exists():
        results = json.loads(previous.read_text())
    settings = dated({"turns": args.turns, "note": args.note, **machine()})
    from chop_rag.store import release_embedded_server

    with tempfile.TemporaryDirectory(
        prefix="chop-thread-storage-", ignore_cleanup_errors=True
    ) as temporary:
        folder = Path(args.data_dir or temporary)
        try:
            points = run(args.turns, args.every, folder)
        finally:
            release_embedded_server(folder / "data")  # stopped before its folder is removed
    results["runs"][args.label] = {"settings": settings, "points": points}
    text = markdown(results)
    write_report(out, STEM, json.dumps(results, indent=2), text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
