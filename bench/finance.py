"""The `fin` subsets: FinanceBench dev filings (40 PDFs of 5 companies, 31 questions) and the
wide ones (27 PDFs of 8 more companies, 36 questions), side by side.

One command per table (results in bench/results/fin/ and bench/results/fin-wide/):

    python -m bench.finance                                          # every method, dev
    python -m bench.finance --subset wide                            # the same, wide
    python -m bench.finance --methods naive,naive_title,title_heading  # no LLM
    python -m bench.finance --side-by-side   # fin-sides.md from both results (and resolution)

Every PDF goes through chop's loader (``chop_rag.reading.loaders.load_file``: title from the PDF
metadata or the file name, one span per page) with the default Context; questions are asked as
written (no device template). Methods as in bench.emanual: ``naive``, ``naive_title`` (``title |
chunk``), ``title_heading`` (``title | heading path | chunk``, ``title | chunk`` where the loader
gave no heading), ``chop`` (the real ingest graph, defaults). Retrieval: ``chop`` through
chop_rag.retrieval.retrieve.retrieve_for_question (default Context: it resolves which document a
question means); the baselines through plain vector search. Metrics: Doc@1 (the top chunk comes from
an evidence document: doc_name = the PDF's file stem), page-level Hit@1/3/5/10 and MRR@10 (a chunk
is relevant when it comes from an evidence document and its "pages" metadata, 1-based, holds an
evidence page: evidence_page_num is zero-based), overall and per question_type.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.emanual import (
    DEFAULT_METHODS,
    DEFAULT_OUT,
    IndexStats,
    MemoEmbedder,
    build_index,
    collection_name,
    parse_methods,
    retrieval_of,
    retrieval_setup,
    search_questions,
)
from bench.metrics import first_relevant_rank, hit_at_k, mean, mrr_at_k
from bench.report import (
    REPO_ROOT,
    add_data_argument,
    add_only_argument,
    llm_work,
    log,
    md_table,
    script_main,
    write_files,
    write_report,
)
from chop_rag.config import Context
from chop_rag.models.construction import ModelUnavailable, get_embedder
from chop_rag.reading.documents import SourceDocument
from chop_rag.reading.loaders import LoadError, load_file
from chop_rag.store import Hit, store_for

DEFAULT_FIN_DATA = REPO_ROOT.parent / "shared" / "data" / "financebench-dev"
# subset → (data folder beside the repository, results folder and collection prefix)
SUBSETS = {
    "dev": (DEFAULT_FIN_DATA, "fin"),
    "wide": (REPO_ROOT.parent / "shared" / "data" / "financebench-wide", "fin-wide"),
}
SUBSET = "fin"
KS = (1, 3, 5, 10)
TOP_K = max(KS)


class FinDataMissing(RuntimeError):
    """The FinanceBench folder or one of its parts is not there."""


@dataclass(frozen=True)
class FinQuestion:
    qid: str
    question: str
    question_type: str
    company: str
    evidence: tuple[tuple[str, int], ...]  # (doc_name, 1-based page)

    @property
    def doc_names(self) -> set[str]:
        return {name for name, _ in self.evidence}


def load_fin_questions(root: Path) -> list[FinQuestion]:
    """The questions of questions.jsonl; evidence pages turned 1-based like chunk pages."""
    questions = []
    for line in (root / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        evidence = tuple(
            (str(e.get("doc_name") or row["doc_name"]), int(e["evidence_page_num"]) + 1)
            for e in row.get("evidence", [])
        ) or ((str(row["doc_name"]), 0),)
        questions.append(
            FinQuestion(
                qid=str(row["financebench_id"]),
                question=str(row["question"]),
                question_type=str(row.get("question_type") or "unknown"),
                company=str(row.get("company") or ""),
                evidence=evidence,
            )
        )
    return questions


@dataclass
class Filings:
    documents: list[SourceDocument]
    stems: dict[str, str]  # doc_id → file stem (FinanceBench's doc_name)
    same_file: dict[str, str]  # stem → the first stem of byte-identical files
    skipped: list[str]  # "file: reason" of PDFs the loader refused


def load_filings(root: Path, only: Sequence[str] = (), *, parse: bool = True) -> Filings:
    """Every PDF (whose stem starts with one of ``only``, when given) through chop's loader.

    The dev folder holds the same 8-K under two names ("AMCOR_2022_8K_2022-07-01" and
    "..._dated-2022-07-01"): byte-identical files count as one evidence document."""
    filings = Filings([], {}, {}, [])
    first_of_hash: dict[str, str] = {}
    paths = sorted((root / "pdfs").glob("*.pdf"))
    paths = [p for p in paths if not only or p.stem.startswith(tuple(only))]
    for number, path in enumerate(paths, start=1):
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        filings.same_file[path.stem] = first_of_hash.setdefault(digest, path.stem)
        if not parse:  # evaluating an index built elsewhere: ids are the resolved paths
            filings.stems[str(path.resolve())] = path.stem
            continue
        try:
            (document,) = load_file(path)
        except LoadError as err:
            filings.skipped.append(f"{path.name}: {err}")
            continue
        filings.documents.append(document)
        filings.stems[document["doc_id"]] = path.stem
        log(f"  loaded {number}/{len(paths)} {path.name}: {len(document['text'])} chars")
    return filings


def companies(root: Path) -> dict[str, str]:
    """doc_name → company, from document_information.jsonl and the questions."""
    found: dict[str, str] = {}
    for name in ("document_information.jsonl", "questions.jsonl"):
        path = root / name
        if path.is_file():
            for line in path.read_text().splitlines():
                if line.strip():
                    row = json.loads(line)
                    found.setdefault(str(row["doc_name"]), str(row.get("company") or ""))
    return found


def company_of(stem: str, known: dict[str, str]) -> str:
    """A filing's company: FinanceBench's, else that of a filing whose name starts the same
    ("AMCOR_2022_8K_2022-07-01" is a copy of "AMCOR_2022_8K_dated-2022-07-01")."""
    prefix = stem.split("_")[0]
    same = (company for name, company in known.items() if name.split("_")[0] == prefix)
    return known.get(stem) or next(same, prefix)


def check_data(root: Path) -> None:
    if not (root / "questions.jsonl").is_file() or not (root / "pdfs").is_dir():
        raise FinDataMissing(f"FinanceBench dev data not found (questions.jsonl, pdfs/) in {root}")


# --------------------------------------------------------------------------- scoring
def page_relevant(
    hit: Hit, stem: str | None, question: FinQuestion, same_file: dict[str, str]
) -> bool:
    pages = {int(p) for p in hit.metadata.get("pages", []) if str(p).isdigit()}
    return any(
        stem is not None and same_file.get(stem, stem) == same_file.get(name, name)
        and page in pages
        for name, page in question.evidence
    )  # fmt: skip


def fin_record(
    question: FinQuestion,
    hits: Sequence[Hit],
    stems: dict[str, str],
    same_file: dict[str, str] | None = None,
) -> dict[str, Any]:
    same = same_file or {}
    top = list(hits[:TOP_K])
    relevant = [page_relevant(h, stems.get(h.doc_id), question, same) for h in top]
    evidence = {same.get(name, name) for name in question.doc_names}
    first = stems.get(top[0].doc_id) if top else None
    return {
        "qid": question.qid,
        "question_type": question.question_type,
        "evidence_docs": sorted(question.doc_names),
        "doc_at_1": first is not None and same.get(first, first) in evidence,
        "first_relevant_rank": first_relevant_rank(relevant),
        "relevant": relevant,
        "top": [
            {
                "doc": stems.get(h.doc_id),
                "pages": h.metadata.get("pages", []),
                "score": round(h.score, 6),
            }
            for h in top
        ],
    }


def fin_summary(records: Sequence[dict[str, Any]]) -> dict[str, float]:
    summary: dict[str, float] = {"questions": len(records)}
    summary["doc@1"] = mean([float(r["doc_at_1"]) for r in records])
    for k in KS:
        summary[f"hit@{k}"] = mean([hit_at_k(r["relevant"], k) for r in records])
    summary["mrr@10"] = mean([mrr_at_k(r["relevant"], 10) for r in records])
    if records and all("in_sources" in r for r in records):
        summary["in_sources"] = mean([float(r["in_sources"]) for r in records])
    return summary


# --------------------------------------------------------------------------- the run
def evaluate(
    method: str,
    ctx: Context,
    filings: Filings,
    questions: Sequence[FinQuestion],
    memo: MemoEmbedder,
    ingested: tuple[str, dict[str, Any]] | None = None,
    known: dict[str, str] | None = None,
    prefix: str = SUBSET,
) -> dict[str, Any]:
    documents, stems = filings.documents, filings.stems
    store = store_for(ctx)
    if ingested is not None:  # chop, indexed by the product's own `chop ingest --json`
        collection, report = ingested
        log(f"{method}: evaluating {collection}, indexed by `chop ingest` (not rebuilt)")
        totals = report.get("stats", {})
        stats = IndexStats(
            method,
            collection,
            chunks=int(report.get("chunks_stored", 0)),
            llm_calls=int(totals.get("llm_calls", 0)),
            llm_seconds=float(totals.get("llm_seconds", 0.0)),
            cache_hits=int(totals.get("cache_hits", 0)),
            embed_seconds=float(totals.get("embed_seconds", 0.0)),
            index_seconds=float(report.get("seconds", 0.0)),
            extra={"indexed_by": "chop ingest (CLI, default settings)"},
        )
    else:
        collection = collection_name(prefix, method)
        log(f"{method}: indexing {len(documents)} filing(s) into {collection}")
        stats = build_index(method, ctx, store, collection, documents, memo)
    texts = [q.question for q in questions]
    hits, resolved, stats.retrieval_seconds = search_questions(
        ctx, store, collection, method, texts, k=TOP_K
    )
    # what a default answer reads: chop's k sources, ranked at k as `ask` ranks them (the
    # hybrid search's candidate pool and the release's reserved place depend on k)
    sources = (
        search_questions(ctx, store, collection, method, texts, k=ctx.k)[0]
        if method == "chop"
        else [[] for _ in texts]
    )
    records = []
    for question, found, names, shown in zip(questions, hits, resolved, sources, strict=True):
        record = fin_record(question, found, stems, filings.same_file)
        if method == "chop":
            record["in_sources"] = any(
                page_relevant(h, stems.get(h.doc_id), question, filings.same_file) for h in shown
            )
        record["resolved"] = [stems.get(d, d) for d in names]
        same = filings.same_file
        company = company_of(sorted(question.doc_names)[0], known or {})
        record["right_company"] = bool(names) and all(
            company_of(r, known or {}) == company for r in record["resolved"]
        )
        record["evidence_resolved"] = bool(
            {same.get(n, n) for n in question.doc_names}
            & {same.get(r, r) for r in record["resolved"]}
        )
        records.append(record)
    types = sorted({q.question_type for q in questions})
    result: dict[str, Any] = {
        "method": method,
        "collection": collection,
        "retrieval": retrieval_of(method),
        "costs": asdict(stats),
        "metrics": fin_summary(records),
        "by_type": {t: fin_summary([r for r in records if r["question_type"] == t]) for t in types},
        "resolved_questions": sum(bool(r["resolved"]) for r in records),
        "right_company": sum(r["right_company"] for r in records) / max(1, len(records)),
        "evidence_resolved": sum(r["evidence_resolved"] for r in records) / max(1, len(records)),
        "per_question": records,
    }
    m = fin_summary(records)
    log(
        f"{method}: {stats.chunks} chunks, index {stats.index_seconds:.1f} s, "
        f"Doc@1 {m['doc@1']:.2f}, Hit@5 {m['hit@5']:.2f}"
    )
    return result


def markdown(results: dict[str, Any]) -> str:
    s = results["settings"]
    header = ["method", "Doc@1", *(f"Hit@{k}" for k in KS), "MRR@10", "page in sources",
              "chunks", "LLM work", "LLM/chunk", "index wall s", "retrieval", "resolved",
              "right company"]  # fmt: skip
    rows = []
    for name, r in results["methods"].items():
        m, c = r["metrics"], r["costs"]
        rows.append(
            [name, f"{m['doc@1']:.3f}", *(f"{m[f'hit@{k}']:.3f}" for k in KS),
             f"{m['mrr@10']:.3f}",
             f"{m['in_sources']:.3f}" if "in_sources" in m else "-",
             c["chunks"], *llm_work(c), f"{c['index_seconds']:.1f}",
             "chop" if r["method"] == "chop" else "plain",
             f"{r['resolved_questions']}/{int(m['questions'])}",
             f"{r.get('right_company', 0.0):.3f}" if r["method"] == "chop" else "-"]
        )  # fmt: skip
    type_rows = [
        [t, name, int(m["questions"]), f"{m['doc@1']:.3f}", f"{m['hit@1']:.3f}",
         f"{m['hit@5']:.3f}", f"{m['mrr@10']:.3f}"]
        for name, r in results["methods"].items()
        for t, m in r["by_type"].items()
    ]  # fmt: skip
    title_rows = [
        [d["file"], d["title"], d["pages"], d["chars"]] for d in results["corpus"]["documents"]
    ]
    lines = [
        f"# FinanceBench {'wide' if s['subset'] == 'fin-wide' else 'dev'} — subset `{s['subset']}`",
        "",
        f"{s['date']} · embedder {s['embedder']} · windows {s['chunk_tokens']}/"
        f"{s['chunk_overlap']} tokens · chop search `{s['search']}` (CHOP_SEARCH) · "
        f"{len(results['corpus']['documents'])} PDFs through chop_rag.reading.loaders.load_file"
        f" · {results['corpus']['questions']} questions as written"
        + (
            f" · ONLY {', '.join(results['corpus']['only'])}: a quick check, not the benchmark"
            if results["corpus"]["only"]
            else ""
        ),
        "",
        md_table(header, rows),
        "",
        "Doc@1: the top chunk comes from an evidence document (doc_name = file stem). Hit@k / "
        "MRR@10: a chunk of an evidence document whose pages (1-based) hold an evidence page "
        "(evidence_page_num + 1), in one top-10 ranking. page in sources: such a chunk among "
        "the k (Context.k) sources a default answer reads, retrieved at k as `ask` does (the "
        "hybrid search's candidate pool and the release's reserved place depend on k, so "
        "these five can differ from the ranking's first five). retrieval `chop`: "
        "chop_rag.retrieval.retrieve.retrieve_for_question, default Context; `plain`: vector "
        "search. resolved: questions for which chop's retrieval matched a document by name; "
        "right company: the share of questions whose resolved documents "
        "all belong to the evidence's company. LLM work = model calls + cache hits; index wall "
        "s = loading "
        "excluded (see settings: load_seconds), chunking, LLM, embedding, writing.",
        "",
        "## By question type",
        "",
        md_table(["question_type", "method", "n", "Doc@1", "Hit@1", "Hit@5", "MRR@10"], type_rows),
        "",
        "## Titles the loader derived",
        "",
        md_table(["file", "title", "pages", "chars"], title_rows),
        "",
        *(f"- skipped {line}" for line in results["corpus"]["skipped"]),
    ]
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> dict[str, Any]:
    if args.side_by_side:
        return side_by_side(Path(args.out), Path(args.answers) if args.answers else None)
    default_root, name = SUBSETS[args.subset]
    env_root = os.environ.get("CHOP_FIN_DATA") if args.subset == "dev" else None
    root = Path(args.data or env_root or default_root)
    check_data(root)
    started = time.perf_counter()
    filings = load_filings(root, args.only, parse=not (args.ingested and args.methods == ["chop"]))
    documents, stems, skipped = filings.documents, filings.stems, filings.skipped
    load_seconds = time.perf_counter() - started
    log(f"loaded {len(documents)} PDF(s) in {load_seconds:.1f} s; {len(skipped)} skipped")
    loaded = set(filings.same_file)
    questions = [q for q in load_fin_questions(root) if q.doc_names <= loaded]
    for line in skipped:
        log(f"  skipped {line}")
    ctx = Context()
    embedder = get_embedder(ctx)
    results: dict[str, Any] = {
        "settings": {
            "subset": name,
            "data": str(root),
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "embedder": embedder.name,
            "chunk_tokens": ctx.chunk_tokens,
            "chunk_overlap": ctx.chunk_overlap,
            "search": ctx.search,
            "methods": args.methods,
            "load_seconds": round(load_seconds, 1),
            "retrieval": retrieval_setup(TOP_K),
        },
        "corpus": {
            "documents": [
                {
                    "file": stems[d["doc_id"]],
                    "title": d["title"],
                    "pages": d["metadata"].get("pages"),
                    "chars": len(d["text"]),
                }
                for d in documents
            ],
            "skipped": skipped,
            "same_file": {k: v for k, v in filings.same_file.items() if k != v},
            "only": list(args.only),
            "questions": len(questions),
        },
        "methods": {},
    }
    ingested = None
    if args.ingested:
        collection, _, report_file = args.ingested.partition("=")
        ingested = (collection, json.loads(Path(report_file).read_text()) if report_file else {})
    for method in args.methods:  # a fresh embedder memo each: wall times are a fresh build's
        memo = MemoEmbedder(embedder)
        reuse = ingested if method == "chop" else None
        results["methods"][method] = evaluate(
            method, ctx, filings, questions, memo, reuse, companies(root), name
        )
    out = Path(args.out) / name
    text = markdown(results)
    write_files(out, "results", results, text)
    print(text.split("\n## ")[0])
    log(f"wrote {out / 'results.json'}, {out / 'results.md'}")
    return results


SIDE_HEADER = ["subset", "n", "right company", "right document", "Doc@1", "page Hit@5",
               "page in sources", "numeric match", "yes/no right", "yes/no unsaid", "declined",
               "collection"]  # fmt: skip


def side_by_side(out: Path, answers: Path | None = None) -> dict[str, Any]:
    """Dev and wide in one table: chop's Doc@1 and page Hit@5 (from each subset's results),
    and the share of questions resolved to the right company and document (bench.resolution)."""
    table: dict[str, Any] = {}
    resolution_file = out / "resolution" / "results.json"
    resolution = json.loads(resolution_file.read_text()) if resolution_file.is_file() else {}
    for subset, (_, name) in SUBSETS.items():
        found = out / name / "results.json"
        chop = json.loads(found.read_text())["methods"].get("chop", {}) if found.is_file() else {}
        resolved = resolution.get("subsets", {}).get(subset, {}).get("summary", {})
        answered_file = (answers or out) / f"answers-fin-{subset}" / "results.json"
        answered = (
            json.loads(answered_file.read_text())["summaries"].get(f"fin-{subset}", {})
            if answered_file.is_file()
            else {}
        )
        table[subset] = {
            "numeric": answered.get("numeric"),
            "yes_no_right": answered.get("yes_no_right"),
            "yes_no_unsaid": answered.get("yes_no_unsaid"),
            "declined": answered.get("declined"),
            "questions": chop.get("metrics", {}).get("questions"),
            "doc@1": chop.get("metrics", {}).get("doc@1"),
            "hit@5": chop.get("metrics", {}).get("hit@5"),
            "in_sources": chop.get("metrics", {}).get("in_sources"),
            "collection": chop.get("collection"),
            "right_company": resolved.get("right_company"),
            "right_document": resolved.get("right_document"),
        }

    def cell(value: Any) -> str:
        return "-" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)

    keys = ["questions", "right_company", "right_document", "doc@1", "hit@5", "in_sources",
            "numeric", "yes_no_right", "yes_no_unsaid", "declined", "collection"]  # fmt: skip
    rows = [[subset, *(cell(row[k]) for k in keys)] for subset, row in table.items()]
    text = "\n".join(
        [
            "# FinanceBench dev and wide, side by side",
            "",
            md_table(SIDE_HEADER, rows),
            "",
            "right company / right document: bench.resolution (cards as ingest builds them, "
            "no LLM): every document a question is resolved to is of the evidence's company / "
            "an evidence document is among them. Doc@1, page Hit@5 (of a top-10 ranking), page "
            "in sources (an evidence page among the k sources a default answer reads, ranked "
            "at k as `ask` ranks them): chop on the `chop ingest` "
            "collection (bench.finance --methods chop --ingested ...). numeric match (every "
            "figure of the reference in the answer within 1%), yes/no right, yes/no unsaid, "
            "declined: bench.answers on the same collection (ANSWERS/answers-fin-SUBSET).",
            "",
        ]
    )
    write_report(out, "fin-sides", json.dumps({"subsets": table}, indent=1), text)
    print(text)
    return table


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m bench.finance",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--methods", type=parse_methods, default=list(DEFAULT_METHODS))
    p.add_argument("--out", default=str(DEFAULT_OUT), help="results go to OUT/fin/ (OUT/fin-wide/)")
    p.add_argument("--subset", choices=sorted(SUBSETS), default="dev", help="dev (default), wide")
    p.add_argument(
        "--side-by-side",
        action="store_true",
        help="write OUT/fin-sides.md from OUT/fin, OUT/fin-wide and OUT/resolution results",
    )
    p.add_argument(
        "--answers",
        default="",
        help="--side-by-side: the folder holding answers-fin-dev/ and answers-fin-wide/ "
        "(bench.answers results; default OUT)",
    )
    add_only_argument(
        p, "the PDFs whose name starts with one of these (AMCOR_2022_8K) and their questions"
    )
    p.add_argument(
        "--ingested",
        default="",
        metavar="COLLECTION=REPORT.json",
        help="evaluate chop on a collection built by `chop ingest PDFS --collection COLLECTION "
        "--json > REPORT.json` (the product path; its costs come from the report) instead of "
        "indexing again",
    )
    add_data_argument(p, "FinanceBench dev", "CHOP_FIN_DATA", "financebench-dev")
    return p


main = script_main(parser, run, expected=(FinDataMissing, ModelUnavailable))


if __name__ == "__main__":
    sys.exit(main())
