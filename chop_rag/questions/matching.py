"""Question resolution: which documents a question means, matched without an LLM, in one place.

What a question writes (chop_rag.questions.facts.QuestionFacts) and the typed cards
(chop_rag.labelling.cards.DocumentCard, one per stored document) in, one typed ``Resolution`` out:
the documents meant (primary) and those that also cover what it names (secondary, weighed
less), the label the question used ("Best Buy FY2023"), what it names that no document covers
("FY2030"), the question's topic without the words that name its documents, and why.
chop_rag.retrieval.retrieve turns a Resolution into a search.

How what a question writes is matched:
- a product model, compared in a normalised form (chop_rag.text.names: ``Note10`` = ``Note 10``
  = ``note-10``, ``S9 Plus`` = ``S9+`` ≠ ``S9``), the longest complete name first;
- a company, by any name its filings go by in the collection: a registrant's or short name
  ("Best Buy"), written without case; a ticker or acronym ("BBY", "MGM", "J&J"), written in
  capitals; then, only when nothing else names a company, an abbreviation made of its words'
  beginnings ("AMEX") or its distinctive first word ("Adobe" of "Adobe Systems");
- periods ("FY2022", "Q2 of FY2023", "H1 FY2023", a date; a bare year only narrows, it is
  never declined), by the filings that cover them (chop_rag.questions.filings);
- kinds: "10-K", "quarterly report", "earnings release", ....

What the documents' text holds (chop_rag.questions.codes; ``listed``: a word as the question
writes it → the documents whose text holds it, asked of the store by chop_rag.retrieval.retrieve)
tells names from the other things a question writes shaped like them:
- a brand: a capitalised word written right before a model number that no document holds
  ("Coolwave" of "Coolwave 330C" where only a "Breeze 330C" is stored) is another brand: the
  model is not matched, it is reported as not covered, the stored twin as the closest;
- a code: a word shaped like a model number that a document's text holds ("E2", "CH05",
  "4C"; an error code, a part number, a setting) is what those documents list, not a model:
  the question is about the manuals that list it; about a named model whose manual does not,
  it is not covered;
- a bare model number that models of several brands end with ("330C" of "Coolwave 330C" and
  "Breeze 330C") is ambiguous: the candidates are said, none chosen.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from typing_extensions import TypedDict

from chop_rag.labelling.cards import DocumentCard, same_company_groups
from chop_rag.questions.codes import (
    SENTENCE_WORDS,
    Listed,
    branded,
    brands_of,
    coded,
    foreign_brand,
    written_before,
)
from chop_rag.questions.facts import POSSESSIVE, QuestionFacts
from chop_rag.questions.filings import (
    covering,
    current_reports,
    latest_before,
    latest_filings,
    latest_report,
)
from chop_rag.text.grounding import tokens
from chop_rag.text.names import (
    abbreviates,
    line_words,
    name_key,
    name_keys,
    name_tokens,
    short_name,
)
from chop_rag.text.periods import Period
from chop_rag.text.words import FUNCTION_WORDS
from chop_rag.types import plain_copy

# ------------------------------------------------------------------ the resolution


@dataclass(frozen=True)
class Resolution:
    """What a question is about, as far as the stored cards tell."""

    documents: tuple[str, ...] = ()  # the documents meant ( () = no restriction)
    # documents that also cover what the question names, but are not its reference: the Q4
    # earnings release next to the fiscal year's 10-K; retrieval weighs them less
    secondary: tuple[str, ...] = ()
    label: str | None = None  # what the question named: "Galaxy Note 10+", "Amcor FY2023"
    unknown: str | None = None  # a model or period it names that no document covers
    product_model: str | None = None  # the stored product model it names
    company: str | None = None  # the company it names, as people call it
    period: str | None = None  # the period it was resolved to: "FY2023", "Q2 FY2024"
    topic: str = ""  # the question without the words that name its documents
    why: tuple[str, ...] = ()  # each rule that decided, in order
    filings: bool = False  # every document in view (or in the collection) is a filing
    # the stored models a bare model number names, of several brands ("330C": Coolwave 330C,
    # Breeze 330C): none is chosen
    ambiguous: tuple[str, ...] = ()
    closest: str | None = None  # the stored twin of a model it names that no document covers

    @property
    def in_view(self) -> tuple[str, ...]:
        """Every document the answer may draw on: the meant ones, then the secondary."""
        return self.documents + self.secondary


@dataclass
class ModelsNamed:
    """The product models a question writes, matched against the cards."""

    documents: list[str] = field(default_factory=list)
    model: str | None = None
    models: list[str] = field(default_factory=list)  # every model of the best match
    # (the model as written, the stored twin) of a model number written after another brand
    other_brand: tuple[str, str] | None = None


def _models_named(
    facts: QuestionFacts, cards: Sequence[DocumentCard], listed: Listed | None = None
) -> ModelsNamed:
    """The longest product model the question writes, complete first; a model of another
    brand or line than the one the question writes before it is not named (with ``listed``:
    a capitalised word no document holds is another brand too)."""
    asked, parts = facts.name_runs, facts.name_parts
    full = {c.doc_id: branded(c) for c in cards if c.product_model and not c.is_filing}
    lines = line_words(list(full.values()))
    best: tuple[bool, int] = (False, 0)
    named = ModelsNamed()
    for card in cards:
        if not card.product_model or card.is_filing:
            continue
        name = full[card.doc_id]
        for key, complete in name_keys(card.product_model).items():
            if key not in asked or another_line(parts, key, name, lines):
                continue
            brand = foreign_brand(facts, key, name, listed)
            if brand:
                named.other_brand = named.other_brand or (brand, name)
                continue
            score = (complete, len(key))  # "S10" names the S10, not the S10 Lite
            if score > best:
                best, named.documents = score, [card.doc_id]
                named.model, named.models = card.product_model, [name]
            elif score == best and card.doc_id not in named.documents:
                named.documents.append(card.doc_id)
                named.models.append(name)
    return named


def _companies_named(facts: QuestionFacts, cards: Sequence[DocumentCard]) -> tuple[list[str], str]:
    """(documents, rule) of the companies the question names; see the module docstring."""
    asked = facts.name_runs
    written = set(facts.words)

    def strong(card: DocumentCard) -> bool:
        if any(a in written for a in card.acronyms):
            return True
        return any(len(k := name_key(n)) >= 2 and k in asked for n in card.names)

    found = [c.doc_id for c in cards if c.is_filing and strong(c)]
    if found:
        return found, "company name"
    found = [
        c.doc_id
        for c in cards
        if c.is_filing and any(abbreviates(w, short_name(n)) for w in written for n in c.names)
    ]
    if found:
        return found, "abbreviation of the company name"
    firsts = _distinctive_first_words(cards)
    capitalised = {w.lower() for w in facts.capitalised}
    found = [c.doc_id for c in cards if firsts.get(c.doc_id) in capitalised]
    return found, "first word of the company name" if found else ""


def _distinctive_first_words(cards: Sequence[DocumentCard]) -> dict[str, str]:
    """doc_id → the first word of its company's short name, where no other company of the
    collection starts with it and it is a word of four letters or more ("Adobe", "Lockheed")."""
    groups = same_company_groups(list(cards))
    first_of: dict[int, set[str]] = {}
    for number, group in enumerate(groups):
        for i in group:
            for name in cards[i].names:
                parts = short_name(name).split()
                word = re.sub(r"[^a-z]", "", parts[0].lower()) if len(parts) > 1 else ""
                if len(word) >= 4 and word not in FUNCTION_WORDS:
                    first_of.setdefault(number, set()).add(word)
    owners: dict[str, set[int]] = {}
    for number, words in first_of.items():
        for word in words:
            owners.setdefault(word, set()).add(number)
    out: dict[str, str] = {}
    for number, group in enumerate(groups):
        for word in first_of.get(number, set()):
            if owners[word] == {number}:
                for i in group:
                    out[cards[i].doc_id] = word
    return out


def resolve(
    facts: QuestionFacts, cards: Sequence[DocumentCard], listed: Listed | None = None
) -> Resolution:
    """The documents a question (as read by chop_rag.questions.facts.read_question) is about: its
    product model, else its company, narrowed by the period and kind it names. A named period
    that no candidate covers is reported. With ``listed`` (what the documents' text holds),
    brands and codes are told from models (the module docstring)."""
    by_id = {c.doc_id: c for c in cards}
    why: list[str] = []
    models = _models_named(facts, cards, listed)
    by_model, model = models.documents, models.model
    if len(brands_of(models.models)) > 1:
        return ambiguous(facts, cards, models)
    by_company, rule = ([], "") if by_model else _companies_named(facts, cards)
    candidates = by_model or by_company
    company = None
    if not candidates and models.other_brand:
        written, twin = models.other_brand
        return Resolution(
            label=written,
            unknown=written,
            topic=facts.text,
            why=(f"no document covers {written}; the closest is {twin}",),
            closest=twin,
        )
    unknown_code: str | None = None
    products = not any(by_id[d].is_filing for d in candidates) and not all_filings(cards)
    if listed is not None and products:
        candidates, unknown_code, said = coded(facts, cards, candidates, model, listed)
        why.extend(said)
    if by_model:
        why.insert(0, f"names the product model {model}")
    elif by_company:
        card = by_id[by_company[0]]
        company = short_name(card.entity) if card.entity else (card.names or card.acronyms)[0]
        why.append(f"names {company} ({rule})")
    pool = [by_id[d] for d in candidates] if candidates else list(cards)
    unknown = None
    period_named: str | None = None
    secondary: list[str] = []
    # a bare year narrows: alone, or beside fiscal periods in a comparison ("between 2022 and
    # the 2021 fiscal period"); not the year a forecast is about ("expect to pay in 2024")
    weak = [Period(y) for y in facts.bare_years] if not (facts.periods and facts.forward) else []
    periods = facts.periods + weak
    if periods:
        # a comparison names several periods; the latest one is the report that holds all
        for period in sorted(periods, key=Period.order, reverse=True):
            reference, also, how = covering(period, pool)
            if reference:
                candidates, secondary, period_named = reference, also, str(period)
                why.append(f"{period}: {how}")
                break
        else:
            dated = any(c.fiscal_year or c.day for c in pool)
            if facts.periods and dated:
                unknown = str(max(facts.periods, key=Period.order))
                why.append(f"no document covers {unknown}")
    if unknown and facts.forward:
        # a forecast for year N is written in the filings of the years before it
        ahead = max(facts.periods, key=Period.order)
        earlier = latest_before(ahead, pool)
        if earlier:
            candidates, secondary, latest = earlier
            why.append(f"{unknown} is ahead: the forecast is in the latest filing, FY{latest}")
            period_named, unknown = f"FY{latest} (forecast for {unknown})", None
    undated = period_named is None and not unknown and len(candidates) > 1
    if undated and facts.forward and all(by_id[d].is_filing for d in candidates):
        # what a company expects, with no period named: its latest filing says it
        candidates, secondary, latest = latest_report([by_id[d] for d in candidates])
        period_named = f"FY{latest} (latest filing)" if latest else None
        why.append("asks what is expected: the latest filing")
        undated = False
    if undated and all(by_id[d].is_filing for d in candidates):
        # a company's filings and no period named: the question is about the company now,
        # as its latest annual report describes it; later periodic reports weigh less
        candidates, secondary, latest = latest_filings([by_id[d] for d in candidates])
        if latest:
            period_named = f"FY{latest} (latest)"
            why.append(f"no period named: the latest, FY{latest}")
    if facts.event and "8-K" not in facts.kinds:
        events = current_reports(facts, pool, [by_id[d] for d in candidates])
        if events:
            candidates, secondary = events, [d for d in candidates + secondary if d not in events]
            why.append("asks about an event: the 8-Ks of the period first")
    releases = [d for d in secondary if by_id[d].kind == "earnings release"]
    if facts.release_measure and releases:
        candidates, secondary = (
            releases,
            [*candidates, *(d for d in secondary if d not in releases)],
        )
        why.append("names a non-GAAP measure: the earnings release first")
    kind_named = None
    if facts.kinds and candidates:
        of_kind = [d for d in candidates + secondary if by_id[d].kind in facts.kinds]
        if of_kind:
            candidates, secondary, kind_named = of_kind, [], facts.kinds[0]
            why.append(f"names the form {kind_named}")
    label = " ".join(p for p in (model or company, period_named, kind_named) if p) or None
    return Resolution(
        documents=tuple(candidates),
        secondary=tuple(secondary),
        label=label,
        unknown=unknown or unknown_code,
        product_model=model,
        company=company,
        period=period_named,
        topic=without_names(facts.text, [by_id[d] for d in candidates + secondary]),
        why=tuple(why),
        filings=bool(cards)
        and all(c.is_filing for c in ([by_id[d] for d in candidates + secondary] or cards)),
    )


def all_filings(cards: Sequence[DocumentCard]) -> bool:
    return bool(cards) and all(c.is_filing for c in cards)


def ambiguous(
    facts: QuestionFacts, cards: Sequence[DocumentCard], models: ModelsNamed
) -> Resolution:
    """A bare model number that stored models of several brands end with: none is chosen."""
    found = tuple(dict.fromkeys(models.models))
    written = next((w for w in facts.model_like if any(
        name_key(w) in name_keys(m) for m in found)), None) or " or ".join(found)  # fmt: skip
    return Resolution(
        label=written,
        topic=without_names(facts.text, [c for c in cards if c.doc_id in models.documents]),
        why=(f"{written} names several brands' models: {', '.join(found)}",),
        ambiguous=found,
    )


# ------------------------------------------------------------------ brands and product lines


def another_line(question_parts: Sequence[str], key: str, name: str, lines: set[str]) -> bool:
    """Whether the question writes another brand or line right before ``key`` than the model
    ``name`` has: "Coolwave 330C" does not name the "Breeze 330C". A name with no brand of
    its own ("S10", beside "Galaxy S9") is any line's: "Galaxy S10" names it."""
    before = written_before(question_parts, key)
    own = name_tokens(name)
    return before is not None and before in lines and len(own) > 1 and before not in own


def twin_of_another_line(facts: QuestionFacts, models: Sequence[str]) -> str | None:
    """The model the question names as it writes it ("Coolwave 330C") when the collection
    has that model number only in another brand or line ("Breeze 330C"): another product,
    which no document covers."""
    question = facts.text
    parts, lines = facts.name_parts, line_words(models)
    for token in parts:
        if not any(ch.isdigit() for ch in token):
            continue
        twins = [m for m in models if tokens(m) and tokens(m)[-1] == token]
        if twins and all(another_line(parts, token, m, lines) for m in twins):
            written = re.search(rf"\b([\w&'-]+)\s+({re.escape(token)})\b", question, re.I)
            return f"{written.group(1)} {written.group(2)}" if written else token.upper()
    return None


# ------------------------------------------------------------------ chunk-level model values


@dataclass(frozen=True)
class QuestionCNM:
    model: str | None  # a stored model value the question names
    category: str | None
    unknown_model: str | None  # a model-like token the collection does not know


def _contains(question_tokens: list[str], value_tokens: list[str]) -> bool:
    n = len(value_tokens)
    return n > 0 and any(
        question_tokens[i : i + n] == value_tokens for i in range(len(question_tokens) - n + 1)
    )


def best_match(question: str, values: Sequence[str]) -> str | None:
    """The longest stored value whose tokens appear, in order, in the question."""
    question_tokens = tokens(question)
    matches = [v for v in values if _contains(question_tokens, tokens(v))]
    return max(matches, key=lambda v: (len(tokens(v)), len(v)), default=None)


def match_question(
    facts: QuestionFacts, models: Sequence[str], categories: Sequence[str]
) -> QuestionCNM:
    """The stored chunk-level model (and category) values a question names, by whole tokens,
    longest first ("Galaxy S9+" is not "Galaxy S9"); a model-like token that matches nothing
    stored ("999Z") is reported as an unknown model. No LLM."""
    question = facts.text
    model = best_match(question, models)
    # A bare series name ("S10") matches "Galaxy S10" when exactly one stored model ends so.
    if model is None:
        known = {t for m in models for t in tokens(m)}
        parts, lines = facts.name_parts, line_words(models)
        for token in tokens(question):
            owners = [
                m
                for m in models
                if tokens(m) and tokens(m)[-1] == token and not another_line(parts, token, m, lines)
            ]
            if len(owners) == 1 and any(ch.isdigit() for ch in token):
                model = owners[0]
                break
        unknown = None
        if model is None:
            unknown = twin_of_another_line(facts, models)
        if model is None and unknown is None:
            unknown = next((w for w in facts.model_like if w.lower() not in known), None)
    else:
        unknown = None
    return QuestionCNM(
        model=model, category=best_match(question, categories), unknown_model=unknown
    )


def resolve_by_chunk_values(
    facts: QuestionFacts, resolution: Resolution, models: Sequence[str], categories: Sequence[str]
) -> QuestionCNM:
    """The question's CNM when no card names its document: the chunk-level model values it
    writes (the chunks' CNM), else a model-like word no document has (reported as unknown)."""
    if resolution.documents:
        return QuestionCNM(model=resolution.label, category=None, unknown_model=resolution.unknown)
    matched = match_question(facts, models, categories)
    if resolution.unknown:
        return QuestionCNM(matched.model, matched.category, resolution.unknown)
    return matched


# ------------------------------------------------------------------ the topic left to search


def _word_tokens(word: str) -> list[str]:
    """A question word's tokens, a possessive's "'s" left out ("Amcor's" names Amcor)."""
    return tokens(POSSESSIVE.sub("", word))


def without_names(question: str, cards: Sequence[DocumentCard]) -> str:
    """The question without the words that name its documents ("[Samsung Smart TV remote] ..."):
    in the embedded query they pull towards every chunk that mentions the product, and in a
    full-text query they match all of the document's chunks and drown the topic words.

    A run of words names a document when it holds at least half of one of its names' tokens:
    "S9" names "Galaxy S9", a lone "TV" in "pair the remote with the TV" does not name
    "Smart TV remote". A capitalised word just before the run is the brand the card leaves out
    ("Samsung", "Galaxy" before "S10") and goes with it, unless it is the sentence's own word
    ("Does S10 ...", "Is Note 10 ...")."""
    names = [
        set(tokens(value))
        for card in cards
        for value in (card.product_model, card.entity, *card.names, *card.acronyms)
        if value and tokens(value)
    ]
    vocabulary = set().union(*names)
    words = question.split()
    word_tokens = [set(_word_tokens(word)) for word in words]
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


class ResolutionState(TypedDict):
    """A Resolution as the answer graph's state keeps it (plain, serialisable)."""

    documents: list[str]  # the documents meant
    secondary: list[str]  # documents that also cover the question, weighed less
    label: str | None  # what the question named: "Best Buy FY2023"
    unknown: str | None  # a model or period it names that no document covers
    company: str | None
    period: str | None
    why: list[str]
    topic: str  # the question without the words that name its documents
    filings: bool  # the question is about filings: figures are computed, verdicts stated
    ambiguous: list[str]  # the stored models a bare model number names, of several brands
    closest: str | None  # the stored twin of a model it names that no document covers


def resolution_state(resolution: Resolution) -> ResolutionState:
    return plain_copy(ResolutionState, resolution)
