"""The Python API: ingest paths or documents, ask questions; the graphs underneath.

from chop_rag.api import ingest, ask
report = ingest(["manuals/"])
result = ask("How often do I clean the filter of the 330C?")
ask("How often do I clean the filter of the 330C?", thread_id="t1")  # a conversation
ask("And how do I empty the tank?", thread_id="t1")  # a follow-up: the same manual
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import json
import logging
import os
import time
import uuid
from collections.abc import Callable, Coroutine, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from langchain_core.documents import Document
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import StateSnapshot

from chop_rag.config import Context
from chop_rag.reading.documents import PathNotFound, SourceDocument, missing_paths, source_documents
from chop_rag.state import add_counts

log = logging.getLogger("chop_rag.api")

Event = dict[str, Any]
P = ParamSpec("P")
R = TypeVar("R")


def run_config(ctx: Context, thread_id: str | None = None) -> RunnableConfig:
    # LangGraph's own stream waiter takes one worker thread when streaming with subgraphs, so
    # the pool gets one more; LLM calls in flight are bounded in chop_rag.models.llm by
    # max_concurrency.
    config: RunnableConfig = {"max_concurrency": ctx.max_concurrency + 1, "recursion_limit": 50}
    if thread_id:
        config["configurable"] = {"thread_id": thread_id}
    return config


def ingest(
    paths: Iterable[str | Path] | str | Path = (),
    documents: Sequence[SourceDocument | Document] | Document = (),
    *,
    delete: Sequence[str] | str = (),
    context: Context | None = None,
    on_event: Callable[[Event], None] | None = None,
    durable: bool = False,
    checkpointer: BaseCheckpointSaver | None = None,
    thread_id: str | None = None,
    meta: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Index ``paths`` (files or folders; one path may be given alone) and/or loaded
    ``documents`` (chop's ``SourceDocument`` dicts or LangChain ``Document``s); returns the
    report. Paths of which none exists raise :class:`chop_rag.reading.documents.PathNotFound` (a
    ``FileNotFoundError``) before anything starts; a missing one beside others is a problem
    in the report.

    ``meta`` sets identity fields (chop_rag.labelling.identity.USER_FIELDS, e.g. ``{"fiscal_year":
    2023}``) for every document of this run; a ``<file>.meta.json`` beside a file sets them for one.

    ``durable=True`` checkpoints every step in PostgreSQL (langgraph-checkpoint-postgres, in the
    collection's database); running the same ingest again after a crash resumes the unfinished
    run instead of starting over. The thread is derived from the collection and the inputs
    unless ``thread_id`` is given; pass your own ``checkpointer`` to keep state elsewhere.
    Even without it nothing is paid twice: finished documents are unchanged on the next run and
    LLM answers come from the cache.
    """
    ctx = context or Context()
    names = path_list(paths)
    if names and missing_paths(names) == names:  # before the database or a model starts
        raise PathNotFound(names)
    payload: dict[str, Any] = {
        "paths": names,
        "documents": source_documents(document_list(documents)),
        "delete": [delete] if isinstance(delete, str) else list(delete),
    }
    if meta is not None:
        from chop_rag.labelling.identity import input_meta

        payload["meta"] = input_meta(meta)  # unknown or mistyped fields fail before any work
    if durable and checkpointer is None:
        from chop_rag.store import store_for
        from chop_rag.store.checkpoints import durable_checkpointer
        from chop_rag.store.pgserver import resolve_database_url

        url = resolve_database_url(ctx.database_url, ctx.data_dir)
        # The store first: a database that is unreachable, or lacks pgvector, when the run
        # starts is one line now, not a wait for the outage bound in the checkpointer's setup.
        store_for(ctx)  # also gives the database's Outage this run's bound
        with durable_checkpointer(url) as saver:
            inputs, contents = input_keys(ctx, payload)
            thread_id = thread_id or f"ingest-{ctx.collection}-{inputs}-{contents}"
            with one_run_per_thread(url, thread_id):
                return _run_durable(ctx, payload, on_event, saver, thread_id, inputs)
    return _run_ingest(ctx, payload, on_event, checkpointer, thread_id)


