"""Document identity: which document a question is about, for manuals and periodic reports.

Near-identical documents differ in a few facts: the product model and its variant for manuals
("Galaxy Note 10" vs "Galaxy Note 10+"), the company, period and form for filings ("Best Buy
10-K for fiscal 2023" vs "... fiscal 2022"). Each document gets an identity card, found once
at ingest from what the file itself says (its name, PDF metadata, title, first pages; no LLM),
optionally corrected by the user. Questions are resolved against the cards without an LLM:
model names are compared in a normalised form (``Note10`` = ``Note 10`` = ``note-10``,
``S9 Plus`` = ``S9+`` ≠ ``S9``), periods are read from "FY2022", "fiscal 2021", "Q2 of
FY2023", "H1 FY2023" or a date, and document kinds from "10-K", "quarterly report", ....
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from typing_extensions import TypedDict

from chop.grounding import tokens

# ------------------------------------------------------------------ the card


class Identity(TypedDict, total=False):
    """What tells a document apart from its near-duplicates; every field may be missing."""

    entity: str  # brand or company: "Best Buy Co., Inc."
    aliases: list[str]  # other names of the entity: "Best Buy", "BBY"
    model: str  # product model with its variant: "Galaxy Note 10+"
    kind: str  # "user manual", "10-K", "10-Q", "8-K", "earnings release", "annual report"
    fiscal_year: int
    fiscal_quarter: int  # 1-4 for quarterly documents
    period_end: str  # ISO date the reported period ends
    date: str  # ISO date of the report or event (8-K, press release)
    edition: str
    sources: dict[str, str]  # field -> where it was found: file name, title, text, user, llm


USER_FIELDS = ("entity", "aliases", "model", "kind", "fiscal_year", "fiscal_quarter",
               "period_end", "date", "edition")  # fmt: skip
KINDS = ("10-K", "10-Q", "8-K", "20-F", "earnings release", "annual report", "user manual")
PERIODIC_KINDS = {"10-K", "10-Q", "20-F", "earnings release", "annual report"}
FILING_KINDS = PERIODIC_KINDS | {"8-K"}
ANNUAL_KINDS = {"10-K", "20-F", "annual report"}  # the reference report of a fiscal year

_MONTHS = {
    name: number
    for number, names in enumerate(
        [("jan", "january"), ("feb", "february"), ("mar", "march"), ("apr", "april"),
         ("may",), ("jun", "june"), ("jul", "july"), ("aug", "august"),
         ("sep", "sept", "september"), ("oct", "october"), ("nov", "november"),
         ("dec", "december")],
        start=1,
    )
    for name in names
}  # fmt: skip
_MONTH = (
    r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_YEAR = r"((?:19|20)\d\d)"
_ON = r"\.?(\d{1,2}),?" + _YEAR  # "30,2023" in squashed text
# "June 30, 2023" / "30 June 2023" / "1st July 2022" / "2023-06-30"
_DATE_MDY = re.compile(_MONTH + r"\.?\s*(\d{1,2})(?:st|nd|rd|th)?\s*,?\s*((?:19|20)\d\d)", re.I)
_DATE_DMY = re.compile(
    r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTH + r"\.?,?\s+" + _YEAR, re.I
)
_DATE_ISO = re.compile(r"\b((?:19|20)\d\d)-(\d\d)-(\d\d)\b")


def _make_date(year: str, month: str | int, day: str) -> date | None:
    number = month if isinstance(month, int) else _MONTHS.get(month.lower().rstrip("."), 0)
    try:
        return date(int(year), int(number), int(day))
    except ValueError:
        return None


def find_dates(text: str) -> list[date]:
    """Every date written in ``text``, in order of appearance."""
    found: list[tuple[int, date]] = []
    for m in _DATE_MDY.finditer(text):
        if d := _make_date(m.group(3), m.group(1), m.group(2)):
            found.append((m.start(), d))
    for m in _DATE_DMY.finditer(text):
        if d := _make_date(m.group(3), m.group(2), m.group(1)):
            found.append((m.start(), d))
    for m in _DATE_ISO.finditer(text):
        if d := _make_date(m.group(1), int(m.group(2)), m.group(3)):
            found.append((m.start(), d))
    return [d for _pos, d in sorted(found, key=lambda item: item[0])]


def _squash(text: str) -> str:
    """PDF text splits words ("PURS UANT", "January 30 , 2021"): compare without spaces."""
    return re.sub(r"\s+", "", text).lower()


# ------------------------------------------------------------------ reading a document

_FORM = re.compile(r"form(10-?k|10-?q|8-?k|20-?f)", re.I)
_FY_ENDED = re.compile(r"(?:fiscal)?yearended" + _MONTH + _ON, re.I)
_QUARTER_ENDED = re.compile(r"quarterlyperiodended" + _MONTH + _ON, re.I)
_REPORT_DATE = re.compile(r"dateofreport\(dateofearliesteventreported\):?" + _MONTH + _ON, re.I)
_MONTHS_ENDED = re.compile(r"\b(three|six|nine|13|26|39)[\s-]+(months|weeks)\s+ended", re.I)
_ORDINAL_QUARTER = re.compile(r"\b(first|second|third|fourth)[\s-]+quarter\b", re.I)
_FISCAL = r"(?:fiscal\s+(?:year\s+)?|FY\s*'?)"  # "fiscal 2023", "fiscal year 2023", "FY23"
_Q_FY = re.compile(r"\bQ([1-4])\s*(?:of\s+)?" + _FISCAL + r"((?:19|20)?\d\d)\b", re.I)
_FISCAL_YEAR = re.compile(r"\b(?:fiscal\s+(?:year\s+)?|FY\s*'?)((?:19|20)\d\d|\d\d)\b", re.I)
_EARNINGS = re.compile(r"\b(reports?|announces?|reported)\b[^.]{0,120}\b(results|earnings)\b", re.I)
_ANNOUNCER = re.compile(
    r"((?:[A-Z][\w&.'-]*,?\s+){0,4}[A-Z][\w&.'-]*)\s+(?:[Rr]eports?|REPORTS|[Aa]nnounces?|ANNOUNCES)\b"
)
_REGISTRANT = re.compile(r"\(\s*exact\s+name\s+of\s+registrant", re.I)
_TICKER = re.compile(r"\((?:NYSE|NASDAQ|Nasdaq|NYSE American)\s*:\s*([A-Z]{1,5})\)")
_MANUAL = re.compile(
    r"\b(user|owner'?s?|operating|instruction|e-?)\s*(manual|guide)\b|\bmanual\b", re.I
)
_LEGAL_SUFFIX = re.compile(
    r"[,\s]+(inc|incorporated|corp|corporation|co|company|plc|ltd|limited|llc"
    r"|l\.?p|n\.?v|s\.?a|ag|se|holdings?)\.?$",
    re.I,
)
_QUARTER_WORDS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "three": 1, "six": 2,
                  "nine": 3, "13": 1, "26": 2, "39": 3}  # fmt: skip
_ACRONYM_MAX = 4


def _kind_code(raw: str) -> str:
    raw = raw.upper().replace("-", "")
    return {"10K": "10-K", "10Q": "10-Q", "8K": "8-K", "20F": "20-F"}[raw]


def _year(value: str) -> int:
    number = int(value)
    return number + 2000 if number < 100 else number


def _display_case(name: str) -> str:
    """ "BEST BUY CO., INC." → "Best Buy Co., Inc."; short acronyms stay ("MGM", "PLC")."""
    upper = [ch.isupper() for ch in name if ch.isalpha()]
    if sum(upper) < 0.7 * len(upper):
        return name
    words = []
    for number, word in enumerate(name.split()):
        letters = re.sub(r"[^A-Za-z]", "", word)
        acronym = "&" in word or (
            len(letters) <= 3 and (number == 0 or not re.search(r"[AEIOU]", letters))
        )
        words.append(word if acronym else word.capitalize())
    return " ".join(words)


def _registrant(text: str) -> str | None:
    """The company name printed before "(Exact name of registrant ...)" on an SEC cover."""
    match = _REGISTRANT.search(text)
    if not match:
        return None
    before = text[max(0, match.start() - 160) : match.start()]
    before = re.sub(r"\b([A-Z]) (?=[A-Z]{2,}\b)", r"\1", before)  # "MGM R ESORTS" → "MGM RESORTS"
    words: list[str] = []
    for word in reversed(before.split()):
        if re.fullmatch(r"[A-Z&][\w&.,'-]*|&|of|and|the", word) and not re.search(r"\d", word):
            words.append(word)
            continue
        break
    name = " ".join(reversed(words)).strip(" ,")
    return _display_case(name) if len(name) >= 2 else None


def entity_aliases(entity: str) -> list[str]:
    """Names a person uses for a company: without "Inc."/"plc", a leading acronym ("MGM")."""
    short = entity
    while True:
        stripped = _LEGAL_SUFFIX.sub("", short).strip(" ,")
        if stripped == short or not stripped:
            break
        short = stripped
    aliases = [short] if short != entity else []
    first = short.split()[0] if short.split() else ""
    if first.isupper() and 2 <= len(first) <= _ACRONYM_MAX and first != short:
        aliases.append(first)  # "MGM" of "MGM Resorts International"
    if "&" in short:
        aliases.append(short.replace("&", "and"))
        initials = "".join(w[0] for w in short.replace("&", " ").split())
        if len(initials) >= 2:
            aliases.append(f"{initials[0]}&{initials[1:]}")
            aliases.append(f"{initials[0]}n{initials[1:]}")  # "J&J" is written "JnJ" too
    return list(dict.fromkeys(a for a in aliases if a))


_FILE_QUARTER = re.compile(  # "2023Q2", "Q2_2023"
    r"(?<![a-z0-9])((?:19|20)\d\d)[\s_-]*q([1-4])(?![a-z0-9])"
    r"|(?<![a-z0-9])q([1-4])[\s_-]*((?:19|20)\d\d)(?![a-z0-9])",
    re.I,
)
_FILE_FY = re.compile(r"(?<![a-z0-9])(?:fy)?((?:19|20)\d\d)(?![0-9])", re.I)
_FILE_KIND = re.compile(
    r"(?<![a-z0-9])(10-?k|10-?q|8-?k|20-?f)(?![a-z0-9])"
    r"|(earnings)|(annual[\s_-]*report)|(manual|guide)",
    re.I,
)


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
    if m := _FILE_QUARTER.search(stem):
        year, quarter = (m.group(1), m.group(2)) if m.group(1) else (m.group(4), m.group(3))
        card["fiscal_year"], card["fiscal_quarter"] = int(year), int(quarter)
        card["sources"].update(fiscal_year="file name", fiscal_quarter="file name")
    dates = find_dates(stem.replace("_", " "))
    if dates:
        card["date"] = dates[-1].isoformat()
        card["sources"]["date"] = "file name"
    if "fiscal_year" not in card and card.get("kind") in PERIODIC_KINDS:
        years = [int(y) for y in _FILE_FY.findall(_DATE_ISO.sub(" ", stem))]
        if years:
            card["fiscal_year"] = years[0]
            card["sources"]["fiscal_year"] = "file name"
    return card


def identity_from_text(opening: str) -> Identity:
    """What the first pages state: form, company, fiscal year end, quarter, report date."""
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
    if entity := _registrant(text):
        put("entity", entity)
    if ticker := _TICKER.search(text[:3000]):
        card["aliases"] = [ticker.group(1)]
    periodic = card.get("kind") in (*PERIODIC_KINDS, None)
    if periodic and (m := _FY_ENDED.search(squashed)):
        end = _make_date(m.group(3), m.group(1), m.group(2))
        if end is not None:
            put("period_end", end.isoformat())
            put("fiscal_year", end.year)
    if m := _QUARTER_ENDED.search(squashed):
        if end := _make_date(m.group(3), m.group(1), m.group(2)):
            put("period_end", end.isoformat())
        spans = [_QUARTER_WORDS[x.group(1).lower()] for x in _MONTHS_ENDED.finditer(text)]
        if spans:
            put("fiscal_quarter", max(spans))
    reported = _REPORT_DATE.search(squashed)
    if reported and (day := _make_date(reported.group(3), reported.group(1), reported.group(2))):
        put("date", day.isoformat())
    if card.get("kind") == "earnings release":
        lead = text[:1500]
        if "entity" not in card and (m := _ANNOUNCER.search(lead[:600])):
            put("entity", _display_case(m.group(1)))
        if m := _Q_FY.search(lead):
            put("fiscal_quarter", int(m.group(1)))
            put("fiscal_year", _year(m.group(2)))
        else:
            if m := _ORDINAL_QUARTER.search(lead):
                put("fiscal_quarter", _QUARTER_WORDS[m.group(1).lower()])
            years = [_year(y) for y in _FISCAL_YEAR.findall(lead[:400])]
            full_year = re.search(r"\b(?:full|fiscal)\s+year\s+((?:19|20)\d\d)\b", lead, re.I)
            if years:
                put("fiscal_year", years[0])
            elif full_year:
                put("fiscal_year", int(full_year.group(1)))
        dates = find_dates(lead)
        if dates:
            put("date", dates[0].isoformat())
    return card


def merge_cards(*cards: Mapping[str, Any]) -> Identity:
    """Earlier cards win field by field (user > text > file name > ...)."""
    merged: dict[str, Any] = {"sources": {}}
    for card in cards:
        for key, value in card.items():
            if key == "sources" or value in (None, "", []):
                continue
            if key == "aliases":
                merged["aliases"] = list(dict.fromkeys([*merged.get("aliases", []), *value]))
                continue
            if key not in merged:
                merged[key] = value
                merged["sources"][key] = (card.get("sources") or {}).get(key, "user")
    if "entity" in merged:
        merged["aliases"] = list(
            dict.fromkeys([*merged.get("aliases", []), *entity_aliases(merged["entity"])])
        )
    return Identity(**merged)  # type: ignore[typeddict-item]


def user_card(values: Mapping[str, Any]) -> Identity:
    """Fields a user set (sidecar file or ``--meta``), checked and typed."""
    card = Identity(sources={})
    for key, value in values.items():
        if key not in USER_FIELDS:
            raise ValueError(f"unknown identity field {key!r} (known: {', '.join(USER_FIELDS)})")
        if key in ("fiscal_year", "fiscal_quarter"):
            try:
                value = int(value)
            except (TypeError, ValueError):
                raise ValueError(
                    f"identity field {key!r} must be a whole number, not {value!r}"
                ) from None
        elif key == "aliases":
            value = [str(v) for v in value] if isinstance(value, list) else str(value).split(",")
        else:
            value = str(value)
        card[key] = value  # type: ignore[literal-required]
        card["sources"][key] = "user"
    return card


def input_meta(value: Any) -> dict[str, Any]:
    """The ingest input's ``meta``: identity fields for every document of the run, checked."""
    from chop.documents import InvalidInput

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
    entity = (card.get("aliases") or [card.get("entity")])[0] or ""
    parts = [entity, kind]
    if card.get("fiscal_quarter") and card.get("fiscal_year"):
        parts.append(f"Q{card['fiscal_quarter']} FY{card['fiscal_year']}")
    elif card.get("fiscal_year"):
        parts.append(f"FY{card['fiscal_year']}")
    elif card.get("date"):
        parts.append(str(card["date"]))
    text = " ".join(p for p in parts if p)
    return text or None


