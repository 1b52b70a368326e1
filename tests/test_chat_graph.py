"""The conversation graph end to end: a thread's follow-ups keep their manual, threads are
kept in PostgreSQL (they survive a restart) and never mix, and every answer is an AI message
whose metadata says which way continuity went."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Annotated

import pytest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from chop_rag.api import ask, delete_thread, ingest, list_threads, thread_messages
from chop_rag.config import Context
from chop_rag.graphs.chat import build_chat_graph
from chop_rag.graphs.chat import graph as chat_graph
from chop_rag.reading.documents import InvalidInput
from chop_rag.state import ChatOutput
from tests.ingest_runs import twin_manuals, write_manual

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
        "import json, sys; from chop_rag.api import ask; from chop_rag.config import Context;"
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
    assert set(out) <= {"messages", "turn", *ChatOutput.__annotations__}  # no inner channel
    assert {"messages", "turn", "sources", "answerable"} <= set(out)
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


def test_streaming_messages_gives_the_answer_sentence_by_sentence_and_no_llm_json(
    context: Context, store, scripted
) -> None:  # type: ignore[no-untyped-def]
    ctx = twin_manuals(context).with_overrides(answer="lead")  # the LLM writes a lead (JSON)
    graph = build_chat_graph().builder.compile(checkpointer=InMemorySaver())
    question = {"role": "user", "content": "How often do I clean the filter of the Coolwave 330C?"}
    config = {"configurable": {"thread_id": "s"}}
    before = scripted.count("answer")
    streamed = list(
        graph.stream({"messages": [question]}, config, context=ctx, stream_mode="messages")
    )
    assert scripted.count("answer") == before + 1, "the LLM was asked for the answer's lead"
    assert {(type(m).__name__, meta["langgraph_node"]) for m, meta in streamed} == {
        ("AIMessageChunk", "reply")
    }, "no chunk of the LLM's JSON, only the answer"
    assert len(streamed) >= 2 and len({m.id for m, _ in streamed}) == 1
    merged = streamed[0][0]
    for chunk, _ in streamed[1:]:
        merged += chunk
    final = graph.get_state(config).values["messages"][-1]
    assert merged.id == final.id and merged.text == final.text
    assert "every 4 weeks" in merged.text and "[1]" in merged.text
    (annotation,) = merged.content[0]["annotations"]
    assert annotation == final.content[0]["annotations"][0]
    assert merged.additional_kwargs["chop"]["continuity"]["decision"] == "first"


def test_the_answer_message_cites_its_sources_in_standard_annotations(
    context: Context, store, scripted
) -> None:  # type: ignore[no-untyped-def]
    ctx = twin_manuals(context).with_overrides(answer="quote")
    graph = build_chat_graph().builder.compile(checkpointer=InMemorySaver())
    question = {"role": "user", "content": "How often do I clean the filter of the Coolwave 225B?"}
    out = graph.invoke({"messages": [question]}, {"configurable": {"thread_id": "c"}}, context=ctx)
    answer = out["messages"][-1]
    chop = answer.additional_kwargs["chop"]
    (block,) = answer.content_blocks
    assert block["type"] == "text" and "every 2 weeks" in block["text"]
    citations = block["annotations"]
    assert [c["type"] for c in citations] == ["citation"] * len(chop["citations"])
    sources = {s["number"]: s for s in chop["sources"]}
    for citation in citations:
        number = citation["extras"]["number"]
        source = sources[number]
        assert citation["title"] == source["doc_title"]
        assert citation["extras"]["doc_id"] == source["doc_id"]
        assert block["text"][: citation["end_index"]].endswith(f"[{number}]")
        span = block["text"][citation["start_index"] : citation["end_index"]]
        assert "2 weeks" in span and citation["cited_text"]
    # what the last turn found is in the output too (a stream's updates carry it)
    assert out["sources"] == chop["sources"] and out["citations"] == chop["citations"]
    assert out["answerable"] is True and out["continuity"]["decision"] == "first"


def test_updates_say_what_each_node_found_as_it_finishes(context: Context, store, scripted) -> None:  # type: ignore[no-untyped-def]
    ctx = twin_manuals(context).with_overrides(answer="quote")
    graph = build_chat_graph().builder.compile(checkpointer=InMemorySaver())
    question = {"role": "user", "content": "How often do I clean the filter of the Coolwave 225B?"}
    updates = {
        node: found
        for part in graph.stream(
            {"messages": [question]}, {"configurable": {"thread_id": "u"}}, context=ctx,
            stream_mode="updates",
        )
        for node, found in part.items()
    }  # fmt: skip
    assert updates["resolve_turn"]["continuity"]["decision"] == "first"
    assert {s["model"] for s in updates["retrieve"]["sources"]} == {"Coolwave 225B"}
    assert updates["quote_section"]["answerable"] is True and updates["quote_section"]["citations"]
    assert "every 2 weeks" in updates["quote_section"]["answer"]


def test_aask_continues_a_thread_too(context: Context, store, scripted) -> None:  # type: ignore[no-untyped-def]
    import asyncio

    from chop_rag.api import aask

    ctx = twin_manuals(context)

    async def conversation() -> dict:  # type: ignore[type-arg]
        first = "How often do I clean the filter of the Coolwave 225B?"
        await aask(first, context=ctx, thread_id="z")
        return await aask("How do I empty the water tank?", context=ctx, thread_id="z")

    follow = asyncio.run(conversation())
    assert follow["continuity"]["decision"] == "continue" and follow["thread_id"] == "z"
    assert models_of(follow) == {"Coolwave 225B"}


def test_two_turns_sent_to_one_thread_at_once_are_both_kept_in_order(
    context: Context, store, scripted
) -> None:  # type: ignore[no-untyped-def]
    """The second turn waits for the first (a lock in PostgreSQL, so across processes too)
    and follows it; neither starts from the same checkpoint and overwrites the other."""
    import asyncio

    from chop_rag.api import aask
    from tests.fakes import slowed

    ctx = twin_manuals(context)
    scripted.responder = slowed(0.3)  # both turns are inside the graph at once unless one waits
    questions = [
        "How often do I clean the filter of the Coolwave 225B?",
        "How do I empty the water tank of the Coolwave 330C?",
    ]

    async def both_at_once() -> list[dict]:  # type: ignore[type-arg]
        return await asyncio.gather(*(aask(q, context=ctx, thread_id="w") for q in questions))

    asyncio.run(both_at_once())
    messages = thread_messages("w", context=ctx)
    assert [m["role"] for m in messages] == ["user", "assistant"] * 2
    assert sorted(m["content"] for m in messages if m["role"] == "user") == sorted(questions)
    second = messages[2]["content"]  # whichever came second was asked after the first
    assert messages[3]["chop"]["continuity"]["decision"] != "first", second


def test_a_message_whose_content_is_not_text_is_one_sentence(context: Context) -> None:
    """What a server caller may send: one sentence before the run, not pydantic's lines."""
    for message, said in (
        ({"role": "user", "content": 12345}, "message 1's content must be text"),
        ({"role": "user", "content": [1, 2]}, "message 1's content must be text"),
        ({"role": "user", "content": None}, "message 1's content must be text"),
        ({"role": "wizard", "content": "hi"}, "must be chat messages"),
    ):
        with pytest.raises(InvalidInput, match=said) as error:
            chat_graph.invoke({"messages": [message]}, context=context)
        assert "\n" not in str(error.value), str(error.value)


