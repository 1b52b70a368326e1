"""Document identity cards: built once at ingest from what a file says, read back typed.

Near-identical documents differ in a few facts: the product model and its variant for manuals
("Galaxy Note 10" vs "Galaxy Note 10+"), the company, period and form for filings ("Best Buy
10-K for fiscal 2023" vs "... fiscal 2022"). Each document gets an identity card, found once
at ingest from what the file itself says (its name, PDF metadata, title, first pages; no LLM),
optionally corrected by the user, and kept in the document's metadata (chop_rag.labelling.profile).
At question time the stored cards are read back as typed ``DocumentCard``s
(chop_rag.labelling.cards), and chop_rag.questions.matching matches a question against them. How
company names are shortened and dates and periods read is shared with the question side
(chop_rag.text.names, chop_rag.text.periods).

Every rule here is general: registrant names of any shape ("THE … COMPANY", "3M COMPANY",
"JOHNSON & JOHNSON", "AMCOR PLC"), tickers from a cover's "Trading Symbol(s)" table or a
press release's "(NYSE: BBY)", fiscal years by the convention the filing states, kinds and
dates. The only lists are general ones: exchanges here, legal suffixes (chop_rag.text.names) and
English function words (chop_rag.text.words).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from chop_rag.text.names import entity_aliases
from chop_rag.text.periods import (
    DATE_ISO,
    MONTH,
    QUARTER_WORDS,
    YEAR,
    find_dates,
    first_quarter,
    fiscal_year_ending,
    fiscal_years,
    make_date,
    periods,
)
from chop_rag.text.words import FUNCTION_WORDS, word_set
from chop_rag.types import FILING_KINDS, PERIODIC_KINDS, Identity, user_card

# Exchanges a cover's or a press release's ticker is listed on.
_EXCHANGE = r"(?:The\s+)?(?:New\s+York\s+Stock\s+Exchange|NYSE(?:\s+American)?|Nasdaq|NASDAQ)"
_ON = r"\.?(\d{1,2}),?" + YEAR  # "30,2023" in squashed text


def _squash(text: str) -> str:
    """PDF text splits words ("PURS UANT", "January 30 , 2021"): compare without spaces."""
    return re.sub(r"\s+", "", text).lower()


# ------------------------------------------------------------------ reading a document

_FORM = re.compile(r"form(10-?k|10-?q|8-?k|20-?f)", re.I)
_FY_ENDED = re.compile(r"(?:fiscal)?yearended" + MONTH + _ON, re.I)
_QUARTER_ENDED = re.compile(r"quarterlyperiodended" + MONTH + _ON, re.I)
_REPORT_DATE = re.compile(r"dateofreport\(dateofearliesteventreported\):?" + MONTH + _ON, re.I)
_MONTHS_ENDED = re.compile(r"\b(three|six|nine|13|26|39)[\s-]+(months|weeks)\s+ended", re.I)
_ORDINAL_QUARTER = re.compile(r"\b(first|second|third|fourth)[\s-]+quarter\b", re.I)
_EARNINGS = re.compile(r"\b(reports?|announces?|reported)\b[^.]{0,120}\b(results|earnings)\b", re.I)
_ANNOUNCER_WORD = r"(?:[A-Z][\w&.'-]*|\d+[A-Za-z][\w&.'-]*)"  # "Best", "3M"; not "9," or "2023"
_ANNOUNCER = re.compile(
    r"((?:" + _ANNOUNCER_WORD + r",?\s+){0,4}" + _ANNOUNCER_WORD + r")\s+"
    r"(?:[Rr]eports?|REPORTS?|[Aa]nnounces?|ANNOUNCES?)\b"
)
# "… ended January 28, 2023" in a release's lead: the period it reports
_LEAD_ENDED = re.compile(r"\bended\s+" + MONTH + r"\.?\s*(\d{1,2}),?\s*((?:19|20)\d\d)", re.I)
# "(Exact name of registrant", letters split by PDF text extraction too ("Registran t")
_REGISTRANT = re.compile(r"\(\s*" + r"\s*".join("exactnameofregistrant"), re.I)
_PRESS_TICKER = re.compile(r"\(" + _EXCHANGE + r"\s*:\s*([A-Z]{1,5}(?:\.[A-Z])?)\)")
_COVER_TICKER = re.compile(r"\b([A-Z]{1,5}(?:\.[A-Z])?)\s+" + _EXCHANGE + r"\b")
_TRADING_SYMBOL = re.compile(r"trading\s*symbol", re.I)
_MANUAL = re.compile(
    r"\b(user|owner'?s?|operating|instruction|e-?)\s*(manual|guide)\b|\bmanual\b", re.I
)
# a word of a registrant's name: capitalised ("Best", "JPMorgan", "&"), a digit-led name
# ("3M", "1-800-FLOWERS.COM") or a joining word ("of", "and", "the")
_NAME_WORD = re.compile(r"[A-Z&][\w&.,'-]*|\d[\w&.,'-]*[A-Za-z][\w&.,'-]*|&|of|and|the|de")


def _kind_code(raw: str) -> str:
    raw = raw.upper().replace("-", "")
    return {"10K": "10-K", "10Q": "10-Q", "8K": "8-K", "20F": "20-F"}[raw]


def _display_case(name: str) -> str:
    """ "BEST BUY CO., INC." → "Best Buy Co., Inc."; "THE COCA-COLA COMPANY" → "The Coca-Cola
    Company"; short acronyms stay ("MGM", "PLC", "3M"), an article never is one."""
    upper = [ch.isupper() for ch in name if ch.isalpha()]
    if sum(upper) < 0.7 * len(upper):
        return name
    words = []
    for number, word in enumerate(name.split()):
        letters = re.sub(r"[^A-Za-z]", "", word)
        acronym = "&" in word or (
            letters.lower() not in FUNCTION_WORDS
            and len(letters) <= 3
            and (number == 0 or not re.search(r"[AEIOU]", letters))
        )
        words.append(word if acronym else "-".join(p.capitalize() for p in word.split("-")))
    return " ".join(words)