# ------------------------------------------------------------------ names, normalised

_common = {"wi-fi", "wifi", "usb", "5g", "4g", "3g", "4k", "8k", "2k", "hd", "mp3", "mp4",
           "1st", "2nd", "3rd", "4th", "lte", "q1", "q2", "q3", "q4", "h1", "h2"}  # fmt: skip
_period_token = re.compile(r"^(fy\d{2,4}|q[1-4]|h[12]|\d{1,2}[kq]|(19|20)\d\d|\d+(st|nd|rd|th))$")


def name_tokens(text: str) -> list[str]:
    """Lowercase tokens where "plus" joins the previous token as "+" ("S9 Plus" → s9+)."""
    out: list[str] = []
    for token in tokens(text):
        if token == "plus" and out and not out[-1].endswith("+"):
            out[-1] += "+"
        else:
            out.append(token)
    return out


def name_keys(name: str) -> dict[str, bool]:
    """Compact forms a person may write for a name, each with whether it ends the name.

    Every run of consecutive tokens that carries a digit, or has two tokens or more, is a
    key written without spaces: "Galaxy Note 10+" → galaxynote10+, note10+, galaxynote, ...
    A key that ends where the name ends is complete: "galaxys7" is complete for "Galaxy S7"
    but not for "Galaxy S7 Edge", so a question about the S7 prefers the S7.
    """
    parts = name_tokens(name)
    keys: dict[str, bool] = {}
    for start in range(len(parts)):
        for end in range(start + 1, len(parts) + 1):
            run = parts[start:end]
            key = "".join(run)
            has_digit = any(ch.isdigit() for ch in key)
            has_letter = any(ch.isalpha() for ch in key)
            if not has_letter or key in _common or (not has_digit and len(run) < 2):
                continue
            complete = end == len(parts)
            keys[key] = keys.get(key, False) or complete
    return keys