def messages_bytes(context: Context, thread_id: str) -> int:
    """What a thread stores for its messages: their channel's blobs and writes."""
    import psycopg

    from chop_rag.store.pgserver import resolve_database_url

    url = resolve_database_url(context.database_url, context.data_dir)
    stored = f"chat-{context.collection}-{thread_id}"
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT (SELECT coalesce(sum(octet_length(blob)), 0) FROM checkpoint_blobs"
            "        WHERE thread_id = %s AND channel = 'messages')"
            "     + (SELECT coalesce(sum(octet_length(blob)), 0) FROM checkpoint_writes"
            "        WHERE thread_id = %s AND channel = 'messages')",
            (stored, stored),
        ).fetchone()
    return int(row[0]) if row else 0


def test_a_threads_messages_are_stored_once_so_storage_grows_linearly(
    context: Context, store, scripted
) -> None:  # type: ignore[no-untyped-def]
    """Before, every step that changed the message list stored all of it again: six turns
    held 3.5 times what three did (200 turns: 254 MB); now twice (bench.thread_storage)."""
    from chop_rag.api import conversations

    ctx = twin_manuals(context).with_overrides(answer="quote")
    questions = [
        "How often do I clean the filter of the Coolwave 330C?",
        "How do I empty the water tank?",
        "What about the 225B?",
    ]
    with conversations(ctx) as talk:
        for question in questions:
            talk.ask(question, "long")
        after_three = messages_bytes(ctx, "long")
        for question in questions:
            talk.ask(question, "long")
        after_six = messages_bytes(ctx, "long")
        assert len(talk.messages("long")) == 12
    assert after_six <= 2.3 * after_three, (after_three, after_six)


