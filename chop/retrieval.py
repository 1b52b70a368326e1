"""Retrieval for one question: the options of the retrieve node, usable without the graph.

Which document the question is about is read without an LLM (chop.identity.resolve): the
product model it names, in whatever spelling ("Note10", "galaxy note 10 plus"), or the company
with the period and form ("Best Buy's FY2023 10-K", "Q2 of FY2024"), matched against each
document's identity card. Only when no document matches are chunk-level model values tried.
Context.query_cnm then boosts or filters to the matched documents (or chunks); a match that
covers every document changes nothing, and a filter that matches nothing falls back to the
unfiltered search and says so. Context.search="hybrid" fuses full-text and vector ranks;
"auto" (the default) does so for questions about filings only (search_for).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from chop.config import Context, SearchMode
from chop.grounding import tokens
from chop.identity import FILING_KINDS, complete_periods, resolve
from chop.models import Embedder
from chop.profile import stored_profile
from chop.query import QuestionCNM, match_question
from chop.store import RRF_K, DocumentRecord, Hit, SearchFilter, Store

POSSESSIVE = re.compile(r"['’]s\b", re.IGNORECASE)
# capitalised at the start of a question without being a brand: "Does S10 ...", "Is Note 10 ..."
_SENTENCE_WORDS = (
    "a an and are can could did do does for from has have how i if in is it my of on or should "
    "that the this to was were what when where which who why will with would"
)
SENTENCE_WORDS = frozenset(_SENTENCE_WORDS.split())
MODEL_BOOST = 0.3  # cosine points: a question that names its document means that document
# the same in a hybrid search's reciprocal-rank points: about a first place in one of the two
# rankings. 0.3 / RRF_K was too weak there: on FinanceBench dev the Q4 earnings releases, with
# half of it, took 10-K questions (Doc@1 0.774; 0.839 with this boost, as with vectors).
RRF_BOOST = 1.0 / RRF_K
# the share of the boost for documents that cover the question but are not its reference
SECONDARY_SHARE = 0.5


@dataclass
class Retrieved:
    hits: list[Hit]
    question: QuestionCNM
    note: str
    documents: list[str]  # documents the question names (by model, or entity and period)


def identity_cards(records: Iterable[DocumentRecord]) -> dict[str, dict[str, Any]]:
    """Each stored document's identity card, with its profile model (or, for documents whose
    card names nothing, its title) as the name a question may use."""
    cards: dict[str, dict[str, Any]] = {}
    for record in records:
        profile = stored_profile(record.metadata)
        card = dict(profile.get("identity") or {})
        if not card.get("kind") or card.get("kind") == "user manual":
            card.setdefault("model", profile.get("model") or record.title)
        cards[record.doc_id] = card
    complete_periods(cards)
    return cards


def search_for(ctx: Context, cards: list[dict[str, Any]]) -> SearchMode:
    """The search a question gets: Context.search, where "auto" means hybrid when every
    document the question is about is a filing and vector otherwise. In filings the
    question's line items ("inventories", "EBITDAR") are words of the table page that a
    small embedder reads poorly; in manuals paraphrased how-to questions match the wrong
    sections' words (`bench/results/options`, `bench/results/fin`)."""
    if ctx.search != "auto":
        return ctx.search
    filings = bool(cards) and all(card.get("kind") in FILING_KINDS for card in cards)
    return "hybrid" if filings else "vector"


