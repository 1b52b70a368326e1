"""The figure path alone on FinanceBench dev and wide: each question's evidence pages read
straight from its PDF, no ingest, no retrieval, no LLM.

    python -m bench.figures                  # both sets: bench/results/figures/results.{json,md}
    python -m bench.figures --subsets dev    # the set tuned on only

For every question whose reference answer holds a figure, the table rows of its evidence
pages (and the page before and after each, where a statement's header or its later rows are
printed) are read by chop_rag.answers.statement_rows.table_rows, and the question is answered by
chop_rag.answers.formulas.compute, as the product's answer path does once retrieval has found
those pages. Each question lands in one cause: ``right`` (every figure of the reference is
in the answer within 1%, bench.metrics.numeric_match), ``wrong figure`` (a figure computed,
not the reference's), ``missing input`` (a line item the metric needs was not found in the
rows: the answer names it), ``not a statement figure`` (the question asks for no metric or
line item the code reads: a segment, a non-GAAP measure, a count, prose). Seconds, not the
hour of an ingest; it isolates the statements' reading from retrieval (bench.filings
measures the whole path).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Any

from bench.emanual import DEFAULT_OUT
from bench.finance import SUBSETS, FinDataMissing, check_data
from bench.metrics import numeric_match
from bench.report import comma_list, dated, log, md_table, page, script_main, script_parser
from chop_rag.answers.formulas import compute
from chop_rag.answers.statement_rows import Row, table_rows
from chop_rag.reading.loaders import load_file

CAUSES = ("right", "wrong figure", "missing input", "not a statement figure")


def pdf_pages(path: Path) -> dict[int, str]:
    """A PDF's text by 1-based page, as chop's loader reads it."""
    (document,) = load_file(path)
    pages: dict[int, str] = {}
    for span in document["spans"]:
        number = span["meta"].get("page")
        if number is not None:
            text = document["text"][span["start"] : span["end"]]
            pages[int(number)] = pages.get(int(number), "") + text
    return pages


def evidence_rows(
    question: dict[str, Any], root: Path, cache: dict[str, dict[int, str]]
) -> list[Row]:
    """The table rows of a question's evidence pages and of the pages either side."""
    rows: list[Row] = []
    source = 0
    for evidence in question.get("evidence", []):
        doc = str(evidence.get("doc_name") or question["doc_name"])
        if doc not in cache:
            cache[doc] = pdf_pages(root / "pdfs" / f"{doc}.pdf")
        page_number = int(evidence["evidence_page_num"]) + 1
        for number in (page_number, page_number - 1, page_number + 1):
            if number in cache[doc]:
                source += 1
                rows += table_rows(cache[doc][number], source, [number])
    return rows


def cause(answer: str | None, value: float | None, missing: list[str], reference: str) -> str:
    if answer is None:
        return "not a statement figure"
    if value is None:
        return "missing input" if missing else "not a statement figure"
    return "right" if numeric_match(answer, reference) else "wrong figure"


def run_subset(name: str) -> dict[str, Any]:
    root = SUBSETS[name][0]
    check_data(root)
    cache: dict[str, dict[int, str]] = {}
    records = []
    for line in (root / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        question = json.loads(line)
        reference = str(question["answer"])
        if numeric_match("", reference) is None:
            continue  # the reference holds no figure
        computed = compute(question["question"], evidence_rows(question, root, cache))
        answer = computed.text if computed is not None else None
        value = computed.value if computed is not None else None
        missing = computed.missing if computed is not None else []
        records.append(
            {
                "qid": question["financebench_id"],
                "question": question["question"],
                "reference": reference,
                "answer": answer,
                "cause": cause(answer, value, missing, reference),
            }
        )
        log(f"{name} {question['financebench_id']}: {records[-1]['cause']}")
    counts = Counter(r["cause"] for r in records)
    return {"summary": {"questions": len(records), **{c: counts[c] for c in CAUSES}},
            "per_question": records}  # fmt: skip


def run(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "settings": dated({"subsets": args.subsets}),
        "subsets": {name: run_subset(name) for name in args.subsets},
    }


def markdown(results: dict[str, Any]) -> str:
    rows = [
        [name, s["questions"], *(s[c] for c in CAUSES),
         f"{s['right'] / s['questions']:.3f}" if s["questions"] else "-"]
        for name, sub in results["subsets"].items()
        for s in [sub["summary"]]
    ]  # fmt: skip
    misses = [
        [name, r["qid"], r["cause"], r["question"][:80].replace("|", "/"),
         r["reference"][:60].replace("|", "/"), (r["answer"] or "-")[:90].replace("|", "/")]
        for name, sub in results["subsets"].items()
        for r in sub["per_question"]
        if r["cause"] != "right"
    ]  # fmt: skip
    return page(
        "The figure path on the evidence pages — FinanceBench dev and wide",
        f"{results['settings']['date']} · rows read by chop_rag.answers.statement_rows from each "
        "question's evidence pages (± 1 page), answered by chop_rag.answers.formulas.compute; no "
        "ingest, no retrieval, no LLM.",
        md_table(["subset", "figure questions", *CAUSES, "right share"], rows),
        "## Questions not right, by cause",
        md_table(["subset", "qid", "cause", "question", "reference", "answer"], misses)
        if misses
        else "(none)",
    )


def parser() -> argparse.ArgumentParser:
    p = script_parser("bench.figures", __doc__)
    p.add_argument("--subsets", type=comma_list, default=list(SUBSETS), help="dev,wide")
    p.add_argument(
        "--out", type=Path, default=DEFAULT_OUT / "figures", help="results.{json,md} go here"
    )
    return p


main = script_main(parser, run, markdown=markdown, expected=(FinDataMissing,))

if __name__ == "__main__":
    raise SystemExit(main())
