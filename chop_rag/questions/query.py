"""A question as search can take it (clean_question); what it says is chop_rag.questions.facts'."""

from __future__ import annotations

import re

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
