"""What a question says, read without an LLM: the names it writes, normalised for comparison
with the documents' names (``Note10`` = ``Note 10`` = ``note-10``; ``S9 Plus`` = ``S9+`` ≠
``S9``), and the period and kind it names ("Q2 of FY2023", "quarterly report").
chop.questions.question resolves what it reads against the documents' cards."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from chop.text.grounding import tokens
from chop.text.periods import Period, bare_years, periods_in

__all__ = ["Period", "QuestionFacts", "read_question"]

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

_Q_KIND = {
    "10-K": re.compile(r"\b10-?k\b|\bannual (?:report|filing)\b", re.I),
    "10-Q": re.compile(r"\b10-?q\b|\bquarterly (?:report|filing)\b", re.I),
    "8-K": re.compile(r"\b8-?k\b|\bcurrent report\b", re.I),
    "earnings release": re.compile(r"\bearnings (?:release|report|call)\b|\bpress release\b", re.I),
}


# Measures that companies report in their earnings releases rather than in their annual
# reports: non-GAAP figures (Regulation G) such as "Adjusted EBIT", "EBITDA(R)", "non-GAAP EPS".
# "unadjusted operating income" is a GAAP figure and does not count.
_RELEASE_MEASURE = re.compile(
    r"\b(?:adjusted|non[- ]?gaap|ebitdar?|ebita|constant\s+currency|organic\s+(?:growth|sales))\b"
    r"|\bexclud\w*\b(?:\W+\w+){0,5}?\W+(?:fx|foreign\s+exchange|currenc\w*)\b",
    re.I,
)


# Words of a question about what a company expects: the forecast for year N is written in the
# filings of year N-1 ("What production rate changes is X forecasting for FY2023?").
FORWARD = re.compile(
    r"\b(?:forecast\w*|guidance|guided|outlook|expect(?:s|ed|ing|ations?)?|project(?:s|ed|ing|ions?)"
    r"|anticipat\w*|plan(?:s|ned|ning)?\s+to|intend\w*|targets?|targeted|estimated?\s+(?:to|for)"
    r"|in\s+the\s+future|future\s+(?:payments?|obligations?|years?)|going\s+forward"
    r"|next\s+(?:fiscal\s+)?year|upcoming|coming\s+years?)\b",
    re.I,
)


def _near(first: str, second: str, words: int = 4) -> str:
    """``first`` then ``second`` with at most ``words`` words between them, either order."""
    gap = r"\b(?:\W+\w+){0,WORDS}?\W+".replace("WORDS", str(words))
    return rf"\b(?:{first}){gap}(?:{second})\b|\b(?:{second}){gap}(?:{first})\b"


_OFFICER = (
    r"(?:ceo|cfo|coo|chief\s+\w+\s+officer|president|chair(?:man|woman|person)?|director"
    r"|officer|board\s+member)s?"
)
_COMING_GOING = (
    r"new|appoint\w*|named|resign\w*|retire[sd]?|retiring|step(?:s|ped)?\s+down|success\w*"
    r"|depart\w*|hired?|elect(?:s|ed|ion)?|replac\w*|terminat\w*"
)
_HOLDERS = r"shareholders?|stockholders?|holders"
# Events companies report in 8-Ks (SEC Form 8-K items 5.02, 5.07, 8.01, 2.01, 4.01)
_EVENTS = tuple(
    re.compile(pattern, re.I)
    for pattern in (
        _near(_COMING_GOING, _OFFICER, 6),
        _near(_HOLDERS, r"vot\w*|approv\w*|meeting", 3),
        _near(r"vote[sd]?|voting", r"results?|proposals?|" + _HOLDERS + r"|meeting"),
        r"\b(?:annual|special)\s+(?:general\s+)?meeting\b",
        _near(r"dividends?", r"declar\w*"),
        _near(r"announc\w*", r"acqui\w*|merger|merge|divest\w*|spin-?off", 5),
        r"\bagree(?:d|ment)\s+to\s+(?:acquire|merge|sell)\b",
        _near(r"change[sd]?|dismiss\w*", r"auditors?|accountants?|accounting\s+firm", 3),
    )
)


@dataclass(frozen=True)
class QuestionFacts:
    periods: list[Period] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    # years written bare ("as of 2022"): they narrow to a year's documents, never declined
    bare_years: list[int] = field(default_factory=list)
    # a measure earnings releases report (non-GAAP): a release of the period comes first
    release_measure: bool = False
    # about what a company expects (forecast, guidance, outlook): the filings before the
    # period hold it
    forward: bool = False
    # about an event a company reports in an 8-K (officer change, vote, dividend declared)
    event: bool = False


def read_question(question: str) -> QuestionFacts:
    """Periods, document kinds and the kind of question (forward-looking, an event) a
    question names; no LLM. Periods are read by chop.text.periods, as ingest reads them."""
    kinds = [kind for kind, pattern in _Q_KIND.items() if pattern.search(question)]
    return QuestionFacts(
        periods=[period for _span, period in periods_in(question)],
        kinds=kinds,
        bare_years=bare_years(question),
        release_measure=bool(_RELEASE_MEASURE.search(question)),
        forward=bool(FORWARD.search(question)),
        event=is_event_question(question),
    )


def is_event_question(question: str) -> bool:
    """Whether the question asks about an event a company reports in an 8-K: an officer or
    director coming or going, a shareholder vote, a dividend declared, an acquisition or
    merger announced, a change of auditor."""
    return any(pattern.search(question) for pattern in _EVENTS)


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
    ``name`` has: "Coolwave 330C" does not name the "Breeze 330C". A name with no brand of
    its own ("S10", beside "Galaxy S9") is any line's: "Galaxy S10" names it."""
    before = written_before(question_parts, key)
    own = name_tokens(name)
    return before is not None and before in lines and len(own) > 1 and before not in own


def twin_of_another_line(question: str, models: Sequence[str]) -> str | None:
    """The model the question names as it writes it ("Coolwave 330C") when the collection
    has that model number only in another brand or line ("Breeze 330C"): another product,
    which no document covers."""
    parts, lines = name_tokens(question), line_words(models)
    for token in parts:
        if not any(ch.isdigit() for ch in token):
            continue
        twins = [m for m in models if tokens(m) and tokens(m)[-1] == token]
        if twins and all(another_line(parts, token, m, lines) for m in twins):
            written = re.search(rf"\b([\w&'-]+)\s+({re.escape(token)})\b", question, re.I)
            return f"{written.group(1)} {written.group(2)}" if written else token.upper()
    return None