@contextmanager
def one_run_per_thread(url: str, thread_id: str, *, what: str = "ingest") -> Iterator[None]:
    """Hold ``thread_id`` while its run goes on (a session advisory lock in the thread's
    database, so for every process that uses it): the same ingest started twice at once (two
    workers given one batch) waits for the first instead of running the same checkpointed
    thread from two processes, and then finds the documents unchanged; a conversation's second
    turn sent at once waits for the first and follows it, instead of both starting from the
    same checkpoint and one overwriting the other. The lock goes with the connection if this
    process dies, and the thread can resume."""
    import psycopg

    from chop_rag.store.locks import session_lock

    def waiting() -> None:
        log.warning("another process is running this %s (%s); waiting for it", what, thread_id)

    with (
        psycopg.connect(url, autocommit=True) as conn,
        session_lock(conn, f"chop-thread/{thread_id}", waiting=waiting),
    ):
        yield


def _run_durable(
    ctx: Context,
    payload: dict[str, Any],
    on_event: Callable[[Event], None] | None,
    saver: Any,
    thread_id: str,
    inputs: str,
) -> dict[str, Any]:
    """A checkpointed run: stale and abandoned threads dropped first, its own when done."""
    for stale in saver.threads_with_prefix(f"ingest-{ctx.collection}-{inputs}-"):
        if stale != thread_id:  # the same inputs as they were on disk before: stale
            saver.delete_thread(stale)
    for abandoned in saver.threads_idle_since("ingest-", ctx.checkpoint_retention_days):
        if abandoned != thread_id:  # killed long ago and never run again
            saver.delete_thread(abandoned)
    report = _run_ingest(ctx, payload, on_event, saver, thread_id)
    saver.delete_thread(thread_id)  # finished: its checkpoints have no further use
    return report


def path_list(paths: Iterable[str | os.PathLike[str]] | str | os.PathLike[str]) -> list[str]:
    """``paths`` as a list of names: one ``str`` or ``Path`` is one path (iterating a string
    would ingest its characters, and "/" walks the whole file system)."""
    if isinstance(paths, str | os.PathLike):
        return [os.fspath(paths)]
    if isinstance(paths, bytes) or not isinstance(paths, Iterable):
        raise TypeError(f"paths must be a path or a list of paths, not {type(paths).__name__}")
    names = list(paths)
    for position, name in enumerate(names):
        if not isinstance(name, str | os.PathLike):
            raise TypeError(
                f"paths[{position}] must be a str or Path, not {type(name).__name__} {name!r}"
            )
    return [os.fspath(name) for name in names]


def document_list(documents: Any) -> list[Any]:
    """One document (a LangChain ``Document`` or a chop dict) is a list of one: iterating a
    ``Document`` would give its fields."""
    if isinstance(documents, Document | dict):
        return [documents]
    if isinstance(documents, str | bytes) or not isinstance(documents, Iterable):
        raise TypeError(f"documents must be a list of documents, not {type(documents).__name__}")
    return list(documents)


def input_keys(ctx: Context, payload: dict[str, Any]) -> tuple[str, str]:
    """Two short keys of an ingest: what it names (resolved paths, document ids, deletions),
    and what those inputs hold right now (a hash of every file's bytes and document's text)."""
    from chop_rag.reading.documents import content_hash
    from chop_rag.reading.loaders import input_file_hashes

    named = json.dumps(
        [
            sorted(str(Path(p).absolute()) for p in payload["paths"]),
            sorted(d["doc_id"] for d in payload["documents"]),
            sorted(payload["delete"]),
            payload.get("meta") or {},
        ],
        sort_keys=True,
    )
    contents = json.dumps(
        [
            input_file_hashes(payload["paths"], max_file_mb=ctx.max_file_mb),
            sorted((d["doc_id"], content_hash(d["title"] + "\0" + d["text"]))
                   for d in payload["documents"]),
        ]
    )  # fmt: skip
    return _short_hash(named), _short_hash(contents)


