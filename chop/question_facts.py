"""What a question says, read without an LLM: the names it writes, normalised for comparison
with the documents' names (``Note10`` = ``Note 10`` = ``note-10``; ``S9 Plus`` = ``S9+`` ≠
``S9``), and the period and kind it names ("Q2 of FY2023", "quarterly report"). chop.question
resolves what it reads against the documents' cards."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date

from chop.grounding import tokens
from chop.identity import (
    QUARTER_WORDS,
    find_dates,
    year_number,
)

# ------------------------------------------------------------------ names, normalised

_common = {"wi-fi", "wifi", "usb", "5g", "4g", "3g", "4k", "8k", "2k", "hd", "mp3", "mp4",
           "1st", "2nd", "3rd", "4th", "lte", "q1", "q2", "q3", "q4", "h1", "h2"}  # fmt: skip
POSSESSIVE = re.compile(r"['’]s\b", re.IGNORECASE)
NAME_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9&.'’-]*")


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


def written_words(question: str) -> list[str]:
    """The question's words as written, possessives and edge punctuation left out:
    "BBY's" → "BBY", "(J&J)" → "J&J"."""
    return [POSSESSIVE.sub("", w).strip(".'’-") for w in NAME_WORD.findall(question)]


def name_key(name: str) -> str:
    return "".join(name_tokens(name))


def abbreviates(word: str, name: str) -> bool:
    """Whether a capitalised word is made of the beginnings of each of a name's words, in
    order, at least one of two letters or more: "AMEX" of "American Express". Plain initials
    ("FCF") are not enough: finance questions are full of them."""
    words = [w.lower() for w in re.findall(r"[A-Za-z]+", name)]
    wanted = word.lower()
    if len(words) < 2 or len(wanted) < 4 or not word.isupper() or not wanted.isalpha():
        return False

    def split(rest: str, index: int, longer: bool) -> bool:
        if index == len(words):
            return not rest and longer
        return any(
            words[index].startswith(rest[:n]) and split(rest[n:], index + 1, longer or n > 1)
            for n in range(1, len(rest) - (len(words) - index - 1) + 1)
        )

    return split(wanted, 0, False)


# ------------------------------------------------------------------ periods and kinds

_FISCAL = r"(?:fiscal\s+(?:year\s+)?|FY\s*'?)"
_QUARTER = r"(?:Q([1-4])|(first|second|third|fourth)\s+(?:fiscal\s+)?quarter)"
# "Q2 of FY2023", "second quarter of fiscal 2023", "second fiscal quarter of 2023", "Q1 2021"
_Q_QUARTER_FY = re.compile(
    r"\b" + _QUARTER + r"\s*(?:of\s+|,\s*)?(?:the\s+)?(?:" + _FISCAL + r"((?:19|20)?\d\d)"
    r"|((?:19|20)\d\d))\b",
    re.I,
)
_Q_YEAR_QUARTER = re.compile(r"\b((?:19|20)\d\d)\s*Q([1-4])\b", re.I)  # "2021 Q1"
_Q_HALF_FY = re.compile(
    r"\b(H[12]|first half|second half)\s*(?:of\s+)?" + _FISCAL + r"((?:19|20)?\d\d)\b", re.I
)
_Q_FY_ONLY = re.compile(r"\b" + _FISCAL + r"((?:19|20)\d\d|\d\d)\b", re.I)
_Q_BARE_YEAR = re.compile(r"(?<![\w$.,-])((?:19|20)\d\d)(?![\w%.,-]*\d)")
_Q_KIND = {
    "10-K": re.compile(r"\b10-?k\b|\bannual (?:report|filing)\b", re.I),
    "10-Q": re.compile(r"\b10-?q\b|\bquarterly (?:report|filing)\b", re.I),
    "8-K": re.compile(r"\b8-?k\b|\bcurrent report\b", re.I),
    "earnings release": re.compile(r"\bearnings (?:release|report|call)\b|\bpress release\b", re.I),
}


# Measures that companies report in their earnings releases rather than in their annual
# reports: non-GAAP figures (Regulation G) such as "Adjusted EBIT", "EBITDA(R)", "non-GAAP EPS".
# "unadjusted operating income" is a GAAP figure and does not count.
_RELEASE_MEASURE = re.compile(r"\b(?:adjusted|non[- ]?gaap|ebitdar?|ebita)\b", re.I)


@dataclass(frozen=True)
class Period:
    """A period a question names: a fiscal year, a quarter of one, or a day."""

    fiscal_year: int | None = None
    fiscal_quarter: int | None = None
    day: date | None = None

    def __str__(self) -> str:
        if self.day is not None:
            return self.day.isoformat()
        if self.fiscal_quarter:
            return f"Q{self.fiscal_quarter} FY{self.fiscal_year}"
        return f"FY{self.fiscal_year}"

    def order(self) -> tuple[date, int]:
        return (self.day or date(self.fiscal_year or 1, 1, 1), self.fiscal_quarter or 5)


@dataclass(frozen=True)
class QuestionFacts:
    periods: list[Period] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    # years written bare ("as of 2022"): they narrow to a year's documents, never declined
    bare_years: list[int] = field(default_factory=list)
    # a measure earnings releases report (non-GAAP): a release of the period comes first
    release_measure: bool = False


def read_question(question: str) -> QuestionFacts:
    """Periods and document kinds a question names; no LLM."""
    periods: list[Period] = []
    covered: list[tuple[int, int]] = []
    for m in _Q_QUARTER_FY.finditer(question):
        quarter = int(m.group(1)) if m.group(1) else QUARTER_WORDS[m.group(2).lower()]
        periods.append(Period(year_number(m.group(3) or m.group(4)), quarter))
        covered.append(m.span())
    for m in _Q_YEAR_QUARTER.finditer(question):
        if not any(a <= m.start() < b for a, b in covered):
            periods.append(Period(int(m.group(1)), int(m.group(2))))
            covered.append(m.span())
    for m in _Q_HALF_FY.finditer(question):
        half = m.group(1).lower()
        periods.append(Period(year_number(m.group(2)), 2 if half in ("h1", "first half") else 4))
        covered.append(m.span())
    for m in _Q_FY_ONLY.finditer(question):
        if not any(a <= m.start() < b for a, b in covered):
            periods.append(Period(year_number(m.group(1))))
            covered.append(m.span())
    for day in find_dates(question):
        periods.append(Period(day=day))
    bare = [
        int(m.group(1))
        for m in _Q_BARE_YEAR.finditer(question)
        if not any(a <= m.start() < b for a, b in covered)
    ]
    kinds = [kind for kind, pattern in _Q_KIND.items() if pattern.search(question)]
    return QuestionFacts(
        periods=periods,
        kinds=kinds,
        bare_years=bare,
        release_measure=bool(_RELEASE_MEASURE.search(question)),
    )


# ------------------------------------------------------------------ brands and product lines


def written_before(question_parts: Sequence[str], key: str) -> str | None:
    """The token the question writes right before the run of its tokens that spells ``key``
    ("coolwave" before "330c" in "... of the Coolwave 330C?")."""
    for start in range(len(question_parts)):
        run = ""
        for end in range(start, len(question_parts)):
            run += question_parts[end]
            if run == key:
                return question_parts[start - 1] if start else None
            if not key.startswith(run):
                break
    return None


def line_words(names: Sequence[str]) -> set[str]:
    """The brand or product-line words of the collection: the first word of each model name
    of two words or more ("coolwave", "breeze", "galaxy")."""
    return {parts[0] for name in names if len(parts := name_tokens(name)) > 1}


def another_line(question_parts: Sequence[str], key: str, name: str, lines: set[str]) -> bool:
    """Whether the question writes another brand or line right before ``key`` than the model
    ``name`` has: "Coolwave 330C" does not name the "Breeze 330C"."""
    before = written_before(question_parts, key)
    return before is not None and before in lines and before not in name_tokens(name)