def registrant(text: str) -> str | None:
    """The company name printed before "(Exact name of registrant ...)" on an SEC cover."""
    match = _REGISTRANT.search(text)
    if not match:
        return None
    before = text[max(0, match.start() - 160) : match.start()]
    before = re.sub(r"\b([A-Z]) (?=[A-Z]{2,}\b)", r"\1", before)  # "MGM R ESORTS" → "MGM RESORTS"
    before = re.sub(r"\s+(?=[.,](?:\s|$))", "", before)  # "NIKE, Inc\n." → "NIKE, Inc."
    words: list[str] = []
    for word in reversed(before.split()):
        if not _NAME_WORD.fullmatch(word):
            break
        words.append(word)
    while words and words[-1].lower() in ("of", "and", "de", "&"):  # the name's first word
        words.pop()
    name = " ".join(reversed(words)).strip(" ,")
    return _display_case(name) if len(name) >= 2 else None


_FILE_NUMBER = re.compile(
    r"commission\s+file\s+(?:number|no\.?)s?\s*:?\s*\d[\d-]*", re.I
)  # fmt: skip
_SUFFIX_WORD = re.compile(
    r"(?:CORPORATION|COMPANY|INCORPORATED|INC\.?|CORP\.?|CO\.|PLC|LTD\.?|LIMITED|N\.V\.|S\.A\."
    r"|AG|SE|LLC|L\.P\.|HOLDINGS|GROUP),?",
    re.I,
)
COVER_NAME_CHARS = 3000  # where a cover prints the registrant's name


def cover_name(text: str) -> str | None:
    """The registrant's name on a cover without an "(Exact name of registrant ...)" line
    ("Commission File Number 001-37845 MICROSOFT CORPORATION WASHINGTON 91-1144442"), or whose
    label is printed after the state and tax number: the name words that end in a legal
    suffix, right after the commission file number, else the first run of capitalised name
    words ending in one ("3M COMPANY") on the cover."""
    cover = text[:COVER_NAME_CHARS]
    if m := _FILE_NUMBER.search(cover):
        words: list[str] = []
        for word in cover[m.end() :].split()[:8]:
            if not _NAME_WORD.fullmatch(word):
                break
            words.append(word)
        ends = [i for i, w in enumerate(words) if _SUFFIX_WORD.fullmatch(w)]
        if ends and ends[-1] > 0:
            return _display_case(" ".join(words[: ends[-1] + 1]).strip(" ,"))
    for m in re.finditer(r"\S+", cover):
        if not (_SUFFIX_WORD.fullmatch(m.group()) and m.group()[:1].isupper()):
            continue
        words = []
        for word in reversed(cover[: m.start()].split()[-6:]):
            if not _NAME_WORD.fullmatch(word) or word.lower() in _COVER_WORDS:
                break
            words.append(word)
        while words and words[-1].lower() in ("of", "and", "de", "&", "the"):
            words.pop()
        name = " ".join([*reversed(words), m.group()]).strip(" ,")
        if words and name.upper() == name:
            return _display_case(name)
    return None


