"""The E-Manual QA benchmark on the path users take: naive windows vs free structure vs CHOP.

One command per table (results in bench/results/<subset>/results.{json,md} and chart.png):

    python -m bench.emanual --subset pair                      # S10 + S9, 50 S10 questions
    python -m bench.emanual --subset tv                        # TV remote, 50 + 684 questions
    python -m bench.emanual --subset pair --methods naive,naive_title,title_heading  # no LLM
    python -m bench.emanual --subset tv --structure headings   # only the JSON path

Subsets (data: E-Manual QA, see its README):
  pair  Galaxy S10 + Galaxy S9 manuals, the 50 S10 questions (near-duplicate trap)
  tv    the Smart TV remote manual: its 50 CSV questions and the 684 of smart_remote_QA/
        (Normal, Paraphrased, Compound, Yes/No; reported per folder and overall)
  full  every non-empty manual, the S10 + TV CSV questions
  tiny  the first 6 sections of the S10 and S9 manuals, 2 questions (for tests)
The FinanceBench subset is bench.finance; the natural device naming set is bench.device_naming.

Documents (--structure, default both): ``headings`` = each manual's JSON through
``chop_rag.reading.loaders.load_file`` (title from the file name, headings as span metadata),
exactly what ``chop ingest`` stores; ``none`` = the same text saved as a .txt and loaded as
such (no headings). Methods, side by side: ``naive`` (token windows, no prefix), ``naive_title``
(``title | chunk``), ``title_heading`` (``title | heading path | chunk``, the heading from the
loader's span; no LLM), ``chop`` (the real ingest graph, default Context), ``cosine`` (the
paper's semantic chunking, on request). Questions name the device as "[<device>] <question>".
Each method indexes into its own collection (dropped and rebuilt each run). Retrieval: ``chop``
through its answer-time retrieval (chop_rag.retrieval.retrieve.retrieve_for_question, default
Context: the document a question names is resolved and boosted); the baselines through plain vector
search (Store.search, no boosts or filters). A retrieved chunk is relevant iff it comes from the
gold device's document and its character span overlaps a gold section (sections' spans on the loaded
text, from the loader's {"section": key} spans).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bench.chunkers import COSINE_THRESHOLD, cosine_spans, naive_spans
from bench.emanual_data import (
    QUESTION_TEMPLATE,
    STRUCTURES,
    SUBSETS,
    Corpus,
    DataMissing,
    GoldMatch,
    Manual,
    Question,
    load_subset,
    match_gold,
)
from bench.metrics import (
    first_relevant_rank,
    hit_at_k,
    mean,
    mrr_at_k,
    ndcg_at_k,
    rouge_l,
    token_f1,
)
from bench.report import (
    RESULTS,
    SHARED_DATA,
    add_data_argument,
    log,
    run_header,
    script_main,
    script_parser,
)
from chop_rag.config import GATE_BAND, Context
from chop_rag.models.construction import ModelUnavailable, chat_model_identity, get_embedder
from chop_rag.models.embedders import Embedder, embed_queries
from chop_rag.reading.chunking import TextSpan, chunks_at
from chop_rag.reading.documents import SourceDocument, content_hash, span_meta_at
from chop_rag.retrieval.retrieve import retrieve_for_question
from chop_rag.store import NO_CNM, DocumentRecord, Hit, Store, chunk_row, store_for

__all__ = ["hit_at_k", "main", "mrr_at_k", "ndcg_at_k", "token_f1"]

DEFAULT_DATA = SHARED_DATA / "emanual-qa"
DEFAULT_OUT = RESULTS
METHODS = ("naive", "naive_title", "title_heading", "chop", "cosine")
DEFAULT_METHODS = ("naive", "naive_title", "title_heading", "chop")
PLAIN_RETRIEVAL = "plain vector search (Store.search), no boosts or filters"
CHOP_RETRIEVAL = (
    "chop_rag.retrieval.retrieve.retrieve_for_question, default Context (document resolution)"
)
KS = (1, 3, 5, 10)
TOP_K = max(KS)
SEARCH_K = 3 * TOP_K  # the store's top 10 plus the rest of any tie group cut at rank 10
TIE_NOTE = (
    "Ties between identical chunks (twin manuals such as S9/S9+) are broken by the store: "
    "document title, then chunk order (Store.search orders by score, doc_title, chunk_index), "
    "so the alphabetically first title wins ('Galaxy S10' before 'Galaxy S9', 'Galaxy S9' "
    "before 'Galaxy S9+'). naive/cosine embed each distinct text once, so identical chunks tie "
    "exactly; chop embeds in its own batches, where identical texts may differ in the last bits."
)
NO_BERTSCORE = "not computed (no local BERTScore model)"


# --------------------------------------------------------------------------- costs
@dataclass
class IndexStats:
    """What building one method's index cost."""

    method: str
    collection: str
    chunks: int = 0
    llm_calls: int = 0
    llm_seconds: float = 0.0
    cache_hits: int = 0
    embed_seconds: float = 0.0
    index_seconds: float = 0.0
    retrieval_seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


