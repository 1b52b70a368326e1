"""Identity cards read back: each stored document's card typed as a ``DocumentCard``, and the
cards of one collection read together (``read_cards``): filings of one company share every
name it goes by, and a quarterly report takes its fiscal year from a sibling annual report.
The cards are made at ingest by chop_rag.labelling.identity; chop_rag.questions.matching matches
questions against them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import date
from typing import Any

from chop_rag.text.names import is_identifier, short_name
from chop_rag.text.periods import fiscal_year_ending
from chop_rag.types import ANNUAL_KINDS, FILING_KINDS


@dataclass(frozen=True)
class DocumentCard:
    """One stored document's identity, typed, as question resolution reads it.

    A manual's ``product_model`` ("Galaxy Note 10+") and a filing's ``filing_label`` ("Best
    Buy 10-K FY2023") are different things: the first is what a question names, the second
    is how a filing is shown and signed (the CNM's model of its chunks)."""

    doc_id: str
    title: str = ""
    kind: str | None = None
    product_model: str | None = None
    variants: tuple[str, ...] = ()  # the family's others its manual covers ("Galaxy S10e")
    entity: str | None = None
    names: tuple[str, ...] = ()  # the company's names, compared without case: "Best Buy"
    acronyms: tuple[str, ...] = ()  # tickers and acronyms, written in capitals: "BBY", "MGM"
    fiscal_year: int | None = None  # the year as the filing names it
    fiscal_quarter: int | None = None
    period_end: date | None = None
    day: date | None = None  # the report's or event's date (8-K, press release)
    # the company word of the file name; it ties a filing to its company's other filings
    # ("BBY_2023Q4_EARNINGS.pdf" to the 10-K whose ticker is BBY) and names it when it fits
    filed_as: str | None = None

    @property
    def is_filing(self) -> bool:
        return self.kind in FILING_KINDS

    @property
    def covers_whole_year(self) -> bool:
        """An annual report, or a fourth-quarter release with the full year's figures."""
        return self.is_filing and self.kind != "8-K" and self.fiscal_quarter in (None, 4)

    @property
    def year_by_end(self) -> int | None:
        """The fiscal year named by the calendar year it ends in, when that differs from the
        filing's own name (Ulta's "fiscal 2022" ends January 28, 2023: FY2023 to many)."""
        if self.period_end is None or not self.covers_whole_year:
            return None
        return self.period_end.year if self.period_end.year != self.fiscal_year else None

    @property
    def filing_label(self) -> str | None:
        """ "Best Buy 10-K FY2023", "Amcor 10-Q Q2 FY2023"; None for a manual."""
        if not self.is_filing and self.kind != "annual report":
            return None
        name = (
            short_name(self.entity) if self.entity
            else short_name(self.names[0]) if self.names
            else self.acronyms[0] if self.acronyms
            else ""
        )  # fmt: skip
        parts = [name, str(self.kind)]
        if self.fiscal_quarter and self.fiscal_year:
            parts.append(f"Q{self.fiscal_quarter} FY{self.fiscal_year}")
        elif self.fiscal_year:
            parts.append(f"FY{self.fiscal_year}")
        elif self.day:
            parts.append(self.day.isoformat())
        return " ".join(p for p in parts if p)

    @property
    def display_title(self) -> str:
        """The title a person recognises: the stored one, unless it is a filing system's id."""
        if self.title and not is_identifier(self.title):
            return self.title
        return self.filing_label or self.title


def _iso(value: Any) -> date | None:
    try:
        return date.fromisoformat(str(value)) if value else None
    except ValueError:
        return None


def _int(value: Any) -> int | None:
    try:
        return int(value) if value not in (None, "") else None
    except (TypeError, ValueError):
        return None


def _is_acronym(name: str) -> bool:
    """ "BBY", "MGM", "J&J", "3M": short and written in capitals (compared as written)."""
    letters = re.sub(r"[^A-Za-z0-9]", "", name)
    return 1 <= len(letters) <= 5 and name == name.upper() and any(c.isalpha() for c in name)


def card_from_stored(
    doc_id: str, identity: Mapping[str, Any], title: str = "", profile_model: str | None = None
) -> DocumentCard:
    """A stored card, typed. A document that is not a filing is named by its product model:
    the card's, else the profile's, else its title. Cards stored before tickers had their own
    field kept them among the aliases; capitals tell them apart."""
    kind = identity.get("kind") or None
    model = identity.get("model")
    if kind is None or kind == "user manual":
        model = model or profile_model or title or None
    entity = identity.get("entity")
    written = [entity, *(identity.get("aliases") or []), *(identity.get("tickers") or [])]
    names = [str(n) for n in written if n and not _is_acronym(str(n))]
    acronyms = [str(n) for n in written if n and _is_acronym(str(n))]
    filed_as = str(identity.get("filed_as") or "") or None
    if filed_as and _filed_as_fits(filed_as, written):
        names.append(filed_as)  # "ADOBE" of ADOBE_2015_10K.pdf and "Adobe Inc.": a name
    return DocumentCard(
        doc_id=doc_id,
        title=title,
        kind=kind,
        product_model=str(model) if model else None,
        variants=tuple(str(v) for v in identity.get("variants") or ()),
        entity=str(entity) if entity else None,
        names=tuple(dict.fromkeys(names)),
        acronyms=tuple(dict.fromkeys(acronyms)),
        fiscal_year=_int(identity.get("fiscal_year")),
        fiscal_quarter=_int(identity.get("fiscal_quarter")),
        period_end=_iso(identity.get("period_end")),
        day=_iso(identity.get("date")),
        filed_as=filed_as if kind in FILING_KINDS else None,
    )


def compact(name: str) -> str:
    """A name without case, spaces or punctuation: "Best Buy Co." → "bestbuyco"."""
    return re.sub(r"[^a-z0-9&]", "", name.lower())


def _filed_as_fits(filed_as: str, written: Iterable[Any]) -> bool:
    """A file name's company word is a name of the document's company when it starts one of
    the names the text gave ("ADOBE" of "Adobe Systems Incorporated") or is its ticker."""
    word = compact(filed_as)
    return len(word) >= 2 and any(
        n and (compact(str(n)).startswith(word) or compact(str(n)) == word) for n in written
    )


def same_company_groups(cards: list[DocumentCard]) -> list[list[int]]:
    """Cards of one company, by what they share: a name or a ticker. The 2015 10-K of "Adobe
    Systems Incorporated" and the 2022 10-K of "Adobe Inc." share their file's "ADOBE"; an
    earnings release that gave only "(NYSE: BBY)" shares the 10-K's ticker."""
    parent = list(range(len(cards)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    owner: dict[str, int] = {}
    for number, card in enumerate(cards):
        if not card.is_filing and card.kind != "annual report":
            continue  # products are told apart by their models, not their brand
        keys = {compact(n) for n in (*card.names, *card.acronyms)}
        if card.filed_as:
            keys.add(compact(card.filed_as))
        for key in keys:
            if len(key) < 2:
                continue
            if key in owner:
                parent[root(number)] = root(owner[key])
            else:
                owner[key] = number
    groups: dict[int, list[int]] = {}
    for number in range(len(cards)):
        groups.setdefault(root(number), []).append(number)
    return list(groups.values())


def _with_company_names(cards: list[DocumentCard]) -> list[DocumentCard]:
    """Each filing with every name and ticker its company goes by in the collection."""
    out = list(cards)
    for group in same_company_groups(cards):
        if len(group) < 2:
            continue
        names = tuple(dict.fromkeys(n for i in group for n in cards[i].names))
        acronyms = tuple(dict.fromkeys(a for i in group for a in cards[i].acronyms))
        for i in group:
            own = cards[i]
            out[i] = replace(
                own,
                names=tuple(dict.fromkeys((*own.names, *names))),
                acronyms=tuple(dict.fromkeys((*own.acronyms, *acronyms))),
            )
    return out


def _fiscal_year_end(cards: Iterable[DocumentCard]) -> tuple[int, int] | None:
    """(month, day) a company's fiscal year ends, from one of its annual reports."""
    for card in cards:
        if card.kind in ANNUAL_KINDS and card.period_end:
            return card.period_end.month, card.period_end.day
    return None


def _with_complete_periods(cards: list[DocumentCard]) -> list[DocumentCard]:
    """Quarterly documents get their fiscal year from a sibling annual report of the same
    company: Amcor's fiscal year ends June 30, so the quarter ended December 31, 2022 is Q2
    of FY2023. Without a sibling, the year is the one its period end closes."""
    out = list(cards)
    for group in same_company_groups(cards):
        year_end = _fiscal_year_end(cards[i] for i in group)
        for i in group:
            card = cards[i]
            if card.fiscal_year or not card.period_end:
                continue
            end = card.period_end
            if year_end is None:
                out[i] = replace(card, fiscal_year=fiscal_year_ending(end))
                continue
            month, day = year_end
            past_year_end = (end.month, end.day) > (month, day) and not (
                end.month == month and end.day - day < 8
            )
            quarter = card.fiscal_quarter
            if not quarter:
                months = (end.month - month) % 12 or 12
                quarter = max(1, min(4, round(months / 3)))
            out[i] = replace(
                card, fiscal_year=end.year + 1 if past_year_end else end.year,
                fiscal_quarter=quarter,
            )  # fmt: skip
    return out


def read_cards(cards: Iterable[DocumentCard]) -> list[DocumentCard]:
    """A collection's cards as resolution reads them: each filing with all names its company
    goes by there, and quarterly periods completed from the company's annual reports."""
    return _with_complete_periods(_with_company_names(list(cards)))
