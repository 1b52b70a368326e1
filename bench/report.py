"""What every bench script shares, in one place: the repository's paths (REPO_ROOT, RESULTS,
SHARED_DATA), a run's settings header (dated, machine, run_header), the command line
(script_parser, script_main, --data, --only), Markdown tables and pages, results.json and
results.md; and the E-Manual run's results.json, results.md and chart.png (bench.emanual,
bench.finance)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

REPO_ROOT = Path(__file__).resolve().parents[1]
RESULTS = REPO_ROOT / "bench" / "results"  # published runs; studies write here too
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"  # the data sets, beside the repository
KS = (1, 3, 5, 10)
LABELS = {"hit": "Hit", "mrr": "MRR"}
LABELS_K = {"hit@1": "Hit@1", "hit@10": "Hit@10", "mrr@10": "MRR@10", "doc@1": "Doc@1"}
ORDERS = ("ties_against_gold", "ties_for_gold")


def dated(settings: Mapping[str, Any]) -> dict[str, Any]:
    """A run's settings as results.json records them: when it ran (UTC), then ``settings``."""
    return {"date": datetime.now(UTC).isoformat(timespec="seconds"), **settings}


def machine() -> dict[str, Any]:
    """The machine a timing was taken on: its cores, and its load when the run began."""
    return {"cpu_count": os.cpu_count(), "load_average_at_start": list(os.getloadavg())}


def machine_line(settings: Mapping[str, Any]) -> str:
    """What ``machine()`` recorded, as results.md says it."""
    load = settings["load_average_at_start"][0]
    return f"{settings['cpu_count']} CPU cores, load average at start {load:.1f}"


def run_header(subset: str, data: Path | str, embedder: str, **more: Any) -> dict[str, Any]:
    """The settings of a run over a data set: which subset of which data, when, with which
    embedder; then ``more``."""
    return {"subset": subset, "data": str(data), **dated({"embedder": embedder, **more})}


def log(message: str) -> None:
    """Progress goes to stderr so stdout stays the result table."""
    print(message, file=sys.stderr, flush=True)


