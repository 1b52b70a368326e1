"""Answer quality on the product path: ``chop_rag.api.ask`` with default settings, over collections
that ``chop_rag.api.ingest`` (what ``chop ingest`` runs) builds from the real files.

    python -m bench.answers                                  # every set
    python -m bench.answers --sets emanual,remote --limit 20 # a quick look

Sets (results in bench/results/answers/results.{json,md}):
- ``emanual``: the S10 and TV questions (50 + 50) with their reference answers, asked in one
  collection of 12 manuals (the S10, the TV e-manual and ten other Galaxy manuals, the S9/S9+
  and Note10/10+ twins among them), each question naming its device in one of four phrasings a
  user would write (PHRASINGS, in turn). The S10 and TV files are given the names a user would
  give them (USER_FILE_NAMES); the others keep theirs.
- ``remote``: smart_remote_QA (Normal, Paraphrased, Compound, Yes/No), ``--remote-per-kind``
  questions of each kind (0: all 684), in the same collection, reported per kind.
- ``fin-dev`` / ``fin-wide``: FinanceBench dev (31) and wide (36) questions as written, each in
  its own collection of that set's filings.

Per set: ROUGE-L F1 and token F1 against the reference answer, the share declined, citation
validity (the cited sources hold at least 80% of the answer's content words), seconds per
answer p50/p95; for Yes/No references the share whose answer opens with the right yes/no; for
filings numeric match (every figure of the reference in the answer within 1%, a percentage
as a percentage) and whether a cited source is an evidence filing. Baselines of the same run:
the top source's text as the answer, the gold section (E-Manual: the ceiling of an extractive
answer) and, with ``--previous``, the generator before this benchmark (bench/previous_generate.md:
the model writes the answer from five sources). Answers are not read from the LLM cache.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from bench.emanual import DEFAULT_OUT
from bench.emanual_data import (
    OTHER_CORPORA,
    S10_CORPUS,
    S10_DEVICE,
    S10_QUESTIONS,
    TV_CORPUS,
    TV_QUESTIONS,
    Question,
    build_manual,
    load_questions,
    load_remote_questions,
    match_gold,
)
from bench.finance import load_fin_questions
from bench.metrics import (
    mean,
    numeric_match,
    rouge_l,
    supported_share,
    token_f1,
    yes_no_of,
)
from bench.report import REPO_ROOT, add_only_argument, cell, log, md_table, script_main
from chop_rag.answers.answering import UNSAID
from chop_rag.config import Context
from chop_rag.models.llm import chat_messages, structured_call
from chop_rag.state import AnswerOutput, Source
from chop_rag.store import store_for

EMANUAL_DATA = REPO_ROOT.parent / "shared" / "data" / "emanual-qa"
FIN_DATA = {
    "fin-dev": REPO_ROOT.parent / "shared" / "data" / "financebench-dev",
    "fin-wide": REPO_ROOT.parent / "shared" / "data" / "financebench-wide",
}
SETS = ("emanual", "remote", "fin-dev", "fin-wide")
TV_DEVICE_NAME = "Samsung Smart TV"
USER_FILE_NAMES = {S10_CORPUS: "Galaxy_S10.json", TV_CORPUS: "Samsung_Smart_TV.json"}
OTHER_MANUALS = (
    "Galaxy_Note_10",
    "Galaxy_Note_10+",
    "Galaxy_S9",
    "Galaxy_S9+",
    "Galaxy_A50",
    "Galaxy_A51",
    "Galaxy_Tab_S6",
    "Galaxy_Tab_S5e",
    "Galaxy_Z_Flip",
    "Galaxy_Z_Fold",
)
PHRASINGS = (
    "[{device}] {question}",
    "{bare} on my {device}?",
    "I have a {device}. {question}",
    "{device}: {question}",
)
SUPPORTED = 0.8  # citation validity: this share of the answer's content words in its sources
PREVIOUS_PROMPT = Path(__file__).with_name("previous_generate.md")


def phrased(question: str, device: str, turn: int) -> str:
    """``question`` naming ``device`` in the ``turn``-th phrasing (PHRASINGS, in turn)."""
    question = " ".join(question.split())
    bare = question.rstrip(" ?.!")
    template = PHRASINGS[turn % len(PHRASINGS)]
    return template.format(device=device, question=question, bare=bare)


@dataclass(frozen=True)
class Case:
    """One question as asked, with what it is scored against."""

    set: str
    qid: str
    group: str
    asked: str
    reference: str
    gold_text: str | None = None  # the gold section (E-Manual)
    evidence_docs: tuple[str, ...] = ()  # file stems of evidence filings


# --------------------------------------------------------------------------- collections
def manual_folder(data: Path, into: Path) -> Path:
    """The 12 manuals as a user would keep them: links with user-given names in ``into``."""
    into.mkdir(parents=True, exist_ok=True)
    files = {
        USER_FILE_NAMES[S10_CORPUS]: data / S10_CORPUS,
        USER_FILE_NAMES[TV_CORPUS]: data / TV_CORPUS,
    }
    files.update({f"{name}.json": data / OTHER_CORPORA / f"{name}.json" for name in OTHER_MANUALS})
    for name, target in files.items():
        link = into / name
        if not link.exists():
            link.symlink_to(target.resolve())
    return into


def ensure_collection(ctx: Context, folder: Path, check: bool = True) -> dict[str, Any]:
    """Ingest ``folder`` into ctx.collection the way ``chop ingest`` does; unchanged documents
    cost nothing, so a second run only checks them (``check=False``: a collection that has
    documents is used as it is, without reading the files again)."""
    from chop_rag.api import ingest

    stored = store_for(ctx).documents(ctx.collection)
    if stored and not check:
        return {"collection": ctx.collection, "documents": len(stored), "checked": False}
    started = time.perf_counter()
    report = ingest([folder], context=ctx)
    return {
        "collection": ctx.collection,
        "documents": len(store_for(ctx).documents(ctx.collection)),
        "added": report.get("added"),
        "seconds": round(time.perf_counter() - started, 1),
        "llm_calls": report.get("stats", {}).get("llm_calls"),
    }


# --------------------------------------------------------------------------- cases
def emanual_cases(data: Path, limit: int | None, start: int = 0) -> list[Case]:
    """The S10 and TV questions, each naming its device in turn-wise phrasings: ``limit`` of
    each file from its ``start``-th (phrased as in a run from the first)."""
    cases: list[Case] = []
    for corpus, questions, device in (
        (S10_CORPUS, S10_QUESTIONS, S10_DEVICE),
        (TV_CORPUS, TV_QUESTIONS, TV_DEVICE_NAME),
    ):
        manual = build_manual(data / corpus)
        asked = list(enumerate(load_questions(data / questions, device)))[start:]
        for turn, question in asked[:limit]:
            gold = match_gold(question.section_path, manual.sections)
            gold_text = " ".join(
                manual.text[manual.sections[i].start : manual.sections[i].end]
                for i in gold.sections[:1]
            )
            cases.append(
                Case(
                    "emanual",
                    f"{device}/{question.qid}",
                    device,
                    phrased(question.question, device, turn),
                    question.answer,
                    gold_text or None,
                )
            )
    return cases


def remote_cases(data: Path, per_kind: int, kinds: Sequence[str] = ()) -> list[Case]:
    """smart_remote_QA's questions, ``per_kind`` of each kind (0: all), naming the TV; only
    the ``kinds`` named (all when none)."""
    by_kind: dict[str, list[Question]] = {}
    for question in load_remote_questions(data):
        if not kinds or question.group in kinds:
            by_kind.setdefault(question.group, []).append(question)
    cases: list[Case] = []
    for kind, questions in sorted(by_kind.items()):
        for turn, question in enumerate(questions[: per_kind or None]):
            asked = phrased(question.question, TV_DEVICE_NAME, turn)
            cases.append(Case("remote", question.qid, kind, asked, question.answer))
    return cases


def fin_cases(name: str, root: Path, limit: int | None, only: Sequence[str] = ()) -> list[Case]:
    """A FinanceBench set's questions as written, with their evidence filings (with ``only``:
    those whose evidence filings' names all start with one of these prefixes)."""
    answers = {
        str(row["financebench_id"]): str(row["answer"])
        for row in map(json.loads, (root / "questions.jsonl").read_text().splitlines())
    }
    return [
        Case(name, q.qid, q.question_type, q.question, answers[q.qid], None, tuple(q.doc_names))
        for q in load_fin_questions(root)[:limit]
        if not only or all(name.startswith(tuple(only)) for name in q.doc_names)
    ]


