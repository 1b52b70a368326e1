"""Question resolution on FinanceBench dev and wide, without an LLM or an index.

    python -m bench.resolution            # results in bench/results/resolution/results.{json,md}

Each filing's identity card is built exactly as ingest builds it
(chop_rag.reading.loaders.load_file, then chop_rag.labelling.profile.document_profile with no LLM
reply: file name, PDF title, first pages), read back as retrieval reads stored cards
(chop_rag.retrieval.retrieve's card_from_stored + read_cards), and every question is read
(chop_rag.questions.facts) and matched against them (chop_rag.questions.matching.resolve). Per
subset: the share of questions resolved to the right company (every document meant is the evidence's
company), to the right document (an evidence document is among those meant: company and period
right) and with the evidence in view (meant or secondary). Seconds, not the 40 minutes of an ingest:
the loaded openings are cached under CHOP_DATA_DIR (``--fresh`` reloads).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import chop_rag.reading.loaders
from bench.emanual import DEFAULT_OUT
from bench.finance import FinDataMissing, check_data, companies, company_of, load_fin_questions
from bench.report import (
    REPO_ROOT,
    comma_list,
    log,
    md_table,
    script_main,
    script_parser,
    write_report,
)
from chop_rag.config import Context
from chop_rag.labelling.cards import DocumentCard, card_from_stored, read_cards
from chop_rag.labelling.profile import COVER_CHARS, document_profile
from chop_rag.questions.facts import read_question
from chop_rag.questions.matching import Resolution, resolve
from chop_rag.reading.loaders import LoadError, load_file

SHARED = REPO_ROOT.parent / "shared" / "data"
SUBSETS = {"dev": SHARED / "financebench-dev", "wide": SHARED / "financebench-wide"}


def loader_version() -> str:
    """A digest of the loader's source: a cached opening is only as good as the loader that
    read it (titles, text order)."""
    loaders = Path(chop_rag.reading.loaders.__file__).parent
    sources = [*sorted(loaders.glob("*.py")), loaders.parent / "pdf_layout.py"]
    return hashlib.sha256(b"".join(p.read_bytes() for p in sources)).hexdigest()[:8]


def opening(path: Path, cache: Path, fresh: bool) -> dict[str, Any] | None:
    """What ingest reads of a PDF for its card (source, title, metadata, first COVER_CHARS
    characters), through the real loader; cached by the file's bytes and the loader's code."""
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    cached = cache / f"{path.stem}-{digest}-{loader_version()}.json"
    if cached.is_file() and not fresh:
        loaded: dict[str, Any] = json.loads(cached.read_text())
        return loaded
    try:
        (document,) = load_file(path)
    except LoadError as err:
        log(f"  skipped {path.name}: {err}")
        return None
    kept = {
        "source": document["source"],
        "title": document["title"],
        "metadata": {"identity": document["metadata"].get("identity") or {}},
        "text": document["text"][:COVER_CHARS],
        "digest": digest,
    }
    cache.mkdir(parents=True, exist_ok=True)
    cached.write_text(json.dumps(kept))
    log(f"  loaded {path.name}")
    return kept


def subset_cards(root: Path, cache: Path, fresh: bool) -> tuple[list[DocumentCard], dict[str, str]]:
    """(cards keyed by file stem, stem → the first stem of byte-identical files)."""
    cards: list[DocumentCard] = []
    same_file: dict[str, str] = {}
    first_of: dict[str, str] = {}
    for path in sorted((root / "pdfs").glob("*.pdf")):
        document = opening(path, cache, fresh)
        if document is None:
            continue
        same_file[path.stem] = first_of.setdefault(document["digest"], path.stem)
        profile = document_profile(document, None)
        cards.append(
            card_from_stored(
                path.stem, profile.get("identity") or {}, document["title"], profile["model"]
            )
        )
    return read_cards(cards), same_file


def record(
    question: Any, resolution: Resolution, same: dict[str, str], known: dict[str, str]
) -> dict[str, Any]:
    evidence = {same.get(n, n) for n in question.doc_names}
    meant = {same.get(d, d) for d in resolution.documents}
    in_view = meant | {same.get(d, d) for d in resolution.secondary}
    company = company_of(next(iter(sorted(question.doc_names))), known)
    return {
        "qid": question.qid,
        "question": question.question,
        "evidence": sorted(question.doc_names),
        "documents": list(resolution.documents),
        "secondary": list(resolution.secondary),
        "label": resolution.label,
        "unknown": resolution.unknown,
        "why": list(resolution.why),
        "right_company": bool(meant) and all(company_of(d, known) == company for d in meant),
        "right_document": bool(evidence & meant),
        "in_view": bool(evidence & in_view),
        "single": len(meant) == 1,
    }


def summary(records: Sequence[dict[str, Any]]) -> dict[str, float]:
    n = len(records) or 1
    return {
        "questions": len(records),
        "right_company": sum(r["right_company"] for r in records) / n,
        "right_document": sum(r["right_document"] for r in records) / n,
        "in_view": sum(r["in_view"] for r in records) / n,
        "declined": sum(bool(r["unknown"]) for r in records) / n,
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    data_dir = Path(os.environ.get("CHOP_DATA_DIR") or Context().data_dir)
    cache = data_dir / "bench-openings"
    results: dict[str, Any] = {"subsets": {}}
    for name in args.subsets:
        root = SUBSETS[name]
        check_data(root)
        log(f"{name}: cards of {root}")
        cards, same = subset_cards(root, cache, args.fresh)
        known = companies(root)
        loaded = set(same)
        questions = [q for q in load_fin_questions(root) if q.doc_names <= loaded]
        records = [
            record(q, resolve(read_question(q.question), cards), same, known) for q in questions
        ]
        results["subsets"][name] = {
            "summary": summary(records),
            "cards": [
                {
                    "doc": c.doc_id,
                    "label": c.filing_label or c.product_model,
                    "title": c.display_title,
                    "names": list(c.names),
                    "acronyms": list(c.acronyms),
                    "period_end": c.period_end.isoformat() if c.period_end else None,
                }
                for c in cards
            ],
            "per_question": records,
        }
    text = markdown(results)
    write_report(Path(args.out) / "resolution", "results", json.dumps(results, indent=1), text)
    print(text)
    return results


HEADER = ["subset", "n", "right company", "right document", "evidence in view", "declined"]


HEADER = ["subset", "n", "right company", "right document", "evidence in view", "declined"]


def markdown(results: dict[str, Any]) -> str:
    rows = [
        [name, int(s["questions"]), f"{s['right_company']:.3f}", f"{s['right_document']:.3f}",
         f"{s['in_view']:.3f}", f"{s['declined']:.3f}"]
        for name, r in results["subsets"].items()
        for s in [r["summary"]]
    ]  # fmt: skip
    misses = [
        [name, r["qid"], r["question"][:90].replace("|", "/"), ", ".join(r["evidence"]),
         ", ".join(r["documents"]) or "-", r["unknown"] or ""]
        for name, sub in results["subsets"].items()
        for r in sub["per_question"]
        if not r["right_document"]
    ]  # fmt: skip
    cards = [
        [name, c["doc"], c["label"] or "-", c["title"][:60].replace("|", "/"),
         ", ".join(c["acronyms"])]
        for name, sub in results["subsets"].items()
        for c in sub["cards"]
    ]  # fmt: skip
    return "\n".join(
        [
            "# Question resolution — FinanceBench dev and wide",
            "",
            "Cards as ingest builds them (no LLM), questions resolved by "
            "chop_rag.questions.matching.resolve.",
            "",
            md_table(HEADER, rows),
            "",
            "right company: every document meant is of the evidence's company. right document:"
            " an evidence document is among those meant (company and period right). evidence in"
            " view: among those meant or the secondary ones. declined: a period no card covers.",
            "",
            "## Questions not resolved to their document",
            "",
            md_table(["subset", "qid", "question", "evidence", "resolved to", "unknown"], misses)
            if misses
            else "(none)",
            "",
            "## Cards",
            "",
            md_table(["subset", "file", "label", "title", "tickers, acronyms"], cards),
            "",
        ]
    )


def parser() -> argparse.ArgumentParser:
    p = script_parser("bench.resolution", __doc__)
    p.add_argument(
        "--subsets",
        type=comma_list,
        default=list(SUBSETS),
        help="dev,wide",
    )
    p.add_argument("--out", default=str(DEFAULT_OUT), help="results go to OUT/resolution/")
    p.add_argument("--fresh", action="store_true", help="reload the PDFs (ignore the cache)")
    return p


main = script_main(parser, run, expected=(FinDataMissing,))


if __name__ == "__main__":
    sys.exit(main())
