"""PDF parsing: PDFium (chop_rag.reading.loaders.pdf_pdfium) against pypdf
(chop_rag.reading.loaders.pdf_pypdf), speed and fidelity on the FinanceBench dev filings.

    python -m bench.studies.pdf_parsers [--data DIR] [--only STEM ...] [--out DIR]

Both parsers run in this one process, one file at a time, alternating which goes first, so a
busy machine slows both alike: the ratio is the number to trust, the pages/s are this machine's.
Timed per file is what chop_rag.reading.loaders.pdf.load_pdf does after reading the bytes: the
pages, outline and title (chop_rag.reading.loaders.pdf.read_pdf, PDFium with its pypdf fallback or
pypdf alone), the headings, and the spans (chop_rag.reading.pdf_layout.page_spans). Wall
(perf_counter) and CPU (process_time) seconds; one core.

Fidelity, pypdf taken as the reference:
- pages: the page count of each file under each parser;
- evidence: for each FinanceBench evidence page of questions.jsonl (evidence_page_num,
  zero-based), the text of the spans of that page (1-based, as chunks carry it) under each
  parser, as normalised words (lowercase letters and digits): the share of evidence texts
  found there word for word, the mean share of their words found there, and the mean share
  of the words of the whole evidence page (evidence_text_full_page) found there;
- text: per file, the share of pypdf's words (as a multiset, page by page) that PDFium also
  has on the same page, and the reverse;
- headings: per file, how many headings each parser finds (from the outline when the file
  has one, else from the layout), and the share of pypdf's headings (page, title letters)
  that PDFium also finds on the same page, and the reverse.

Writes bench/results/pdf_parsers/results.json and results.md.
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.report import RESULTS, SHARED_DATA, log, md_table, publish, script_parser
from chop_rag.reading.loaders.pdf import PARSERS, Parser, read_pdf
from chop_rag.reading.pdf_layout import Heading, page_spans

DEFAULT_DATA = SHARED_DATA / "financebench-dev"
DEFAULT_OUT = RESULTS / "pdf_parsers"
_WORD = re.compile(r"[a-z0-9]+")


def words(text: str) -> list[str]:
    return _WORD.findall(text.casefold())


def found_in_order(needle: Sequence[str], haystack: Sequence[str]) -> bool:
    """``needle`` occurs in ``haystack`` as consecutive words."""
    if not needle:
        return False
    return f" {' '.join(needle)} " in f" {' '.join(haystack)} "


def recall(needle: Sequence[str], haystack: Sequence[str]) -> float:
    """The share of ``needle``'s words (as a multiset) that ``haystack`` has."""
    want = Counter(needle)
    total = sum(want.values())
    if not total:
        return 1.0
    return sum((want & Counter(haystack)).values()) / total


def heading_keys(headings: Sequence[Heading]) -> set[tuple[int, str]]:
    return {(h.page, "".join(ch for ch in h.title.casefold() if ch.isalnum())) for h in headings}


def found(wanted: set[tuple[int, str]], among: set[tuple[int, str]], loose: bool) -> int:
    """How many of ``wanted`` (page, title letters) ``among`` has on the same page: the same
    title, or (``loose``) one that starts the other, at least 4 letters long ("Changes in our
    credit ratings may li" and "Changes in our credit ratings may limit our access ...")."""
    if not loose:
        return len(wanted & among)
    by_page: dict[int, list[str]] = {}
    for page, title in among:
        by_page.setdefault(page, []).append(title)
    return sum(
        any(
            min(len(title), len(other)) >= 4
            and (title.startswith(other) or other.startswith(title))
            for other in by_page.get(page, [])
        )
        for page, title in wanted
    )


class Parsed:
    """One file as one parser read it: timing, page texts (through the spans), headings."""

    def __init__(self, data: bytes, parser: Parser) -> None:
        wall, cpu = time.perf_counter(), time.process_time()
        parsed, headings = read_pdf(data, parser)
        text, spans = page_spans(parsed.pages, headings)
        self.cpu_s = time.process_time() - cpu
        self.wall_s = time.perf_counter() - wall
        self.used = parsed.parser  # pdfium, or pypdf where PDFium fell back
        self.pages = len(parsed.pages)
        self.headings = headings
        self.outline = bool(parsed.outline)
        by_page: dict[int, list[str]] = {}
        for span in spans:
            by_page.setdefault(span["meta"]["page"], []).append(text[span["start"] : span["end"]])
        self.page_words = {page: words("\n".join(parts)) for page, parts in by_page.items()}


