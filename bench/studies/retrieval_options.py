"""Answer-time retrieval options, measured on the E-Manual indexes that bench.emanual built.

    python -m bench.studies.retrieval_options --subset pair [--subset tv] [--answers N]

For each index (plain CHOP, and naive chunks as the baseline) and each option of the retrieve
node (query CNM off / boost / filter; vector or hybrid search) it asks three question sets:

- ``dev``: the benchmark's template, "[<device>] <question>";
- ``natural``: "I have a <device>. <question>" — another phrasing, same gold;
- ``twin`` (pair only): the S10 questions asked about the Galaxy S9, whose manual is a
  near-identical twin; gold is the section of the same title in the S9 manual.

Ties are counted against the gold device (pessimistic), since a user gets one of two identical
chunks with no say in which. Requires the collections bench_<subset>_chop and
bench_<subset>_naive and bench_<subset>_naive_title (run bench.emanual first); writes
bench/results/options/<subset>.{json,md}.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.emanual import DEFAULT_DATA, DEFAULT_OUT, collection_name, map_gold, overlaps
from bench.emanual_data import GoldMatch, Manual, load_subset, match_gold
from bench.metrics import hit_at_k, mean, mrr_at_k, ndcg_at_k, token_f1
from bench.report import script_parser
from chop_rag.config import Context
from chop_rag.models.construction import get_embedder
from chop_rag.retrieval.retrieve import retrieve_for_question
from chop_rag.store import Hit, Store, store_for

K = 10
OPTIONS: tuple[tuple[str, str], ...] = (
    ("off", "vector"),
    ("boost", "vector"),
    ("filter", "vector"),
    ("off", "hybrid"),
    ("boost", "hybrid"),
    ("filter", "hybrid"),
)
# Answers cost one local LLM call each (~15 s here): only these options are answered.
ANSWERED_OPTIONS = {
    ("chop", "off", "vector"),
    ("chop", "boost", "vector"),
    ("chop", "boost", "hybrid"),
    ("naive", "off", "vector"),
}
PHRASINGS = {"dev": "[{device}] {question}", "natural": "I have a {device}. {question}"}


@dataclass(frozen=True)
class Case:
    """One question as asked, with the manual and sections that answer it."""

    text: str
    manual: Manual
    gold: GoldMatch
    answer: str


def cases(subset: str, data: Path) -> dict[str, list[Case]]:
    corpus = load_subset(data, subset)
    mapped, _ = map_gold(corpus)
    sets: dict[str, list[Case]] = {}
    for name, template in PHRASINGS.items():
        sets[name] = [
            Case(template.format(device=q.device, question=q.question.strip()),
                 corpus.manual(q.device), gold, q.answer)
            for q, gold in mapped
        ]  # fmt: skip
    if subset == "pair":
        twin = corpus.manual("Galaxy S9")
        sets["twin"] = [
            Case(PHRASINGS["dev"].format(device=twin.device, question=q.question.strip()),
                 twin, g, q.answer)
            for q in corpus.questions
            if (g := match_gold(q.section_path, twin.sections)).how == "exact"
        ]  # fmt: skip
    return sets


def relevance(hits: Sequence[Hit], case: Case) -> list[bool]:
    """Relevant flags in rank order, with score ties ordered against the gold document."""
    ranked = sorted(
        hits, key=lambda h: (-round(h.score, 6), h.doc_id == case.manual.doc_id, h.chunk_index)
    )
    return [
        h.doc_id == case.manual.doc_id
        and overlaps(h.char_start, h.char_end, case.manual, case.gold)
        for h in ranked[:K]
    ]


def relevant_count(store: Store, collection: str, case: Case, memo: dict[Any, int]) -> int:
    key = (collection, case.manual.doc_id, case.gold.sections)
    if key not in memo:
        memo[key] = sum(
            overlaps(c["char_start"], c["char_end"], case.manual, case.gold)
            for c in store.chunks(collection, case.manual.doc_id)
        )
    return memo[key]


def evaluate(
    ctx: Context, store: Store, collection: str, sets: dict[str, list[Case]], answers: int
) -> list[dict[str, Any]]:
    embedder = get_embedder(ctx)
    memo: dict[Any, int] = {}
    rows = []
    for name, items in sets.items():
        for query_cnm, search in OPTIONS:
            run = ctx.with_overrides(collection=collection, query_cnm=query_cnm, search=search)
            started = time.perf_counter()
            flags, docs, n_rel = [], [], []
            for case in items:
                found = retrieve_for_question(run, store, case.text, embedder, k=3 * K)
                flags.append(relevance(found.hits, case))
                docs.append(bool(found.hits) and _top_doc(found.hits, case) == case.manual.doc_id)
                n_rel.append(relevant_count(store, collection, case, memo))
            seconds = time.perf_counter() - started
            row = {
                "questions": name, "index": collection.split("_", 2)[-1], "query_cnm": query_cnm,
                "search": search, "n": len(items),
                "hit@1": mean([hit_at_k(f, 1) for f in flags]),
                "hit@10": mean([hit_at_k(f, 10) for f in flags]),
                "mrr@10": mean([mrr_at_k(f, 10) for f in flags]),
                "ndcg@10": mean([ndcg_at_k(f, 10, n) for f, n in zip(flags, n_rel, strict=True)]),
                "doc@1": mean([float(d) for d in docs]),
                "ms_per_query": 1000 * seconds / max(len(items), 1),
            }  # fmt: skip
            index = collection.split("_", 2)[-1]
            if answers and name == "dev" and (index, query_cnm, search) in ANSWERED_OPTIONS:
                row["answer_f1"] = answer_f1(run, items[:answers])
            rows.append(row)
            print(_line(row), file=sys.stderr, flush=True)
    return rows


def _top_doc(hits: Sequence[Hit], case: Case) -> str:
    ranked = sorted(hits, key=lambda h: (-round(h.score, 6), h.doc_id == case.manual.doc_id))
    return ranked[0].doc_id


def answer_f1(ctx: Context, items: Sequence[Case]) -> float:
    from chop_rag.api import ask

    return mean([token_f1(ask(c.text, context=ctx)["answer"], c.answer) for c in items])


def _line(row: dict[str, Any]) -> str:
    return (
        f"{row['questions']:8} {row['index']:6} {row['query_cnm']:6} {row['search']:6} "
        f"Hit@1 {row['hit@1']:.3f} MRR@10 {row['mrr@10']:.3f} NDCG@10 {row['ndcg@10']:.3f} "
        f"Doc@1 {row['doc@1']:.3f}"
    )


def markdown(subset: str, rows: list[dict[str, Any]]) -> str:
    has_f1 = any("answer_f1" in r for r in rows)
    head = ["questions", "index", "query CNM", "search", "n", "Hit@1", "Hit@10", "MRR@10",
            "NDCG@10", "Doc@1", "ms/query"] + (["answer F1"] if has_f1 else [])  # fmt: skip
    lines = [
        f"# Retrieval options — subset `{subset}`",
        "",
        "Ties between identical chunks count against the gold device. `index`: chop = the CHOP "
        "index (gate mode), naive = plain 200/40 token windows, naive_title = the same windows "
        "embedded as `<device> | chunk` (no CNM columns: boost/filter change nothing). "
        "Questions: dev = "
        "`[device] q`, natural = `I have a <device>. q`, twin = S10 questions asked about the "
        "Galaxy S9 (gold in the S9 manual).",
        "",
        "| " + " | ".join(head) + " |",
        "|" + " --- |" * len(head),
    ]
    for r in rows:
        cells = [r["questions"], r["index"], r["query_cnm"], r["search"], str(r["n"])]
        cells += [f"{r[m]:.3f}" for m in ("hit@1", "hit@10", "mrr@10", "ndcg@10", "doc@1")]
        cells.append(f"{r['ms_per_query']:.1f}")
        if has_f1:
            cells.append(f"{r['answer_f1']:.3f}" if "answer_f1" in r else "")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = script_parser("bench.studies.retrieval_options", __doc__)
    parser.add_argument("--subset", action="append", choices=["pair", "tv", "full"])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--answers", type=int, default=0, help="questions answered for F1")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT / "options")
    args = parser.parse_args(argv)
    if not args.data.exists():
        print(f"error: E-Manual data not found at {args.data}", file=sys.stderr)
        return 2
    ctx = Context()
    store = store_for(ctx)
    args.out.mkdir(parents=True, exist_ok=True)
    for subset in args.subset or ["pair", "tv"]:
        sets = cases(subset, args.data)
        rows: list[dict[str, Any]] = []
        for method in ("chop", "naive", "naive_title"):
            collection = collection_name(subset, method)
            if not store.collection_exists(collection):
                print(f"error: {collection} is missing; run bench.emanual --subset {subset} "
                      f"--methods {method} first", file=sys.stderr)  # fmt: skip
                return 2
            rows += evaluate(ctx, store, collection, sets, args.answers)
        text = markdown(subset, rows)
        (args.out / f"{subset}.md").write_text(text, encoding="utf-8")
        (args.out / f"{subset}.json").write_text(json.dumps(rows, indent=1), encoding="utf-8")
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