def default_thread_id(ctx: Context, payload: dict[str, Any]) -> str:
    """The same collection, inputs and input contents map to the same thread, so a rerun
    resumes it; another folder, or a file edited or deleted since, starts a fresh run."""
    inputs, contents = input_keys(ctx, payload)
    return f"ingest-{ctx.collection}-{inputs}-{contents}"


def _short_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _run_ingest(
    ctx: Context,
    payload: dict[str, Any],
    on_event: Callable[[Event], None] | None,
    checkpointer: BaseCheckpointSaver | None,
    thread_id: str | None,
) -> dict[str, Any]:
    from chop_rag.graphs.ingest import build_ingest_graph
    from chop_rag.models.llm import reset_outages
    from chop_rag.stage_profile import process_cpu, stage_profile

    started, cpu_before = time.time(), process_cpu()
    reset_outages()  # each run gives the endpoint a fresh chance: it may be back
    graph: Any = build_ingest_graph()
    if checkpointer is not None:
        graph = graph.builder.compile(checkpointer=checkpointer, name="ingest")
        thread_id = thread_id or str(uuid.uuid4())
    config = run_config(ctx, thread_id)
    start: dict[str, Any] | None = payload
    paid_before: dict[str, float] = {}
    if checkpointer is not None:
        snapshot = graph.get_state(config, subgraphs=True)
        if snapshot.next:
            start = None  # an unfinished run of this thread: resume it
            paid_before = counts_before_resume(snapshot)
            if on_event is not None:
                on_event({"event": "resumed", "thread_id": thread_id})
    final: dict[str, Any] = {}
    last_llm_error = ""
    for namespace, mode, chunk in graph.stream(
        start, config=config, context=ctx, stream_mode=["custom", "values"], subgraphs=True
    ):
        if mode == "custom":
            if chunk.get("event") == "llm_failed":
                last_llm_error = str(chunk.get("error") or "")
            if on_event is not None:
                on_event(chunk)
        elif mode == "values" and not namespace:
            final = chunk
    stats = {k: v - paid_before.get(k, 0) for k, v in final.get("stats", {}).items()}
    cpu_after = process_cpu()
    report = {
        **final.get("report", {}),
        "problems": final.get("problems", []),
        "warnings": final.get("warnings", []),
        "stats": stats,
        # this process's part of the run: wall, CPU and their stages (chop_rag.stage_profile)
        "stage_profile": stage_profile(
            final.get("stage_spans", []),
            started=started,
            ended=time.time(),
            cpu_process=cpu_after[0] - cpu_before[0],
            cpu_children=cpu_after[1] - cpu_before[1],
        ),
    }
    failed, asked = int(stats.get("llm_failures", 0)), int(stats.get("llm_tasks", 0))
    if asked and failed * 2 > asked:
        last = f" (last: {last_llm_error})" if last_llm_error else ""
        report["llm_unavailable"] = (
            f"{failed} of {asked} LLM answers failed{last}; their chunks "
            "were stored with fallback labels and the next ingest relabels them"
        )
    return report


def counts_before_resume(snapshot: StateSnapshot) -> dict[str, float]:
    """The counters an interrupted run had already summed (its state, finished tasks' writes
    included, and the same inside each unfinished document), so that a resumed run reports
    only its own work."""
    counts = dict(snapshot.values.get("stats", {}))
    for task in snapshot.tasks:
        if task.result is None and isinstance(task.state, StateSnapshot):
            counts = add_counts(counts, counts_before_resume(task.state))
    return counts


