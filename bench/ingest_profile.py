"""Stage profile of a real ingest beside raw ceilings measured in the same run.

    python -m bench.ingest_throughput --profile PATH [PATH ...] [--out FOLDER]

PATHs (PDFs, E-Manual JSON, any file chop ingests) are ingested by chop_rag.api.ingest with the
default settings (the configured chat model and embedder; the LLM cache off, so every LLM
answer is asked for) into a fresh collection, with the models and the database started
beforehand. The report's stage_profile (chop_rag.stage_profile) is then set beside three
ceilings, each measured afterwards in the same process on the same material:

- parse: chop's PDFium reader (chop_rag.reading.loaders.pdf_pdfium.read_pdfium) on each PDF of the
  inputs, one file after another in this process: pages/s;
- embed: up to 2,000 of the stored chunks' embedded texts (prefix line + text) in one plain
  sentence-transformers ``encode`` call (batch 32, normalised, the local MiniLM weights, in
  the precision chop's embedder uses): chunks/s;
- persist: the stored chunk rows, vectors included, written by binary COPY into a scratch
  temporary table with the same columns and no index: rows/s.

The ingest's rates divide by the stage's busy seconds (the union of its spans): parse
pages / parse busy, chunks embedded / embed busy, chunks stored / persist busy; and, for parse
and embed, by the stage's CPU seconds, beside the ceiling's process CPU seconds (steadier than
wall seconds when other work shares the cores; the database's CPU is its server's). Writes
results.json and results.md into --out (default bench/results/ingest-profile). Each ceiling
is the best of REPEATS passes.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from psycopg import sql

from bench.report import RESULTS, dated, log, machine, machine_line, md_table, publish
from chop_rag.api import ingest
from chop_rag.config import Context
from chop_rag.models.construction import get_chat_model, get_embedder, local_embedding_dir
from chop_rag.models.embedders import minilm_in_bfloat16
from chop_rag.reading.loaders.files import files_to_load
from chop_rag.reading.loaders.pdf_pdfium import read_pdfium
from chop_rag.stage_profile import PROFILE_COLUMNS, StageProfile, profile_note, profile_rows
from chop_rag.store import Store, store_for
from chop_rag.store.schema import _tables
from chop_rag.store.writes import COPIED_CHUNK_COLUMNS

DEFAULT_PROFILE_OUT = RESULTS / "ingest-profile"
EMBED_BATCH = 32
EMBED_SAMPLE = 2000  # chunks the embed ceiling encodes per pass
REPEATS = 2  # each ceiling is the best of this many passes


def best_of(work: Callable[[], object]) -> tuple[float, float]:
    """The least wall and the least process CPU seconds ``work`` took in REPEATS passes."""
    wall, cpu = float("inf"), float("inf")
    for _ in range(REPEATS):
        started, cpu_before = time.perf_counter(), time.process_time()
        work()
        wall = min(wall, time.perf_counter() - started)
        cpu = min(cpu, time.process_time() - cpu_before)
    return wall, cpu


def pdf_ceiling(paths: list[str]) -> dict[str, Any] | None:
    """Pages/s of chop's PDFium reader on the inputs' PDFs, one after another here."""
    pdfs = [p for p in files_to_load(paths, []) if p.suffix.lower() == ".pdf"]
    if not pdfs:
        return None
    files = [path.read_bytes() for path in pdfs]
    pages = sum(len(read_pdfium(data).pages) for data in files)
    wall, cpu = best_of(lambda: [read_pdfium(data) for data in files])
    return {
        "files": len(pdfs),
        "pages": pages,
        "seconds": wall,
        "cpu_s": cpu,
        "pages_per_s": pages / wall,
        "pages_per_cpu_s": _rate(pages, cpu),
    }


def stored_rows(store: Store, collection: str) -> list[tuple[Any, ...]]:
    """Every stored chunk row of ``collection`` as COPY writes it (COPIED_CHUNK_COLUMNS)."""
    chunks, _ = _tables(collection)
    names = sql.SQL(", ").join(sql.Identifier(c) for c in COPIED_CHUNK_COLUMNS)
    with store.connection() as conn:
        rows = conn.execute(sql.SQL("SELECT {} FROM {}").format(names, chunks)).fetchall()
        conn.rollback()
    return rows


def embed_ceiling(texts: list[str]) -> dict[str, Any]:
    """Chunks/s of a plain sentence-transformers encode over ``texts`` (at most EMBED_SAMPLE of
    them, spread over the collection): MiniLM on the CPU in the precision chop's embedder
    computes in (bfloat16 autocast where the CPU has it, unless CHOP_EMBED_FLOAT32=1)."""
    import torch
    from sentence_transformers import SentenceTransformer

    sample = texts[:: max(1, len(texts) // EMBED_SAMPLE)][:EMBED_SAMPLE]
    bfloat16 = minilm_in_bfloat16()
    model = SentenceTransformer(str(local_embedding_dir()), device="cpu")

    def encode(batch: list[str]) -> object:
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bfloat16):
            return model.encode(batch, batch_size=EMBED_BATCH, normalize_embeddings=True)

    encode(["warm up"])
    wall, cpu = best_of(lambda: encode(sample))
    return {
        "chunks": len(sample),
        "seconds": wall,
        "cpu_s": cpu,
        "chunks_per_s": len(sample) / wall,
        "chunks_per_cpu_s": _rate(len(sample), cpu),
        "batch_size": EMBED_BATCH,
        "precision": "bfloat16 autocast" if bfloat16 else "float32",
        "torch_threads": torch.get_num_threads(),
    }


def copy_ceiling(store: Store, rows: list[tuple[Any, ...]], dimension: int) -> dict[str, Any]:
    """Rows/s of a binary COPY of ``rows`` into a temporary table without indexes."""
    types = {**COPIED_CHUNK_COLUMNS, "embedding": f"vector({dimension})"}
    columns = sql.SQL(", ").join(
        sql.SQL("{} {}").format(sql.Identifier(name), sql.SQL(kind)) for name, kind in types.items()
    )
    names = sql.SQL(", ").join(sql.Identifier(c) for c in COPIED_CHUNK_COLUMNS)
    copy_sql = sql.SQL("COPY chop_copy_ceiling ({}) FROM STDIN WITH (FORMAT BINARY)")
    seconds = float("inf")
    with store.connection() as conn:
        for _ in range(REPEATS):
            conn.execute(sql.SQL("CREATE TEMP TABLE chop_copy_ceiling ({})").format(columns))
            conn.commit()
            started = time.perf_counter()
            with (
                conn.transaction(),
                conn.cursor() as cur,
                cur.copy(copy_sql.format(names)) as copy,
            ):
                copy.set_types(list(COPIED_CHUNK_COLUMNS.values()))
                for row in rows:
                    copy.write_row(row)
            seconds = min(seconds, time.perf_counter() - started)
            conn.execute("DROP TABLE chop_copy_ceiling")
            conn.commit()
    return {"rows": len(rows), "seconds": seconds, "rows_per_s": len(rows) / seconds}


def _rate(count: float, seconds: float) -> float | None:
    return count / seconds if seconds > 0 else None


def side_by_side(
    profile: StageProfile, report: dict[str, Any], pages: int, ceilings: dict[str, Any]
) -> list[dict[str, Any]]:
    """One row per stage with a ceiling: the ingest's rate over the stage's busy seconds and
    over its CPU seconds, and the ceiling's. (The database's CPU is its server's, not this
    process's: persist has no CPU rate.)"""
    stages, stats = profile["stages"], report.get("stats", {})
    pdf, embed, copy = ceilings.get("pdf"), ceilings["embed"], ceilings["copy"]
    parse, embedding, persist = stages["parse"], stages["embed"], stages["persist"]
    embedded, stored = float(stats.get("embedded", 0)), float(report.get("chunks_stored", 0))
    return [
        {
            "stage": "parse",
            "unit": "pages",
            "ingest_per_s": _rate(pages, parse["busy_s"]) if pdf else None,
            "ceiling_per_s": pdf["pages_per_s"] if pdf else None,
            "ingest_per_cpu_s": _rate(pages, parse["cpu_s"]) if pdf else None,
            "ceiling_per_cpu_s": pdf["pages_per_cpu_s"] if pdf else None,
            "ceiling_is": "chop's PDFium reader, one file after another, one process",
        },
        {
            "stage": "embed",
            "unit": "chunks",
            "ingest_per_s": _rate(embedded, embedding["busy_s"]),
            "ceiling_per_s": embed["chunks_per_s"],
            "ingest_per_cpu_s": _rate(embedded, embedding["cpu_s"]),
            "ceiling_per_cpu_s": embed["chunks_per_cpu_s"],
            "ceiling_is": f"plain sentence-transformers encode, batch {embed['batch_size']}, "
            f"{embed['precision']}, {embed['chunks']} of the chunks",
        },
        {
            "stage": "persist",
            "unit": "rows",
            "ingest_per_s": _rate(stored, persist["busy_s"]),
            "ceiling_per_s": copy["rows_per_s"],
            "ingest_per_cpu_s": None,
            "ceiling_per_cpu_s": None,
            "ceiling_is": "binary COPY into a temporary table without indexes",
        },
    ]