def question_keys(question: str, longest: int = 6) -> set[str]:
    """Every run of up to ``longest`` consecutive question tokens, without spaces."""
    parts = name_tokens(question)
    return {
        "".join(parts[i:j])
        for i in range(len(parts))
        for j in range(i + 1, min(len(parts), i + longest) + 1)
    }


def entity_keys(card: Mapping[str, Any]) -> set[str]:
    """Compact names of a card's entity; single words count here (they are proper names)."""
    names = [card.get("entity"), *(card.get("aliases") or [])]
    keys = set()
    for name in names:
        if name:
            key = "".join(name_tokens(str(name)))
            if len(key) >= 2:
                keys.add(key)
    return keys


# ------------------------------------------------------------------ reading a question

_Q_QUARTER_FY = re.compile(
    r"\b(?:Q([1-4])|(first|second|third|fourth)\s+quarter)\s*(?:of\s+|,\s*)?(?:the\s+)?"
    r"(?:fiscal\s+(?:year\s+)?|FY\s*'?)((?:19|20)?\d\d)\b",
    re.I,
)
_Q_HALF_FY = re.compile(
    r"\b(H[12]|first half|second half)\s*(?:of\s+)?" + _FISCAL + r"((?:19|20)?\d\d)\b", re.I
)
_Q_FY_ONLY = re.compile(r"\b(?:fiscal\s+(?:year\s+)?|FY\s*'?)((?:19|20)\d\d|\d\d)\b", re.I)
_Q_KIND = {
    "10-K": re.compile(r"\b10-?k\b|\bannual (?:report|filing)\b", re.I),
    "10-Q": re.compile(r"\b10-?q\b|\bquarterly (?:report|filing)\b", re.I),
    "8-K": re.compile(r"\b8-?k\b|\bcurrent report\b", re.I),
    "earnings release": re.compile(r"\bearnings (?:release|report|call)\b|\bpress release\b", re.I),
}