# capitalised words of a cover that are not part of a company's name
_COVER_WORDS = word_set(
    "securities exchange commission act form report annual quarterly section pursuant "
    "washington d.c. registrant number file transition period"
)


def cover_ticker(text: str) -> str | None:
    """The first symbol of a cover's "Trading Symbol(s)" table: the common stock's ("Common
    Stock, $0.10 par value BBY New York Stock Exchange"); notes ("VZ24B") are not tickers."""
    if not (match := _TRADING_SYMBOL.search(text)):
        return None
    table = text[max(0, match.start() - 400) : match.end() + 600]
    found = _COVER_TICKER.search(table)
    return found.group(1) if found else None


_FILE_FY = re.compile(r"(?<![a-z0-9])(?:fy)?((?:19|20)\d\d)(?![0-9])", re.I)
_FILE_KIND = re.compile(
    r"(?<![a-z0-9])(10-?k|10-?q|8-?k|20-?f)(?![a-z0-9])"
    r"|(earnings)|(annual[\s_-]*report)|(manual|guide)",
    re.I,
)
_FILE_WORD = re.compile(r"[A-Za-z][A-Za-z&.]{1,}|\d[A-Za-z][A-Za-z&.]*")  # "BESTBUY", "3M"


def identity_from_file_name(path: str) -> Identity:
    """Facts people put in file names: "ACME_2023Q2_10Q.pdf", "Galaxy_S10_manual.json"."""
    stem = Path(path).stem
    card = Identity(sources={})
    if m := _FILE_KIND.search(stem):
        kind = (
            _kind_code(m.group(1)) if m.group(1)
            else "earnings release" if m.group(2)
            else "annual report" if m.group(3)
            else "user manual"
        )  # fmt: skip
        card["kind"] = kind
        card["sources"]["kind"] = "file name"
    quarter = next(
        (p for p in periods(re.sub(r"[_.]+", " ", stem)) if p.fiscal_quarter and p.day is None),
        None,
    )
    if quarter is not None:  # "ACME_2023Q2_10Q", "Q2_2023", "ACME_FY23Q2"
        card["fiscal_year"] = quarter.fiscal_year or 0
        card["fiscal_quarter"] = quarter.fiscal_quarter or 0
        card["sources"].update(fiscal_year="file name", fiscal_quarter="file name")
    dates = find_dates(stem.replace("_", " "))
    if dates:
        card["date"] = dates[-1].isoformat()
        card["sources"]["date"] = "file name"
    if "fiscal_year" not in card and card.get("kind") in PERIODIC_KINDS:
        years = [int(y) for y in _FILE_FY.findall(DATE_ISO.sub(" ", stem))]
        if years:
            card["fiscal_year"] = years[0]
            card["sources"]["fiscal_year"] = "file name"
    if card.get("kind") in FILING_KINDS:  # "COMPANY_2023_10K": the company comes first
        first = re.split(r"[\s_-]+", stem)[0]
        if _FILE_WORD.fullmatch(first) and not _FILE_KIND.fullmatch(first):
            card["filed_as"] = first
            card["sources"]["filed_as"] = "file name"
    return card


def identity_from_text(opening: str) -> Identity:
    """What the first pages state: form, company, ticker, fiscal year end, quarter, date."""
    card = Identity(sources={})
    head = opening[:6000]
    squashed = _squash(head)
    text = " ".join(head.split())

    def put(name: str, value: Any) -> None:
        card[name] = value  # type: ignore[literal-required]
        card["sources"][name] = "text"

    if m := _FORM.search(squashed[:1500]):
        put("kind", _kind_code(m.group(1)))
    elif _EARNINGS.search(text[:600]):
        put("kind", "earnings release")
    elif re.search(r"\bannual report\b", text[:300], re.I):
        put("kind", "annual report")
    elif _MANUAL.search(text[:400]):
        put("kind", "user manual")
    filing = card.get("kind") in FILING_KINDS
    if entity := registrant(text) or (cover_name(text) if filing else None):
        put("entity", entity)
    ticker = _PRESS_TICKER.search(text[:3000])
    symbol = ticker.group(1) if ticker else cover_ticker(text)
    if symbol:
        put("tickers", [symbol])
    periodic = card.get("kind") in (*PERIODIC_KINDS, None)
    if periodic and (m := _FY_ENDED.search(squashed)):
        end = make_date(m.group(3), m.group(1), m.group(2))
        if end is not None:
            put("period_end", end.isoformat())
            put("fiscal_year", fiscal_year_ending(end))
    if m := _QUARTER_ENDED.search(squashed):
        if end := make_date(m.group(3), m.group(1), m.group(2)):
            put("period_end", end.isoformat())
        spans = [QUARTER_WORDS[x.group(1).lower()] for x in _MONTHS_ENDED.finditer(text)]
        if spans:
            put("fiscal_quarter", max(spans))
    reported = _REPORT_DATE.search(squashed)
    if reported and (day := make_date(reported.group(3), reported.group(1), reported.group(2))):
        put("date", day.isoformat())
    if card.get("kind") == "earnings release":
        _read_release(text[:1500], card, put)
    return card


