"""Natural device naming: do questions that name a device the way people write it reach its
manual? Doc@1 over the full E-Manual collection (every non-empty manual).

One command per table (results in bench/results/naming/):

    python -m bench.device_naming                 # build questions.jsonl, index, evaluate
    python -m bench.device_naming --build-only    # only (re)write questions.jsonl

The question set (questions.jsonl, deterministic for a seed): the 50 S10 questions, and for
every other manual QUESTIONS_PER_MANUAL of its sections (chosen by a seeded generator) asked
with their title ("<section title> on my <device>?" and three more templates). Each question
names its device with one natural variant of the device name (from the manual's file name:
"Galaxy_Note_10+.json" → "Galaxy Note 10+"): spacing ("Note10"), lower case ("galaxy s10"),
"Galaxy" dropped ("S10"), "plus" for "+" ("S9 Plus"), hyphens ("Note-10"), or two of them;
the kind is recorded.
Gold: the device's document. Doc@1 = the top chunk comes from it.

Indexing the 34 manuals with chop's LLM is too slow here, so the index is `naive_title` rows
(token windows embedded as "<loader title> | chunk", no LLM), each manual loaded by
chop_rag.reading.loaders.load_file as `chop ingest` would. Two retrievals over the same rows: chop's
answer-time retrieval (chop_rag.retrieval.retrieve.retrieve_for_question, default Context: resolves
the document the question names by the stored titles) and plain vector search.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench.emanual import (
    CHOP_RETRIEVAL,
    DEFAULT_OUT,
    PLAIN_RETRIEVAL,
    IndexStats,
    MemoEmbedder,
    build_index,
    resolve_data,
)
from bench.emanual_data import (
    S10_DEVICE,
    S10_QUESTIONS,
    DataMissing,
    Manual,
    all_manual_paths,
    check_data,
    load_manuals,
    load_questions,
)
from bench.metrics import mean
from bench.report import (
    REPO_ROOT,
    log,
    md_table,
    run_header,
    script_main,
    script_parser,
    write_files,
)
from chop_rag.config import Context
from chop_rag.models.construction import ModelUnavailable, get_embedder
from chop_rag.models.embedders import embed_queries
from chop_rag.retrieval.retrieve import retrieve_for_question
from chop_rag.store import store_for

SUBSET = "naming"
SEED = 11
QUESTIONS_PER_MANUAL = 4
INDEX_METHOD = "naive_title"
COLLECTION = "bench_naming_naive_title"
TEMPLATES = (
    "{topic} on my {device}?",
    "{device}: where do I find {topic}?",
    "Help with {topic} for the {device}",
    "my {device} - {topic}",
)


# --------------------------------------------------------------------------- naming variants
def _join_number(name: str) -> str:
    """ "Galaxy Note 10+" → "Galaxy Note10+": a word and the number after it written as one."""
    return re.sub(r"\b([A-Za-z]+) (\d)", r"\1\2", name)


def _hyphen(name: str) -> str:
    """ "Galaxy Note 10" → "Galaxy Note-10"; "Galaxy S10" → "Galaxy S-10"."""
    spaced = re.sub(r"\b([A-Za-z]+) (\d)", r"\1-\2", name)
    return spaced if spaced != name else re.sub(r"\b([A-Za-z]+)(\d)", r"\1-\2", name)


def _plus(name: str) -> str:
    return re.sub(r"\s*\+", " Plus", name)


def _drop_galaxy(name: str) -> str:
    return re.sub(r"^(Samsung\s+)?Galaxy\s+", "", name)


VARIANTS: dict[str, Callable[[str], str]] = {
    "spacing": _join_number,
    "lower case": str.lower,
    "no Galaxy": _drop_galaxy,
    "plus": _plus,
    "hyphen": _hyphen,
}


def name_variants(device: str) -> dict[str, str]:
    """Every single variant that changes ``device``, then every pair of them applied left to
    right ("no Galaxy+lower case") that gives a name not seen yet."""
    singles = {kind: fn(device) for kind, fn in VARIANTS.items() if fn(device) != device}
    found = dict(singles)
    for first, one in singles.items():
        for second in singles:
            two = VARIANTS[second](one)
            if second != first and two != one and two not in found.values():
                found[f"{first}+{second}"] = two
    return found


def pick_variant(device: str, rng: random.Random) -> tuple[str, str]:
    """One natural way to write ``device``: a variant kind chosen by ``rng``, or as is."""
    variants = name_variants(device)
    if not variants:
        return "as is", device
    kind = rng.choice(sorted(variants))
    return kind, variants[kind]


# --------------------------------------------------------------------------- questions
def section_topic(title: str) -> str:
    title = " ".join(title.split()).rstrip(".:")
    return title[:1].lower() + title[1:] if title[1:2].islower() else title


def build_questions(root: Path, seed: int = SEED) -> tuple[list[dict[str, Any]], list[Manual]]:
    """The question set over every non-empty manual; deterministic for ``seed``."""
    manuals, _skipped = load_manuals(all_manual_paths(root))
    rng = random.Random(seed)
    rows: list[dict[str, Any]] = []
    for manual in manuals:
        if manual.device == S10_DEVICE:
            for q in load_questions(root / S10_QUESTIONS, S10_DEVICE):
                kind, name = pick_variant(manual.device, rng)
                question = q.question.strip()
                rows.append(
                    {"qid": f"s10/{q.qid}", "device": manual.device, "named": name,
                     "variant": kind, "question": f"{question.rstrip('?')} on my {name}?",
                     "gold_doc": manual.doc_id, "source": "S10 question"}
                )  # fmt: skip
            continue
        titled = [s for s in manual.sections if len(s.title.split()) >= 2 and s.end > s.start]
        for section in rng.sample(titled, min(QUESTIONS_PER_MANUAL, len(titled))):
            kind, name = pick_variant(manual.device, rng)
            template = rng.choice(TEMPLATES)
            rows.append(
                {"qid": f"{manual.device}/{section.start}", "device": manual.device,
                 "named": name, "variant": kind,
                 "question": template.format(topic=section_topic(section.title), device=name),
                 "gold_doc": manual.doc_id, "source": f"section: {section.title}"}
            )  # fmt: skip
    return rows, manuals


def write_questions(rows: Sequence[dict[str, Any]], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")


# --------------------------------------------------------------------------- evaluation
def evaluate(
    ctx: Context, manuals: Sequence[Manual], rows: Sequence[dict[str, Any]], reuse: bool = False
) -> dict[str, Any]:
    store = store_for(ctx)
    memo = MemoEmbedder(get_embedder(ctx))
    if reuse and store.collection_exists(COLLECTION):
        log(f"{INDEX_METHOD}: reusing the index in {COLLECTION} (--reuse)")
        count = sum(r.chunk_count for r in store.documents(COLLECTION).values())
        stats = IndexStats(INDEX_METHOD, COLLECTION, chunks=count, extra={"reused": True})
    else:
        log(f"{INDEX_METHOD}: indexing {len(manuals)} manuals into {COLLECTION}")
        docs = [m.loaded for m in manuals]
        stats = build_index(INDEX_METHOD, ctx, store, COLLECTION, docs, memo)
    started = time.perf_counter()
    vectors = embed_queries(memo.embedder, [r["question"] for r in rows])
    answer_ctx = ctx.with_overrides(collection=COLLECTION)
    records = []
    for row, vector in zip(rows, vectors, strict=True):
        chop_found = retrieve_for_question(answer_ctx, store, row["question"], memo.embedder, k=1)
        plain = store.search(COLLECTION, vector, 1)
        records.append(
            {
                "qid": row["qid"],
                "variant": row["variant"],
                "device": row["device"],
                "resolved": list(chop_found.documents),
                "note": chop_found.note,
                "chop_top": chop_found.hits[0].doc_title if chop_found.hits else None,
                "chop_doc_at_1": bool(chop_found.hits)
                and chop_found.hits[0].doc_id == row["gold_doc"],
                "plain_top": plain[0].doc_title if plain else None,
                "plain_doc_at_1": bool(plain) and plain[0].doc_id == row["gold_doc"],
            }
        )
    stats.retrieval_seconds = time.perf_counter() - started
    return {"costs": asdict(stats), "per_question": records}


def summary(records: Sequence[dict[str, Any]]) -> dict[str, float]:
    return {
        "questions": len(records),
        "chop_doc@1": mean([float(r["chop_doc_at_1"]) for r in records]),
        "plain_doc@1": mean([float(r["plain_doc_at_1"]) for r in records]),
        "resolved_to_gold": mean(
            [float(any(d == r["gold"] for d in r["resolved"])) for r in records]
        ),
    }


def markdown(results: dict[str, Any]) -> str:
    s, c = results["settings"], results["costs"]
    run = results["methods"]["naive_title"]
    header = ["questions", "n", "Doc@1 chop retrieval", "Doc@1 plain search", "resolved to gold"]
    rows = [
        [name, int(m["questions"]), f"{m['chop_doc@1']:.3f}", f"{m['plain_doc@1']:.3f}",
         f"{m['resolved_to_gold']:.3f}"]
        for name, m in run["groups"].items()
    ]  # fmt: skip
    return "\n".join(
        [
            "# Natural device naming — full E-Manual collection",
            "",
            f"{s['date']} · embedder {s['embedder']} · {s['manuals']} manuals · "
            f"{s['questions']} questions (seed {s['seed']}, {s['questions_file']})",
            "",
            f"Index: `{INDEX_METHOD}` rows (no LLM): windows {s['chunk_tokens']}/"
            f'{s["chunk_overlap"]} tokens embedded as "<loader title> | chunk"; {c["chunks"]} '
            f"chunks, LLM work 0, index wall {c['index_seconds']:.1f} s. Doc@1 chop retrieval: "
            f"{CHOP_RETRIEVAL}; plain search: {PLAIN_RETRIEVAL}. resolved to gold: the "
            "questions chop's document resolution matched to the gold manual.",
            "",
            md_table(header, rows),
            "",
        ]
    )


def shown_path(path: Path) -> str:
    """``path`` relative to the repository when it lies inside it."""
    resolved = path.resolve()
    return str(resolved.relative_to(REPO_ROOT)) if resolved.is_relative_to(REPO_ROOT) else str(path)


def run(args: argparse.Namespace) -> dict[str, Any]:
    root = resolve_data(args.data)
    check_data(root)
    out = Path(args.out) / SUBSET
    rows, manuals = build_questions(root, args.seed)
    questions_file = out / "questions.jsonl"
    write_questions(rows, questions_file)
    log(f"wrote {len(rows)} questions over {len(manuals)} manuals to {questions_file}")
    if args.build_only:
        return {}
    ctx = Context()
    result = evaluate(ctx, manuals, rows, reuse=args.reuse)
    gold = {r["qid"]: r["gold_doc"] for r in rows}
    records = [{**r, "gold": gold[r["qid"]]} for r in result["per_question"]]
    kinds = sorted({r["variant"] for r in records})
    groups = {"all": summary(records)}
    groups["S10 questions"] = summary([r for r in records if r["qid"].startswith("s10/")])
    groups.update(
        {f"variant: {k}": summary([r for r in records if r["variant"] == k]) for k in kinds}
    )
    results: dict[str, Any] = {
        "settings": run_header(
            SUBSET,
            root,
            get_embedder(ctx).name,
            chunk_tokens=ctx.chunk_tokens,
            chunk_overlap=ctx.chunk_overlap,
            seed=args.seed,
            manuals=len(manuals),
            questions=len(rows),
            questions_file=shown_path(questions_file),
            index=f"{INDEX_METHOD} rows, no LLM (chop's LLM ingest of 34 manuals: too slow)",
        ),
        "costs": result["costs"],
        "methods": {"naive_title": {"groups": groups, "per_question": records}},
    }
    text = markdown(results)
    write_files(out, "results", results, text)
    print(text)
    return results


def parser() -> argparse.ArgumentParser:
    p = script_parser("bench.device_naming", __doc__)
    p.add_argument("--seed", type=int, default=SEED)
    p.add_argument("--build-only", action="store_true", help="only write questions.jsonl")
    p.add_argument(
        "--reuse", action="store_true", help="measure the index kept from an earlier run again"
    )
    p.add_argument("--out", default=str(DEFAULT_OUT), help="results go to OUT/naming/")
    p.add_argument("--data", default=None, help="E-Manual QA folder (as bench.emanual)")
    return p


main = script_main(parser, run, expected=(DataMissing, ModelUnavailable))


if __name__ == "__main__":
    sys.exit(main())