class MemoEmbedder:
    """Embeds each distinct text once (twin manuals share most text); times the model."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self.seconds = 0.0
        self._memo: dict[str, np.ndarray] = {}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        fresh = list(dict.fromkeys(t for t in texts if t not in self._memo))
        if fresh:
            started = time.perf_counter()
            vectors = self.embedder.embed(fresh)
            self.seconds += time.perf_counter() - started
            self._memo.update(zip(fresh, vectors, strict=True))
        if not texts:
            return np.zeros((0, self.embedder.dimension), dtype=np.float32)
        return np.stack([self._memo[t] for t in texts])


# --------------------------------------------------------------------------- indexing
def collection_name(
    subset: str, method: str, variant: str = "", structure: str = "headings"
) -> str:
    """chop's default settings keep the plain name the options benchmark reads; other variants
    (continuity mode, gate band, joint extraction) and the plain-text structure get their own
    collection so they do not overwrite it."""
    suffix = f"_{variant}" if method == "chop" and variant else ""
    suffix += "_txt" if structure == "none" else ""
    return re.sub(r"[^a-z0-9_]", "_", f"bench_{subset}_{method}{suffix}".lower())


def method_label(method: str, structure: str) -> str:
    """The row name: the method, marked when it ran on the plain-text copy."""
    return method if structure == "headings" else f"{method} (.txt)"


def chop_variant(ctx: Context) -> str:
    parts: list[str] = [ctx.continuity_mode] if ctx.continuity_mode != "gate" else []
    if ctx.continuity_mode != "llm" and (ctx.gate_low, ctx.gate_high) != GATE_BAND:
        parts.append(f"band_{ctx.gate_low:g}_{ctx.gate_high:g}")
    return "_".join(parts + (["joint"] if ctx.joint_extraction else []))


def chunk_prefix(method: str, document: SourceDocument, start: int, end: int) -> str:
    """The no-LLM prefixes: none, ``title | ``, or ``title | heading path | `` (the heading the
    loader gave the chunk's span; ``title | `` where the document has none)."""
    if method in ("naive", "cosine"):
        return ""
    if method == "naive_title":
        return f"{document['title']} | "
    if method == "title_heading":
        heading = span_meta_at(document["spans"], start, end).get("heading")
        return f"{document['title']} | {heading} | " if heading else f"{document['title']} | "
    raise ValueError(f"{method!r} has no rule-made prefix")


def write_rows(
    store: Store,
    collection: str,
    document: SourceDocument,
    spans: Sequence[TextSpan],
    prefixes: Sequence[str],
    vectors: np.ndarray,
    method: str,
) -> None:
    """Store one document's chunks as plain rows (no CNM): prefix + text was embedded; each row
    keeps the loader's span metadata (pages, heading) as chop's split node does."""
    rows = [
        chunk_row(
            chunk,
            prefix=prefix,
            cnm=NO_CNM,
            cnm_source="none",
            continuity="none",
            embedding_key=content_hash(prefix + chunk["text"]),
            embedding=vectors[chunk["index"]],
        )
        for chunk, prefix in zip(chunks_at(document, spans), prefixes, strict=True)
    ]
    record = DocumentRecord(
        doc_id=document["doc_id"],
        title=document["title"],
        source=document["source"],
        fingerprint=content_hash(document["text"]),
        chunk_count=len(rows),
        metadata={**document["metadata"], "bench_method": method},
    )
    store.replace_document(collection, record, rows)


SpanFn = Callable[[SourceDocument, MemoEmbedder], list[TextSpan]]


def index_plain(
    ctx: Context,
    store: Store,
    collection: str,
    documents: Sequence[SourceDocument],
    method: str,
    memo: MemoEmbedder,
) -> IndexStats:
    """Chunk each document (token windows, or cosine for ``cosine``), embed prefix + chunk
    text, write the rows; no LLM."""
    started, embed_before = time.perf_counter(), memo.seconds
    store.drop_collection(collection)
    store.ensure_collection(collection, memo.embedder.dimension)
    tokenizer = memo.embedder.tokenizer
    chunks = 0
    for document in documents:
        text = document["text"]
        if method == "cosine":
            spans = cosine_spans(text, tokenizer, memo.embed, ctx.chunk_tokens, COSINE_THRESHOLD)
        else:
            spans = naive_spans(text, tokenizer, ctx.chunk_tokens, ctx.chunk_overlap)
        prefixes = [chunk_prefix(method, document, s.start, s.end) for s in spans]
        vectors = memo.embed(
            [p + text[s.start : s.end] for p, s in zip(prefixes, spans, strict=True)]
        )
        write_rows(store, collection, document, spans, prefixes, vectors, method)
        chunks += len(spans)
    log(f"  {method}: {len(documents)} document(s), {chunks} chunks")
    return IndexStats(
        method,
        collection,
        chunks=chunks,
        embed_seconds=memo.seconds - embed_before,
        index_seconds=time.perf_counter() - started,
    )


def index_chop(
    ctx: Context, store: Store, collection: str, documents: Sequence[SourceDocument]
) -> IndexStats:
    """The real CHOP ingest graph; LLM costs come from the run's stats."""
    from chop_rag.api import ingest

    started = time.perf_counter()
    store.drop_collection(collection)
    progress = {"llm": 0}

    def on_event(event: dict[str, Any]) -> None:
        if event.get("event") == "llm":
            progress["llm"] += 1
            if progress["llm"] % 50 == 0:
                log(f"  chop: {progress['llm']} LLM decisions")
        elif event.get("event") == "stored":
            log(f"  chop: {event.get('doc_id')}: {event.get('chunks')} chunks")

    report = ingest(
        documents=list(documents),
        context=ctx.with_overrides(collection=collection),
        on_event=on_event,
    )
    for problem in report.get("problems", []):
        log(f"  chop: problem: {problem.get('source')}: {problem.get('reason')}")
    stats = report.get("stats", {})
    return IndexStats(
        "chop",
        collection,
        chunks=int(report.get("chunks_stored", stats.get("chunks", 0))),
        llm_calls=int(stats.get("llm_calls", 0)),
        llm_seconds=float(stats.get("llm_seconds", 0)),
        cache_hits=int(stats.get("cache_hits", 0)),
        embed_seconds=float(stats.get("embed_seconds", 0)),
        index_seconds=time.perf_counter() - started,
        extra={
            "stats": stats,
            "continuity_mode": ctx.continuity_mode,
            "joint_extraction": ctx.joint_extraction,
            "gate": [ctx.gate_low, ctx.gate_high],
            "chat_model": chat_model_identity(ctx),
        },
    )


def build_index(
    method: str,
    ctx: Context,
    store: Store,
    collection: str,
    documents: Sequence[SourceDocument],
    memo: MemoEmbedder | None = None,
) -> IndexStats:
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r} ({' | '.join(METHODS)})")
    if method == "chop":
        return index_chop(ctx, store, collection, documents)
    return index_plain(
        ctx, store, collection, documents, method, memo or MemoEmbedder(get_embedder(ctx))
    )


