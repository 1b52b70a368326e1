"""Dialogue continuity as a specification: which documents a follow-up is about.

The rules read only the new question and the thread's last turn (chop_rag.questions.conversation),
against identity cards like the ones ingestion stores; no LLM, no database.
"""

from __future__ import annotations

from typing import Any

import pytest

from chop_rag.labelling.cards import DocumentCard, card_from_stored, read_cards
from chop_rag.labelling.identity import merge_cards
from chop_rag.questions.conversation import (
    IN_ONE_PASSAGE,
    NEXT_TO,
    SaidTogether,
    Standalone,
    Turn,
    decide,
    inherit,
    reask,
    switch,
    turn_of,
)

PHONES = [
    DocumentCard(name, product_model=name, kind="user manual")
    for name in ["Galaxy Note10", "Galaxy Note10+", "Galaxy S9", "Galaxy S9+", "Galaxy S10",
                 "Galaxy Tab S4", "Smart TV remote", "Coolwave 330C", "Coolwave 410X"]
]  # fmt: skip


def filings() -> list[DocumentCard]:
    stored = {
        f"bby-{year}": {"kind": "10-K", "entity": "Best Buy Co., Inc.", "fiscal_year": year}
        for year in (2021, 2022, 2023)
    } | {
        f"amcor-{year}": {"kind": "10-K", "entity": "Amcor plc", "fiscal_year": year}
        for year in (2022, 2023)
    }
    return read_cards(card_from_stored(d, merge_cards(card)) for d, card in stored.items())


def conversation(
    questions: list[str], cards: list[DocumentCard], said: SaidTogether | None = None
) -> list[Turn]:
    """Each question's turn, as the chat graph makes it (without retrieval; ``said`` stands
    for what the documents in view say together)."""
    turns: list[Turn] = []
    for question in questions:
        previous = turns[-1] if turns else None
        continuity = decide(question, previous, cards)
        standalone: Standalone
        if continuity.decision == "continue":
            standalone = inherit(question, continuity, previous or {}, said)
        elif continuity.decision == "switch_same_question":
            standalone = reask(continuity, previous or {})
        else:
            standalone = switch(question, continuity, previous)
        turns.append(turn_of(continuity, standalone))
    return turns


def last(
    questions: list[str], cards: list[DocumentCard] = PHONES, said: SaidTogether | None = None
) -> Turn:
    return conversation(questions, cards, said)[-1]


FIRST = "I have a Samsung Galaxy Note10. How can I use time zone converter?"


def test_the_first_turn_is_asked_as_written() -> None:
    turn = last([FIRST])
    assert turn["decision"] == "first" and turn["question"] == FIRST
    assert turn["names"] == {"model": "Galaxy Note10"}
    assert turn["topic"] == "How can I use time zone converter?"


@pytest.mark.parametrize(
    "follow_up",
    [
        "How can I enable screenshot toolbar?",
        "how do I turn on dark mode",
        "Where is the SIM card tray?",
        "Can I record the screen?",
        "OK. And how do I change the wallpaper?",
        "what about battery saving?",
    ],
)
def test_a_follow_up_naming_no_device_stays_with_the_previous_device(follow_up: str) -> None:
    turn = last([FIRST, follow_up])
    assert turn["decision"] == "continue"
    assert turn["question"] == f"[Galaxy Note10] {follow_up}"
    assert turn["inherited"] == {"model": "Galaxy Note10"}
    assert "Galaxy Note10" in turn["reason"]


@pytest.mark.parametrize(
    "first",
    [
        FIRST,
        "My phone is a galaxy note 10. How can I use time zone converter?",
        "How can I use time zone converter on my Note-10?",
        "On my Note-10, how can I use time zone converter?",
        "[Galaxy Note10] How can I use time zone converter?",
    ],
)
def test_what_about_re_asks_the_first_question_however_the_device_was_named(first: str) -> None:
    turn = last([first, "and the S9?"])
    assert turn["question"].startswith("[Galaxy S9] ")
    assert turn["question"].lower().endswith("how can i use time zone converter?")
    assert "note" not in turn["question"].lower(), "nothing of the previous device is kept"


def test_continuity_holds_over_many_turns() -> None:
    turns = conversation(
        [FIRST, "How can I enable screenshot toolbar?", "and the always on display?"], PHONES
    )
    assert [t["decision"] for t in turns] == ["first", "continue", "continue"]
    assert turns[-1]["question"].startswith("[Galaxy Note10] ")


