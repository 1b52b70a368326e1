"""How retrieval ranks the documents a question names against the ones it merely covers."""

from __future__ import annotations

from chop_rag.config import Context
from chop_rag.labelling.cards import DocumentCard
from chop_rag.retrieval.retrieve import (
    fuse_rankings,
    naming_focus_first,
    search_for,
    with_own_best,
    with_room_for,
)
from chop_rag.store import Hit


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


class Naming:
    """A store whose full-text index finds ``focus`` in the chunks ``named``."""

    def __init__(self, named: set[int]) -> None:
        self.named = named

    def naming(self, collection: str, chunk_ids: list[int], words: str) -> set[int]:
        return self.named & set(chunk_ids)


def test_what_a_pronoun_means_is_named_by_the_passage_that_comes_first() -> None:
    found = [hit(1, "a20", 0.632), hit(2, "a20", 0.630), hit(3, "a20", 0.598)]
    promoted, moved = naming_focus_first(Naming({2, 3}), "c", found, "certificates")  # type: ignore[arg-type]
    assert moved and [h.id for h in promoted] == [2, 1, 3]
    assert promoted[0].score == 0.632, "level with the hit it passes, not above every other"


def test_the_ranking_stands_where_the_first_names_it_or_none_does() -> None:
    found = [hit(1, "a20", 0.6), hit(2, "a20", 0.5)]
    for named in ({1, 2}, set()):
        kept, moved = naming_focus_first(Naming(named), "c", found, "notes")  # type: ignore[arg-type]
        assert not moved and kept == found


TV = DocumentCard("tv", kind="user manual", product_model="Smart tv remote")
S10 = DocumentCard("s10", product_model="S10")
BEST_BUY = DocumentCard("bby", kind="10-K", entity="Best Buy", names=("Best Buy",))


def test_auto_search_is_hybrid_for_filings_and_vector_for_everything_else() -> None:
    release = DocumentCard("q4", kind="earnings release", entity="Best Buy")
    auto = Context(search="auto")
    assert search_for(auto, [BEST_BUY, release]) == "hybrid"
    assert search_for(auto, [BEST_BUY, TV]) == "vector", "a manual among them: vector"
    assert search_for(auto, [S10]) == "vector"
    assert search_for(auto, []) == "vector"
    assert search_for(Context(search="vector"), [BEST_BUY]) == "vector", "a setting is kept"
    assert search_for(Context(search="hybrid"), [TV]) == "hybrid"


def test_fused_rankings_put_first_what_both_rank_well_and_keep_what_one_finds() -> None:
    vector = [hit(1, "a", 0.9), hit(2, "a", 0.8), hit(3, "a", 0.7)]
    hybrid = [hit(2, "a", 0.03), hit(4, "b", 0.02), hit(1, "a", 0.01)]
    fused = fuse_rankings([vector, hybrid], k=4)
    assert [h.id for h in fused][:2] == [2, 1], "in both rankings: first"
    assert {h.id for h in fused} == {1, 2, 3, 4}, "found by one ranking only: kept"
    assert fuse_rankings([vector, hybrid], k=2) == fused[:2]
