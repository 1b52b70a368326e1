"""The local embedders side by side on the product path (issue 26): MiniLM, nomic-embed-text-v1.5
(f16) and its Q8_0 quantisation.

One command (results in bench/results/embedders/results.{json,md}):

    python -m bench.studies.embedders                          # pair + tv, minilm + nomic
    python -m bench.studies.embedders --embedders minilm,nomic,nomic-q8_0 --subsets pair
    python -m bench.studies.embedders --reuse RUNS --speed-rounds 0  # tables from runs made

Quality: for each embedder and subset it runs ``python -m bench.emanual --subset S --methods
chop --structure headings`` (the published chop rows: the real ingest graph, default settings)
with CHOP_EMBEDDING_MODEL set, into RUNS/<embedder>/<subset>/ (a temporary folder unless
--runs is given), and reads Hit@1, MRR@10, Hit@10, Doc@1, the index wall time and the
embedder's own seconds. Runs go one after another in one CHOP_DATA_DIR, so the wall times of two
embedders come from different minutes of a shared machine: compare them with the speed ratio.

Speed: in one process, every embedder embeds the same sample of chunks as chop stored them
(prefix line + text, from the last pair run's collection), round after round, each round timing
every embedder once (so a busy minute slows all of them); the ratio to MiniLM is per round,
and the median is reported with the machine's load average.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.emanual import DEFAULT_OUT
from bench.report import log, md_table, script_main, script_parser, write_report
from chop_rag.config import Context
from chop_rag.models.construction import ModelUnavailable, get_embedder
from chop_rag.models.embedders import Embedder
from chop_rag.models.weights import MINILM, MINILM_INT8, NOMIC, NOMIC_Q8
from chop_rag.store import store_for

EMBEDDERS = {
    "minilm": MINILM,
    "minilm-f32": MINILM,  # the same model computed in float32 throughout (CHOP_EMBED_FLOAT32=1)
    "minilm-int8": MINILM_INT8,
    "nomic": NOMIC,
    "nomic-q8_0": NOMIC_Q8,
}
FLOAT32 = {"minilm-f32"}
SUBSETS = ("pair", "tv")
TARGETS = {"pair": 0.75, "tv": 0.60}  # section Hit@1, issue 26
SAMPLE = 32  # chunks timed per embedder per round


def run_emanual(embedder: str, subset: str, runs: Path, data: str | None) -> Path:
    """One bench.emanual chop run with ``embedder``; its results.json."""
    out = runs / embedder
    command = [sys.executable, "-m", "bench.emanual", "--subset", subset, "--methods", "chop"]
    command += ["--structure", "headings", "--out", str(out)]
    if data:
        command += ["--data", data]
    env = {**os.environ, "CHOP_EMBEDDING_PROVIDER": "local"}
    env["CHOP_EMBEDDING_MODEL"] = EMBEDDERS[embedder]
    env["CHOP_EMBED_FLOAT32"] = "1" if embedder in FLOAT32 else "0"
    log(f"{embedder} {subset}: {' '.join(command[1:])}")
    subprocess.run(command, env=env, check=True)
    return out / subset / "results.json"


def quality_row(embedder: str, subset: str, results: Path) -> dict[str, Any]:
    """The chop row of one bench.emanual run."""
    found = json.loads(results.read_text())
    chop = found["methods"]["chop"]
    metrics, costs = chop["metrics"], chop["costs"]
    return {
        "embedder": embedder,
        "model": found["settings"]["embedder"],
        "subset": subset,
        "questions": metrics["questions"],
        "hit@1": metrics["hit@1"],
        "mrr@10": metrics["mrr@10"],
        "hit@10": metrics["hit@10"],
        "doc@1": metrics["doc@1"],
        "chunks": costs["chunks"],
        "index_seconds": costs["index_seconds"],
        "embed_seconds": costs["embed_seconds"],
        "llm_seconds": costs["llm_seconds"],
        "date": found["settings"]["date"],
    }


def sample_chunks(ctx: Context, collection: str, size: int) -> list[str]:
    """``size`` chunks spread over the collection, as the ingest embedded them."""
    rows = store_for(ctx).chunks(collection)
    if not rows:
        raise ModelUnavailable(f"collection {collection!r} is empty: run the pair subset first")
    step = max(1, len(rows) // size)
    picked = rows[::step][:size]
    return [f"{r['prefix']}\n{r['text']}" if r["prefix"] else r["text"] for r in picked]


def built_embedder(ctx: Context, embedder: str) -> Embedder:
    """``embedder`` as get_embedder builds it, the float32 variants with CHOP_EMBED_FLOAT32=1."""
    before = os.environ.get("CHOP_EMBED_FLOAT32")
    os.environ["CHOP_EMBED_FLOAT32"] = "1" if embedder in FLOAT32 else "0"
    try:
        return get_embedder(ctx.with_overrides(embedding_model=EMBEDDERS[embedder]))
    finally:
        if before is None:
            del os.environ["CHOP_EMBED_FLOAT32"]
        else:
            os.environ["CHOP_EMBED_FLOAT32"] = before


def speed(ctx: Context, embedders: Sequence[str], texts: Sequence[str], rounds: int) -> dict:
    """Chunks per second of each embedder on the same texts, interleaved round by round."""
    built = {e: built_embedder(ctx, e) for e in embedders}
    for model in built.values():
        model.embed(texts[:4])  # warm up
    seconds: dict[str, list[float]] = {e: [] for e in embedders}
    for number in range(rounds):
        for name, model in built.items():
            started = time.perf_counter()
            model.embed(texts)
            seconds[name].append(time.perf_counter() - started)
        log(
            f"speed round {number + 1}: "
            + ", ".join(f"{e} {s[-1]:.1f} s" for e, s in seconds.items())
        )
    base = seconds.get("minilm")
    return {
        "chunks": len(texts),
        "rounds": rounds,
        "load_average": os.getloadavg(),
        "cores": os.cpu_count(),
        "embedders": {
            e: {
                "chunks_per_s": round(len(texts) / statistics.median(s), 2),
                "ratio_to_minilm": (
                    round(statistics.median(a / b for a, b in zip(s, base, strict=True)), 2)
                    if base
                    else None
                ),
                "seconds": [round(x, 2) for x in s],
            }
            for e, s in seconds.items()
        },
    }


def markdown(results: dict[str, Any]) -> str:
    rows = results["quality"]
    base = {r["subset"]: r for r in rows if r["embedder"] == "minilm"}
    lines = [
        "# Local embedders on the product path (bench.studies.embedders)",
        "",
        f"{results['date']} · chop rows of `bench.emanual --methods chop --structure headings`, "
        "default settings, one embedder at a time",
        "",
        md_table(
            [
                "subset",
                "embedder",
                "Hit@1",
                "target",
                "MRR@10",
                "Hit@10",
                "Doc@1",
                "chunks",
                "index wall s",
                "embed s",
                "embed s / MiniLM's",
            ],
            [
                [
                    r["subset"],
                    r["model"] if r["embedder"] not in FLOAT32 else f"{r['model']} (float32)",
                    f"{r['hit@1']:.3f}",
                    f"{TARGETS.get(r['subset'], 0):.2f}",
                    f"{r['mrr@10']:.3f}",
                    f"{r['hit@10']:.3f}",
                    f"{r['doc@1']:.3f}",
                    r["chunks"],
                    f"{r['index_seconds']:.0f}",
                    f"{r['embed_seconds']:.0f}",
                    (
                        f"{r['embed_seconds'] / base[r['subset']]['embed_seconds']:.1f}"
                        if r["subset"] in base
                        else ""
                    ),
                ]
                for r in rows
            ],
        ),
    ]
    timing = results.get("speed")
    if timing:
        load = ", ".join(f"{x:.1f}" for x in timing["load_average"])
        lines += [
            "",
            f"Speed, same {timing['chunks']} stored pair chunks, {timing['rounds']} interleaved "
            f"rounds in one process, load average {load} on {timing['cores']} cores:",
            "",
            md_table(
                ["embedder", "chunks/s (median)", "time / MiniLM's (median of rounds)"],
                [
                    [e, v["chunks_per_s"], v["ratio_to_minilm"] or ""]
                    for e, v in timing["embedders"].items()
                ],
            ),
        ]
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> dict[str, Any]:
    embedders = [e.strip() for e in args.embedders.split(",") if e.strip()]
    unknown = [e for e in embedders if e not in EMBEDDERS]
    if unknown:
        raise ModelUnavailable(f"unknown embedder(s) {unknown} ({' | '.join(EMBEDDERS)})")
    subsets = [s.strip() for s in args.subsets.split(",") if s.strip()]
    runs = Path(args.reuse or args.runs or tempfile.mkdtemp(prefix="chop-embedders-"))
    quality = []
    for embedder in embedders:
        for subset in subsets:
            path = runs / embedder / subset / "results.json"
            if not args.reuse:
                path = run_emanual(embedder, subset, runs, args.data)
            elif not path.exists():
                log(f"{embedder} {subset}: no run in {runs}, left out")
                continue
            quality.append(quality_row(embedder, subset, path))
    results: dict[str, Any] = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "runs": str(runs),
        "quality": quality,
    }
    earlier = Path(args.out) / "results.json"
    if args.speed_rounds:
        ctx = Context()
        texts = sample_chunks(ctx, "bench_pair_chop", SAMPLE)
        results["speed"] = speed(ctx, embedders, texts, args.speed_rounds)
    elif earlier.exists() and "speed" in json.loads(earlier.read_text()):
        results["speed"] = json.loads(earlier.read_text())["speed"]  # tables redone, speed kept
    text = markdown(results)
    write_report(Path(args.out), "results", json.dumps(results, indent=2), text)
    print(text)
    return results


def parser() -> argparse.ArgumentParser:
    p = script_parser("bench.studies.embedders", __doc__)
    p.add_argument("--embedders", default="minilm,nomic", help=", ".join(EMBEDDERS))
    p.add_argument("--subsets", default=",".join(SUBSETS))
    p.add_argument("--runs", default=None, help="keep the bench.emanual runs here")
    p.add_argument("--reuse", default=None, help="read RUNS/<embedder>/<subset>/ instead")
    p.add_argument(
        "--speed-rounds", type=int, default=3, help="0: keep the speed table OUT already has"
    )
    p.add_argument("--data", default=None, help="E-Manual QA folder (as bench.emanual)")
    p.add_argument("--out", default=str(DEFAULT_OUT / "embedders"))
    return p


main = script_main(parser, run, expected=(ModelUnavailable, subprocess.CalledProcessError))


if __name__ == "__main__":
    sys.exit(main())