def run_profile(
    paths: list[str], out: Path, *, keep: bool = False, context: Context | None = None
) -> dict[str, Any]:
    """Ingest ``paths`` with ``context`` (default: the configured settings) into a fresh
    collection, measure the ceilings, and publish both into ``out``."""
    collection = f"bench_prof_{uuid.uuid4().hex[:8]}"
    ctx = (context or Context()).with_overrides(collection=collection, use_cache=False)
    embedder = get_embedder(ctx)
    embedder.embed(["warm up the embedder before any timing"])
    store = store_for(ctx)  # the database is started before any timing
    get_chat_model(ctx)  # a local model is loaded before any timing
    log(f"ingesting {paths} into {ctx.collection}")
    try:
        report = ingest(paths, context=ctx)
        profile: StageProfile = report["stage_profile"]
        records = store.documents(ctx.collection)
        pages = sum(int(r.metadata.get("pages") or 0) for r in records.values())
        rows = stored_rows(store, ctx.collection)
        log(f"{len(records)} documents, {len(rows)} chunks stored; measuring the ceilings")
        names = list(COPIED_CHUNK_COLUMNS)
        prefix, text = names.index("prefix"), names.index("text")
        texts = [f"{r[prefix]}\n{r[text]}" if r[prefix] else r[text] for r in rows]
        ceilings = {
            "pdf": pdf_ceiling(paths),
            "embed": embed_ceiling(texts),
            "copy": copy_ceiling(store, rows, embedder.dimension),
        }
    finally:
        if not keep:
            store.drop_collection(ctx.collection)
    results = {
        "settings": dated(
            {
                "paths": paths,
                "chat_provider": ctx.chat_provider,
                "chat_model": ctx.chat_model,
                "embedder": embedder.name,
                "continuity_mode": ctx.continuity_mode,
                "use_cache": ctx.use_cache,
                "max_concurrency": ctx.max_concurrency,
                **machine(),
            }
        ),
        "ingest": {
            "documents": len(records),
            "pages": pages,
            "chunks_stored": report.get("chunks_stored", 0),
            "stats": report.get("stats", {}),
            "problems": report.get("problems", []),
        },
        "stage_profile": profile,
        "ceilings": ceilings,
        "side_by_side": side_by_side(profile, report, pages, ceilings),
    }
    publish(out, results, markdown(results))
    return results