def retrieval_of(method: str) -> str:
    """How a method's questions are searched: chop through its answer-time retrieval."""
    return CHOP_RETRIEVAL if method == "chop" else PLAIN_RETRIEVAL


def retrieval_setup(k: int) -> str:
    """A report's line on how all methods' questions are searched."""
    return f"top {k}; chop: {CHOP_RETRIEVAL}; baselines: {PLAIN_RETRIEVAL}"


def search_questions(
    ctx: Context,
    store: Store,
    collection: str,
    method: str,
    texts: Sequence[str],
    k: int = SEARCH_K,
) -> tuple[list[list[Hit]], list[list[str]], float]:
    """Top ``k`` chunks per question, the documents chop resolved each question to (empty
    for plain search), and the seconds spent. ``chop`` goes through
    chop_rag.retrieval.retrieve.retrieve_for_question with the default Context (the document the
    question names is matched and boosted); the baselines through plain vector search."""
    started = time.perf_counter()
    hits: list[list[Hit]] = []
    resolved: list[list[str]] = []
    if method == "chop":  # retrieve_for_question embeds the question it searches for
        answer_ctx = ctx.with_overrides(collection=collection)
        for text in texts:
            found = retrieve_for_question(answer_ctx, store, text, get_embedder(ctx), k=k)
            hits.append(found.hits)
            resolved.append(list(found.documents))
    else:
        for vector in embed_queries(get_embedder(ctx), list(texts)):
            hits.append(store.search(collection, vector, k))
            resolved.append([])
    return hits, resolved, time.perf_counter() - started