def script_parser(module: str, doc: str | None) -> argparse.ArgumentParser:
    """The argument parser of ``python -m <module>``, its docstring as the help text."""
    return argparse.ArgumentParser(
        prog=f"python -m {module}",
        description=doc,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def add_data_argument(p: argparse.ArgumentParser, what: str, env: str, folder: str) -> None:
    """``--data``: a data set's folder; unset, the script reads ``env`` or
    ../shared/data/``folder`` beside the repository."""
    p.add_argument(
        "--data",
        default=None,
        help=f"{what} folder (default: {env} or ../shared/data/{folder} beside the repository)",
    )


def comma_list(value: str) -> list[str]:
    """A command-line list: "a,b" -> ["a", "b"] (spaces and empty items dropped)."""
    return [item.strip() for item in value.split(",") if item.strip()]


def add_only_argument(p: argparse.ArgumentParser, which: str) -> None:
    """``--only A,B``: a quick check on part of the data, never the published benchmark."""
    p.add_argument(
        "--only", type=comma_list, default=[], help=f"a quick check, not the benchmark: {which}"
    )


def write_report(out: Path, stem: str, json_text: str, markdown_text: str) -> None:
    """``stem``.json and ``stem``.md into ``out`` (created if missing)."""
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{stem}.json").write_text(json_text + "\n", encoding="utf-8")
    (out / f"{stem}.md").write_text(markdown_text, encoding="utf-8")


def _row(cells: Sequence[Any]) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    return [_row(header), _row(["---"] * len(header)), *(_row(r) for r in rows)]


def cell(value: Any) -> str:
    """A table cell: "-" where a figure does not apply."""
    return "-" if value is None else str(value)


def cells(row: Mapping[str, Any], keys: Iterable[str]) -> list[str]:
    """``row``'s figures under ``keys``, as table cells ("-" where a figure is missing)."""
    return [cell(row.get(key)) for key in keys]


def keyed_table(columns: Mapping[str, str], rows: Iterable[Mapping[str, Any]]) -> str:
    """A Markdown table of ``rows`` (dicts): ``columns`` maps each heading to its key."""
    return md_table(list(columns), [cells(row, columns.values()) for row in rows])


def page(title: str, *blocks: str) -> str:
    """A results.md: the title, then each block (a line, a paragraph, a table) a blank line
    apart, ending in a newline."""
    return "\n\n".join([f"# {title}", *blocks]) + "\n"


def md_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A GitHub Markdown table."""
    return "\n".join(_table(header, rows))


def _f(value: float) -> str:
    return f"{value:.3f}"


def llm_work(costs: dict[str, Any]) -> tuple[int, str]:
    """LLM work of an index (model calls + cache hits) and that per chunk."""
    work = int(costs["llm_calls"]) + int(costs["cache_hits"])
    return work, f"{work / costs['chunks']:.3f}" if costs["chunks"] else "-"


def dumps_plain(results: dict[str, Any]) -> str:
    """JSON of a run whose results are not per method: indented, keys in their order."""
    return json.dumps(results, indent=1, ensure_ascii=False, default=str)


def write_files(out: Path, stem: str, results: dict[str, Any], text: str) -> None:
    """``stem``.json (per-question records one a line) and ``stem``.md into ``out``."""
    write_report(out, stem, dumps(results), text)


SUMMARY = ("hit@1", "hit@10", "mrr@10", "ndcg@10", "doc@1")  # a group's or tie order's columns


def _header(keys: Sequence[str]) -> list[str]:
    """hit@1 -> Hit@1, ndcg@10 -> NDCG@10."""
    names = {"hit": "Hit", "mrr": "MRR", "ndcg": "NDCG", "doc": "Doc"}
    return [names[name] + "@" + k for name, k in (key.split("@") for key in keys)]


def _cells(metrics: dict[str, float], keys: Sequence[str]) -> list[str]:
    return [_f(metrics[key]) for key in keys]


def per_method(
    results: dict[str, Any], header: Sequence[str], row: Callable[[str, dict[str, Any]], list[Any]]
) -> str:
    """A Markdown table with one row a method: ``row(method, its result)``."""
    return md_table(header, [row(method, r) for method, r in results["methods"].items()])


def main_table(results: dict[str, Any]) -> str:
    """Rows = methods; the retrieval metrics and the cost of building each index."""
    keys = [*(f"hit@{k}" for k in KS), "mrr@10", "ndcg@10", "doc@1"]
    costs = ["chunks", "LLM work", "LLM/chunk", "index wall s", "retrieval"]
    return per_method(
        results,
        ["method", *_header(keys), *costs],
        lambda method, r: [
            method,
            *_cells(r["metrics"], keys),
            r["costs"]["chunks"],
            *llm_work(r["costs"]),
            f"{r['costs']['index_seconds']:.1f}",
            "chop" if r.get("method") == "chop" else "plain",
        ],
    )


def rank_table(results: dict[str, Any]) -> str:
    keys = [*(f"mrr@{k}" for k in KS), *(f"ndcg@{k}" for k in KS)]
    return per_method(
        results, ["method", *_header(keys)], lambda method, r: [method, *_cells(r["metrics"], keys)]
    )


def cost_table(results: dict[str, Any]) -> str:
    header = ["method", "collection", "chunks", "LLM calls", "LLM s", "cache hits", "embed s"]
    return per_method(
        results,
        [*header, "index wall s", "retrieval s"],
        lambda method, r: [
            method,
            *(r["costs"][key] for key in ("collection", "chunks", "llm_calls")),
            f"{r['costs']['llm_seconds']:.1f}",
            r["costs"]["cache_hits"],
            *(f"{r['costs'][key]:.1f}" for key in ("embed_seconds", "index_seconds")),
            f"{r['costs']['retrieval_seconds']:.2f}",
        ],
    )


def group_table(results: dict[str, Any]) -> str:
    rows = []
    names = list(dict.fromkeys(n for r in results["methods"].values() for n in r["groups"]))
    for name in names:
        for method, r in results["methods"].items():
            if name in r["groups"]:
                m = r["groups"][name]
                rows.append([name, method, int(m["questions"]), *_cells(m, SUMMARY)])
    return md_table(["questions", "method", "n", *_header(SUMMARY)], rows)


def tie_warnings(results: dict[str, Any]) -> list[str]:
    """One warning per method whose numbers depend on how equal scores are ordered."""
    lines = []
    keys = ("hit@1", "hit@10", "mrr@10", "doc@1")
    for method, r in results["methods"].items():
        m, worst, best = r["metrics"], *(r["tie_bounds"][o] for o in ORDERS)
        if all(worst[k] == m[k] == best[k] for k in keys):
            continue
        tied = round(m["tied@1"] * m["questions"])

        def show(x: dict[str, float]) -> str:
            return ", ".join(f"{LABELS_K[k]} {x[k]:.3f}" for k in keys)

        why = (
            f"{tied} of {int(m['questions'])} questions' top score is shared with another "
            "manual's identical chunk"
            if tied
            else "identical chunks inside one manual"
        )
        lines += [
            f"**Ties decide part of {method}'s numbers** ({why}). Ties broken against the "
            f"gold device: {show(worst)}; for it: {show(best)}.",
            "",
        ]
    return lines


def tie_table(results: dict[str, Any]) -> str:
    """The store's order next to equal scores broken against / for the gold device."""
    rows = []
    for method, r in results["methods"].items():
        tied = round(r["metrics"]["tied@1"] * r["metrics"]["questions"])
        for name, m in r["tie_bounds"].items():
            rows.append([method, tied, name, *_cells(m, SUMMARY)])
    return md_table(["method", "ties at 1", "order", *_header(SUMMARY)], rows)


def answer_table(results: dict[str, Any]) -> str | None:
    rows = []
    for method, r in results["methods"].items():
        if "answers" in r:
            s = r["answers"]["summary"]
            bert = s["bertscore"] if isinstance(s["bertscore"], str) else _f(s["bertscore"])
            rows.append(
                [method, s["questions"], _f(s["f1"]), _f(s["rouge_l"]), bert, f"{s['seconds']:.1f}"]
            )
    if not rows:
        return None
    return md_table(["method", "answered", "token F1", "ROUGE-L", "BERTScore", "s"], rows)


def gold_lines(gold: dict[str, Any]) -> list[str]:
    """Gold mapping per question group (exact / normalised / parent fallback / none)."""
    by_group = gold.get("by_group", {})
    if len(by_group) < 2:
        return []
    rows = [[name, *(c[k] for k in ("exact", "normalised", "parent", "none"))]
            for name, c in by_group.items()]  # fmt: skip
    header = ["questions", "exact", "normalised", "parent fallback", "no gold (excluded)"]
    return ["Gold mapping by question group:", "", md_table(header, rows), ""]


def markdown(results: dict[str, Any]) -> str:
    s, g = results["settings"], results["gold"]
    counts = g["counts"]
    lines = [
        f"# E-Manual QA — subset `{s['subset']}`",
        "",
        f"{s['date']} · embedder {s['embedder']} · windows {s['chunk_tokens']}/"
        f"{s['chunk_overlap']} tokens · cosine θ {s['cosine_threshold']} · chop continuity "
        f"`{s['continuity_mode']}`"
        + (f" (gate {s['gate'][0]}–{s['gate'][1]})" if s.get("gate") else "")
        + (" + joint extraction" if s.get("joint_extraction") else "")
        + f" · questions `{s['question_template']}` · {s['retrieval']}",
        "",
        f"{len(results['corpus']['manuals'])} manual(s), {results['corpus']['questions']} "
        f"question(s); gold: {counts['exact']} exact, {counts['normalised']} normalised, "
        f"{counts['parent']} parent fallback, {counts['none']} without gold (excluded).",
        "",
        *gold_lines(g),
        main_table(results),
        "",
        "Rows marked (.txt) ingested the same manuals saved as plain text (no headings). "
        "retrieval `chop`: chop_rag.retrieval.retrieve.retrieve_for_question with the default "
        "Context (resolves the document the question names); `plain`: vector search, no boosts.",
        "",
        "Equal scores (identical chunks of twin manuals) are counted against the gold device: "
        "the pessimistic reading; the Ties section has the store's order and the optimistic one.",
        "",
        *tie_warnings(results),
        "LLM work = answers the index needed (model calls + LLM-cache hits: the cost of a "
        "fresh build, whichever gave them). wall s = seconds to build the index (chunking, LLM, "
        "embedding, writing); when the cache answered, it is not the model's time: see Costs.",
        "",
        "## MRR@K and NDCG@K",
        "",
        rank_table(results),
        "",
        "## By question group",
        "",
        "`exact gold`: questions whose gold title matched without the parent fallback "
        "(the data README's reference used only these for the TV remote).",
        "",
        group_table(results),
        "",
        "## Ties",
        "",
        "Identical chunks (of twin manuals, or repeated inside one) score exactly the same. "
        "`store`: the store's "
        "tie-break (title, then chunk order); `ties_against_gold` / `ties_for_gold`: equal "
        "scores ordered with the gold device's relevant chunks last / first. `ties at 1`: "
        "questions whose top score is shared by another document's chunk.",
        "",
        tie_table(results),
        "",
        "## Costs",
        "",
        cost_table(results),
    ]
    answers = answer_table(results)
    if answers:
        lines += ["", "## Answers", "", answers]
    notes = [
        s["ties"],
        "Relevance is per chunk: NDCG's ideal counts every chunk of the gold device that "
        "overlaps a gold section, so a method with small chunks (cosine) has more relevant "
        "chunks to find and a lower NDCG at equal MRR.",
        *results["corpus"]["notes"],
        *(f"skipped manual {line}" for line in results["corpus"]["skipped"]),
    ]
    lines += ["", "## Notes", "", *(f"- {n}" for n in notes), ""]
    return "\n".join(lines)


def chart(results: dict[str, Any], path: Path) -> None:
    """Grouped bars: Hit@K and MRR@K for every K, one bar per method."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    methods = list(results["methods"])
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    width = 0.8 / max(len(methods), 1)
    for ax, metric in zip(axes, ("hit", "mrr"), strict=True):
        for i, method in enumerate(methods):
            values = [results["methods"][method]["metrics"][f"{metric}@{k}"] for k in KS]
            ax.bar([x + i * width for x in range(len(KS))], values, width, label=method)
        ax.set_xticks([x + width * (len(methods) - 1) / 2 for x in range(len(KS))])
        ax.set_xticklabels([f"{LABELS[metric]}@{k}" for k in KS])
        ax.set_ylim(0, 1)
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel("score")
    fig.suptitle(f"E-Manual QA, subset {results['settings']['subset']}")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="lower center", ncol=len(methods))
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    fig.savefig(path, dpi=120)
    plt.close(fig)


def dumps(results: dict[str, Any]) -> str:
    """Indented JSON with each per-question record on one line (diffable, half the size)."""
    lines: dict[str, str] = {}

    def one_line(record: dict[str, Any]) -> str:
        key = f"@@record-{len(lines)}@@"
        lines[key] = json.dumps(record, separators=(",", ":"), default=str)
        return key

    methods = {
        name: {**r, "per_question": [one_line(rec) for rec in r["per_question"]]}
        for name, r in results["methods"].items()
    }
    text = json.dumps({**results, "methods": methods}, indent=1, default=str)
    for key, line in lines.items():
        text = text.replace(json.dumps(key), line, 1)
    return text


def write_outputs(results: dict[str, Any], out: Path) -> str:
    """Write the three files into ``out``; return the main Markdown table."""
    write_report(out, "results", dumps(results), markdown(results))
    chart(results, out / "chart.png")
    return main_table(results)


def publish(out: Path, results: dict[str, Any], text: str) -> None:
    """A bench script's results: results.json and results.md in ``out``, the table printed."""
    write_report(out, "results", dumps_plain(results), text)
    print(text)


class Main(Protocol):
    """``main(argv)`` of a bench script: its exit status."""

    def __call__(self, argv: Sequence[str] | None = None) -> int: ...


def script_main(
    parser: Callable[[], argparse.ArgumentParser],
    run: Callable[[argparse.Namespace], Any],
    *,
    markdown: Callable[[dict[str, Any]], str] | None = None,
    expected: tuple[type[Exception], ...] = (),
) -> Main:
    """A bench script's ``main(argv)``: parse, run, and with ``markdown`` publish the results
    (results.json and results.md into ``--out``); an ``expected`` error (data or a model
    missing) is one line and exit status 2."""

    def main(argv: Sequence[str] | None = None) -> int:
        args = parser().parse_args(argv)
        try:
            results = run(args)
        except expected as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
        if markdown is not None:
            publish(args.out, results, markdown(results))
        return 0

    return main