@dataclass(frozen=True)
class Period:
    fiscal_year: int | None = None
    fiscal_quarter: int | None = None
    day: date | None = None


@dataclass(frozen=True)
class QuestionFacts:
    periods: list[Period] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)


def read_question(question: str) -> QuestionFacts:
    """Periods and document kinds a question names; no LLM."""
    periods: list[Period] = []
    covered: list[tuple[int, int]] = []
    for m in _Q_QUARTER_FY.finditer(question):
        quarter = int(m.group(1)) if m.group(1) else _QUARTER_WORDS[m.group(2).lower()]
        periods.append(Period(_year(m.group(3)), quarter))
        covered.append(m.span())
    for m in _Q_HALF_FY.finditer(question):
        half = m.group(1).lower()
        periods.append(Period(_year(m.group(2)), 2 if half in ("h1", "first half") else 4))
        covered.append(m.span())
    for m in _Q_FY_ONLY.finditer(question):
        if not any(a <= m.start() < b for a, b in covered):
            periods.append(Period(_year(m.group(1))))
    for day in find_dates(question):
        periods.append(Period(day=day))
    kinds = [kind for kind, pattern in _Q_KIND.items() if pattern.search(question)]
    return QuestionFacts(periods=periods, kinds=kinds)


# ------------------------------------------------------------------ resolving


