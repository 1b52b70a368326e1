"""Codes are not models, and a brand is part of a product's name.

An error code ("E2"), a part number or a setting written in a question is what the manuals
that list it are about, not a product model no document covers; a model number written after
a brand the collection does not hold is another product than the stored twin of another
brand; a bare model number that several brands' models end with is ambiguous."""

from __future__ import annotations

import pytest

from chop_rag.api import ask, ingest
from chop_rag.config import Context
from chop_rag.reading.documents import make_document

CODES = {
    "Coolwave 225B": (
        "Error codes shown on the display of the Coolwave air conditioner.\n\n"
        "E1 means the room temperature sensor has failed; contact a service centre.\n\n"
        "E2 means the drain pump has failed; switch the unit off and drain the tank by hand."
    ),
    "Coolwave 410X": (
        "Error codes shown on the display of the Coolwave air conditioner.\n\n"
        "E1 means the room temperature sensor has failed; contact a service centre.\n\n"
        "E5 means the compressor has overheated; let the unit cool for 30 minutes."
    ),
}
FILTER = "Clean the air filter of the {brand} unit every {weeks} weeks with warm water. " * 2


def manuals(context: Context, texts: dict[str, str]) -> Context:
    ctx = context.with_overrides(continuity_mode="rules", chunk_tokens=60, chunk_overlap=0)
    docs = [
        make_document(name.lower().replace(" ", "-"), name, text) for name, text in texts.items()
    ]
    ingest(documents=docs, context=ctx)
    return ctx


def filter_manual(model: str, weeks: int) -> str:
    return FILTER.format(brand=model.split()[0], weeks=weeks)


@pytest.mark.parametrize(
    "question",
    ["What does error E2 mean?", "My display shows E2, what is wrong?", "what is error code e2"],
)
def test_an_error_code_is_answered_from_the_manual_that_lists_it(
    context: Context, store, scripted, question: str
) -> None:  # type: ignore[no-untyped-def]
    ctx = manuals(context, CODES)
    result = ask(question, context=ctx)
    assert result["answerable"] is True, result["answer"]
    assert "drain pump" in result["answer"]
    assert {s["doc_title"] for s in result["sources"]} == {"Coolwave 225B"}


def test_a_code_every_manual_lists_is_answered_not_taken_for_a_model(
    context: Context, store, scripted
) -> None:  # type: ignore[no-untyped-def]
    ctx = manuals(context, CODES)
    result = ask("What does error E1 mean?", context=ctx)
    assert result["answerable"] is True, result["answer"]
    assert "temperature sensor" in result["answer"]


def test_a_code_the_named_models_manual_does_not_list_is_declined(
    context: Context, store, scripted
) -> None:  # type: ignore[no-untyped-def]
    ctx = manuals(context, CODES)
    result = ask("What does error E2 mean on the Coolwave 410X?", context=ctx)
    assert result["answerable"] is False
    assert "E2" in result["answer"] and "Coolwave 410X" in result["answer"]
    listed = ask("What does error E5 mean on the Coolwave 410X?", context=ctx)
    assert listed["answerable"] is True and "overheated" in listed["answer"]


def test_a_code_no_manual_lists_is_declined(context: Context, store, scripted) -> None:  # type: ignore[no-untyped-def]
    ctx = manuals(context, CODES)
    result = ask("What does error E9 mean?", context=ctx)
    assert result["answerable"] is False and "E9" in result["answer"]


def test_a_code_asked_in_a_conversation_stays_with_the_device_of_the_thread(
    context: Context, store, scripted
) -> None:  # type: ignore[no-untyped-def]
    ctx = manuals(context, CODES)
    ask("How do I read the display of the Coolwave 225B?", context=ctx, thread_id="codes")
    follow = ask("What does E2 mean?", context=ctx, thread_id="codes")
    assert follow["continuity"]["decision"] == "continue", "E2 is no other device"
    assert follow["question"].endswith("225B] What does E2 mean?")
    assert follow["answerable"] is True and "drain pump" in follow["answer"]


def test_a_brand_the_collection_does_not_hold_is_declined_naming_the_closest(
    context: Context, store, scripted
) -> None:  # type: ignore[no-untyped-def]
    ctx = manuals(context, {"Breeze 330C": filter_manual("Breeze 330C", 4)})
    result = ask("How often should I clean the air filter of the Coolwave 330C?", context=ctx)
    assert result["answerable"] is False
    assert "Coolwave 330C" in result["answer"] and "Breeze 330C" in result["answer"]
    assert "closest is Breeze 330C" in result["retrieval_note"]
    same = ask("How often should I clean the air filter of the Breeze 330C?", context=ctx)
    assert same["answerable"] is True and "4 weeks" in same["answer"]
    bare = ask("How often should I clean the air filter of the 330C?", context=ctx)
    assert bare["answerable"] is True, "the only 330C there is"


def test_a_bare_model_number_of_several_brands_is_said_to_be_ambiguous(
    context: Context, store, scripted
) -> None:  # type: ignore[no-untyped-def]
    ctx = manuals(
        context,
        {
            "Breeze 330C": filter_manual("Breeze 330C", 4),
            "Coolwave 330C": filter_manual("Coolwave 330C", 6),
        },
    )
    result = ask("How often should I clean the air filter of my 330C?", context=ctx)
    assert result["answerable"] is False
    assert "Breeze 330C" in result["answer"] and "Coolwave 330C" in result["answer"]
    named = ask("How often should I clean the air filter of my Coolwave 330C?", context=ctx)
    assert named["answerable"] is True and "6 weeks" in named["answer"]


NETWORK_MANUAL = (
    "## Troubleshooting the network connection\n\n"
    "If the TV cannot connect, configure the connection settings again: open the network "
    "connection settings, check the connection, configure the router's connection settings "
    "and test the connection settings once more.\n\n"
    "## Configuring the IPv6 connection settings\n\n"
    "Open Settings, General, Network, Expert Settings, IPv6 and turn IPv6 on to connect "
    "over IPv6.\n\n"
    "## Setting the picture mode\n\n"
    "Choose a picture mode that suits the room: Dynamic, Standard, Natural or Movie."
)


def test_a_code_is_matched_as_its_own_word_not_with_every_word_of_the_topic(
    context: Context, store, scripted
) -> None:  # type: ignore[no-untyped-def]
    """The IPv6 section, not the page that repeats "connection settings": the full-text side
    of a code's search is the code (the topic's other words stay with the vector)."""
    ctx = manuals(context, {"Vista 55Q": NETWORK_MANUAL})
    result = ask("How to configure the IPv6 connection settings?", context=ctx)
    assert "turn IPv6 on" in result["sources"][0]["text"], result["sources"][0]["text"]
    assert "the code IPv6" in result["retrieval_note"]
