"""`chop docs` and `chop delete`: what a collection stores, by document."""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Column, Table

from chop_rag.config import Context
from chop_rag.terminal.progress import shown

console = Console(stderr=True, soft_wrap=True)


def card_summary(card: Mapping[str, Any]) -> str:
    """The identity card in one line: "10-K · Best Buy Co., Inc. · FY2023 · ended 2023-01-28"."""
    period = ""
    if card.get("fiscal_year"):
        quarter = f"Q{card['fiscal_quarter']} " if card.get("fiscal_quarter") else ""
        period = f"{quarter}FY{card['fiscal_year']}"
    parts = [
        card.get("kind"),
        card.get("entity"),
        card.get("model"),
        f"also {', '.join(card['variants'])}" if card.get("variants") else None,
        period,
        f"ended {card['period_end']}" if card.get("period_end") else None,
        f"dated {card['date']}" if card.get("date") else None,
        card.get("edition"),
    ]
    return " · ".join(str(p) for p in parts if p)


def cmd_docs(args: argparse.Namespace) -> int:
    from chop_rag.labelling.profile import stored_profile
    from chop_rag.store import store_for

    ctx = Context().with_overrides(collection=args.collection)
    records = store_for(ctx).documents(ctx.collection).values()
    if args.json:
        print(json.dumps([asdict(r) for r in records], indent=2, default=str))
        return 0
    # doc_id is what `chop delete` takes: folded onto more lines when narrow, never cut
    table = Table(
        Column("doc_id", overflow="fold"),
        "title",
        Column("chunks", justify="right", no_wrap=True),
        "model",
        "identity",
    )
    for record in records:
        profile = stored_profile(record.metadata)
        table.add_row(
            shown(record.doc_id),
            escape(record.title),
            str(record.chunk_count),
            escape(str(profile.get("model") or "")),
            escape(card_summary(profile.get("identity") or {})),
        )
    Console().print(table)
    return 0


def cmd_delete(args: argparse.Namespace) -> int:
    from chop_rag.api import ingest

    report = ingest(
        delete=args.doc_ids, context=Context().with_overrides(collection=args.collection)
    )
    console.print(f"deleted {report.get('deleted', 0)} of {len(args.doc_ids)}")
    return 0 if report.get("deleted", 0) == len(args.doc_ids) else 1
