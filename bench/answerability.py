"""Answerability on the product path: does chop decline what its documents do not answer, and
answer what they do? On the many-manual collection bench.answers builds (12 E-Manual manuals:
the S10, the Samsung Smart TV and ten other Galaxy phones and tablets, twins among them).

    python -m bench.answerability                # the whole set (reuses bench.answers' collection)
    python -m bench.answerability --limit 10 --no-ingest   # a quick look

Questions (results in bench/results/answerability/results.{json,md}):
- ``out-of-domain``: OUT_OF_DOMAIN, questions no manual is about (cooking, travel, health),
  some naming a device the collection holds, written as users write.
- ``absent-feature``: ABSENT_FEATURES, questions about features the named phone, tablet or TV
  does not have (another maker's features, hardware it lacks), varied wording, yes/no among them.
- ``answerable``: the E-Manual dev questions of bench.answers (S10 and TV, ``--limit`` of each
  file), each naming its device.

Reported per kind: the share declined, how the judgment was decided (rule or LLM), and for
answerable questions that are not yes/no the seconds per answer p50/p95. Targets (issue 46):
out-of-domain declined >= 0.95, absent-feature >= 0.80, answerable declined <= 0.05, p50 <= 1 s.
Answers are not read from the LLM cache.

    python -m bench.answerability --replay bench/results/answerability/answerability.jsonl

re-decides a run's recorded questions with today's cheap judgment (chop_rag.answers.answerability,
no retrieval, no model): where the band still asks the LLM, the run's recorded verdict stands.
For tuning the rules without paying for the answers again; the table says it is a replay.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.answers import (
    add_collection_arguments,
    emanual_cases,
    ensure_collection,
    manual_folder,
)
from bench.emanual import DEFAULT_OUT
from bench.report import cell, dated, log, machine, md_table, page, script_main
from chop_rag.answers.answerability import cheap_judgment
from chop_rag.answers.answering import is_yes_no_question
from chop_rag.config import Context
from chop_rag.state import AnswerOutput

OUT_OF_DOMAIN = (
    "What is the recipe for banana bread?",
    "Who won the 2018 FIFA World Cup?",
    "how many moons does jupiter have",
    "Can you recommend a good hotel in Lisbon near the old town?",
    "What's the capital of Australia?",
    "How do I file my income taxes online?",
    "Explain how photosynthesis works.",
    "How do I change a flat tire on my car?",
    "Is it going to rain tomorrow in Seattle?",
    "What are the early symptoms of the flu?",
    "How long should I boil an egg for a soft yolk?",
    "Who wrote Pride and Prejudice?",
    "What's a good stretching routine for lower back pain?",
    "I have a Galaxy S10. What stock should I invest in this year?",
    "[Galaxy A50] How do I bake sourdough bread at home?",
    "How do I train my puppy to sit on command?",
    "What is the towing capacity of the Galaxy A50?",
    "Samsung Smart TV: what's the best way to get red wine out of a carpet?",
)
ABSENT_FEATURES = (
    "How do I set up Apple Pay on my Galaxy S10?",
    "How do I use the 100x Space Zoom on my Galaxy S9?",
    "How do I unlock my Galaxy Note10 with Face ID?",
    "Galaxy A51: how do I turn on the built-in projector?",
    "How can I use the thermal imaging camera on the Galaxy Note10+?",
    "Can I send messages over satellite with the Galaxy Z Flip?",
    "How do I install apps from the iOS App Store on my Galaxy Tab S6?",
    "how do i refill the ink cartridge on my galaxy s10",
    "How do I pair my Galaxy S9 with Apple CarPlay?",
    "Where do I find the Dynamic Island settings on the Galaxy A50?",
    "I have a Galaxy Z Fold. How do I switch on the night vision infrared camera?",
    "How do I customise the Touch Bar on my Galaxy Tab S5e?",
    "Does the Galaxy S10 support MagSafe chargers?",
    "Samsung Smart TV: how do I brew coffee with the built-in espresso maker?",
    "How do I set up Time Machine backups on my Galaxy Tab S6?",
    "How do I measure my blood sugar with the Galaxy S9+?",
    "Is there a way to print photos directly from the Galaxy Note10's built-in printer?",
    "How do I change the oil filter on the Galaxy A51?",
)
KINDS = ("out-of-domain", "absent-feature", "answerable")
TARGETS = {"out-of-domain": 0.95, "absent-feature": 0.80, "answerable": 0.05}


def cases(args: argparse.Namespace) -> list[tuple[str, str]]:
    """(kind, question) of every question asked, unanswerable ones first."""
    limit = args.limit
    asked = [("out-of-domain", q) for q in OUT_OF_DOMAIN[:limit]]
    asked += [("absent-feature", q) for q in ABSENT_FEATURES[:limit]]
    asked += [("answerable", c.asked) for c in emanual_cases(args.emanual_data, limit)]
    return asked


def ask_judged(question: str, ctx: Context) -> dict[str, Any]:
    """chop_rag.api.ask's result (the same graph, context and run config), with the judgment and
    the run's counters."""
    from chop_rag.api import run_config
    from chop_rag.graphs.answer import graph

    keys = [*AnswerOutput.__annotations__, "stats", "answerability", "disagreement"]
    return dict(
        graph.invoke({"question": question}, context=ctx, config=run_config(ctx), output_keys=keys)
    )


