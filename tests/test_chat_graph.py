"""The conversation graph end to end: a thread's follow-ups keep their manual, threads are
kept in PostgreSQL (they survive a restart) and never mix, and every answer is an AI message
whose metadata says which way continuity went."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from chop.api import ask, delete_thread, list_threads, thread_messages
from chop.config import Context
from chop.reading.documents import InvalidInput
from graphs.chat import build_chat_graph
from graphs.chat import graph as chat_graph
from tests.ingest_runs import twin_manuals

ROOT = Path(__file__).resolve().parents[1]


def models_of(result: dict) -> set[str]:  # type: ignore[type-arg]
    return {s["model"] for s in result["sources"]}


def test_a_follow_up_that_names_no_model_is_answered_from_the_previous_manual(
    context: Context, store, scripted
) -> None:  # type: ignore[no-untyped-def]
    ctx = twin_manuals(context)
    first = ask("How often do I clean the filter of the Coolwave 330C?", context=ctx, thread_id="a")
    assert first["continuity"]["decision"] == "first" and models_of(first) == {"Coolwave 330C"}
    follow = ask("How do I empty the water tank?", context=ctx, thread_id="a")
    assert follow["continuity"]["decision"] == "continue"
    assert follow["continuity"]["inherited"] == {"model": "Coolwave 330C"}
    assert follow["question"] == "[Coolwave 330C] How do I empty the water tank?"
    assert follow["asked"] == "How do I empty the water tank?"
    assert models_of(follow) == {"Coolwave 330C"}


def test_what_about_another_model_asks_the_previous_question_about_it(
    context: Context, store, scripted
) -> None:  # type: ignore[no-untyped-def]
    ctx = twin_manuals(context).with_overrides(answer="quote")
    ask("How often do I clean the filter of the Coolwave 330C?", context=ctx, thread_id="b")
    other = ask("What about the 225B?", context=ctx, thread_id="b")
    assert other["continuity"]["decision"] == "switch_same_question"
    assert other["question"] == "[Coolwave 225B] How often do I clean the filter?"
    assert models_of(other) == {"Coolwave 225B"} and "every 2 weeks" in other["answer"]


def test_two_threads_never_mix(context: Context, store, scripted) -> None:  # type: ignore[no-untyped-def]
    ctx = twin_manuals(context).with_overrides(answer="quote")
    ask("How often do I clean the filter of the Coolwave 330C?", context=ctx, thread_id="x")
    ask("How often do I clean the filter of the Coolwave 225B?", context=ctx, thread_id="y")
    in_x = ask("And how do I empty the water tank?", context=ctx, thread_id="x")
    in_y = ask("And how do I empty the water tank?", context=ctx, thread_id="y")
    assert models_of(in_x) == {"Coolwave 330C"} and models_of(in_y) == {"Coolwave 225B"}
    assert [m["role"] for m in thread_messages("x", context=ctx)] == ["user", "assistant"] * 2


def test_a_thread_survives_a_process_restart_and_can_be_listed_and_deleted(
    context: Context, store, scripted, data_dir: Path
) -> None:  # type: ignore[no-untyped-def]
    ctx = twin_manuals(context).with_overrides(answer="quote")
    first_turn = (
        "import json, sys; from chop.api import ask; from chop.config import Context;"
        "ctx = Context(**json.loads(sys.argv[1]));"
        "print(json.dumps(ask(sys.argv[2], context=ctx, thread_id='kept')['continuity']))"
    )
    settings = {k: getattr(ctx, k) for k in ("database_url", "data_dir", "collection", "answer")}
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", first_turn, json.dumps(settings),
         "How often do I clean the filter of the Coolwave 330C?"],
        env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1])["decision"] == "first"
    later = ask("How do I empty the water tank?", context=ctx, thread_id="kept")
    assert later["continuity"]["decision"] == "continue"
    assert models_of(later) == {"Coolwave 330C"}
    listed = list_threads(context=ctx)
    assert [(t["thread_id"], t["turns"]) for t in listed] == [("kept", 2)]
    assert listed[0]["last_question"] == "How do I empty the water tank?"
    assert delete_thread("kept", context=ctx) is True
    assert delete_thread("kept", context=ctx) is False
    assert list_threads(context=ctx) == []
    fresh = ask("How do I empty the water tank?", context=ctx, thread_id="kept")
    assert fresh["continuity"]["decision"] == "first"


def test_the_graph_speaks_messages_and_says_why_in_the_answer_metadata(
    context: Context, store, scripted
) -> None:  # type: ignore[no-untyped-def]
    ctx = twin_manuals(context).with_overrides(answer="quote")
    graph = build_chat_graph().builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "m"}}
    first = "How often do I clean the filter of the Coolwave 330C?"
    graph.invoke({"messages": [{"role": "user", "content": first}]}, config=config, context=ctx)
    out = graph.invoke(
        {"messages": [{"role": "user", "content": "and the 225B?"}]}, config=config, context=ctx
    )
    assert set(out) == {"messages", "turn"}
    answer = out["messages"][-1]
    assert isinstance(answer, AIMessage) and len(out["messages"]) == 4
    meta = answer.additional_kwargs["chop"]
    assert set(meta) >= {"citations", "sources", "declined", "continuity"}
    assert meta["continuity"] == {
        "decision": "switch_same_question",
        "reason": "only names Coolwave 225B: the previous question, asked about it",
        "inherited": {"topic": "How often do I clean the filter?"},
        "question": "[Coolwave 225B] How often do I clean the filter?",
    }
    assert meta["declined"] is False and meta["citations"]
    assert answer.content and "2 weeks" in str(answer.content)
    assert {s["doc_id"] for s in meta["sources"]} == {"m2"}
    assert out["turn"]["documents"] == ["m2"] and out["turn"]["names"] == {"model": "Coolwave 225B"}


def test_a_run_without_the_users_question_is_one_clear_error(
    context: Context, store, scripted
) -> None:  # type: ignore[no-untyped-def]
    ctx = twin_manuals(context)
    with pytest.raises(InvalidInput, match="messages"):
        chat_graph.invoke({"messages": [AIMessage("hello")]}, context=ctx)
    with pytest.raises(InvalidInput, match="unknown input key"):
        chat_graph.invoke({"question": "How often?"}, context=ctx)
    with pytest.raises(InvalidInput, match="empty"):
        chat_graph.invoke({"messages": [HumanMessage("   ")]}, context=ctx)


def test_streaming_messages_gives_the_answer_as_one_message_and_no_llm_json(
    context: Context, store, scripted
) -> None:  # type: ignore[no-untyped-def]
    ctx = twin_manuals(context).with_overrides(answer="lead")  # the LLM writes a lead (JSON)
    graph = build_chat_graph().builder.compile(checkpointer=InMemorySaver())
    question = {"role": "user", "content": "How often do I clean the filter of the Coolwave 330C?"}
    before = scripted.count("answer")
    streamed = list(
        graph.stream(
            {"messages": [question]},
            config={"configurable": {"thread_id": "s"}},
            context=ctx,
            stream_mode="messages",
        )
    )
    assert scripted.count("answer") == before + 1, "the LLM was asked for the answer's lead"
    assert [(type(m).__name__, meta["langgraph_node"]) for m, meta in streamed] == [
        ("AIMessage", "reply")
    ]
    message = streamed[0][0]
    assert "every 4 weeks" in str(message.content)
    assert message.additional_kwargs["chop"]["continuity"]["decision"] == "first"


def test_aask_continues_a_thread_too(context: Context, store, scripted) -> None:  # type: ignore[no-untyped-def]
    import asyncio

    from chop.api import aask

    ctx = twin_manuals(context)

    async def conversation() -> dict:  # type: ignore[type-arg]
        first = "How often do I clean the filter of the Coolwave 225B?"
        await aask(first, context=ctx, thread_id="z")
        return await aask("How do I empty the water tank?", context=ctx, thread_id="z")

    follow = asyncio.run(conversation())
    assert follow["continuity"]["decision"] == "continue" and follow["thread_id"] == "z"
    assert models_of(follow) == {"Coolwave 225B"}