# --------------------------------------------------------------------------- answering
class PreviousReply(BaseModel):
    answer: str
    answerable: bool
    citations: list[int] = Field(max_length=8)


def previous_answer(ctx: Context, question: str, sources: Sequence[Source]) -> dict[str, Any]:
    """The generator before this benchmark: the model writes the answer from the five top
    sources (1,200 characters each), as nodes/generate.py did until then."""
    blocks = []
    for s in sources[:5]:
        about = " | ".join(x for x in (s["model"], s["category"], ", ".join(s["nouns"])) if x)
        blocks.append(f"[{s['number']}] {s['doc_title']} ({about})\n{s['text'][:1200]}")
    system, user = PREVIOUS_PROMPT.read_text(encoding="utf-8").split("## user", 1)
    messages = chat_messages(
        system.replace("## system", "").strip(),
        user.strip().format(question=question, sources="\n\n".join(blocks)),
    )
    started = time.perf_counter()
    result = structured_call(ctx, None, "answer", messages, PreviousReply)
    seconds = time.perf_counter() - started
    if result.value is None:
        return {"answer": "", "answerable": False, "citations": [], "seconds": seconds}
    return {**result.value.model_dump(), "seconds": seconds}


def scored(answer: str, reference: str) -> dict[str, float]:
    return {"rouge_l": rouge_l(answer, reference), "f1": token_f1(answer, reference)}