class WholeMessageLists(TypedDict):
    """A conversation's messages as chop stored them before (add_messages)."""

    messages: Annotated[list[AnyMessage], add_messages]


def test_a_thread_stored_with_whole_message_lists_reads_and_continues(
    context: Context, store, scripted
) -> None:  # type: ignore[no-untyped-def]
    """Threads checkpointed before messages were a DeltaChannel: their last whole list is
    the first value, and the next turn follows it."""
    from langgraph.graph import END, START, StateGraph

    from chop_rag.api import conversations

    def answered(state: WholeMessageLists) -> dict[str, list[AnyMessage]]:
        return {"messages": [AIMessage("Clean it every 4 weeks [1].")]}

    ctx = twin_manuals(context).with_overrides(answer="quote")
    with conversations(ctx) as talk:
        before = StateGraph(WholeMessageLists)
        before.add_node(answered)
        before.add_edge(START, "answered")
        before.add_edge("answered", END)
        old = before.compile(checkpointer=talk.saver)
        question = HumanMessage("How often do I clean the filter of the Coolwave 330C?")
        old.invoke({"messages": [question]}, talk.config("old"))
        assert [m["role"] for m in talk.messages("old")] == ["user", "assistant"]
        talk.ask("How do I empty the water tank?", "old")
        kept = talk.messages("old")
    assert [m["role"] for m in kept] == ["user", "assistant"] * 2
    assert kept[0]["content"] == question.content
    assert kept[-1]["chop"]["continuity"]["decision"] == "first"  # no turn was stored before


# Sections of a real phone manual (Samsung Galaxy A20 e-manual, Apache-2.0), where MiniLM put
# "remove all of the certificates" level with removing an email account, and one written to
# say the turn's own words ("Remove all") of nothing in particular.
EMAIL_ACCOUNTS = (
    "## Remove email accounts\n\nShould you need to remove an email account from your device, you "
    "can do so through the Settings menu. From Email, tap Settings. Tap the account you want "
    "to remove. Tap Remove, and confirm when prompted."
)
CREDENTIALS = (
    "## Credential storage\n\nYou can manage the trusted security certificates installed on your "
    "device, which verify the identity of servers for secure connections. View security "
    "certificates: Display certificates in your devices ROM and other certificates you have "
    "installed. Clear credentials: Erase credential contents from the device and reset the "
    "password."
)
REMOVE_ALL = (
    "## Remove all\n\nHow can I remove all of them at once? Tap More options > Remove all, "
    "and all of the items are removed when you confirm."
)
ACCOUNTS = (
    "## Remove an account\n\nYou can remove accounts from your device. From Settings, tap Accounts "
    "and backup > Accounts. Tap the account and then tap Remove account."
)


def test_a_follow_ups_pronoun_finds_the_section_naming_what_it_means(
    context: Context, store, scripted, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """ "And how can I remove all of them?" after a question about certificates: the section
    that names the certificates comes first, not one the vector finds as near ("remove")."""
    ctx = context.with_overrides(continuity_mode="rules")
    write_manual(
        tmp_path, "a20.md", "Galaxy A20", EMAIL_ACCOUNTS, CREDENTIALS, REMOVE_ALL, ACCOUNTS
    )
    ingest([tmp_path], context=ctx)
    ask("How can I see what certificates are installed on my Galaxy A20?", context=ctx,
        thread_id="c")  # fmt: skip
    follow = ask("And how can I remove all of them?", context=ctx, thread_id="c")
    assert follow["question"] == "[Galaxy A20] And how can I remove all of the certificates?"
    assert "Credential storage" in follow["sources"][0]["text"]
    assert "the first passage naming certificates first" in follow["retrieval_note"]
