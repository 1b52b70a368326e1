"""How retrieval ranks the documents a question names against the ones it merely covers."""

from __future__ import annotations

from chop.config import Context
from chop.retrieval import search_for, with_own_best, with_room_for, without_names
from chop.store import Hit


def hit(id: int, doc: str, score: float) -> Hit:
    return Hit(id=id, doc_id=doc, doc_title=doc, chunk_index=id, text="", prefix="",
               category=None, nouns=[], model=None, cnm_source="heading", char_start=0,
               char_end=0, score=score, metadata={})  # fmt: skip


def test_a_secondary_document_keeps_a_quarter_of_the_places_below_the_reference() -> None:
    reference = [hit(i, "10-K", 1.0 - i / 100) for i in range(8)]
    release = [hit(100 + i, "release", 0.9 - i / 100) for i in range(3)]
    ranked = with_room_for(reference, release, k=8)
    assert [h.doc_id for h in ranked].count("release") == 2  # a quarter of 8
    assert ranked[0].doc_id == "10-K", "the reference still ranks first"
    assert len(ranked) == 8


def test_room_is_not_made_twice_for_chunks_already_ranked() -> None:
    reference = [hit(i, "10-K", 1.0 - i / 100) for i in range(6)]
    release = [hit(100, "release", 0.999), hit(101, "release", 0.998)]
    merged = with_own_best(reference, release, bonus=0.0, k=8)
    assert with_room_for(merged, release, k=8) == merged


def test_own_best_chunks_get_the_bonus_and_replace_their_weaker_copies() -> None:
    found = [hit(1, "a", 0.5), hit(2, "b", 0.4)]
    ranked = with_own_best(found, [hit(2, "b", 0.4)], bonus=0.3, k=2)
    assert [(h.id, round(h.score, 2)) for h in ranked] == [(2, 0.7), (1, 0.5)]


TV = {"kind": "user manual", "model": "Smart tv remote"}
S10 = {"model": "S10"}
BEST_BUY = {"entity": "Best Buy", "aliases": ["BBY"], "kind": "10-K"}


def test_the_words_that_name_the_document_leave_the_query_with_the_brand_before_them() -> None:
    assert without_names("[Samsung Smart TV remote] How do I mute?", [TV]) == "How do I mute?"
    assert without_names("I have a Galaxy S10. How do I reset it?", [S10]) == (
        "I have a How do I reset it?"
    )
    assert without_names("What was BBY's revenue in FY2023?", [BEST_BUY]) == (
        "What was revenue in FY2023?"
    )
    assert without_names("What was Best Buy revenue?", [BEST_BUY]) == "What was revenue?"


def test_a_capitalised_question_word_before_a_name_is_not_taken_for_its_brand() -> None:
    assert without_names("Does S10 support wireless charging?", [S10]) == (
        "Does support wireless charging?"
    )
    assert without_names("How do I reset my Samsung S10?", [S10]) == "How do I reset my"


def test_a_word_that_is_only_part_of_a_name_stays_a_topic_word() -> None:
    question = "[Smart TV remote] How do I pair the remote with the TV?"
    assert without_names(question, [TV]) == "How do I pair the remote with the TV?"


def test_a_question_that_is_only_a_name_is_kept_whole() -> None:
    assert without_names("Galaxy S10", [S10]) == "Galaxy S10"


def test_auto_search_is_hybrid_for_filings_and_vector_for_everything_else() -> None:
    release = {"entity": "Best Buy", "kind": "earnings release"}
    auto = Context(search="auto")
    assert search_for(auto, [BEST_BUY, release]) == "hybrid"
    assert search_for(auto, [BEST_BUY, TV]) == "vector", "a manual among them: vector"
    assert search_for(auto, [S10]) == "vector"
    assert search_for(auto, []) == "vector"
    assert search_for(Context(search="vector"), [BEST_BUY]) == "vector", "a setting is kept"
    assert search_for(Context(search="hybrid"), [TV]) == "hybrid"
