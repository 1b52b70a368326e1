"""`chop chat` and `chop threads`: conversations on the command line (chop_rag.api.conversations).

`chop chat` reads one question a line from stdin and answers each as a turn of its thread;
`chop ask --thread` (chop_rag.cli) is one turn. The lines about continuity go to stderr, answers to
stdout, so a piped conversation's answers can be read one a line.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from chop_rag.config import Context
from chop_rag.store import store_for

console = Console(stderr=True, soft_wrap=True)  # one message, one line, even when piped
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def shown(text: object) -> str:
    """User text for one console line: control characters escaped, no markup read in it."""
    return escape(_CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode(), str(text)))


def say_continuity(result: Mapping[str, Any]) -> None:
    """One dim line on a follow-up that inherited or switched: which way, why, and the
    question actually asked."""
    continuity = result.get("continuity") or {}
    decision = continuity.get("decision")
    if decision in (None, "first") or (decision == "continue" and not continuity.get("inherited")):
        return
    console.print(
        f"[dim]{decision}: {shown(continuity.get('reason', ''))}; "
        f"asked as: {shown(continuity.get('question', ''))}[/]"
    )


def cmd_chat(args: argparse.Namespace) -> int:
    """A conversation on stdin: one question a line, answers on stdout; ``--thread`` resumes."""
    import uuid

    from chop_rag.api import conversations

    ctx = Context().with_overrides(collection=args.collection, k=args.k, search=args.search)
    if not store_for(ctx).documents(ctx.collection):
        console.print(
            f"[red]error:[/] collection {ctx.collection!r} has no documents "
            f"(chop ingest PATH --collection {ctx.collection})"
        )
        return 1
    thread_id = args.thread or uuid.uuid4().hex[:8]
    interactive = sys.stdin.isatty()
    if interactive:
        import readline  # noqa: F401  (arrow keys and history for input())
    with conversations(ctx) as talk:
        earlier = talk.messages(thread_id)
        if earlier:
            turns = sum(m["role"] == "user" for m in earlier)
            console.print(f"resuming thread {shown(thread_id)} ({turns} questions so far)")
        else:
            console.print(
                f"thread {shown(thread_id)} (resume with: chop chat --thread {shown(thread_id)});"
                " /history shows it, /quit or an empty input ends"
            )
        while True:
            try:
                line = input("you> " if interactive else "")
            except EOFError:
                break
            question = line.strip()
            if question in ("/quit", "/exit") or (not question and interactive):
                break
            if not question:
                continue
            if question == "/history":
                for message in talk.messages(thread_id):
                    who = "you" if message["role"] == "user" else "chop"
                    print(f"{who}> {message['content']}")
                continue
            result = talk.ask(question, thread_id)
            say_continuity(result)
            print(result["answer"], flush=True)
            cited = [s for s in result.get("sources", []) if s["number"] in result["citations"]]
            for source in cited:
                console.print(f"[dim]  [{source['number']}] {escape(source['doc_title'])}[/]")
            if result.get("error"):
                why = shown(result["error"])
                console.print(f"[red]LLM unavailable:[/] the answer quotes the sources only: {why}")
    return 0


def cmd_threads(args: argparse.Namespace) -> int:
    """The collection's conversation threads, or one deleted."""
    from chop_rag.api import delete_thread, list_threads

    ctx = Context().with_overrides(collection=args.collection)
    if args.delete:
        if delete_thread(args.delete, context=ctx):
            console.print(f"deleted thread {shown(args.delete)}")
            return 0
        console.print(f"[red]error:[/] no thread {shown(args.delete)} in {ctx.collection!r}")
        return 1
    threads = list_threads(context=ctx)
    if args.json:
        print(json.dumps(threads, indent=2, default=str))
        return 0
    table = Table("thread", "questions", "last question", "updated")
    for thread in threads:
        table.add_row(
            shown(thread["thread_id"]),
            str(thread["turns"]),
            escape(str(thread["last_question"])[:60]),
            str(thread["updated_at"])[:19],
        )
    Console().print(table)
    return 0