@dataclass(frozen=True)
class Resolution:
    doc_ids: list[str]  # the documents the question is about ([] = no restriction)
    named: str | None  # what the question named, for notes: "Galaxy Note 10+", "Amcor FY2023"
    unknown: str | None  # a model or period the question names that no document has
    # documents that also cover what the question names, but are not its reference: the Q4
    # earnings release next to the fiscal year's 10-K; retrieval weighs them less
    secondary: list[str] = field(default_factory=list)


def annual_first(
    doc_ids: list[str], cards: Mapping[str, Mapping[str, Any]]
) -> tuple[list[str], list[str]]:
    """(reference, secondary): a fiscal year's reference is its annual report; an earnings
    release or quarterly report covering the same year stays a candidate, weighed less."""
    annual = [d for d in doc_ids if cards[d].get("kind") in ANNUAL_KINDS]
    if not annual:
        return doc_ids, []
    return annual, [d for d in doc_ids if d not in annual]


def _fiscal_year_end(cards: Iterable[Mapping[str, Any]]) -> tuple[int, int] | None:
    """(month, day) an entity's fiscal year ends, from one of its annual reports."""
    for card in cards:
        if card.get("kind") in ("10-K", "annual report", "20-F") and card.get("period_end"):
            end = date.fromisoformat(str(card["period_end"]))
            return end.month, end.day
    return None