def record(kind: str, question: str, ctx: Context) -> dict[str, Any]:
    started = time.perf_counter()
    result = ask_judged(question, ctx)
    seconds = time.perf_counter() - started
    judged = result.get("answerability") or {}
    return {
        "kind": kind,
        "question": question,
        "yes_no": is_yes_no_question(question),
        "declined": not result.get("answerable"),
        "decided_by": judged.get("decided_by", ""),
        "signals": judged.get("signals", {}),
        "answer": str(result.get("answer", ""))[:300],
        "top_source": (result.get("sources") or [{}])[0].get("doc_title"),
        "seconds": round(seconds, 2),
    }


def summary(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    seconds = sorted(r["seconds"] for r in records if not r["yes_no"])
    decided: dict[str, int] = {}
    for r in records:
        how = "llm" if r["decided_by"].startswith("llm") else "rule"
        decided[how] = decided.get(how, 0) + 1
    return {
        "questions": len(records),
        "declined": round(sum(r["declined"] for r in records) / len(records), 3)
        if records
        else None,
        "decided": decided,
        "seconds_p50_not_yes_no": round(statistics.median(seconds), 2) if seconds else None,
        "seconds_p95_not_yes_no": round(seconds[int(0.95 * (len(seconds) - 1))], 2)
        if seconds
        else None,
    }


def replayed(recorded: dict[str, Any]) -> dict[str, Any]:
    """A recorded question re-decided by today's cheap judgment over its recorded signals."""
    signals = recorded["signals"]
    if not signals:  # declined before any signal (a model or period no document covers)
        return recorded
    answerable, decided_by = cheap_judgment(signals)
    if answerable is None:  # the band: the run's LLM verdict, if it asked one
        if not recorded["decided_by"].startswith("llm"):
            return {**recorded, "decided_by": "llm (not asked in the run: kept)"}
        return {**recorded, "decided_by": recorded["decided_by"]}
    return {**recorded, "declined": not answerable, "decided_by": decided_by}


def run(args: argparse.Namespace) -> dict[str, Any]:
    if args.replay is not None:
        lines = args.replay.read_text().splitlines()
        again = [replayed(json.loads(line)) for line in lines]
        return {
            "settings": dated({"replay_of": str(args.replay)}),
            "collection": {},
            "summaries": {k: summary([r for r in again if r["kind"] == k]) for k in KINDS},
            "per_question": again,
        }
    base = Context().with_overrides(collection=args.manuals_collection)
    folder = manual_folder(args.emanual_data, Path(tempfile.gettempdir()) / "chop-manuals")
    log(f"ingesting {folder} into {base.collection}")
    collection = ensure_collection(base, folder, not args.no_ingest)
    ctx = base.with_overrides(use_cache=False)  # every answer pays its own model calls
    started = machine()
    records: list[dict[str, Any]] = []
    args.out.mkdir(parents=True, exist_ok=True)
    with (args.out / "answerability.jsonl").open("w", encoding="utf-8") as partial:
        for kind, question in cases(args):
            records.append(record(kind, question, ctx))
            log(f"{kind}: declined={records[-1]['declined']} {question}")
            partial.write(json.dumps(records[-1], default=str) + "\n")
            partial.flush()
    return {
        "settings": dated(
            {
                "chat_model": base.chat_model or "local default",
                "embedder": base.embedding_model or "local default",
                "answer": base.answer,
                "limit": args.limit,
                **started,
            }
        ),
        "collection": collection,
        "summaries": {k: summary([r for r in records if r["kind"] == k]) for k in KINDS},
        "per_question": records,
    }


def markdown(results: dict[str, Any]) -> str:
    rows = []
    for kind, row in results["summaries"].items():
        target = TARGETS[kind]
        rows.append(
            [
                kind,
                row["questions"],
                cell(row["declined"]),
                f"{'≤' if kind == 'answerable' else '≥'} {target}",
                ", ".join(f"{k} {v}" for k, v in sorted(row["decided"].items())),
                cell(row["seconds_p50_not_yes_no"]),
                cell(row["seconds_p95_not_yes_no"]),
            ]
        )
    header = ["questions", "n", "declined", "target", "decided by", "s p50 (not yes/no)", "s p95"]
    wrong = [
        [r["kind"], r["question"], r["decided_by"], r["answer"][:120]]
        for r in results["per_question"]
        if r["declined"] == (r["kind"] == "answerable")
    ]
    blocks = [
        md_table(header, rows),
        f"Settings: {json.dumps(results['settings'])}",
        f"Collection: {json.dumps(results['collection'])}",
    ]
    if wrong:
        blocks += [
            "Judged wrong:",
            md_table(["questions", "question", "decided by", "answer"], wrong),
        ]
    replay = " (a replay of recorded signals)" if "replay_of" in results["settings"] else ""
    title = f"Answerability on the product path (`python -m bench.answerability`){replay}"
    return page(title, *blocks)


def parser() -> argparse.ArgumentParser:
    from bench.report import script_parser

    p = script_parser("bench.answerability", __doc__)
    p.add_argument("--limit", type=int, default=25, help="questions of each list and file")
    add_collection_arguments(p)
    p.add_argument("--out", type=Path, default=DEFAULT_OUT / "answerability")
    p.add_argument("--replay", type=Path, default=None, help="a run's answerability.jsonl")
    return p


main = script_main(parser, run, markdown=markdown)


if __name__ == "__main__":
    raise SystemExit(main())
