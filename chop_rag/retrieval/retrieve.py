"""Retrieval for one question: what it writes read (chop_rag.questions.facts), matched against the
stored identity cards (chop_rag.questions.matching), and the Resolution turned into a search.

The match says which documents a question means (no LLM): the product model it names, or the
company with the period and form. Here the
Resolution becomes a search: Context.query_cnm boosts or filters to the meant documents (the
secondary ones, which also cover the question, get half the boost and a quarter of the
places); a Resolution that covers every document changes nothing, and a filter that matches
nothing falls back to the unfiltered search and says so. The embedded (and full-text) query is
the Resolution's topic: the question without the words that name its documents. Only when no
card names a document are chunk-level model values tried. Context.search="hybrid" fuses
full-text and vector ranks; "auto" (the default) does so for questions about filings only
(search_for). A question about filings that names a financial statement ("based on the
balance sheet") gets that statement's best chunks first (statements_first; the question's
facts say which statements it names, chop_rag.questions.statements); one that names none but
asks for a metric or line item gets the statements printing its inputs ("quick ratio": the
balance sheet; chop_rag.questions.metric_questions.statements_needed); one about a non-GAAP
measure ("Adjusted EBITDA") gets the table reconciling it first (statements.Reconciliation), one
about what the company does the opening of its 10-K's Item 1 (QuestionFacts.titled_parts).
In filings, a hit that shows no page its document has not already shown gives its place to
the next new page of a ranking twice as deep (new_pages_in_place): a table page split into
chunks otherwise fills several of the k places with one page.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from chop_rag.config import Context, SearchMode
from chop_rag.labelling.cards import DocumentCard, card_from_stored, read_cards
from chop_rag.labelling.profile import stored_profile
from chop_rag.models.embedders import Embedder, embed_queries
from chop_rag.questions.codes import Listed, codes_written, listing_words
from chop_rag.questions.facts import QuestionFacts, read_question
from chop_rag.questions.matching import (
    QuestionCNM,
    Resolution,
    all_filings,
    resolve,
    resolve_by_chunk_values,
)
from chop_rag.questions.statements import TitledPart
from chop_rag.store import RRF_K, DocumentRecord, Hit, SearchFilter, Store

MODEL_BOOST = 0.3  # cosine points: a question that names its document means that document
# the same in a hybrid search's reciprocal-rank points: about a first place in one of the two
# rankings. 0.3 / RRF_K was too weak there: on FinanceBench dev the Q4 earnings releases, with
# half of it, took 10-K questions (Doc@1 0.774; 0.839 with this boost, as with vectors).
RRF_BOOST = 1.0 / RRF_K
# the share of the boost for documents that cover the question but are not its reference
SECONDARY_SHARE = 0.5
# of the k places: the best chunks of the financial statements a question names ("based on the
# balance sheet ..."; chop_rag.questions.statements) or its metric needs
STATEMENT_PLACES = 2
# how much deeper the ranking is that fills the places a page's repeats give up
FILL_DEPTH = 2


@dataclass
class Retrieved:
    hits: list[Hit]
    question: QuestionCNM
    note: str
    documents: list[str]  # documents the question names (by model, or entity and period)
    resolution: Resolution = field(default_factory=Resolution)
    # hits that gave their places to new pages (new_pages_in_place): an answer still reads
    # and cites them, after the k places
    repeats: list[Hit] = field(default_factory=list)

    def about(self) -> list[Hit]:
        """The hits an answer may use, in rank order: a twin product's chunk is never one
        (``ask``'s sources and ``ChopRetriever``'s documents both come from here). Empty when
        none is about what the question names; ``ask`` then declines over the closest, as it
        declines when the question names a model or period no stored document covers."""
        return self._about(self.hits)

    def repeats_about(self) -> list[Hit]:
        """The repeats an answer may use, by the same rule as ``about``."""
        return self._about(self.repeats)

    def _about(self, hits: Sequence[Hit]) -> list[Hit]:
        return [
            hit
            for hit in hits
            if is_about(hit.doc_id, hit.model, self.documents, self.question.model)
        ]


def is_about(doc_id: str, model: str | None, documents: Sequence[str], asked: str | None) -> bool:
    """Whether a chunk is about what a question names: one of the documents it resolved to,
    else labelled with the model it names; any chunk when it names neither."""
    if documents:
        return doc_id in documents
    if asked:
        return (model or "").lower() == asked.lower()
    return True


def identity_cards(records: Iterable[DocumentRecord]) -> list[DocumentCard]:
    """Each stored document's identity card, typed, as question resolution reads it (a
    document whose card names no product or filing is named by its profile model or title)."""
    return read_cards(
        card_from_stored(
            record.doc_id,
            stored_profile(record.metadata).get("identity") or {},
            title=record.title,
            profile_model=stored_profile(record.metadata).get("model"),
        )
        for record in records
    )


def search_for(ctx: Context, cards: Sequence[DocumentCard]) -> SearchMode:
    """The search a question gets: Context.search, where "auto" means hybrid when every
    document the question is about is a filing and vector otherwise. In filings the
    question's line items ("inventories", "EBITDAR") are words of the table page that a
    small embedder reads poorly; in manuals paraphrased how-to questions match the wrong
    sections' words (`bench/results/options`, `bench/results/fin`)."""
    if ctx.search != "auto":
        return ctx.search
    return "hybrid" if all_filings(cards) else "vector"


