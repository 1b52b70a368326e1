"""What pages in place costs a filings question's retrieval (issue 49, session 24):

    CHOP_DATA_DIR=D python -m bench.studies.pages_in_place_cost --collection fin_wide

``retrieve_for_question`` searches a filings collection twice, the k-deep ranking and the
2k-deep one whose new pages fill the places a page's repeats give up
(chop_rag.retrieval.retrieve.new_pages_in_place). Over the questions of an answers run on that
collection (``--questions``, default: bench/results/filings' wide answers), each is timed
both ways in turn, ``--rounds`` times: the ranking alone (``ranked_for_question``) and the
whole retrieval. The ratio of the medians is the figure; the seconds depend on the machine's
load. Writes bench/results/pages-in-place-cost/results.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

from bench.report import (
    REPO_ROOT,
    dated,
    machine,
    machine_line,
    md_table,
    page,
    script_main,
    script_parser,
)
from chop_rag.config import Context
from chop_rag.models.construction import get_embedder
from chop_rag.retrieval.retrieve import ranked_for_question, retrieve_for_question
from chop_rag.store import store_for

QUESTIONS = REPO_ROOT / "bench/results/filings/answers-fin-wide/fin-wide.jsonl"
DEFAULT_OUT = REPO_ROOT / "bench/results/pages-in-place-cost"


def parser() -> argparse.ArgumentParser:
    p = script_parser("bench.studies.pages_in_place_cost", __doc__)
    p.add_argument("--collection", default="fin_wide", help="an ingested filings collection")
    p.add_argument("--questions", type=Path, default=QUESTIONS, help="an answers run's jsonl")
    p.add_argument("--limit", type=int, default=12, help="questions timed")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--out", type=Path, default=DEFAULT_OUT)
    return p


def run(args: argparse.Namespace) -> dict[str, Any]:
    lines = args.questions.read_text(encoding="utf-8").splitlines()
    questions = [json.loads(line)["asked"] for line in lines][: args.limit]
    ctx = Context().with_overrides(collection=args.collection)
    store, embedder = store_for(ctx), get_embedder(ctx)
    retrieve_for_question(ctx, store, questions[0], embedder)  # warm the embedder and the store
    ranked: list[float] = []
    whole: list[float] = []
    for _ in range(args.rounds):
        for question in questions:
            started = time.perf_counter()
            ranked_for_question(ctx, store, question, embedder, ctx.k, "")
            ranked.append(time.perf_counter() - started)
            started = time.perf_counter()
            retrieve_for_question(ctx, store, question, embedder)
            whole.append(time.perf_counter() - started)
    once, twice = statistics.median(ranked), statistics.median(whole)
    settings = {"collection": args.collection, "questions": len(questions),
                "rounds": args.rounds, "k": ctx.k, **machine()}  # fmt: skip
    return {"settings": dated(settings), "ranking_p50_s": round(once, 3),
            "retrieval_p50_s": round(twice, 3), "ratio": round(twice / once, 2)}  # fmt: skip


def markdown(results: dict[str, Any]) -> str:
    row = [results["ranking_p50_s"], results["retrieval_p50_s"], results["ratio"]]
    settings = results["settings"]
    return page(
        "What pages in place costs a filings question's retrieval",
        md_table(
            ["the k-deep ranking alone, p50 s", "retrieve_for_question, p50 s", "ratio"], [row]
        ),
        f"{settings['questions']} questions of `{settings['collection']}`, "
        f"{settings['rounds']} rounds, k = {settings['k']}. {machine_line(settings)}",
    )


main = script_main(parser, run, markdown=markdown)

if __name__ == "__main__":
    raise SystemExit(main())
