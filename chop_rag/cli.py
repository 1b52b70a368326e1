"""The `chop` command: ingest, ask, chat, threads, demo, docs, delete, serve."""

from __future__ import annotations

import argparse
import contextlib
import contextvars
import importlib.metadata
import json
import os
import sys
import threading
import time
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NoReturn, TypeVar, cast, get_args

import psycopg
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from chop_rag.config import Context, SearchMode
from chop_rag.terminal.chat import cmd_chat, cmd_threads, say_continuity
from chop_rag.terminal.progress import ProgressReporter, ingest_progress, shown
from chop_rag.terminal.stored import cmd_delete, cmd_docs
from chop_rag.types import USER_FIELDS, user_card
from chop_rag.web.serve import add_serve_command

console = Console(stderr=True, soft_wrap=True)  # one message, one line, even when piped
T = TypeVar("T")
EXIT_LLM_UNAVAILABLE = 3  # no answer, or most labels are fallbacks: the LLM is down or refuses
EXIT_INTERRUPTED = 130  # Ctrl-C, as shells report SIGINT
EXIT_INTERNAL = 70  # an unexpected error (EX_SOFTWARE); `chop --debug ...` prints its trace


def _context(args: argparse.Namespace) -> Context:
    return Context().with_overrides(
        collection=getattr(args, "collection", None),
        continuity_mode=getattr(args, "mode", None),
        k=getattr(args, "k", None),
        search=getattr(args, "search", None),
        query_cnm=getattr(args, "query_cnm", None),
        max_concurrency=getattr(args, "concurrency", None),
        use_cache=False if getattr(args, "no_cache", False) else None,
    )