def ask_keeping_stats(question: str, ctx: Context) -> dict[str, Any]:
    """What ``chop_rag.api.ask`` returns (the same graph, context and run config), with the run's
    counters too: the model's seconds and what became of its short answer and verdict."""
    from chop_rag.api import run_config
    from chop_rag.graphs.answer import graph

    keys = [*AnswerOutput.__annotations__, "stats"]
    return dict(
        graph.invoke({"question": question}, context=ctx, config=run_config(ctx), output_keys=keys)
    )


def ask_case(ctx: Context, case: Case, stems: dict[str, str], previous: bool) -> dict[str, Any]:
    """One question through chop_rag.api.ask, scored with the baselines of the same retrieval."""
    started = time.perf_counter()
    result = ask_keeping_stats(case.asked, ctx)
    seconds = time.perf_counter() - started
    answer = str(result.get("answer", ""))
    sources: list[Source] = list(result.get("sources", []))
    cited = [s for s in sources if s["number"] in result.get("citations", [])]
    answered = bool(result.get("answerable"))
    stats = result.get("stats", {})
    record: dict[str, Any] = {
        "qid": case.qid,
        "group": case.group,
        "asked": case.asked,
        "answer": answer,
        "answerable": answered,
        "citations": result.get("citations", []),
        "note": result.get("answer_note", ""),  # why chop answered as it did (a verdict kept...)
        "seconds": round(seconds, 2),
        "llm_seconds": round(float(stats.get("llm_seconds", 0.0)), 2),  # the model's share
        "lead": next(  # what became of the model's short answer (lead mode): shown or dropped
            (s for s in ("backed", "unbacked", "none") if stats.get(f"answer_lead_{s}")), None
        ),
        "verdict": next(  # what became of the model's yes/no: backed, overruled, unsaid
            (
                s
                for s in ("backed", "overruled", "unsaid", "none")
                if stats.get(f"answer_verdict_{s}")
            ),
            None,
        ),
        "model_failed": bool(stats.get("answer_model_failures")),
        **scored(answer if answered else "", case.reference),
        "citation_valid": (
            supported_share(answer, [s["text"] for s in cited]) >= SUPPORTED if answered else None
        ),
        "top_chunk": scored(sources[0]["text"] if sources else "", case.reference),
        # the oracle among what retrieval found: the source whose text alone scores best
        "best_source": max(
            (scored(s["text"], case.reference) for s in sources),
            key=lambda score: score["rouge_l"],
            default=scored("", case.reference),
        ),
    }
    if case.gold_text is not None:
        record["gold_section"] = scored(case.gold_text, case.reference)
    if yes_no_of(case.reference):
        record["yes_no_right"] = yes_no_of(answer) == yes_no_of(case.reference)
        record["yes_no_unsaid"] = answer.startswith(UNSAID)  # no verdict, said so
    if case.evidence_docs:
        record["numeric"] = numeric_match(answer, case.reference)
        record["cites_evidence"] = any(stems.get(s["doc_id"]) in case.evidence_docs for s in cited)
    if previous:
        old = previous_answer(ctx, case.asked, sources)
        old_cited = [s for s in sources if s["number"] in old["citations"]]
        record["previous"] = {
            **scored(old["answer"] if old["answerable"] else "", case.reference),
            "answer": old["answer"],
            "answerable": old["answerable"],
            "seconds": round(old["seconds"], 2),
            "numeric": numeric_match(old["answer"], case.reference) if case.evidence_docs else None,
            "yes_no_right": (
                yes_no_of(old["answer"]) == yes_no_of(case.reference)
                if yes_no_of(case.reference)
                else None
            ),
        }
        record["previous"]["citation_valid"] = (
            supported_share(old["answer"], [s["text"] for s in old_cited]) >= SUPPORTED
            if old["answerable"]
            else None
        )
    log(f"  {case.set} {case.qid}: {seconds:.1f}s rouge_l {record['rouge_l']:.2f} {answer[:70]!r}")
    return record