def complete_periods(cards: Mapping[str, dict[str, Any]]) -> None:
    """Give quarterly documents their fiscal year from a sibling annual report of the same
    entity: Amcor's fiscal year ends June 30, so the quarter ended December 31, 2022 is Q2 of
    FY2023. Without a sibling, the calendar year of the period end is used."""
    by_entity: dict[str, list[dict[str, Any]]] = {}
    for card in cards.values():
        if card.get("entity"):
            by_entity.setdefault(str(card["entity"]).lower(), []).append(card)
    for card in cards.values():
        if card.get("fiscal_year") or not card.get("period_end"):
            continue
        end = date.fromisoformat(str(card["period_end"]))
        year_end = _fiscal_year_end(by_entity.get(str(card.get("entity", "")).lower(), []))
        if year_end is None:
            card["fiscal_year"] = end.year
            continue
        month, day = year_end
        past_year_end = (end.month, end.day) > (month, day) and not (
            end.month == month and end.day - day < 8
        )
        card["fiscal_year"] = end.year + 1 if past_year_end else end.year
        if not card.get("fiscal_quarter"):
            months = (end.month - month) % 12 or 12
            card["fiscal_quarter"] = max(1, min(4, round(months / 3)))


def _period_matches(card: Mapping[str, Any], period: Period) -> bool:
    if period.day is not None:
        for key in ("period_end", "date"):
            if card.get(key):
                gap = abs((date.fromisoformat(str(card[key])) - period.day).days)
                if gap <= 7:
                    return True
        return False
    if card.get("fiscal_year") != period.fiscal_year:
        return False
    quarter = card.get("fiscal_quarter")
    if period.fiscal_quarter is None:  # a year: documents that cover the whole year
        return quarter in (None, 4) and card.get("kind") != "8-K"
    return quarter == period.fiscal_quarter