def run_in_worker(work: Callable[[], T]) -> T:
    """Run ``work`` in a worker thread, so Ctrl-C reaches this (main) thread at once.

    The graph's own threads keep the main thread in waits that Python cannot interrupt: Ctrl-C
    would only be noticed when the run ends.
    """
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = work()
        except BaseException as exc:  # handed to the main thread below
            outcome["error"] = exc

    worker = threading.Thread(target=contextvars.copy_context().run, args=(target,), daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(0.2)
    if "error" in outcome:
        raise outcome["error"]
    return cast(T, outcome["value"])


def stop_at_once(message: str) -> NoReturn:
    """One line, then exit 130 without waiting for LLM calls in flight.

    What is stored stays: each document is written in one transaction and a durable run's
    checkpoints are committed step by step, exactly as after a kill (see test_crash_resume).
    """
    console.print(f"[yellow]{message}[/]")
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(EXIT_INTERRUPTED)


def cmd_ingest(args: argparse.Namespace) -> int:
    from chop_rag.api import ingest

    ctx = _context(args)
    if args.server:  # batch runs on a LangGraph server (chop_rag/terminal/coordinator.py)
        from chop_rag.terminal.coordinator import cli_ingest

        return cli_ingest(args, ctx.collection)
    from chop_rag.reading.documents import missing_paths

    missing = missing_paths(args.paths)
    if missing == args.paths:  # nothing to do: say so before starting the database
        for path in missing:
            console.print(f"[red]error:[/] no such file or folder: {shown(path)}")
        return 1
    started = time.perf_counter()
    with ingest_progress(console, disable=args.quiet) as progress:
        reporter = ProgressReporter(progress, quiet=args.quiet)
        try:
            report = run_in_worker(
                lambda: ingest(
                    args.paths,
                    meta=dict(getattr(args, "meta", [])),
                    context=ctx,
                    on_event=reporter,
                    durable=not args.no_durable,
                )
            )
        except KeyboardInterrupt:
            progress.stop()
            stop_at_once(
                "interrupted; finished documents are stored"
                + ("" if args.no_durable else ", and the same command resumes the run")
            )
    report["seconds"] = round(time.perf_counter() - started, 2)
    if args.json:
        print(json.dumps(report, indent=2, default=str))
    else:
        stats = report.get("stats", {})
        console.print(
            f"added {report.get('added', 0)}, updated {report.get('updated', 0)}, unchanged "
            f"{report.get('unchanged', 0)}, deleted {report.get('deleted', 0)}; "
            f"{report.get('chunks_stored', 0)} chunks stored, "
            f"{int(stats.get('llm_calls', 0))} LLM calls, "
            f"{int(stats.get('cache_hits', 0))} cache hits, {report['seconds']} s"
        )
        for label, key in (("skipped", "problems"), ("warning", "warnings")):
            for item in report.get(key, []):
                if (item["source"], item["reason"]) not in reporter.reported:
                    console.print(
                        f"[yellow]{label}[/] {shown(item['source'])}: {shown(item['reason'])}"
                    )
        if getattr(args, "profile", False):
            print_profile(report["stage_profile"])
    if report.get("llm_unavailable"):
        console.print(f"[red]LLM unavailable:[/] {shown(report['llm_unavailable'])}")
        return EXIT_LLM_UNAVAILABLE
    loaded = report.get("added", 0) + report.get("updated", 0) + report.get("unchanged", 0)
    return 0 if loaded or not report.get("problems") else 1


def print_profile(profile: Any) -> None:
    """The stage profile of an ingest (chop_rag.stage_profile) as a table."""
    from chop_rag.stage_profile import PROFILE_COLUMNS, profile_note, profile_rows

    table = Table(*PROFILE_COLUMNS, title="stage profile", title_justify="left")
    for row in profile_rows(profile):
        table.add_row(*row)
    console.print(table)
    console.print(profile_note(profile))


def cmd_ask(args: argparse.Namespace) -> int:
    from chop_rag.api import ask
    from chop_rag.questions.query import clean_question

    args.question = clean_question(args.question)
    if not (args.question or "").strip():
        console.print("[red]error:[/] the question is empty")
        return 2
    ctx = _context(args)
    if not collection_has_documents(ctx):
        console.print(
            f"[red]error:[/] collection {ctx.collection!r} has no documents "
            f"(chop ingest PATH --collection {ctx.collection})"
        )
        return 1
    result = ask(args.question, context=ctx, thread_id=getattr(args, "thread", None))
    if args.json:
        print(json.dumps(result, indent=2, default=str))
        return _answer_exit(result)
    say_continuity(result)
    print(result["answer"])
    cited = set(result.get("citations", []))
    table = Table("#", "document", "model", "topic", "score", "text", show_lines=False)
    for s in result.get("sources", []):
        mark = "*" if s["number"] in cited else ""
        table.add_row(
            f"{s['number']}{mark}",
            escape(s["doc_title"]),
            escape(s["model"] or ""),
            escape(", ".join(s["nouns"])),
            f"{s['score']:.3f}",
            escape(s["text"][:90].replace("\n", " ")) + "…",
        )
    Console().print(table)
    for note in (result.get("retrieval_note"), result.get("answer_note")):
        if note:
            console.print(f"[dim]{escape(note)}[/]")
    return _answer_exit(result)


def _answer_exit(result: Mapping[str, Any]) -> int:
    """0 for an answer (a declined one too); EXIT_LLM_UNAVAILABLE, with one line saying why,
    when the LLM failed, as ``chop ingest`` exits when most of its labels failed: the answer
    printed is then the section's own words without the model's part (a yes/no verdict)."""
    if not result.get("error"):
        return 0
    why = shown(result["error"])
    console.print(f"[red]LLM unavailable:[/] the answer quotes the sources only: {why}")
    return EXIT_LLM_UNAVAILABLE


def collection_has_documents(ctx: Context) -> bool:
    from chop_rag.store import store_for

    return bool(store_for(ctx).documents(ctx.collection))


def cmd_demo(args: argparse.Namespace) -> int:
    """Write the sample corpus, then run ``chop ingest`` and ``chop ask`` on it as the user would:
    their namespaces come from their own parsers, so each has every option's default."""
    from chop_rag.harness.sample_corpus import SAMPLE_QUESTIONS, write_sample_corpus

    folder = Path(_context(args).data_dir) / "sample-corpus"
    write_sample_corpus(folder)
    console.print(f"sample corpus written to {folder}")
    shared = given_options(args, "--collection")
    ingest_args = build_parser().parse_args(
        ["ingest", str(folder), *shared, *given_options(args, "--mode")]
    )
    status = cmd_ingest(ingest_args)
    if status != 0:
        return status
    question = args.question or SAMPLE_QUESTIONS[0]["question"]
    ask_args = build_parser().parse_args(
        ["ask", question, *shared, *given_options(args, "--k", "--search", "--query-cnm", "--json")]
    )
    console.print(f"\n[bold]Q:[/] {shown(ask_args.question)}")
    return cmd_ask(ask_args)


def given_options(args: argparse.Namespace, *flags: str) -> list[str]:
    """The command-line words for those of ``flags`` that ``args`` has a value for."""
    words: list[str] = []
    for flag in flags:
        value = getattr(args, flag.lstrip("-").replace("-", "_"), None)
        if value is True:
            words.append(flag)
        elif value not in (None, False):
            words += [flag, str(value)]
    return words


def meta_field(value: str) -> tuple[str, str]:
    """``FIELD=VALUE`` of ``--meta``, checked against the identity card's fields."""
    name, sep, text = value.partition("=")
    if not sep or name.strip() not in USER_FIELDS:
        raise argparse.ArgumentTypeError(
            f"expected FIELD=VALUE with FIELD one of {', '.join(USER_FIELDS)}"
        )
    try:
        user_card({name.strip(): text.strip()})
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"{name}: {err}") from None
    return name.strip(), text.strip()