def listed_codes(facts: QuestionFacts, cards: Sequence[DocumentCard], listed: Listed) -> list[str]:
    """The codes the question writes that the documents list ("E4", "CH05"; not models)."""
    models = [card.product_model for card in cards if card.product_model]
    return [code for code in codes_written(facts, models) if code.lower() in listed]


def with_own_best(hits: list[Hit], own: list[Hit], bonus: float, k: int) -> list[Hit]:
    """The boosted search's hits merged with the named documents' own best chunks (given the
    same bonus). A search over a whole collection ranks boosts only among its nearest
    candidates; among 34 near-identical manuals these may hold no chunk of the one the
    question names (`python -m bench.device_naming`)."""
    merged = {hit.id: hit for hit in hits}
    for hit in own:
        boosted = replace(hit, score=hit.score + bonus)
        if hit.id not in merged or merged[hit.id].score < boosted.score:
            merged[hit.id] = boosted
    return sorted(merged.values(), key=rank_key)[:k]


def with_room_for(hits: list[Hit], own: list[Hit], k: int) -> list[Hit]:
    """``hits`` with at least a quarter of the k places held by ``own``'s best chunks: the
    secondary documents (the Q4 earnings release next to the 10-K) rank below the reference
    but their best evidence stays in view of the answer."""
    ranked = {hit.id for hit in hits}
    secondary = {hit.id for hit in own}
    room = max(1, k // 4) - sum(hit.id in secondary for hit in hits)
    missing = [hit for hit in own if hit.id not in ranked][: max(0, room)]
    if not missing:
        return hits
    return sorted(hits[: k - len(missing)] + missing, key=rank_key)


def statement_hits(
    store: Store,
    ctx: Context,
    statement: TitledPart,
    doc_ids: Sequence[str],
    vector: Sequence[float] | np.ndarray,
    k: int,
    query_text: str | None,
) -> list[Hit]:
    """A statement's best ``k`` chunks in these documents: titled as filings print it in their
    financial section, else by its title printed alone (Statement.titled); a part titled
    alike either way (a reconciliation, Item 1) is searched once."""
    for titled in dict.fromkeys((statement.titled(False), statement.titled(True))):
        where = SearchFilter(doc_ids=tuple(doc_ids), titled=titled)
        hits = store.search(
            ctx.collection, vector, k, where=where, query_text=query_text, ef_search=ctx.ef_search
        )
        if hits:
            return hits
    return []


def statements_first(hits: list[Hit], found: Sequence[list[Hit]], k: int) -> list[Hit]:
    """``hits`` with the best chunks of the statements a question names first: STATEMENT_PLACES
    of the k places shared among them (at least one each), in their own order, scored above
    every other hit; the other places keep the search's ranking."""
    places = max(1, STATEMENT_PLACES // max(1, len(found)))
    top = max((hit.score for hit in hits), default=0.0)
    lead = {
        hit.id: replace(hit, score=top + hit.score) for chunks in found for hit in chunks[:places]
    }
    rest = [hit for hit in hits if hit.id not in lead]
    return sorted(lead.values(), key=rank_key)[:k] + rest[: max(0, k - len(lead))]


def naming_focus_first(
    store: Store, collection: str, hits: list[Hit], focus: str
) -> tuple[list[Hit], bool]:
    """``hits`` with the best one that names ``focus`` first, where the first does not: "And
    how can I remove all of them?" after a question about certificates asks about the
    certificates, so a passage that never names them ("Remove email accounts", which the
    vector put level with "Credential storage") cannot be the answer. A constraint, not a
    score: where the first names it, or none does, the ranking stands (matching the words in
    full text as a ranking instead ranked the passage that says "notes" most, not the one
    that edits them: bench.conversations' pronoun turns 0.833 -> 0.417)."""
    if not hits:
        return hits, False
    named = store.naming(collection, [hit.id for hit in hits], focus)
    if not named or hits[0].id in named:
        return hits, False
    best = next(hit for hit in hits if hit.id in named)
    lead = replace(best, score=hits[0].score)
    return [lead, *(hit for hit in hits if hit.id != best.id)], True


def new_pages_in_place(hits: list[Hit], deeper: Sequence[Hit]) -> tuple[list[Hit], list[Hit]]:
    """``hits`` with each one that shows no page a higher hit of its document has not already
    shown replaced by the next hit of ``deeper`` (the same search ranked deeper) that does,
    appended in that ranking's order; and the repeats that gave their places. A filing's
    table page split into four chunks otherwise fills four of the five places with one page;
    search engines collapse results on a field the same way. The places the ranking gave its
    other hits (a statement's lead, the earnings release's reserved place) are untouched.
    Chunks without pages never repeat."""
    shown: dict[str, set[object]] = {}

    def shows_new_page(hit: Hit) -> bool:
        pages = set(hit.metadata.get("pages") or ())
        seen = shown.setdefault(hit.doc_id, set())
        new = not pages or not pages <= seen
        seen |= pages
        return new

    kept = [hit for hit in hits if shows_new_page(hit)]
    kept_ids = {hit.id for hit in kept}
    repeats = [hit for hit in hits if hit.id not in kept_ids]
    taken = {hit.id for hit in hits}
    fills = [hit for hit in deeper if hit.id not in taken and shows_new_page(hit)]
    return kept + fills[: len(repeats)], repeats


def rank_key(hit: Hit) -> tuple[float, str, int]:
    """Best score first; ties in a stable, readable order."""
    return (-hit.score, hit.doc_title, hit.chunk_index)


def retrieve_for_question(
    ctx: Context,
    store: Store,
    question: str,
    embedder: Embedder,
    k: int | None = None,
    focus: str = "",
) -> Retrieved:
    """The top-k chunks for ``question``. Once the documents it names are known, the words
    that name them are left out of the embedded query: the boost (or filter) carries the
    identity, and the vector matches the topic: a question's "[Samsung Smart TV remote] ..."
    otherwise pulls it towards every chunk that mentions the remote. ``focus``: what a
    follow-up's pronoun was resolved to (naming_focus_first)."""
    k = k or ctx.k
    rank = ranking_for_question(ctx, store, question, embedder, focus)
    found = rank(k)
    if not found.resolution.filings:
        return found
    hits, repeats = new_pages_in_place(found.hits, rank(FILL_DEPTH * k).hits)
    return replace(found, hits=hits, repeats=repeats)


Ranking = Callable[[int], Retrieved]
"""A question's ranking, k deep for the k it is given: what the question resolves to is read
once, and each depth is only searched."""


def ranked_for_question(
    ctx: Context, store: Store, question: str, embedder: Embedder, k: int, focus: str
) -> Retrieved:
    """retrieve_for_question's ranking, before a page's repeats give up their places."""
    return ranking_for_question(ctx, store, question, embedder, focus)(k)


def ranking_for_question(
    ctx: Context, store: Store, question: str, embedder: Embedder, focus: str
) -> Ranking:
    """The question's Ranking: the documents it resolves to, how they are searched and the
    embedded query, read once; pages in place ranks a filing twice (k and FILL_DEPTH * k)."""
    if ctx.search == "fusion":
        return fused_ranking(ctx, store, question, embedder)
    records = store.documents(ctx.collection)
    cards = identity_cards(records.values())
    facts = read_question(question)
    # what the documents' text holds tells a brand or a code from a model
    # (chop_rag.questions.matching)
    listed = store.documents_listing(ctx.collection, listing_words(facts))
    resolution = resolve(facts, cards, listed)
    doc_ids, secondary = list(resolution.documents), list(resolution.secondary)
    meant = [card for card in cards if card.doc_id in set(resolution.in_view)]
    search = search_for(ctx, meant or cards)
    # A code ("E4", "IPv6") is an exact word a small embedder reads poorly: where "auto" chose
    # vectors, the code's own word is matched in full text beside them; the topic's other
    # words stay with the vector (matched as words too, they pulled a troubleshooting page full
    # of "connection" and "settings" above the IPv6 section).
    codes = (
        listed_codes(facts, cards, listed) if search == "vector" and ctx.search == "auto" else []
    )
    if codes:
        search = "hybrid"
    if search == "fusion":  # "auto" chose both rankings, fused
        return fused_ranking(ctx, store, question, embedder)
    vector = embed_queries(embedder, [resolution.topic if doc_ids else question])[0]
    if doc_ids:
        matched = resolve_by_chunk_values(facts, resolution, [], [])
    else:
        matched = resolve_by_chunk_values(
            facts,
            resolution,
            store.distinct_values(ctx.collection, "model"),
            store.distinct_values(ctx.collection, "category"),
        )
    # in a full-text query the documents' own names match all their chunks: topic words only
    text = (" ".join(codes) if codes else resolution.topic) if search == "hybrid" else None
    bonus = RRF_BOOST if text else MODEL_BOOST
    every_document = bool(doc_ids) and len(doc_ids) + len(secondary) == len(records)
    use = ctx.query_cnm in ("boost", "filter") and not every_document
    where = SearchFilter(doc_ids=tuple(doc_ids)) if doc_ids else SearchFilter(model=matched.model)
    statements = facts.titled_parts if doc_ids and all_filings(meant) else []

    def ranked(k: int) -> Retrieved:
        note = ""
        hits: list[Hit] = []
        if use and ctx.query_cnm == "filter" and matched.model:
            kept = SearchFilter(doc_ids=tuple(doc_ids + secondary)) if doc_ids else where
            hits = store.search(
                ctx.collection, vector, k, where=kept, query_text=text, ef_search=ctx.ef_search
            )
            note = f"filtered to {matched.model}"
            if not hits:
                note = f"no chunk of {matched.model}; searched all"
        if not hits:
            hits = store.search(
                ctx.collection,
                vector,
                k,
                boost_model=None if doc_ids or not use else matched.model,
                boost_doc_ids=doc_ids if use else (),
                boost=bonus,
                query_text=text,
                ef_search=ctx.ef_search,
            )
            if use and matched.model and not note:
                note = f"boosted {matched.model}"
                own = store.search(
                    ctx.collection, vector, k, where=where, query_text=text, ef_search=ctx.ef_search
                )
                hits = with_own_best(hits, own, bonus, k)
                if secondary:
                    # the documents that also cover the question: weighed less, kept in view
                    also = SearchFilter(doc_ids=tuple(secondary))
                    own = store.search(
                        ctx.collection,
                        vector,
                        k,
                        where=also,
                        query_text=text,
                        ef_search=ctx.ef_search,
                    )
                    share = bonus * SECONDARY_SHARE
                    hits = with_own_best(hits, own, share, k)
                    hits = with_room_for(hits, [replace(h, score=h.score + share) for h in own], k)
        # the statements it names or its metric needs, a non-GAAP measure's reconciliation, Item 1
        if statements:
            found = [
                statement_hits(store, ctx, statement, doc_ids, vector, k, text)
                for statement in statements
            ]
            hits = statements_first(hits, found, k)
            named = ", ".join(s.name for s, chunks in zip(statements, found, strict=True) if chunks)
            if named:
                note = "; ".join(part for part in (note, f"{named} first") if part)
        if focus:
            hits, promoted = naming_focus_first(store, ctx.collection, hits, focus)
            if promoted:
                note = "; ".join(
                    part for part in (note, f"the first passage naming {focus} first") if part
                )
        asked = matched
        if asked.unknown_model and asked.unknown_model.lower() in listed:
            asked = replace(asked, unknown_model=None)  # a code the documents list ("E2")
        unknown = asked.unknown_model
        if unknown:
            note = f"the question names {unknown}, which no stored document covers"
            closest = resolution.closest or asked.model
            if closest and closest != unknown:
                note += f"; the closest is {closest}"
        if resolution.ambiguous:
            note = f"{resolution.label} names several products: {', '.join(resolution.ambiguous)}"
        if ctx.search == "auto" and search == "hybrid":  # say what "auto" chose, and why
            chose = (
                f"hybrid search (the code {', '.join(codes)})"
                if codes
                else "hybrid search (filings)"
            )
            note = "; ".join(part for part in (note, chose) if part)
        # an unknown period or model is what the answer must decline on, not the matched entity
        documents = [] if unknown else doc_ids + secondary
        return Retrieved(
            hits=hits,
            question=asked,
            note=note,
            documents=documents,
            resolution=resolution,
        )

    return ranked


def fused_ranking(ctx: Context, store: Store, question: str, embedder: Embedder) -> Ranking:
    """The vector and the hybrid retrieval's top-k fused by reciprocal rank (fuse_rankings)."""
    by_vector = ranking_for_question(
        ctx.with_overrides(search="vector"), store, question, embedder, ""
    )
    by_hybrid = ranking_for_question(
        ctx.with_overrides(search="hybrid"), store, question, embedder, ""
    )

    def ranked(k: int) -> Retrieved:
        vector, hybrid = by_vector(k), by_hybrid(k)
        note = "; ".join(p for p in (hybrid.note, "vector and hybrid rankings fused") if p)
        return replace(hybrid, hits=fuse_rankings([vector.hits, hybrid.hits], k), note=note)

    return ranked


def fuse_rankings(rankings: Sequence[Sequence[Hit]], k: int) -> list[Hit]:
    """Rankings fused by reciprocal rank: each chunk scored by the sum of 1 / (RRF_K + rank)
    over the rankings that hold it, so a chunk both rank well comes first and one that only
    a single ranking finds stays in view."""
    scores: dict[int, float] = {}
    hits: dict[int, Hit] = {}
    for ranking in rankings:
        for rank, hit in enumerate(ranking, start=1):
            scores[hit.id] = scores.get(hit.id, 0.0) + 1.0 / (RRF_K + rank)
            hits.setdefault(hit.id, hit)
    ranked = sorted((replace(hits[i], score=score) for i, score in scores.items()), key=rank_key)
    return ranked[:k]