def without_names(question: str, cards: list[dict[str, Any]]) -> str:
    """The question without the words that name its documents ("[Samsung Smart TV remote] ..."):
    in the embedded query they pull towards every chunk that mentions the product, and in a
    full-text query they match all of the document's chunks and drown the topic words.

    A run of words names a document when it holds at least half of one of its names' tokens:
    "S9" names "Galaxy S9", a lone "TV" in "pair the remote with the TV" does not name
    "Smart TV remote". A capitalised word just before the run is the brand the card leaves out
    ("Samsung", "Galaxy" before "S10") and goes with it, unless it is the sentence's own word
    ("Does S10 ...", "Is Note 10 ...")."""
    names = [
        set(tokens(str(value)))
        for card in cards
        for value in (card.get("model"), card.get("entity"), *(card.get("aliases") or []))
        if value and tokens(str(value))
    ]
    vocabulary = set().union(*names)
    words = question.split()
    word_tokens = [set(_tokens(word)) for word in words]
    named = [bool(found) and found <= vocabulary for found in word_tokens]
    dropped = [False] * len(words)
    start = 0
    while start < len(words):
        end = start + 1
        if named[start]:
            while end < len(words) and named[end]:
                end += 1
            run = set().union(*word_tokens[start:end])
            if any(2 * len(run & name) >= len(name) for name in names):
                before = words[start - 1].lstrip("[(\"'") if start > 0 else ""
                brand = before[:1].isupper() and before.lower() not in SENTENCE_WORDS
                first = start - 1 if brand else start
                dropped[first:end] = [True] * (end - first)
        start = end
    kept = [word for word, drop in zip(words, dropped, strict=True) if not drop]
    return " ".join(kept) or question


def _tokens(word: str) -> list[str]:
    """A question word's tokens, a possessive's "'s" left out ("Amcor's" names Amcor)."""
    return tokens(POSSESSIVE.sub("", word))


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


def rank_key(hit: Hit) -> tuple[float, str, int]:
    """Best score first; ties in a stable, readable order."""
    return (-hit.score, hit.doc_title, hit.chunk_index)


def retrieve_for_question(
    ctx: Context, store: Store, question: str, embedder: Embedder, k: int | None = None
) -> Retrieved:
    """The top-k chunks for ``question``. Once the documents it names are known, the words
    that name them are left out of the embedded query: the boost (or filter) carries the
    identity, and the vector matches the topic: a question's "[Samsung Smart TV remote] ..."
    otherwise pulls it towards every chunk that mentions the remote."""
    k = k or ctx.k
    records = store.documents(ctx.collection)
    cards = identity_cards(records.values())
    resolution = resolve(question, cards)
    doc_ids, secondary = resolution.doc_ids, resolution.secondary
    named = [cards[d] for d in (doc_ids + secondary or list(cards)) if d in cards]
    search = search_for(ctx, named)
    topic = without_names(question, named)
    vector = embedder.embed([topic if doc_ids else question])[0]
    if doc_ids:
        matched = QuestionCNM(model=resolution.named, category=None, unknown_model=None)
    else:
        matched = match_question(
            question,
            store.distinct_values(ctx.collection, "model"),
            store.distinct_values(ctx.collection, "category"),
        )
    # in a full-text query the documents' own names match all their chunks: topic words only
    text = topic if search == "hybrid" else None
    bonus = RRF_BOOST if text else MODEL_BOOST
    note = ""
    hits: list[Hit] = []
    every_document = bool(doc_ids) and len(doc_ids) + len(secondary) == len(records)
    use = ctx.query_cnm in ("boost", "filter") and not every_document
    where = SearchFilter(doc_ids=tuple(doc_ids)) if doc_ids else SearchFilter(model=matched.model)
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
                    ctx.collection, vector, k, where=also, query_text=text, ef_search=ctx.ef_search
                )
                share = bonus * SECONDARY_SHARE
                hits = with_own_best(hits, own, share, k)
                hits = with_room_for(hits, [replace(h, score=h.score + share) for h in own], k)
    unknown = resolution.unknown or (None if doc_ids else matched.unknown_model)
    if unknown:
        note = f"the question names {unknown}, which no stored document covers"
        matched = QuestionCNM(model=matched.model, category=matched.category, unknown_model=unknown)
    if ctx.search == "auto" and search == "hybrid":  # say what "auto" chose
        note = "; ".join(part for part in (note, "hybrid search (filings)") if part)
    # an unknown period or model is what the answer must decline on, not the matched entity
    documents = [] if unknown else doc_ids + secondary
    return Retrieved(hits=hits, question=matched, note=note, documents=documents)
