"""How retrieval ranks the documents a question names against the ones it merely covers."""

from __future__ import annotations

from chop_rag.api import ask, ingest
from chop_rag.config import Context
from chop_rag.labelling.cards import DocumentCard
from chop_rag.models.construction import get_embedder
from chop_rag.reading.documents import Span, make_document
from chop_rag.retrieval.retrieve import (
    fuse_rankings,
    naming_focus_first,
    new_pages_in_place,
    ranked_for_question,
    retrieve_for_question,
    search_for,
    with_own_best,
    with_room_for,
)
from chop_rag.store import Hit, Store


def hit(id: int, doc: str, score: float, pages: tuple[int, ...] = ()) -> Hit:
    metadata = {"pages": list(pages)} if pages else {}
    return Hit(id=id, doc_id=doc, doc_title=doc, chunk_index=id, text="", prefix="",
               category=None, nouns=[], model=None, cnm_source="heading", char_start=0,
               char_end=0, score=score, metadata=metadata)  # fmt: skip


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


def test_a_page_already_shown_gives_its_place_to_the_next_new_page_of_the_deeper_ranking() -> None:
    found = [hit(1, "10-K", 0.9, (118,)), hit(2, "10-K", 0.8, (118,)),
             hit(3, "release", 0.7, (4,)), hit(4, "10-K", 0.6, (118,)),
             hit(5, "10-K", 0.5, (69,))]  # fmt: skip
    deeper = [*found[:2], found[3], found[2], found[4], hit(6, "10-K", 0.45, (69,)),
              hit(7, "10-K", 0.4, (43,)), hit(8, "10-K", 0.3, (12,)),
              hit(9, "10-K", 0.2, (7,))]  # fmt: skip
    kept, repeats = new_pages_in_place(found, deeper)
    assert [h.id for h in kept] == [1, 3, 5, 7, 8], (
        "the ranking's own places stand in its order (the release's among them); the deeper "
        "ranking's next new pages fill the two repeats' places, and its repeat of 69 is passed by"
    )
    assert [h.id for h in repeats] == [2, 4], "the repeats are kept aside, in rank order"


def test_a_chunk_spanning_a_new_page_or_of_another_document_keeps_its_place() -> None:
    found = [hit(1, "10-K", 0.9, (10,)), hit(2, "10-K", 0.8, (10, 11)),
             hit(3, "release", 0.7, (10,)), hit(4, "10-K", 0.6, (11,))]  # fmt: skip
    kept, repeats = new_pages_in_place(found, found)
    assert [h.id for h in kept] == [1, 2, 3]
    assert [h.id for h in repeats] == [4]


def test_a_repeat_with_no_new_page_to_give_its_place_to_is_kept_aside() -> None:
    found = [hit(1, "10-K", 0.9, (10,)), hit(2, "10-K", 0.8, (10,))]
    kept, repeats = new_pages_in_place(found, found)
    assert kept == [found[0]], "no filler: fewer places, not the page twice"
    assert repeats == [found[1]]
    manual = [hit(1, "manual", 0.9), hit(2, "manual", 0.8), hit(3, "manual", 0.7)]
    assert new_pages_in_place(manual, manual) == (manual, []), "chunks without pages never repeat"


ACME_10K_PAGES = [
    "FORM 10-K ANNUAL REPORT For the fiscal year ended December 31, 2023 Commission File Number "
    "001-1 ACME WIDGETS PLC (Exact name of registrant as specified in its charter)",
    " ".join(
        f"Liquidity note {n}: our cash, our revolving credit facility and our liquidity are "
        "ample for the next twelve months."
        for n in range(10)
    ),
    "Capital resources: we fund capital expenditure from operating cash flow and liquidity.",
    "Debt: our notes mature in 2028 and 2031; liquidity covers every maturity.",
    "Risk factors: a loss of liquidity in credit markets could raise our borrowing costs.",
]


def test_a_filing_page_split_into_chunks_fills_one_place_not_all_of_them(
    context: Context, store: Store, scripted: object
) -> None:
    """A 10-K page about liquidity long enough for several chunks, then a page each on
    capital resources, debt and risks: the search ranks the liquidity page's chunks first,
    and the default answer's sources show it once, first, and then other pages."""
    ctx = context.with_overrides(continuity_mode="rules", chunk_tokens=40, chunk_overlap=0)
    text = "\n".join(ACME_10K_PAGES)
    spans: list[Span] = []
    start = 0
    for page, part in enumerate(ACME_10K_PAGES, start=1):
        spans.append({"start": start, "end": start + len(part), "meta": {"page": page}})
        start += len(part) + 1
    ingest(documents=[make_document("acme2023", "annual report", text, spans=spans)], context=ctx)
    question = "How ample is Acme Widgets' liquidity for FY2023?"
    ranked = ranked_for_question(ctx, store, question, get_embedder(ctx), ctx.k, "")
    assert [h.metadata["pages"] for h in ranked.hits[:2]] == [[2], [2]], "the search's ranking"
    found = retrieve_for_question(ctx, store, question, get_embedder(ctx))
    assert found.resolution.filings
    assert found.hits[0].metadata["pages"] == [2], "the liquidity page still comes first"
    shown: set[int] = set()
    for source in found.hits:
        pages = set(source.metadata["pages"])
        assert not pages <= shown, f"a page shown twice: {pages}"
        shown |= pages
    assert len(found.hits) > 2
    assert found.repeats, "the liquidity page's other chunks are kept aside"
    assert all(set(h.metadata["pages"]) <= shown for h in found.repeats)
    answered = ask(question, context=ctx)
    assert [s["chunk_id"] for s in answered["sources"]] == [
        h.id for h in [*found.hits, *found.repeats]
    ], "an answer reads and cites them after the k places"