def _f(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def markdown(results: dict[str, Any]) -> str:
    s, done = results["settings"], results["ingest"]
    profile: StageProfile = results["stage_profile"]
    header = ["stage", "unit", "ingest /s", "ceiling /s", "ingest /CPU s", "ceiling /CPU s"]
    beside = md_table(
        [*header, "ceiling is"],
        [
            [r["stage"], r["unit"]]
            + [_f(r[k]) for k in ("ingest_per_s", "ceiling_per_s")]
            + [_f(r[k]) for k in ("ingest_per_cpu_s", "ceiling_per_cpu_s")]
            + [r["ceiling_is"]]
            for r in results["side_by_side"]
        ],
    )
    lines = [
        "# Ingest stage profile beside raw ceilings",
        "",
        f"{', '.join(Path(p).name for p in s['paths'])}: {done['documents']} documents, "
        f"{done['pages']} PDF pages, {done['chunks_stored']} chunks. Default settings "
        f"({s['chat_provider']} chat model {s['chat_model']}, embedder {s['embedder']}, "
        f"continuity_mode {s['continuity_mode']}), LLM cache off; {machine_line(s)}; "
        f"{s['date']}.",
        "",
        "## Stages",
        "",
        md_table(PROFILE_COLUMNS, profile_rows(profile)),
        "",
        profile_note(profile) + ".",
        "",
        "busy s: wall seconds at least one document was in the stage (union of its spans); "
        "summed s: the spans added up; CPU s: the process CPU shared out among the open spans "
        "by their threads' CPU (chop_rag.stage_profile); with embed s: busy while embed was busy.",
        "",
        f"## Beside the ceilings (measured after the ingest, in the same process, best of "
        f"{REPEATS})",
        "",
        beside,
        "",
        "ingest /s: per busy second of the stage; /CPU s: per CPU second of this process (the "
        "stage's share, chop_rag.stage_profile; the ceiling's process CPU). Under contention for "
        "the cores the CPU rates are the steadier comparison.",
        "",
    ]
    return "\n".join(lines)