def _describe(period: Period) -> str:
    if period.day is not None:
        return period.day.isoformat()
    if period.fiscal_quarter:
        return f"Q{period.fiscal_quarter} FY{period.fiscal_year}"
    return f"FY{period.fiscal_year}"


def resolve(question: str, cards: Mapping[str, Mapping[str, Any]]) -> Resolution:
    """The documents a question is about: its product model, else its entity, narrowed by
    the period and kind it names. A named period that no candidate covers is reported."""
    asked = question_keys(question)
    # products: the longest model name the question writes, a complete name first
    best: tuple[bool, int] = (False, 0)
    by_model: list[str] = []
    model_name: str | None = None
    for doc_id, card in cards.items():
        model = card.get("model")
        if not model:
            continue
        for key, complete in name_keys(str(model)).items():
            if key in asked:
                score = (complete, len(key))  # "S10" names the S10, not the S10 Lite
                if score > best:
                    best, by_model, model_name = score, [doc_id], str(model)
                elif score == best and doc_id not in by_model:
                    by_model.append(doc_id)
    by_entity = [doc_id for doc_id, card in cards.items() if entity_keys(card) & asked]
    candidates = by_model or by_entity
    named = model_name if by_model else None
    if by_entity and not by_model:
        entity_card = cards[by_entity[0]]
        named = str((entity_card.get("aliases") or [entity_card.get("entity")])[0])
    pool = candidates or list(cards)
    facts = read_question(question)
    unknown = None
    secondary: list[str] = []
    if facts.periods:
        # a comparison names several periods; the latest one is the report that holds all
        ordered = sorted(
            facts.periods,
            key=lambda p: (p.day or date(p.fiscal_year or 1, 1, 1), p.fiscal_quarter or 5),
        )
        for period in reversed(ordered):
            matching = [d for d in pool if _period_matches(cards[d], period)]
            if matching:
                pool, candidates = matching, matching
                if period.day is None and period.fiscal_quarter is None:
                    candidates, secondary = annual_first(matching, cards)
                named = f"{named or ''} {_describe(period)}".strip()
                break
        else:
            if any(cards[d].get("fiscal_year") or cards[d].get("date") for d in pool):
                unknown = _describe(ordered[-1])
    elif len(candidates) > 1 and all(cards[d].get("kind") in FILING_KINDS for d in candidates):
        # a company's filings and no period named: the question is about the company now,
        # as its latest annual report describes it; later periodic reports weigh less
        candidates, secondary, latest = _latest_filings(candidates, cards)
        if latest:
            named = f"{named or ''} FY{latest} (latest)".strip()
    if facts.kinds and candidates:
        of_kind = [d for d in candidates + secondary if cards[d].get("kind") in facts.kinds]
        if of_kind:
            candidates, secondary = of_kind, []
            named = f"{named or ''} {facts.kinds[0]}".strip()
    return Resolution(doc_ids=candidates, named=named, unknown=unknown, secondary=secondary)


def _latest_filings(
    doc_ids: list[str], cards: Mapping[str, Mapping[str, Any]]
) -> tuple[list[str], list[str], int]:
    """(reference, secondary, fiscal year) for a question that names no period: the latest
    annual report, and the periodic reports of that year or later; without an annual report,
    every filing of the latest fiscal year."""
    year_of = {d: int(cards[d].get("fiscal_year") or 0) for d in doc_ids}
    annual = [d for d in doc_ids if cards[d].get("kind") in ANNUAL_KINDS and year_of[d]]
    if not annual:
        latest = max(year_of.values())
        return ([d for d in doc_ids if year_of[d] == latest] if latest else doc_ids), [], latest
    latest = max(year_of[d] for d in annual)
    reference = [d for d in annual if year_of[d] == latest]
    later = [
        d
        for d in doc_ids
        if d not in reference and cards[d].get("kind") in PERIODIC_KINDS and year_of[d] >= latest
    ]
    return reference, later, latest