# --------------------------------------------------------------------------- evaluation
def overlaps(start: int, end: int, manual: Manual, gold: GoldMatch) -> bool:
    return any(
        start < manual.sections[i].end and manual.sections[i].start < end for i in gold.sections
    )


def relevant_in_collection(store: Store, collection: str, manual: Manual, gold: GoldMatch) -> int:
    chunks = store.chunks(collection, manual.doc_id)
    return sum(overlaps(c["char_start"], c["char_end"], manual, gold) for c in chunks)


def tie_orders(top: list[dict[str, Any]], doc_id: str, k: int) -> dict[str, list[dict[str, Any]]]:
    """The first ``k`` in the store's order, and with equal scores ordered against / for the
    gold (irrelevant and wrong-device chunks first / last): bounds on what tie-breaking does."""

    def against(t: dict[str, Any]) -> tuple[float, bool, bool]:
        return (-t["score_exact"], t["relevant"], t["doc_id"] == doc_id)

    def favour(t: dict[str, Any]) -> tuple[float, bool, bool]:
        return (-t["score_exact"], not t["relevant"], t["doc_id"] != doc_id)

    return {
        "store": top[:k],
        "ties_against_gold": sorted(top, key=against)[:k],
        "ties_for_gold": sorted(top, key=favour)[:k],
    }


def question_record(
    question: Question,
    gold: GoldMatch,
    manual: Manual,
    hits: Sequence[Hit],
    n_relevant: int,
    resolved: Sequence[str] = (),
) -> dict[str, Any]:
    """Ranks of one question; ``hits`` may run past TOP_K so tie groups at the cut are seen."""
    found = [
        {
            "doc_id": h.doc_id,
            "chunk_index": h.chunk_index,
            "char_start": h.char_start,
            "char_end": h.char_end,
            "score_exact": h.score,
            "relevant": h.doc_id == manual.doc_id
            and overlaps(h.char_start, h.char_end, manual, gold),
        }
        for h in hits
    ]
    orders = tie_orders(found, manual.doc_id, TOP_K)
    top = [
        {**{k: v for k, v in t.items() if k != "score_exact"}, "score": round(t["score_exact"], 6)}
        for t in orders["store"]
    ]
    relevant = [t["relevant"] for t in top]
    return {
        "qid": question.qid,
        "device": question.device,
        "group": question.group,
        "gold_how": gold.how,
        "resolved_to_gold": manual.doc_id in resolved if resolved else None,
        "first_relevant_rank": first_relevant_rank(relevant),
        "n_relevant": n_relevant,
        "doc_at_1": bool(top) and top[0]["doc_id"] == manual.doc_id,
        "tied_at_1": bool(found)
        and any(
            t["score_exact"] == found[0]["score_exact"] and t["doc_id"] != found[0]["doc_id"]
            for t in found
        ),
        "orders": {
            name: {
                "relevant": [t["relevant"] for t in ranked],
                "doc_at_1": bool(ranked) and ranked[0]["doc_id"] == manual.doc_id,
            }
            for name, ranked in orders.items()
        },
        "top": top,
    }