def ask(
    question: str, *, context: Context | None = None, thread_id: str | None = None
) -> dict[str, Any]:
    """Answer ``question`` from the collection; returns answer, citations and sources.

    With ``thread_id`` the question is a turn of that conversation (the chat graph, kept in
    the collection's PostgreSQL): a follow-up that names no device or company is about the
    previous turn's documents, "What about the S9?" asks the previous question about the S9
    (chop_rag.questions.conversation). The result then also has ``continuity`` (decision, reason,
    inherited, the standalone question) and ``thread_id``. Two turns of one thread asked at
    once, from two threads or two processes, run one after the other (the second follows the
    first). Without it, a one-off question, as always.
    """
    ctx = context or Context()
    if thread_id is not None:
        with conversations(ctx) as threads:
            return threads.ask(question, thread_id)
    from chop_rag.graphs.answer import graph as answer_graph

    graph: Any = answer_graph
    return dict(graph.invoke({"question": question}, context=ctx, config=run_config(ctx)))


# the answer's keys a thread's turn returns, as a one-off ask does
ANSWER_KEYS = (
    "question",
    "answer",
    "answerable",
    "citations",
    "sources",
    "question_model",
    "retrieval_note",
    "answer_note",
    "error",
)


def check_thread_id(thread_id: str) -> str:
    if not isinstance(thread_id, str) or not thread_id.strip():
        raise ValueError(f"thread_id must be a non-empty string, not {thread_id!r}")
    if len(thread_id) > 200 or any(ord(c) < 32 for c in thread_id):
        raise ValueError(f"thread_id must be one line of at most 200 characters: {thread_id!r}")
    return thread_id


class Conversations:
    """The conversations of one collection, on one open checkpointer (see
    :func:`conversations`). A thread is stored as ``chat-<collection>-<thread_id>``: two
    collections' threads of the same name never mix."""

    def __init__(self, ctx: Context, saver: Any, url: str) -> None:
        from chop_rag.graphs.chat import build_chat_graph

        self.ctx = ctx
        self.url = url  # the database whose advisory locks keep a thread's turns in order
        self.saver = saver
        self.graph: Any = build_chat_graph().builder.compile(checkpointer=saver, name="chat")
        self.prefix = f"chat-{ctx.collection}-"

    def config(self, thread_id: str) -> RunnableConfig:
        return run_config(self.ctx, self.prefix + check_thread_id(thread_id))

    def ask(self, question: str, thread_id: str) -> dict[str, Any]:
        """One turn of ``thread_id``; the result as :func:`ask` returns it, with
        ``continuity``, ``asked`` (the user's words) and ``thread_id``."""
        from langchain_core.messages import HumanMessage

        from chop_rag.questions.query import clean_question

        config = self.config(thread_id)
        question = clean_question(question)
        stored = config["configurable"]["thread_id"]
        with one_run_per_thread(self.url, stored, what="conversation"):  # one turn at a time
            self.graph.invoke(
                {"messages": [HumanMessage(question)]}, config=config, context=self.ctx
            )
            values = self.graph.get_state(config).values
        result = {key: values[key] for key in ANSWER_KEYS if values.get(key) not in (None, "")}
        meta = values["messages"][-1].additional_kwargs.get("chop", {})
        result["answerable"] = bool(values.get("answerable"))
        result["continuity"] = meta.get("continuity", {})
        result["asked"] = question
        result["thread_id"] = thread_id
        return result

    def messages(self, thread_id: str) -> list[dict[str, Any]]:
        """The thread's messages, oldest first: role ("user"/"assistant"), content (the text;
        an answer's with its ``[n]`` markers) and, for answers, chop's metadata (citations,
        sources, continuity)."""
        values = self.graph.get_state(self.config(thread_id)).values
        return [
            {
                "role": "user" if m.type == "human" else "assistant",
                "content": m.text,
                **({"chop": m.additional_kwargs["chop"]} if "chop" in m.additional_kwargs else {}),
            }
            for m in values.get("messages", [])
        ]

    def list(self) -> list[dict[str, Any]]:
        """The collection's threads, most recently used first: thread_id, turns (questions
        asked), last_question and updated_at."""
        found = []
        for stored in self.saver.threads_with_prefix(self.prefix):
            thread_id = stored[len(self.prefix) :]
            snapshot = self.graph.get_state(run_config(self.ctx, stored))
            questions = [m for m in snapshot.values.get("messages", []) if m.type == "human"]
            found.append(
                {
                    "thread_id": thread_id,
                    "turns": len(questions),
                    "last_question": questions[-1].content if questions else "",
                    "updated_at": snapshot.created_at or "",
                }
            )
        return sorted(found, key=lambda t: str(t["updated_at"]), reverse=True)

    def delete(self, thread_id: str) -> bool:
        """Forget ``thread_id``; False when there was no such thread."""
        stored = self.prefix + check_thread_id(thread_id)
        if self.saver.get_tuple(run_config(self.ctx, stored)) is None:
            return False
        self.saver.delete_thread(stored)
        return True


