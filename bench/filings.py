"""FinanceBench dev and wide side by side, from one command: Doc@1, page Hit@5, numeric
match, yes/no right and declined, on collections built by chop's own ingest.

    CHOP_DATA_DIR=.chop python -m bench.filings                 # both sets
    CHOP_DATA_DIR=.chop python -m bench.filings --sets wide     # one set; the table keeps
                                                                # the other set's last results

For each set (dev: 40 filings, 31 questions; wide: 27 filings, 36 questions):
1. ingest its PDFs into its collection (``fin_dev``, ``fin_wide``) as ``chop ingest`` does,
   with default settings; unchanged documents are only checked, so a second run reuses the
   collection (``--no-ingest``: use a collection that has documents as it is);
2. retrieval (bench.finance, method ``chop``, on that collection): Doc@1 and page Hit@5;
3. answers (bench.answers, the product path ``chop_rag.api.ask`` with the local model): numeric
   match, yes/no right and unsaid, declined;
then the table of both sets (bench.finance's side by side) in OUT/fin-sides.md, printed.

Results: OUT/fin/ and OUT/fin-wide/ (retrieval), OUT/answers-fin-dev/ and
OUT/answers-fin-wide/ (answers), OUT/ingest-{dev,wide}.json (each ingest's report),
OUT/fin-sides.{md,json} (the table). ``--resolution`` also runs bench.resolution (right
company and document from the cards, no LLM) for the table's first columns.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.emanual import DEFAULT_OUT
from bench.finance import SUBSETS, side_by_side
from bench.report import log, script_parser

DEFAULT_FILINGS_OUT = DEFAULT_OUT / "filings"
COLLECTIONS = {"dev": "fin_dev", "wide": "fin_wide"}


def ingested(subset: str, collection: str, out: Path, check: bool) -> Path:
    """The set's PDFs in ``collection`` (ingested as ``chop ingest`` does, unchanged ones only
    checked), and the file holding the ingest's report."""
    from chop_rag.api import ingest
    from chop_rag.config import Context
    from chop_rag.store import store_for

    ctx = Context().with_overrides(collection=collection)
    report_file = out / f"ingest-{subset}.json"
    pdfs = SUBSETS[subset][0] / "pdfs"
    if not check and store_for(ctx).documents(collection):
        log(f"{subset}: using {collection} as it is")
        if not report_file.is_file():
            report_file.write_text("{}")
        return report_file
    log(f"{subset}: ingesting {pdfs} into {collection} (unchanged documents are only checked)")
    report = ingest([pdfs], context=ctx)
    report_file.write_text(json.dumps(report, indent=1, default=str))
    log(f"{subset}: added {report.get('added')}, unchanged {report.get('unchanged')}")
    return report_file


def run(args: argparse.Namespace) -> dict[str, Any]:
    from bench import answers, finance, resolution

    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    for subset in args.sets:
        collection = COLLECTIONS[subset]
        report = ingested(subset, collection, out, not args.no_ingest)
        retrieval = ["--methods", "chop", "--subset", subset, "--out", str(out)]
        if finance.main([*retrieval, "--ingested", f"{collection}={report}"]):
            raise SystemExit(f"{subset}: the retrieval run failed")
        answered = out / f"answers-fin-{subset}"
        asked = ["--sets", f"fin-{subset}", f"--fin-{subset}", collection, "--no-ingest"]
        if answers.main([*asked, "--out", str(answered)]):
            raise SystemExit(f"{subset}: the answer run failed")
    if args.resolution:
        resolution.main(["--out", str(out)])
    return side_by_side(out, out)


def parser() -> argparse.ArgumentParser:
    p = script_parser("bench.filings", __doc__)
    p.add_argument(
        "--sets",
        type=lambda v: [x for x in v.split(",") if x],
        default=list(COLLECTIONS),
        help="dev,wide (default both)",
    )
    p.add_argument("--out", type=Path, default=DEFAULT_FILINGS_OUT)
    p.add_argument(
        "--no-ingest",
        action="store_true",
        help="use each set's collection as it is when it has documents (no file is read)",
    )
    p.add_argument(
        "--resolution", action="store_true", help="also run bench.resolution (cards, no LLM)"
    )
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    unknown = [s for s in args.sets if s not in COLLECTIONS]
    if unknown:
        print(f"unknown set(s): {', '.join(unknown)}; choose from dev, wide", file=sys.stderr)
        return 2
    run(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