# --------------------------------------------------------------------------- summaries
def _share(
    records: Sequence[dict[str, Any]], read: Callable[[dict[str, Any]], Any]
) -> float | None:
    values = [read(r) for r in records]
    known = [bool(v) for v in values if v is not None]
    return round(mean([float(v) for v in known]), 3) if known else None


def answer_figures(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The figures of a list of answers (chop's, or the previous generator's)."""
    seconds = sorted(r["seconds"] for r in records)
    return {
        "rouge_l": round(mean([r["rouge_l"] for r in records]), 3),
        "f1": round(mean([r["f1"] for r in records]), 3),
        "declined": _share(records, lambda r: not r["answerable"]),
        "citation_valid": _share(records, lambda r: r["citation_valid"]),
        "yes_no_right": _share(records, lambda r: r.get("yes_no_right")),
        "yes_no_unsaid": _share(records, lambda r: r.get("yes_no_unsaid")),
        "numeric": _share(records, lambda r: r.get("numeric")),
        "seconds_p50": round(statistics.median(seconds), 1) if seconds else None,
        "seconds_p95": round(seconds[int(0.95 * (len(seconds) - 1))], 1) if seconds else None,
    }


def summary(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One set's (or kind's) figures: chop's answer, then each baseline."""
    row: dict[str, Any] = {
        "questions": len(records),
        **answer_figures(records),
        "cites_evidence": _share(records, lambda r: r.get("cites_evidence")),
        "top_chunk_rouge_l": round(mean([r["top_chunk"]["rouge_l"] for r in records]), 3),
        "top_chunk_f1": round(mean([r["top_chunk"]["f1"] for r in records]), 3),
    }
    best = [r["best_source"]["rouge_l"] for r in records if "best_source" in r]
    if best:
        row["best_source_rouge_l"] = round(mean(best), 3)
    gold = [r["gold_section"] for r in records if "gold_section" in r]
    if gold:
        row["gold_section_rouge_l"] = round(mean([g["rouge_l"] for g in gold]), 3)
    old = [r["previous"] for r in records if "previous" in r]
    if old:
        row["previous"] = answer_figures(old)
    return row


def markdown(results: dict[str, Any]) -> str:
    header = [
        "set",
        "q",
        "ROUGE-L",
        "F1",
        "top chunk ROUGE-L",
        "best source ROUGE-L",
        "gold section ROUGE-L",
        "previous ROUGE-L",
        "declined",
        "citation valid",
        "yes/no right",
        "yes/no unsaid",
        "numeric",
        "cites evidence",
        "s p50",
        "s p95",
    ]
    rows = []
    for name, row in results["summaries"].items():
        previous = row.get("previous", {})
        rows.append(
            [
                name,
                row["questions"],
                row["rouge_l"],
                row["f1"],
                row["top_chunk_rouge_l"],
                cell(row.get("best_source_rouge_l")),
                cell(row.get("gold_section_rouge_l")),
                cell(previous.get("rouge_l")),
                cell(row["declined"]),
                cell(row["citation_valid"]),
                cell(row["yes_no_right"]),
                cell(row.get("yes_no_unsaid")),
                cell(row["numeric"]),
                cell(row["cites_evidence"]),
                cell(row["seconds_p50"]),
                cell(row["seconds_p95"]),
            ]
        )
    lines = [
        "# Answers on the product path (`python -m bench.answers`)",
        "",
        md_table(header, rows),
        "",
        f"Settings: {json.dumps(results['settings'])}",
        "",
        "Collections: " + json.dumps(results["collections"]),
        "",
        "best source: the retrieved source whose text alone scores best against the reference "
        "(an oracle choice among the k sources); gold section: the section the reference was "
        "written from (E-Manual).",
        "",
    ]
    old_rows = [
        [name, *(cell(row["previous"].get(key)) for key in ("rouge_l", "f1", "declined",
         "citation_valid", "yes_no_right", "numeric", "seconds_p50"))]
        for name, row in results["summaries"].items()
        if "previous" in row
    ]  # fmt: skip
    if old_rows:
        lines += [
            "Previous generator (same retrieval):",
            "",
            md_table(
                [
                    "set",
                    "ROUGE-L",
                    "F1",
                    "declined",
                    "citation valid",
                    "yes/no right",
                    "numeric",
                    "s p50",
                ],
                old_rows,
            ),
            "",
        ]
    return "\n".join(lines)


# --------------------------------------------------------------------------- the run
def run(args: argparse.Namespace) -> dict[str, Any]:
    sets = [s.strip() for s in args.sets.split(",") if s.strip()]
    unknown = sorted(set(sets) - set(SETS))
    if unknown:
        raise SystemExit(f"unknown set(s) {unknown}; choose from {', '.join(SETS)}")
    base = Context()
    asking = base.with_overrides(use_cache=False)  # every answer pays its own model call
    collections: dict[str, Any] = {}
    records: dict[str, list[dict[str, Any]]] = {}
    cases: dict[str, list[Case]] = {}
    stems: dict[str, dict[str, str]] = {}
    if {"emanual", "remote"} & set(sets):
        folder = manual_folder(args.emanual_data, Path(tempfile.gettempdir()) / "chop-manuals")
        ctx = base.with_overrides(collection=args.manuals_collection)
        log(f"ingesting {folder} into {ctx.collection}")
        collections["manuals"] = ensure_collection(ctx, folder, not args.no_ingest)
        if "emanual" in sets:
            cases["emanual"] = emanual_cases(args.emanual_data, args.limit)
        if "remote" in sets:
            cases["remote"] = remote_cases(
                args.emanual_data,
                args.remote_per_kind,
                [k.strip() for k in args.remote_kinds.split(",") if k.strip()],
            )
    for name in ("fin-dev", "fin-wide"):
        if name in sets:
            root = FIN_DATA[name]
            ctx = base.with_overrides(collection=getattr(args, name.replace("-", "_")))
            log(f"ingesting {root / 'pdfs'} into {ctx.collection}")
            collections[name] = ensure_collection(ctx, root / "pdfs", not args.no_ingest)
            stems[name] = {str(p.resolve()): p.stem for p in (root / "pdfs").glob("*.pdf")}
            cases[name] = fin_cases(name, root, args.limit, args.only)
    for name, set_cases in cases.items():
        collection = args.manuals_collection if name in ("emanual", "remote") else (
            getattr(args, name.replace("-", "_"))
        )  # fmt: skip
        ctx = asking.with_overrides(collection=collection)
        log(f"{name}: {len(set_cases)} questions")
        records[name] = []
        args.out.mkdir(parents=True, exist_ok=True)
        with (args.out / f"{name}.jsonl").open("w", encoding="utf-8") as partial:
            for case in set_cases:  # each record as it comes: a long run keeps what it did
                record = ask_case(ctx, case, stems.get(name, {}), args.previous)
                records[name].append(record)
                partial.write(json.dumps(record, default=str) + "\n")
                partial.flush()
    summaries: dict[str, Any] = {}
    for name, set_records in records.items():
        summaries[name] = summary(set_records)
        if name == "remote":
            for kind in sorted({r["group"] for r in set_records}):
                summaries[f"remote {kind}"] = summary(
                    [r for r in set_records if r["group"] == kind]
                )
    return {
        "settings": {
            "chat_model": base.chat_model or "local default",
            "embedder": base.embedding_model or "local default",
            "k": base.k,
            "search": base.search,
            "answer": base.answer,
            "limit": args.limit,
            "remote_per_kind": args.remote_per_kind,
            "previous": args.previous,
            "only": args.only,
        },
        "collections": collections,
        "summaries": summaries,
        "per_question": records,
    }


def parser() -> argparse.ArgumentParser:
    from bench.report import script_parser

    p = script_parser("bench.answers", __doc__)
    p.add_argument("--sets", default=",".join(SETS), help="comma-separated: " + ", ".join(SETS))
    p.add_argument("--limit", type=int, default=None, help="questions per question file")
    p.add_argument("--remote-per-kind", type=int, default=25, help="0: all 684 questions")
    p.add_argument("--remote-kinds", default="", help="comma-separated kinds (Yes/No, ...)")
    p.add_argument("--previous", action="store_true", help="also run the previous generator")
    add_only_argument(
        p, "FinanceBench questions whose evidence filings start with one of these (ADOBE,NIKE)"
    )
    add_collection_arguments(p)
    p.add_argument("--fin-dev", default="answers_fin_dev", help="collection of the dev filings")
    p.add_argument("--fin-wide", default="answers_fin_wide", help="collection of the wide filings")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT / "answers")
    return p


def add_collection_arguments(p: argparse.ArgumentParser) -> None:
    """Where the manuals are read from and stored, shared with bench.studies.generators."""
    p.add_argument(
        "--no-ingest", action="store_true", help="use collections that have documents as they are"
    )
    p.add_argument("--emanual-data", type=Path, default=EMANUAL_DATA)
    p.add_argument("--manuals-collection", default="answers_manuals")


main = script_main(parser, run, markdown=markdown)


if __name__ == "__main__":
    raise SystemExit(main())
