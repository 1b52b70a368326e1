"""Reading the question's own CNM: which stored model (and category) it names.

The cheap path needs no LLM: the question is matched against the model values actually
stored, by whole tokens, longest match first ("Galaxy S9+" is not "Galaxy S9"). A model-like
token that matches nothing stored (e.g. "999Z") is reported as an unknown model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from chop.grounding import tokens

_model_like = re.compile(r"\b(?=[A-Za-z0-9+-]*\d)(?=[A-Za-z0-9+-]*[A-Za-z])[A-Za-z0-9][\w+-]{1,15}")
# periods and forms ("FY2023", "Q2", "10-K", "1990s") look like model numbers but are not
_not_a_model = re.compile(
    r"^(fy'?\d{2,4}|[qh][1-4]|\d{1,2}-?[kqf]|(19|20)\d\d[a-z]?|\d+(st|nd|rd|th|s))$"
)
_common = {
    "wi-fi",
    "usb",
    "5g",
    "4g",
    "3g",
    "4k",
    "8k",
    "2k",
    "hd",
    "mp3",
    "mp4",
    "1st",
    "2nd",
    "3rd",
}


MAX_QUESTION_CHARS = 4000  # far past what the embedder reads (MiniLM: 256 tokens)
_surrogates = re.compile("[\ud800-\udfff]")


def clean_question(question: str) -> str:
    """The question as search can take it, or a ValueError that says what is wrong with it.

    Bytes that were not UTF-8 on the command line (Python keeps them as lone surrogates) and
    NUL characters (PostgreSQL text rejects them) become U+FFFD and spaces; a question longer
    than MAX_QUESTION_CHARS is refused rather than sent into full-text parsing and the LLM.
    """
    if not isinstance(question, str):
        raise ValueError(f"the question must be text, not {type(question).__name__}")
    try:  # undo argv's surrogateescape, replacing the bytes that are not UTF-8
        question = question.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:
        question = _surrogates.sub("\ufffd", question)
    question = question.replace("\x00", " ")
    if len(question) > MAX_QUESTION_CHARS:
        raise ValueError(
            f"the question is {len(question):,} characters long; ask in at most "
            f"{MAX_QUESTION_CHARS:,}"
        )
    return question


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


def best_match(question: str, values: list[str]) -> str | None:
    """The longest stored value whose tokens appear, in order, in the question."""
    question_tokens = tokens(question)
    matches = [v for v in values if _contains(question_tokens, tokens(v))]
    return max(matches, key=lambda v: (len(tokens(v)), len(v)), default=None)


def match_question(question: str, models: list[str], categories: list[str]) -> QuestionCNM:
    model = best_match(question, models)
    # A bare series name ("S10") matches "Galaxy S10" when exactly one stored model ends so.
    if model is None:
        known = {t for m in models for t in tokens(m)}
        for token in tokens(question):
            owners = [m for m in models if tokens(m) and tokens(m)[-1] == token]
            if len(owners) == 1 and any(ch.isdigit() for ch in token):
                model = owners[0]
                break
        unknown = None
        if model is None:
            for candidate in _model_like.findall(question):
                lowered = candidate.lower()
                if (
                    lowered not in _common
                    and lowered not in known
                    and not lowered.isdigit()
                    and not _not_a_model.match(lowered)
                ):
                    unknown = candidate
                    break
    else:
        unknown = None
    return QuestionCNM(
        model=model, category=best_match(question, categories), unknown_model=unknown
    )
