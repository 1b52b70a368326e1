"""Ingest runs for the tests (a harness, not tests): manuals written to a folder and
ingested, two near-identical manuals, a run crashed after some LLM calls, the threads a durable
run checkpointed, and the record a collection was made with."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import psycopg

from chop_rag.api import ingest
from chop_rag.config import Context
from chop_rag.reading.documents import make_document
from chop_rag.store import CollectionRecord, Store
from chop_rag.store.pgserver import resolve_database_url
from tests.fakes import ScriptedChatModel, sensible_reply


class Crash(BaseException):
    """Stands for a kill: not an error the LLM layer retries or falls back from."""


def crash_after(calls: int, model: ScriptedChatModel) -> None:
    def responder(task: str, user: str) -> str:
        if len(model.calls) > calls:
            raise Crash
        return sensible_reply(task, user)

    model.responder = responder


def small(context: Context, **overrides: object) -> Context:
    return context.with_overrides(
        continuity_mode="llm", chunk_tokens=40, chunk_overlap=0, **overrides
    )


def checkpointed_threads(ctx: Context) -> list[str]:
    url = resolve_database_url(ctx.database_url, ctx.data_dir)
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT DISTINCT thread_id FROM checkpoints WHERE starts_with(thread_id, %s)",
            (f"ingest-{ctx.collection}-",),
        ).fetchall()
    return [r[0] for r in rows]


def write_manual(folder: Path, name: str, title: str, *sections: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"# {title}\n\n" + "\n\n".join(sections), encoding="utf-8")
    return path


def ingested(ctx: Context, folder: Path, write: Callable[[Path], object]) -> Context:
    """``ctx``, once the manuals ``write`` puts in ``folder`` are ingested into its collection."""
    write(folder)
    ingest([folder], context=ctx)
    return ctx


TWIN_FILTER = "Clean the mesh filter every {weeks} weeks with warm water and let it dry fully. " * 3
TWIN_TANK = "Empty the water tank of the {model} when the full light shows, then refit it. " * 3


def twin_manuals(context: Context) -> Context:
    """Two near-identical air purifier manuals that differ only in their numbers (the chat
    tests' conversations go between them)."""
    ctx = context.with_overrides(continuity_mode="rules", chunk_tokens=60, chunk_overlap=0)
    docs = [
        make_document(
            f"m{w}",
            f"Coolwave {m}",
            "\n\n".join([TWIN_FILTER.format(weeks=w), TWIN_TANK.format(model=m)]),
        )
        for m, w in (("225B", 2), ("330C", 4))
    ]
    ingest(documents=docs, context=ctx)
    return ctx


def made_with(store: Store, ctx: Context) -> CollectionRecord:
    """The record of the embedder and settings ``ctx``'s collection was made with (it has one)."""
    record = store.collection_record(ctx.collection)
    assert record is not None, f"{ctx.collection} has no collection record"
    return record