def _read_release(lead: str, card: Identity, put: Any) -> None:
    """An earnings release's headline and lead: who reports, which quarter and fiscal year
    (as the company names it: "Fourth Quarter Fiscal 2022"), the period's end and the date."""
    if "entity" not in card and (m := _ANNOUNCER.search(lead[:600])):
        put("entity", _display_case(m.group(1)))
    quarter = first_quarter(lead, fiscal=True, halves=False) or first_quarter(lead, halves=False)
    if quarter:
        put("fiscal_quarter", quarter.fiscal_quarter)
        put("fiscal_year", quarter.fiscal_year)
    else:
        if m := _ORDINAL_QUARTER.search(lead):
            put("fiscal_quarter", QUARTER_WORDS[m.group(1).lower()])
        years = list(fiscal_years(lead[:400]))
        full_year = re.search(r"\b(?:full|fiscal)\s+year\s+((?:19|20)\d\d)\b", lead, re.I)
        if years:
            put("fiscal_year", years[0])
        elif full_year:
            put("fiscal_year", int(full_year.group(1)))
    ended = _LEAD_ENDED.search(lead)
    if ended and (end := make_date(ended.group(3), ended.group(1), ended.group(2))):
        put("period_end", end.isoformat())
    dates = find_dates(lead)
    if dates:
        put("date", dates[0].isoformat())


def merge_cards(*cards: Mapping[str, Any]) -> Identity:
    """Earlier cards win field by field (user > text > file name > ...); names and tickers
    are pooled."""
    merged: dict[str, Any] = {"sources": {}}
    for card in cards:
        for key, value in card.items():
            if key == "sources" or value in (None, "", []):
                continue
            if key in ("aliases", "tickers", "variants"):
                merged[key] = list(dict.fromkeys([*merged.get(key, []), *value]))
                continue
            if key not in merged:
                merged[key] = value
                merged["sources"][key] = (card.get("sources") or {}).get(key, "user")
    if "entity" in merged:
        merged["aliases"] = list(
            dict.fromkeys([*merged.get("aliases", []), *entity_aliases(merged["entity"])])
        )
    return Identity(**merged)  # type: ignore[typeddict-item]


def input_meta(value: Any) -> dict[str, Any]:
    """The ingest input's ``meta``: identity fields for every document of the run, checked."""
    from chop_rag.reading.documents import InvalidInput

    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidInput(f"meta must be an object of identity fields, got {type(value).__name__}")
    try:
        user_card(value)
    except (TypeError, ValueError) as err:
        raise InvalidInput(f"meta: {err}") from None
    return dict(value)


def label(card: Mapping[str, Any], title: str = "") -> str | None:
    """The short name that tells this document apart, used as the CNM's model for documents
    without a product model: "Best Buy 10-K FY2023", "Amcor 10-Q Q2 FY2023", "MGM Resorts 8-K
    2023-03-01"."""
    if card.get("model"):
        return str(card["model"])
    kind = card.get("kind")
    if kind in (None, "user manual"):
        return None
    names = [*(card.get("aliases") or []), card.get("entity"), *(card.get("tickers") or [])]
    entity = next((str(n) for n in names if n), "")
    parts = [entity, kind]
    if card.get("fiscal_quarter") and card.get("fiscal_year"):
        parts.append(f"Q{card['fiscal_quarter']} FY{card['fiscal_year']}")
    elif card.get("fiscal_year"):
        parts.append(f"FY{card['fiscal_year']}")
    elif card.get("date"):
        parts.append(str(card["date"]))
    text = " ".join(p for p in parts if p)
    return text or None