@pytest.mark.parametrize(
    ("follow_up", "device"),
    [
        ("What about the Galaxy S9?", "Galaxy S9"),
        ("What about the S9+?", "Galaxy S9+"),
        ("And the S10?", "Galaxy S10"),
        ("and on my galaxy s9 plus", "Galaxy S9+"),
        ("Same question for the Galaxy S10", "Galaxy S10"),
        ("How about the Tab S4?", "Galaxy Tab S4"),
        ("Is it the same on the S9?", "Galaxy S9"),
        ("Galaxy S10?", "Galaxy S10"),
        ("what about for the note10 plus then", "Galaxy Note10+"),
        ("Can the S9 do that too?", "Galaxy S9"),
        ("and for the Galaxy Note10 Plus", "Galaxy Note10+"),
        ("Is it the same on the Galaxy Note-10 Plus?", "Galaxy Note10+"),
        ("What about the note 10 plus?", "Galaxy Note10+"),
        ("What about the Galaxy S-10?", "Galaxy S10"),
    ],
)
def test_a_turn_that_only_names_another_device_asks_the_previous_question_about_it(
    follow_up: str, device: str
) -> None:
    turn = last([FIRST, follow_up])
    assert turn["decision"] == "switch_same_question"
    assert turn["question"] == f"[{device}] How can I use time zone converter?"
    assert turn["inherited"] == {"topic": "How can I use time zone converter?"}
    assert turn["names"] == {"model": device}


def test_a_turn_naming_another_device_with_its_own_question_carries_nothing_over() -> None:
    turn = last([FIRST, "How do I take a screenshot on the Galaxy S9?"])
    assert turn["decision"] == "switch"
    assert turn["question"] == "How do I take a screenshot on the Galaxy S9?"
    assert turn["inherited"] == {} and turn["names"] == {"model": "Galaxy S9"}


def test_after_a_switch_the_new_device_is_the_one_inherited() -> None:
    turn = last([FIRST, "What about the Galaxy S9?", "How can I enable screenshot toolbar?"])
    assert turn["decision"] == "continue"
    assert turn["question"] == "[Galaxy S9] How can I enable screenshot toolbar?"


def test_a_turn_naming_the_same_device_again_continues() -> None:
    turn = last([FIRST, "Does the Note10 have a screenshot toolbar?"])
    assert turn["decision"] == "continue"
    assert turn["question"] == "Does the Note10 have a screenshot toolbar?"


MESH = "How do I take out the mesh filter of the Coolwave 330C?"


@pytest.mark.parametrize(
    "follow_up",
    ["Where is that setting?", "Can you tell me more about that?", "How do I do it?",
     "Where do I find that?", "and where's that one?"],
)  # fmt: skip
def test_a_pronoun_follow_up_with_no_topic_of_its_own_asks_about_the_previous_topic(
    follow_up: str,
) -> None:
    turn = last([MESH, follow_up])
    assert turn["decision"] == "continue"
    assert turn["question"].startswith(f"[Coolwave 330C] {follow_up}")
    assert "take out the mesh filter" in turn["question"]
    assert turn["inherited"]["topic"] == "How do I take out the mesh filter?"


@pytest.mark.parametrize(
    "follow_up", ["how often should I clean it?", "Is this washable?", "Can I wash it with soap?"]
)
def test_a_pronoun_follow_up_that_asks_something_new_is_asked_its_own_question(
    follow_up: str,
) -> None:
    turn = last([MESH, follow_up])
    assert turn["decision"] == "continue" and "asks its own question" in turn["reason"]
    assert turn["question"].startswith("[Coolwave 330C] ")
    assert "take out" not in turn["question"], "the previous question is not asked again"
    assert "the mesh filter" in turn["question"], "the pronoun means what was asked about"
    assert not {"it", "this"} & set(turn["question"].rstrip("?").split()), "and stands in for it"
    assert turn["inherited"] == {"model": "Coolwave 330C", "referent": "mesh filter"}


def never_together(thing: str, own: object) -> bool:
    return False


