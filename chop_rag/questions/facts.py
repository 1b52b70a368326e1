"""What a question says, read from its words alone (no cards, no LLM), in one place.

``read_question`` gives ``QuestionFacts``: the names it writes (tokens normalised as
chop_rag.text.names compares names, every run of them written without spaces, its words as
written, the capitalised ones, the words shaped like a model number), the periods it names
("Q2 of FY2023", "as of 2022"; the grammar is chop_rag.text.periods, shared with ingest), the
forms ("quarterly report"), the financial statements (chop_rag.questions.statements) and the
kind of question (forward-looking, an event, a non-GAAP measure). chop_rag.questions.matching
then matches these facts against the documents' identity cards; nothing below it reads the
question again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from chop_rag.questions.metric_questions import statements_needed
from chop_rag.questions.statements import (
    ABOUT_THE_BUSINESS,
    BUSINESS_DESCRIPTION,
    RECONCILIATION,
    STATEMENTS,
    Statement,
    TitledPart,
    named_statements,
)
from chop_rag.text.names import name_tokens
from chop_rag.text.periods import Period, bare_years, periods_in
from chop_rag.text.words import word_set

# ------------------------------------------------------------------ names as written

POSSESSIVE = re.compile(r"['’]s\b", re.IGNORECASE)
NAME_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9&.'’-]*")
# a word with a digit and a letter, like a model number ("999Z", "S10", "Note-10")
_MODEL_LIKE = re.compile(r"\b(?=[A-Za-z0-9+-]*\d)(?=[A-Za-z0-9+-]*[A-Za-z])[A-Za-z0-9][\w+-]{1,15}")
# periods and forms ("FY2023", "Q2", "10-K", "1990s") look like model numbers but are not
_NOT_A_MODEL = re.compile(
    r"^(fy'?\d{2,4}|[qh][1-4]|\d{1,2}-?[kqf]|(19|20)\d\d[a-z]?|\d+(st|nd|rd|th|s))$"
)
_NOT_MODELS = word_set("wi-fi usb 5g 4g 3g 4k 8k 2k hd mp3 mp4 1st 2nd 3rd")


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


def capitalised_words(question: str) -> list[str]:
    """The question's capitalised words as written, not its first unless possessive
    ("Adobe's revenue ..."): "What" opens a sentence, it names nothing."""
    words = written_words(question)
    raw = NAME_WORD.findall(question)
    return [
        w
        for n, (w, as_written) in enumerate(zip(words, raw, strict=True))
        if w[:1].isupper() and (n > 0 or POSSESSIVE.search(as_written))
    ]


def model_like_words(question: str) -> list[str]:
    """The words shaped like a model number ("999Z", "S10"), periods, forms and common
    technical words ("FY2023", "10-K", "5G") left out, in order of writing."""
    return [
        candidate
        for candidate in _MODEL_LIKE.findall(question)
        if (lowered := candidate.lower()) not in _NOT_MODELS
        and not lowered.isdigit()
        and not _NOT_A_MODEL.match(lowered)
    ]


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
    """What a question's words say; chop_rag.questions.matching matches it against the cards."""

    text: str  # the question as written
    # the names it writes: tokens as names compare (S9 Plus → s9+), every run of up to six
    # of them without spaces, its words as written, its capitalised words, the model-like ones
    name_parts: list[str] = field(default_factory=list)
    name_runs: set[str] = field(default_factory=set)
    words: list[str] = field(default_factory=list)
    capitalised: list[str] = field(default_factory=list)
    model_like: list[str] = field(default_factory=list)
    periods: list[Period] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    # years written bare ("as of 2022"): they narrow to a year's documents, never declined
    bare_years: list[int] = field(default_factory=list)
    # a measure earnings releases report (non-GAAP): a release of the period comes first
    release_measure: bool = False
    about_business: bool = False  # what the company is or does (statements.ABOUT_THE_BUSINESS)
    # about what a company expects (forecast, guidance, outlook): the filings before the
    # period hold it
    forward: bool = False
    # about an event a company reports in an 8-K (officer change, vote, dividend declared)
    event: bool = False
    # the financial statements it names, in the order it names them ("the balance sheet")
    statements: list[Statement] = field(default_factory=list)
    # the statements printing the inputs of the metric or line item it asks for ("quick
    # ratio": the balance sheet; "gross margin": the income statement)
    statements_needed: list[Statement] = field(default_factory=list)

    @property
    def titled_parts(self) -> list[TitledPart]:
        """The parts of a filing, found by their printed titles, whose best chunks come first
        (chop_rag.retrieval.retrieve.statements_first): Item 1's opening for what the company
        does, the reconciliation of a non-GAAP measure, the statements named, else those
        printing the inputs of the metric asked."""
        parts: list[TitledPart] = []
        if self.about_business:
            parts.append(BUSINESS_DESCRIPTION)
        if self.release_measure:
            parts.append(RECONCILIATION)
        return [*parts, *(self.statements or self.statements_needed)]


def read_question(question: str) -> QuestionFacts:
    """The names, periods, document kinds and statements a question writes, and the kind of
    question (forward-looking, an event); no LLM. Periods are read by chop_rag.text.periods, as
    ingest reads them."""
    kinds = [kind for kind, pattern in _Q_KIND.items() if pattern.search(question)]
    needed = statements_needed(question)
    return QuestionFacts(
        text=question,
        name_parts=name_tokens(question),
        name_runs=question_keys(question),
        words=written_words(question),
        capitalised=capitalised_words(question),
        model_like=model_like_words(question),
        periods=[period for _span, period in periods_in(question)],
        kinds=kinds,
        bare_years=bare_years(question),
        release_measure=bool(_RELEASE_MEASURE.search(question)),
        about_business=bool(ABOUT_THE_BUSINESS.search(question)),
        forward=bool(FORWARD.search(question)),
        event=is_event_question(question),
        statements=named_statements(question),
        statements_needed=[s for s in STATEMENTS if s.name in needed],
    )


def is_event_question(question: str) -> bool:
    """Whether the question asks about an event a company reports in an 8-K: an officer or
    director coming or going, a shareholder vote, a dividend declared, an acquisition or
    merger announced, a change of auditor."""
    return any(pattern.search(question) for pattern in _EVENTS)
