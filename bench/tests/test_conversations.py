"""The conversations benchmark: its threads are deterministic and say what they claim, and the
continuity rules read every phrasing it uses the way the turn kind means (no database)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.conversations import KINDS, PHONES, build_threads, exact, scored
from bench.emanual import resolve_data
from bench.emanual_data import S10_QUESTIONS, Manual, load_manuals, load_questions
from chop_rag.labelling.cards import card_from_stored, read_cards
from chop_rag.questions.conversation import Turn, decide, inherit, reask, switch, turn_of

EXPECTED = {
    "first": "first",
    "follow-up": "continue",
    "what about": "switch_same_question",
    "pronoun": "continue",
    "new device": "switch",
    "antecedent": "continue",
    "pronoun, new": "continue",
}


@pytest.fixture(scope="module")
def data() -> tuple[list[Manual], list]:
    root = resolve_data(None)
    if not root.is_dir():
        pytest.skip(f"E-Manual QA data not found at {root} (set CHOP_EMANUAL_DATA)")
    manuals, _ = load_manuals([root / name for name in PHONES])
    return manuals, load_questions(root / S10_QUESTIONS, "Galaxy S10")


def test_threads_are_deterministic_and_each_turn_has_its_gold_in_its_manual(data) -> None:
    manuals, questions = data
    threads = build_threads(manuals, questions, 8, seed=1)
    assert threads == build_threads(manuals, questions, 8, seed=1)
    by_device = {m.device: m for m in manuals}
    for thread in threads:
        assert len(thread) in (6, 8) and tuple(t.kind for t in thread) == KINDS[: len(thread)]
        assert all(exact(by_device[t.device], t.question) for t in thread)
        a, b, c = thread[0].device, thread[2].device, thread[5].device
        assert len({a, b, c}) == 3 and thread[1].device == a and thread[3].device == b
        assert thread[2].question == thread[1].question  # "what about" re-asks turn 2
        assert thread[4].question == thread[3].question  # the pronoun refers to turn 4
        # the pronoun that asks something new asks another question than turn 7, about C
        assert all(t.device == c for t in thread[6:])
        assert len(thread) == 6 or thread[7].question != thread[6].question
    assert sum(len(thread) == 8 for thread in threads) >= len(threads) // 2


def test_the_rules_read_every_phrasing_as_its_turn_kind_means(data) -> None:
    manuals, questions = data
    cards = read_cards(card_from_stored(m.doc_id, {}, title=m.title) for m in manuals)
    device_title = {m.device: m.title for m in manuals}
    wrong = []
    for thread in build_threads(manuals, questions, 40, seed=7):
        previous: Turn | None = None
        for turn in thread:
            continuity = decide(turn.text, previous, cards)
            if continuity.decision == "continue":
                standalone = inherit(turn.text, continuity, previous or {})
            elif continuity.decision == "switch_same_question":
                standalone = reask(continuity, previous or {})
            else:
                standalone = switch(turn.text, continuity, previous)
            previous = turn_of(continuity, standalone)
            named = previous["names"].get("model")
            if continuity.decision != EXPECTED[turn.kind] or named != device_title[turn.device]:
                wrong.append((turn.kind, turn.text, continuity.decision, named))
    assert wrong == [], f"{len(wrong)} turns misread"


def test_a_turn_scores_on_its_top_source() -> None:
    manual_path = resolve_data(None) / PHONES[0]
    if not manual_path.exists():
        pytest.skip("E-Manual QA data not found")
    (manual,), _ = load_manuals([Path(manual_path)])
    section = manual.sections[5]
    span = {"char_start": section.start, "char_end": section.start + 10}
    source = {"doc_id": manual.doc_id, "doc_title": manual.title, "chunk_index": 3,
              "metadata": span}  # fmt: skip
    question = type("Q", (), {"section_path": section.title, "qid": "q"})()
    assert scored({"sources": [source]}, manual, question) == {
        "doc@1": True, "hit@1": True, "top": f"{manual.title}#3"}  # fmt: skip
    other = {**source, "doc_id": "elsewhere"}
    assert scored({"sources": [other]}, manual, question)["doc@1"] is False
    assert scored({"sources": []}, manual, question)["doc@1"] is False


def test_a_pronoun_turn_that_asks_something_new_carries_how_a_person_reads_it(data) -> None:
    manuals, questions = data
    for thread in build_threads(manuals, questions, 12, seed=35):
        for turn in thread:
            assert bool(turn.resolved) == (turn.kind == "pronoun, new")
            if turn.resolved:
                assert turn.resolved != turn.text and turn.resolved_alone() == (
                    f"[{turn.device}] {turn.resolved}"
                )
