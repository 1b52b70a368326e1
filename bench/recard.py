"""Identity cards of an indexed collection recomputed with today's rules, without re-ingesting.

    python -m bench.recard --collection fin_dev [--subset dev]   # CHOP_DATA_DIR as for ingest

A card is made at ingest from the file's name, its PDF title and its first pages (no LLM;
chop_rag.labelling.identity). When those rules change, the chunks and their vectors stay valid: only
the card in each document's stored metadata needs making again. This reads each stored
document's opening through the real loader (cached like bench.resolution), makes its card as
ingest does (chop_rag.labelling.profile.document_profile without an LLM reply) and replaces the
stored card's identity, keeping the profile's LLM category. It prints what changed.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from bench.report import log, script_main, script_parser
from bench.resolution import SUBSETS, opening
from chop_rag.config import Context
from chop_rag.labelling.profile import STORED_KEY, document_profile, stored_profile
from chop_rag.store import store_for


def recard(ctx: Context, collection: str, cache: Path) -> list[str]:
    """Each stored document's card made again; the lines say which changed and how."""
    store = store_for(ctx)
    changed = []
    for doc_id, record in sorted(store.documents(collection).items()):
        path = Path(record.source)
        if not path.is_file():
            log(f"  {doc_id}: source {path} is not there; card kept")
            continue
        document = opening(path, cache, fresh=False)
        if document is None:
            continue
        old = stored_profile(record.metadata)
        new = document_profile(document, None)
        identity = new.get("identity") or {}
        if identity == (old.get("identity") or {}):
            continue
        profile: dict[str, Any] = {**old, "identity": identity}
        store.set_document_metadata(collection, doc_id, {**record.metadata, STORED_KEY: profile})
        before = {k: v for k, v in (old.get("identity") or {}).items() if k != "sources"}
        after = {k: v for k, v in identity.items() if k != "sources"}
        diff = {k: (before.get(k), after.get(k)) for k in before.keys() | after.keys()
                if before.get(k) != after.get(k)}  # fmt: skip
        changed.append(f"{path.name}: {diff}")
    return changed


def run(args: argparse.Namespace) -> list[str]:
    ctx = Context(collection=args.collection)
    cache = Path(os.environ.get("CHOP_DATA_DIR") or ctx.data_dir) / "bench-openings"
    changed = recard(ctx, args.collection, cache)
    for line in changed:
        print(line)
    print(f"{len(changed)} card(s) changed in {args.collection}")
    return changed


def parser() -> argparse.ArgumentParser:
    p = script_parser("bench.recard", __doc__)
    p.add_argument("--collection", required=True)
    p.add_argument("--subset", choices=sorted(SUBSETS), help="(for the record only)")
    return p


main = script_main(parser, run)


if __name__ == "__main__":
    sys.exit(main())