def evidence_items(data_dir: Path) -> list[dict[str, Any]]:
    """(doc_name, 1-based page, evidence text, full page text) of every evidence."""
    items = []
    for line in (data_dir / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        for evidence in row.get("evidence", []):
            items.append(
                {
                    "question": row["financebench_id"],
                    "doc": str(evidence.get("doc_name") or row["doc_name"]),
                    "page": int(evidence["evidence_page_num"]) + 1,
                    "text": evidence.get("evidence_text") or "",
                    "full_page": evidence.get("evidence_text_full_page") or "",
                }
            )
    return items


def compare_file(path: Path, order: Sequence[Parser]) -> tuple[dict[str, Any], dict[str, Parsed]]:
    data = path.read_bytes()
    runs: dict[str, Parsed] = {parser: Parsed(data, parser) for parser in order}
    pdfium, pypdf = runs["pdfium"], runs["pypdf"]
    text_recall = _words_shared(pypdf, pdfium)
    text_precision = _words_shared(pdfium, pypdf)
    ref, other = heading_keys(pypdf.headings), heading_keys(pdfium.headings)
    matched = {
        f"{a}_in_{b}{'_loose' if loose else ''}": found(x, y, loose)
        for a, b, x, y in (("pypdf", "pdfium", ref, other), ("pdfium", "pypdf", other, ref))
        for loose in (False, True)
    }
    row: dict[str, Any] = {
        "file": path.name,
        "order": list(order),
        "pdfium_used": pdfium.used,
        "outline": {"pypdf": pypdf.outline, "pdfium": pdfium.outline},
        "pages": {"pypdf": pypdf.pages, "pdfium": pdfium.pages},
        "wall_s": {p: round(r.wall_s, 4) for p, r in runs.items()},
        "cpu_s": {p: round(r.cpu_s, 4) for p, r in runs.items()},
        "pypdf_words_in_pdfium": round(text_recall, 4),
        "pdfium_words_in_pypdf": round(text_precision, 4),
        "headings": {"pypdf": len(ref), "pdfium": len(other)},  # distinct (page, title)
        "headings_matched": matched,
        "only_pypdf": sorted(ref - other)[:20],
        "only_pdfium": sorted(other - ref)[:20],
    }
    return row, runs


def _words_shared(reference: Parsed, other: Parsed) -> float:
    total = shared = 0
    for page, ref_words in reference.page_words.items():
        want = Counter(ref_words)
        total += sum(want.values())
        shared += sum((want & Counter(other.page_words.get(page, []))).values())
    return shared / total if total else 1.0


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def evidence_scores(
    items: Sequence[dict[str, Any]], parsed: dict[str, dict[str, Parsed]]
) -> tuple[dict[str, dict[str, float]], list[dict[str, Any]]]:
    records = []
    for item in items:
        runs = parsed.get(item["doc"])
        if runs is None:
            continue
        record: dict[str, Any] = {k: item[k] for k in ("question", "doc", "page")}
        want, full = words(item["text"]), words(item["full_page"])
        for parser, run in runs.items():
            have = run.page_words.get(item["page"], [])
            record[parser] = {
                "found": found_in_order(want, have),
                "words": round(recall(want, have), 4),
                "full_page_words": round(recall(full, have), 4),
            }
        records.append(record)
    summary: dict[str, dict[str, float]] = {
        parser: {
            "evidence_pages": len(records),
            "found_word_for_word": _mean([r[parser]["found"] for r in records]),
            "evidence_words_found": _mean([r[parser]["words"] for r in records]),
            "full_page_words_found": _mean([r[parser]["full_page_words"] for r in records]),
        }
        for parser in PARSERS
    }
    return summary, records


def _share(row: dict[str, Any], name: str) -> float | None:
    of = row["headings"][name.split("_")[0]]
    return round(row["headings_matched"][name] / of, 3) if of else None


def _mean(values: Sequence[float]) -> float:
    return round(sum(values) / len(values), 4) if values else 0.0


def totals(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for parser in PARSERS:
        pages = sum(row["pages"][parser] for row in rows)
        wall = sum(row["wall_s"][parser] for row in rows)
        cpu = sum(row["cpu_s"][parser] for row in rows)
        result[parser] = {
            "files": len(rows),
            "pages": pages,
            "wall_s": round(wall, 2),
            "cpu_s": round(cpu, 2),
            "pages_per_wall_s": round(pages / wall, 1) if wall else None,
            "pages_per_cpu_s": round(pages / cpu, 1) if cpu else None,
            "headings": sum(row["headings"][parser] for row in rows),
        }
    for clock in ("wall_s", "cpu_s"):
        fast = result["pdfium"][clock]
        speedup = round(result["pypdf"][clock] / fast, 1) if fast else None
        result[f"pdfium_speedup_{clock.removesuffix('_s')}"] = speedup
    result["page_counts_equal"] = sum(
        row["pages"]["pypdf"] == row["pages"]["pdfium"] for row in rows
    )
    result["pdfium_fell_back"] = [row["file"] for row in rows if row["pdfium_used"] != "pdfium"]
    for name in rows[0]["headings_matched"] if rows else []:
        of = sum(row["headings"][name.split("_")[0]] for row in rows)
        kept = sum(row["headings_matched"][name] for row in rows)
        result[f"headings_{name}"] = round(kept / of, 4) if of else None
    result["pypdf_words_in_pdfium_mean"] = _mean([row["pypdf_words_in_pdfium"] for row in rows])
    result["pdfium_words_in_pypdf_mean"] = _mean([row["pdfium_words_in_pypdf"] for row in rows])
    return result


def markdown(results: dict[str, Any]) -> str:
    t = results["totals"]
    speed = md_table(
        ["parser", "files", "pages", "wall s", "CPU s", "pages/s wall", "pages/s CPU", "headings"],
        [
            [
                p,
                t[p]["files"],
                t[p]["pages"],
                t[p]["wall_s"],
                t[p]["cpu_s"],
                t[p]["pages_per_wall_s"],
                t[p]["pages_per_cpu_s"],
                t[p]["headings"],
            ]
            for p in PARSERS
        ],
    )
    ev = results["evidence"]
    evidence = md_table(
        ["parser", "evidence pages", "found word for word", "evidence words", "full-page words"],
        [
            [
                p,
                ev[p]["evidence_pages"],
                ev[p]["found_word_for_word"],
                ev[p]["evidence_words_found"],
                ev[p]["full_page_words_found"],
            ]
            for p in PARSERS
        ],
    )
    files = md_table(
        [
            "file",
            "pages pypdf/pdfium",
            "CPU s pypdf",
            "CPU s pdfium",
            "headings pypdf/pdfium",
            "pypdf's in pdfium",
            "pdfium's in pypdf",
            "words",
        ],
        [
            [
                r["file"],
                f"{r['pages']['pypdf']}/{r['pages']['pdfium']}",
                f"{r['cpu_s']['pypdf']:.2f}",
                f"{r['cpu_s']['pdfium']:.2f}",
                f"{r['headings']['pypdf']}/{r['headings']['pdfium']}"
                + (" (outline)" if r["outline"]["pypdf"] else ""),
                _share(r, "pypdf_in_pdfium"),
                _share(r, "pdfium_in_pypdf"),
                r["pypdf_words_in_pdfium"],
            ]
            for r in results["files"]
        ],
    )
    return "\n\n".join(
        [
            "# PDF parsers: PDFium against pypdf (FinanceBench dev filings)",
            f"Run {results['run_at']}, {results['machine']}. Same process, alternating order; "
            "one core. Timed: read_pdf (pages, outline, title, headings) + page_spans.",
            speed,
            f"PDFium is {t['pdfium_speedup_wall']}x faster (wall), {t['pdfium_speedup_cpu']}x "
            f"(CPU). Page counts equal in {t['page_counts_equal']}/{t['pdfium']['files']} "
            f"files; PDFium fell back to pypdf on: {t['pdfium_fell_back'] or 'none'}.",
            "## Evidence pages (FinanceBench questions.jsonl)",
            evidence,
            "## Headings and text",
            f"pypdf's headings also found by PDFium (same page, same title letters): "
            f"{t['headings_pypdf_in_pdfium']} (one title starting the other: "
            f"{t['headings_pypdf_in_pdfium_loose']}); PDFium's found by pypdf: "
            f"{t['headings_pdfium_in_pypdf']} ({t['headings_pdfium_in_pypdf_loose']}). "
            f"Words of pypdf's pages that PDFium has on the "
            f"same page, mean over files: {t['pypdf_words_in_pdfium_mean']} (reverse "
            f"{t['pdfium_words_in_pypdf_mean']}). CPU s per file below.",
            files,
            "",
        ]
    )


def run(data_dir: Path, only: Sequence[str]) -> dict[str, Any]:
    paths = sorted((data_dir / "pdfs").glob("*.pdf"))
    if only:
        paths = [p for p in paths if p.stem in only]
    rows: list[dict[str, Any]] = []
    parsed: dict[str, dict[str, Parsed]] = {}
    for n, path in enumerate(paths):
        order: tuple[Parser, Parser] = ("pypdf", "pdfium") if n % 2 else ("pdfium", "pypdf")
        row, runs = compare_file(path, order)
        rows.append(row)
        parsed[path.stem] = runs
        log(
            f"[{n + 1}/{len(paths)}] {path.name}: {row['pages']['pypdf']} pages, "
            f"CPU s pypdf {row['cpu_s']['pypdf']:.2f} pdfium {row['cpu_s']['pdfium']:.2f}, "
            f"headings {row['headings']['pypdf']}/{row['headings']['pdfium']} "
            f"pypdf's in pdfium {_share(row, 'pypdf_in_pdfium')}"
        )
    summary, records = evidence_scores(evidence_items(data_dir), parsed)
    return {
        "run_at": time.strftime("%Y-%m-%d %H:%M"),
        "machine": _machine(),
        "data": str(data_dir),
        "totals": totals(rows),
        "evidence": summary,
        "evidence_records": records,
        "files": rows,
    }


def _machine() -> str:
    import os
    import platform

    import pypdf
    import pypdfium2

    return (
        f"{os.cpu_count()} CPU cores, Python {platform.python_version()}, pypdf {pypdf.__version__}"
        f", pypdfium2 {pypdfium2.PYPDFIUM_INFO} (PDFium {pypdfium2.PDFIUM_INFO})"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = script_parser("bench.studies.pdf_parsers", __doc__)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--only", nargs="*", default=[], help="file stems to compare")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    results = run(args.data, args.only)
    publish(args.out, results, markdown(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