@contextlib.contextmanager
def conversations(context: Context | None = None) -> Iterator[Conversations]:
    """The collection's conversations, on one checkpointer in the collection's PostgreSQL
    (the one durable ingests use), for several turns without reconnecting each time."""
    from chop_rag.store import outage_for
    from chop_rag.store.checkpoints import durable_checkpointer
    from chop_rag.store.pgserver import resolve_database_url

    ctx = context or Context()
    url = resolve_database_url(ctx.database_url, ctx.data_dir)
    outage_for(url).bound_s = ctx.database_outage_s
    with durable_checkpointer(url) as saver:
        yield Conversations(ctx, saver, url)


def list_threads(*, context: Context | None = None) -> list[dict[str, Any]]:
    """The collection's conversation threads (see :meth:`Conversations.list`)."""
    with conversations(context) as threads:
        return threads.list()


def thread_messages(thread_id: str, *, context: Context | None = None) -> list[dict[str, Any]]:
    """A thread's messages, oldest first (see :meth:`Conversations.messages`)."""
    with conversations(context) as threads:
        return threads.messages(thread_id)


def delete_thread(thread_id: str, *, context: Context | None = None) -> bool:
    """Forget a conversation thread; False when the collection had no such thread."""
    with conversations(context) as threads:
        return threads.delete(thread_id)


def _in_a_thread(sync: Callable[P, R], name: str, doc: str) -> Callable[P, Coroutine[Any, Any, R]]:
    """``sync`` for asyncio code: it runs in a worker thread and the event loop stays free."""

    @functools.wraps(sync)
    async def run(*args: P.args, **kwargs: P.kwargs) -> R:
        return await asyncio.to_thread(sync, *args, **kwargs)

    run.__name__ = run.__qualname__ = name
    run.__doc__ = doc
    return run


aingest = _in_a_thread(
    ingest,
    "aingest",
    """:func:`ingest` for asyncio code: it runs in a worker thread and the event loop stays free.

    The graph's nodes and the store are synchronous, so a thread is what ``ainvoke`` would use
    for them anyway; ``use_models`` overrides travel with it (asyncio copies the context).
    """,
)


async def aask(
    question: str, *, context: Context | None = None, thread_id: str | None = None
) -> dict[str, Any]:
    """:func:`ask` for asyncio code (the answer graph's ``ainvoke``; a thread's turn runs in
    a worker thread, on the synchronous checkpointer)."""
    ctx = context or Context()
    if thread_id is not None:
        return await asyncio.to_thread(ask, question, context=ctx, thread_id=thread_id)
    from chop_rag.graphs.answer import graph as answer_graph

    graph: Any = answer_graph
    return dict(await graph.ainvoke({"question": question}, context=ctx, config=run_config(ctx)))