def summarize(records: Sequence[dict[str, Any]], order: str = "store") -> dict[str, float]:
    """Mean Hit@K, MRR@K, NDCG@K and Doc@1 over the questions, ranked in ``order``."""
    ranked = [r["orders"][order] for r in records]
    flags = [o["relevant"] for o in ranked]
    summary: dict[str, float] = {"questions": len(records)}
    for k in KS:
        summary[f"hit@{k}"] = mean([hit_at_k(f, k) for f in flags])
        summary[f"mrr@{k}"] = mean([mrr_at_k(f, k) for f in flags])
        summary[f"ndcg@{k}"] = mean(
            [ndcg_at_k(f, k, r["n_relevant"]) for f, r in zip(flags, records, strict=True)]
        )
    summary["doc@1"] = mean([float(o["doc_at_1"]) for o in ranked])
    summary["tied@1"] = mean([float(r["tied_at_1"]) for r in records])
    return summary


def groups(records: Sequence[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """All questions, the exactly matched ones (README's reference), and one group per device."""
    found = {
        "all": list(records),
        "exact gold": [r for r in records if r["gold_how"] in ("exact", "normalised")],
    }
    for key in ("group", "device"):
        names = list(dict.fromkeys(r[key] for r in records))
        if len(names) > 1:
            for name in names:
                found[name] = [r for r in records if r[key] == name]
    return found


# --------------------------------------------------------------------------- answers
def bertscore_available() -> str | None:
    """A local BERTScore model folder (CHOP_BERTSCORE_MODEL) when bert_score is importable."""
    try:
        import bert_score  # noqa: F401
    except ImportError:
        return None
    path = os.environ.get("CHOP_BERTSCORE_MODEL", "")
    return path if path and Path(path).is_dir() else None


def bertscore(predictions: list[str], golds: list[str], model_dir: str) -> list[float]:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never download: the folder must be local
    from bert_score import score

    layers = int(os.environ.get("CHOP_BERTSCORE_LAYERS", "9"))
    _, _, f1 = score(predictions, golds, model_type=model_dir, num_layers=layers)
    return [float(v) for v in f1]


def answer_questions(
    ctx: Context, collection: str, questions: Sequence[Question]
) -> dict[str, Any]:
    """Answer with chop's answer graph (k=5) over one method's collection; F1 and ROUGE-L."""
    from chop_rag.api import ask

    started = time.perf_counter()
    rows: list[dict[str, Any]] = []
    for question in questions:
        result = ask(question.templated, context=ctx.with_overrides(collection=collection, k=5))
        answer = str(result.get("answer", ""))
        rows.append(
            {
                "qid": question.qid,
                "answer": answer,
                "f1": token_f1(answer, question.answer),
                "rouge_l": rouge_l(answer, question.answer),
            }
        )
    summary: dict[str, Any] = {
        "questions": len(rows),
        "f1": mean([r["f1"] for r in rows]),
        "rouge_l": mean([r["rouge_l"] for r in rows]),
        "seconds": time.perf_counter() - started,
        "bertscore": NO_BERTSCORE,
    }
    model_dir = bertscore_available()
    if model_dir and rows:
        scores = bertscore([r["answer"] for r in rows], [q.answer for q in questions], model_dir)
        for row, value in zip(rows, scores, strict=True):
            row["bertscore"] = value
        summary["bertscore"] = mean(scores)
    return {"summary": summary, "per_question": rows}


# --------------------------------------------------------------------------- the run
def map_gold(corpus: Corpus) -> tuple[list[tuple[Question, GoldMatch]], dict[str, Any]]:
    """Gold sections of every question; questions without gold are excluded and reported."""
    mapped: list[tuple[Question, GoldMatch]] = []
    counts = {"exact": 0, "normalised": 0, "parent": 0, "none": 0}
    by_group: dict[str, dict[str, int]] = {}
    excluded: list[str] = []
    for question in corpus.questions:
        gold = match_gold(question.section_path, corpus.manual(question.device).sections)
        counts[gold.how] += 1
        group = by_group.setdefault(question.group, dict.fromkeys(counts, 0))
        group[gold.how] += 1
        if gold.how == "none":
            excluded.append(question.qid)
        else:
            mapped.append((question, gold))
    multiple = [q.qid for q, g in mapped if len(g.sections) > 1]
    report = {
        "counts": counts,
        "by_group": by_group,
        "fallback_to_parent": counts["parent"],
        "no_gold_excluded": excluded,
        "several_gold_sections": multiple,
    }
    return mapped, report


def evaluate_method(
    method: str,
    ctx: Context,
    store: Store,
    subset: str,
    corpus: Corpus,
    mapped: Sequence[tuple[Question, GoldMatch]],
    answers: int,
    structure: str = "headings",
    memo: MemoEmbedder | None = None,
) -> dict[str, Any]:
    collection = collection_name(subset, method, chop_variant(ctx), structure)
    log(
        f"{method_label(method, structure)}: indexing {len(corpus.manuals)} manual(s) "
        f"into {collection}"
    )
    documents = [m.document(structure) for m in corpus.manuals]
    stats = build_index(method, ctx, store, collection, documents, memo)
    questions = [q for q, _ in mapped]
    hits, resolved, stats.retrieval_seconds = search_questions(
        ctx, store, collection, method, [q.templated for q in questions]
    )
    counts: dict[tuple[str, tuple[int, ...]], int] = {}
    records = []
    for (question, gold), found, names in zip(mapped, hits, resolved, strict=True):
        manual = corpus.manual(question.device)
        key = (manual.doc_id, gold.sections)
        if key not in counts:
            counts[key] = relevant_in_collection(store, collection, manual, gold)
        records.append(question_record(question, gold, manual, found, counts[key], names))
    result: dict[str, Any] = {
        "collection": collection,
        "method": method,
        "structure": structure,
        "retrieval": retrieval_of(method),
        "costs": asdict(stats),
        # Headline: equal scores ordered against the gold device. A user gets one of two
        # identical chunks with no say in which; the store's own order is in tie_bounds.
        "metrics": summarize(records, "ties_against_gold"),
        "tie_bounds": {
            order: summarize(records, order)
            for order in ("ties_against_gold", "ties_for_gold", "store")
        },
        "groups": {
            name: summarize(rs, "ties_against_gold") for name, rs in groups(records).items() if rs
        },
        "per_question": records,
    }
    if answers > 0:
        log(f"{method}: answering {min(answers, len(questions))} question(s) with the LLM")
        result["answers"] = answer_questions(ctx, collection, questions[:answers])
    log(
        f"{method_label(method, structure)}: {stats.chunks} chunks, index "
        f"{stats.index_seconds:.1f} s, "
        f"Hit@10 {result['metrics']['hit@10']:.2f}"
    )
    return result


def settings(args: argparse.Namespace, ctx: Context, data: Path) -> dict[str, Any]:
    embedder = get_embedder(ctx)
    database = (
        "CHOP_DATABASE_URL (not recorded)"
        if ctx.database_url
        else (f"embedded PostgreSQL in {Path(ctx.data_dir).resolve()}")
    )
    return run_header(
        args.subset,
        data,
        embedder.name,
        methods=args.methods,
        structures=args.structure,
        dimension=embedder.dimension,
        chunk_tokens=ctx.chunk_tokens,
        chunk_overlap=ctx.chunk_overlap,
        cosine_threshold=COSINE_THRESHOLD,
        question_template=QUESTION_TEMPLATE,
        retrieval=retrieval_setup(TOP_K),
        ks=list(KS),
        continuity_mode=ctx.continuity_mode,
        joint_extraction=ctx.joint_extraction,
        gate=[ctx.gate_low, ctx.gate_high],
        use_cache=ctx.use_cache,
        answers=args.answers,
        database=database,
        ties=TIE_NOTE,
    )


def run(args: argparse.Namespace) -> dict[str, Any]:
    from bench.report import write_outputs

    data = resolve_data(args.data)
    corpus = load_subset(data, args.subset)
    for line in corpus.skipped:
        log(f"skipped manual {line}")
    for note in corpus.notes:
        log(f"note: {note}")
    mapped, gold_report = map_gold(corpus)
    log(
        f"gold: {gold_report['counts']} (parent fallback {gold_report['fallback_to_parent']}, "
        f"excluded without gold {len(gold_report['no_gold_excluded'])})"
    )
    ctx = Context().with_overrides(
        continuity_mode=args.continuity_mode,
        joint_extraction=True if args.joint_extraction else None,
        use_cache=False if args.no_cache else None,
    )
    store = store_for(ctx)
    results: dict[str, Any] = {
        "settings": settings(args, ctx, data),
        "corpus": {
            "manuals": [
                {
                    "device": m.device,
                    "title": m.title,
                    "doc_id": m.doc_id,
                    "sections": len(m.sections),
                    "chars": len(m.text),
                }
                for m in corpus.manuals
            ],
            "skipped": corpus.skipped,
            "notes": corpus.notes,
            "questions": len(corpus.questions),
        },
        "gold": gold_report,
        "methods": {},
    }
    for structure in args.structure:
        for method in args.methods:
            results["methods"][method_label(method, structure)] = evaluate_method(
                method, ctx, store, args.subset, corpus, mapped, args.answers, structure
            )
    out = Path(args.out) / args.subset
    table = write_outputs(results, out)
    print(table)
    log(f"wrote {out / 'results.json'}, {out / 'results.md'}, {out / 'chart.png'}")
    return results


def resolve_data(value: str | None) -> Path:
    return Path(value or os.environ.get("CHOP_EMANUAL_DATA") or DEFAULT_DATA)


def comma_choices(value: str, choices: Sequence[str], what: str) -> list[str]:
    """The comma-separated ``value`` as a list without repeats, each one of ``choices``."""
    chosen = [v.strip() for v in value.split(",") if v.strip()]
    unknown = [v for v in chosen if v not in choices]
    if unknown or not chosen:
        raise argparse.ArgumentTypeError(
            f"unknown {what}(s) {', '.join(unknown) or '(none)'}; choose from {', '.join(choices)}"
        )
    return list(dict.fromkeys(chosen))


def parse_methods(value: str) -> list[str]:
    return comma_choices(value, METHODS, "method")


def parse_structures(value: str) -> list[str]:
    return comma_choices(value, STRUCTURES, "structure")


def parser() -> argparse.ArgumentParser:
    p = script_parser("bench.emanual", __doc__)
    p.add_argument("--subset", choices=SUBSETS, default="pair")
    p.add_argument(
        "--methods",
        type=parse_methods,
        default=list(DEFAULT_METHODS),
        help=f"comma-separated: {', '.join(METHODS)} (naive_title: windows embedded as "
        "'<title> | chunk'; title_heading: '<title> | <heading path> | chunk')",
    )
    p.add_argument(
        "--structure",
        type=parse_structures,
        default=list(STRUCTURES),
        help="comma-separated: headings (the JSON through chop's loader, the default path), "
        "none (the same text as a .txt: no headings); default both",
    )
    p.add_argument(
        "--continuity-mode",
        choices=("llm", "gate", "rules"),
        default=None,
        help="chop's continuity mode (default: CHOP_CONTINUITY_MODE or 'gate'; the paper: 'llm')",
    )
    p.add_argument(
        "--joint-extraction",
        action="store_true",
        help="chop: the LLM judgment also labels the chunk (Context.joint_extraction)",
    )
    p.add_argument(
        "--answers",
        type=int,
        default=0,
        help="answer the first N questions with the LLM and score them (slow)",
    )
    p.add_argument("--out", default=str(DEFAULT_OUT), help="results go to OUT/<subset>/")
    p.add_argument("--no-cache", action="store_true", help="do not reuse cached LLM outputs")
    add_data_argument(p, "E-Manual QA", "CHOP_EMANUAL_DATA", "emanual-qa")
    return p


main = script_main(parser, run, expected=(DataMissing, ModelUnavailable))


if __name__ == "__main__":
    sys.exit(main())