def test_a_pronoun_means_the_device_when_the_manual_never_says_it_of_the_thing() -> None:
    """ "reset" is never said of the air filter: "How do I reset it?" resets the unit."""
    turn = last(
        ["How often should I clean the air filter on the Coolwave 330C?", "How do I reset it?"],
        said=never_together,
    )
    assert turn["decision"] == "continue"
    assert turn["question"] == "[Coolwave 330C] How do I reset it?"
    assert "filter" not in turn["question"] and "referent" not in turn["inherited"]


def test_a_plural_pronoun_means_the_things_the_manual_says_it_of() -> None:
    said_of: dict[str, set[str]] = {"notes": {"edit"}, "contacts": {"link"}, "groups": {"delete"}}

    def together(thing: str, own: object) -> bool:
        return bool(said_of.get(thing, set()) & set(own))  # type: ignore[call-overload]

    notes = last(["How can I view all my notes on my Galaxy S10?", "And how do I edit them?"],
                 said=together)  # fmt: skip
    assert notes["question"] == "[Galaxy S10] And how do I edit the notes?"
    groups = ["Is it possible to add or remove contacts from groups on the Note10?"]
    linked = last([*groups, "Can I link two of them together?"], said=together)
    assert linked["question"] == "[Galaxy Note10] Can I link two of the contacts together?"
    deleted = last([*groups, "How do I get rid of one?"], said=together)
    assert (
        deleted["question"] == "[Galaxy Note10] How do I get rid of one of the contacts groups?"
    ), "nothing in the manual says 'rid' of either, but 'one' is one of them, never the phone"


def test_a_pronoun_stands_for_the_things_that_agree_with_it_in_number() -> None:
    certificates = "How can I see what certificates are installed on my Galaxy S10?"
    removed = last([certificates, "And how can I remove all of them?"], said=never_together)
    assert removed["question"] == "[Galaxy S10] And how can I remove all of the certificates?", (
        "'installed' describes them; 'them' is never the phone"
    )
    display = "How can I show notifications on the always on display of my Galaxy S10?"
    themed = last([display, "Can I apply a custom theme to it?"], said=lambda thing, own: True)
    assert themed["question"] == "[Galaxy S10] Can I apply a custom theme to the always display?"
    camera = "What are the advanced recording options available in my Galaxy S10 camera?"
    sound = last([camera, "Can I set a shutter sound for it?"], said=lambda thing, own: True)
    assert sound["question"] == "[Galaxy S10] Can I set a shutter sound for the recording camera?"


def test_a_pronoun_then_another_device_re_asks_the_same_question() -> None:
    turn = last(["How do I take out the mesh filter of the Coolwave 330C?", "and the 410X?"])
    assert turn["decision"] == "switch_same_question"
    assert turn["question"].startswith("[Coolwave 410X] How do I take out the mesh filter")


def test_a_device_the_collection_does_not_have_is_not_answered_from_the_previous_one() -> None:
    turn = last([FIRST, "What about the Galaxy S30?"])
    assert turn["decision"] == "switch_same_question"
    assert "Note10" not in turn["question"] and "S30" in turn["question"]
    assert turn["names"] == {"unknown": "Galaxy S30"}


def test_a_first_question_naming_nothing_leaves_nothing_to_inherit() -> None:
    turns = conversation(["How do I pair the remote?", "And how do I reset it?"], PHONES)
    assert turns[1]["decision"] == "continue" and turns[1]["inherited"].get("model") is None
    assert not turns[1]["question"].startswith("[")


# ------------------------------------------------------------------ filings


def test_a_new_period_alone_keeps_the_company() -> None:
    turn = last(["What was Best Buy's revenue in FY2022?", "And for FY2021?"], filings())
    assert turn["decision"] == "switch_same_question"
    assert turn["names"] == {"company": "Best Buy", "period": "FY2021"}
    assert turn["question"].startswith("[Best Buy FY2021] ")
    assert "revenue" in turn["question"]
    assert turn["inherited"]["company"] == "Best Buy"


def test_a_new_period_with_its_own_question_keeps_the_company_too() -> None:
    turn = last(["What was Best Buy's revenue in FY2022?", "What was the gross margin in FY2023?"],
                filings())  # fmt: skip
    assert turn["decision"] == "switch"
    assert turn["question"] == "[Best Buy FY2023] What was the gross margin in FY2023?"