def cmd_graphs(args: argparse.Namespace) -> int:
    """Write the state machines as Mermaid diagrams (the README and docs/ show them)."""
    from chop_rag.graphs.answer import build_answer_graph
    from chop_rag.graphs.chat import build_chat_graph
    from chop_rag.graphs.ingest import build_decision_graph, build_ingest_graph

    parts = ["# chop's graphs\n", "Generated by `chop graphs --out docs/graphs.md`.\n"]
    graphs = (
        ("ingest", build_ingest_graph()),
        ("decide_cnm (one per chunk, inside index_document)", build_decision_graph()),
        ("answer", build_answer_graph()),
        ("chat (a conversation: one turn per user message)", build_chat_graph()),
    )
    for name, graph in graphs:
        mermaid = graph.get_graph(xray=True).draw_mermaid()
        parts.append(f"## {name}\n\n```mermaid\n{mermaid}```\n")
    text = "\n".join(parts)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text, encoding="utf-8")
    else:
        print(text)
    return 0


def cmd_settings(args: argparse.Namespace) -> int:
    """The settings: their values now, the docs' table (``--markdown``), or that table
    written into the docs between their markers (``--write README.md docs/deploy.md``)."""
    from dataclasses import fields

    from chop_rag.config import PROCESS_SETTINGS
    from chop_rag.terminal.settings_docs import (
        process_setting_shown,
        settings_markdown,
        with_settings_table,
    )

    if args.write:
        for name in args.write:
            path = Path(name)
            path.write_text(with_settings_table(path.read_text(encoding="utf-8")), "utf-8")
            console.print(f"settings table written to {shown(path)}")
        return 0
    if args.markdown:
        print(settings_markdown(), end="")
        return 0
    ctx = Context()  # a variable that does not parse is one error line, exit 2
    table = Table("variable", "value")
    for spec in fields(ctx):
        table.add_row(
            spec.metadata["json_schema_extra"]["env"], escape(repr(getattr(ctx, spec.name)))
        )
    for setting in PROCESS_SETTINGS:
        table.add_row(setting.env, escape(process_setting_shown(setting)))
    Console().print(table)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="chop", description=__doc__)
    parser.add_argument("--version", action="version", version=f"chop {chop_version()}")
    parser.add_argument(
        "--debug", action="store_true", help="on an error, print the whole trace, not one line"
    )
    sub = parser.add_subparsers(dest="command", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--collection", help="collection name (default: $CHOP_COLLECTION)")

    p = sub.add_parser("ingest", help="index files or folders (txt, md, html, pdf, E-Manual json)")
    p.add_argument("paths", nargs="+", help="files or folders to index (folders recursively)")
    p.add_argument("--mode", choices=["llm", "gate", "rules"], help="continuity mode")
    p.add_argument("--concurrency", type=int, help="most LLM calls in flight")
    p.add_argument("--no-cache", action="store_true", help="do not reuse stored LLM answers")
    p.add_argument(
        "--no-durable", action="store_true", help="do not checkpoint (a crash starts over)"
    )
    p.add_argument(
        "--meta",
        action="append",
        type=meta_field,
        default=[],
        metavar="FIELD=VALUE",
        help="set an identity field for every file of this run (repeatable), e.g. "
        "--meta fiscal_year=2023 --meta kind=10-K; fields: " + ", ".join(USER_FIELDS),
    )
    p.add_argument("--server", metavar="URL", help="run batches on this LangGraph server")
    p.add_argument("--batch-size", type=int, default=8, help="files per server run")
    p.add_argument("--jobs", type=int, default=2, help="server runs at once")
    p.add_argument("--api-key", help="the server's x-api-key (default: $CHOP_API_KEY)")
    p.add_argument("--json", action="store_true", help="print the report as JSON on stdout")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument(
        "--profile", action="store_true", help="print wall and CPU seconds per stage too"
    )
    common(p)
    p.set_defaults(func=cmd_ingest)

    for name, func, text in (
        ("ask", cmd_ask, "answer a question"),
        ("demo", cmd_demo, "ingest the sample corpus and ask"),
    ):
        p = sub.add_parser(name, help=text)
        p.add_argument(
            "question",
            nargs="?" if name == "demo" else None,
            help="the question" + (" (default: a sample question)" if name == "demo" else ""),
        )
        p.add_argument("--k", type=int, help="chunks to retrieve (default: $CHOP_K)")
        p.add_argument("--search", choices=get_args(SearchMode), help="auto, vector or hybrid")
        p.add_argument(
            "--query-cnm",
            choices=["off", "boost", "filter"],
            help="boost or filter to the model the question names",
        )
        p.add_argument(
            "--json", action="store_true", help="print answer, citations and sources as JSON"
        )
        if name == "demo":
            p.add_argument("--mode", choices=["llm", "gate", "rules"], help="continuity mode")
        else:
            p.add_argument(
                "--thread", help="a conversation's id: the question follows up its last turn"
            )
        common(p)
        p.set_defaults(func=func)

    p = sub.add_parser("chat", help="a conversation: one question a line on stdin")
    p.add_argument("--thread", help="the conversation's id (resume it; default: a new one)")
    p.add_argument("--k", type=int, help="chunks to retrieve (default: $CHOP_K)")
    p.add_argument("--search", choices=get_args(SearchMode), help="auto, vector or hybrid")
    common(p)
    p.set_defaults(func=cmd_chat)

    p = sub.add_parser("threads", help="list conversation threads, or delete one")
    p.add_argument("--delete", metavar="ID", help="delete this thread")
    p.add_argument("--json", action="store_true", help="print the threads as JSON")
    common(p)
    p.set_defaults(func=cmd_threads)

    p = sub.add_parser("graphs", help="print the graphs as Mermaid")
    p.add_argument("--out", help="write to this file")
    p.set_defaults(func=cmd_graphs)

    p = sub.add_parser("docs", help="list stored documents with their identity cards")
    p.add_argument("--json", action="store_true", help="every stored field, as JSON")
    common(p)
    p.set_defaults(func=cmd_docs)
    p = sub.add_parser("settings", help="show the settings (CHOP_* variables) and their values")
    p.add_argument("--markdown", action="store_true", help="the settings table of the docs")
    p.add_argument(
        "--write", nargs="+", metavar="FILE", help="write that table into FILE between its markers"
    )
    p.set_defaults(func=cmd_settings)

    add_serve_command(sub, common)
    p = sub.add_parser("delete", help="remove documents by doc_id")
    p.add_argument("doc_ids", nargs="+", help="doc_ids as `chop docs` lists them")
    common(p)
    p.set_defaults(func=cmd_delete)
    return parser


DISTRIBUTION = "chop-rag"  # the name on the package index (its "chop" is another project)


def chop_version() -> str:
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:  # run from a checkout without installing
        return "unknown"


def main(argv: list[str] | None = None) -> int:
    try:
        try:
            return run_command(argv)
        finally:
            sys.stdout.flush()  # output still buffered fails here, not at exit
    except BrokenPipeError:
        return output_closed()


def output_closed() -> int:
    """The reader of chop's output went away (``chop docs --json | head -1``): one line, and
    stdout on /dev/null, so that Python's flush at exit does not fail on the pipe again."""
    with contextlib.suppress(OSError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        print("chop: output closed before it was all written (broken pipe)", file=sys.stderr)
    return 1


def run_command(argv: list[str] | None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR")  # the embedded server's notice
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except (ValueError, RuntimeError) as exc:
        if args.debug:
            raise
        console.print(f"[red]error:[/] {shown(exc)}")
        return 2
    except psycopg.OperationalError as exc:  # includes the pool's timeout
        if args.debug:
            raise
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        console.print(f"[red]error:[/] cannot reach the database: {shown(first_line)}")
        return 2
    except KeyboardInterrupt:
        stop_at_once("interrupted")
    except BrokenPipeError:
        raise  # main's: one line for every command
    except Exception as exc:  # a bug or a case chop does not know: one line, the trace on asking
        if args.debug:
            raise
        console.print(f"[red]error:[/] {one_line(exc)} (chop --debug {args.command} … shows where)")
        return EXIT_INTERNAL


def one_line(exc: BaseException) -> str:
    """An exception as one line: its type and the first line of its message."""
    lines = str(exc).strip().splitlines()
    return shown(f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__)


if __name__ == "__main__":
    sys.exit(main())