def test_another_company_with_its_own_question_drops_the_previous_period() -> None:
    turn = last(["What was Best Buy's revenue in FY2021?", "What is Amcor's net income?"],
                filings())  # fmt: skip
    assert turn["decision"] == "switch"
    assert turn["names"] == {"company": "Amcor"}
    assert "2021" not in turn["question"]


@pytest.mark.parametrize(
    "follow_up",
    ["What about Amcor?", "How about Amcor?", "And Amcor?", "what about for amcor then",
     "Same for Amcor.", "And for Amcor plc?"],
)  # fmt: skip
def test_a_turn_that_only_names_another_company_asks_the_whole_question_period_included(
    follow_up: str,
) -> None:
    """After Best Buy's FY2022 revenue, "What about Amcor?" is Amcor's FY2022 revenue, not its
    latest year's."""
    turn = last(["What was Best Buy's revenue in FY2022?", follow_up], filings())
    assert turn["decision"] == "switch_same_question"
    assert turn["names"] == {"company": "Amcor", "period": "FY2022"}
    assert turn["question"] == "[Amcor FY2022] What was revenue?"
    assert turn["inherited"] == {"topic": "What was revenue?", "period": "FY2022"}


def test_a_period_the_other_company_lacks_is_still_the_one_asked() -> None:
    """Amcor has no FY2021 filing: the question stays FY2021 (and is declined by the answer),
    it is not moved to Amcor's latest year."""
    turn = last(["What was Best Buy's revenue in FY2021?", "What about Amcor?"], filings())
    assert turn["names"] == {"company": "Amcor", "period": "FY2021"}
    assert turn["question"].startswith("[Amcor FY2021] ")


def test_a_follow_up_on_a_filing_stays_with_its_company_and_year() -> None:
    turn = last(["What was Best Buy's revenue in FY2022?", "What was the operating income?"],
                filings())  # fmt: skip
    assert turn["decision"] == "continue"
    assert turn["question"] == "[Best Buy FY2022] What was the operating income?"


def describe(turn: Turn) -> dict[str, Any]:
    return {k: turn[k] for k in ("decision", "question")}  # type: ignore[literal-required]


SPACED = [
    DocumentCard(name, product_model=name, kind="user manual")
    for name in ["Galaxy Note 10", "Galaxy Note 10+", "Galaxy S9", "Galaxy S9+", "Galaxy S10"]
]


@pytest.mark.parametrize(
    "follow_up",
    ["and for the Galaxy Note10 Plus", "Is it the same on the Galaxy Note-10 Plus?",
     "What about my note10+?"],
)  # fmt: skip
def test_a_model_stored_with_spaces_is_only_a_name_however_it_is_joined(follow_up: str) -> None:
    turn = last(["How do I check battery usage on my Galaxy S9?", follow_up], SPACED)
    assert turn["decision"] == "switch_same_question"
    assert turn["question"] == "[Galaxy Note 10+] How do I check battery usage?"


@pytest.mark.parametrize(
    "follow_up",
    ["Is it possible to add or remove contacts from groups?", "It is safe to charge overnight?",
     "Another thing: how can I see what certificates are installed?"],
)  # fmt: skip
def test_a_follow_up_whose_it_points_at_nothing_is_asked_as_written(follow_up: str) -> None:
    turn = last([MESH, follow_up])
    assert turn["decision"] == "continue"
    assert turn["question"] == f"[Coolwave 330C] {follow_up}"
    assert turn["inherited"] == {"model": "Coolwave 330C"}


def test_a_pronoun_means_the_thing_the_manual_writes_next_to_what_the_turn_asks() -> None:
    """An alarm's passage says "snooze" and "sound"; the notifications passage writes "snooze a
    notification": "snooze one" after a question about the notification sound is a
    notification, as a reader takes it."""
    closeness = {"notification": NEXT_TO, "sound": IN_ONE_PASSAGE}

    def said(thing: str, own: object) -> int:
        return closeness.get(thing, 0)

    question = "How can I set the notification sound on my Galaxy S9?"
    turn = last([question, "Where do I find the option to snooze one?"], said=said)
    assert turn["question"] == "[Galaxy S9] Where do I find the option to snooze a notification?"
    closeness = {"notification": IN_ONE_PASSAGE, "sound": IN_ONE_PASSAGE}
    turn = last([question, "Where do I find the option to snooze one?"], said=said)
    assert "snooze a notification sound" in turn["question"], "equally close: both, as before"
