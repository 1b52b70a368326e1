"""Lists of English words, written as prose (a list one word a line hides what it holds),
and the function words no name is made of alone, shared by ingest's company names
(chop_rag.text.names) and the question side's topic words (chop_rag.questions.matching)."""

from __future__ import annotations

import re
from collections.abc import Sequence


def word_set(text: str) -> frozenset[str]:
    """The words of ``text``, split on white space: a word list written as a few lines."""
    return frozenset(text.split())


# English function words: never a company's acronym or a name by themselves ("THE" of
# "THE COCA-COLA COMPANY" is an article, not an alias).
FUNCTION_WORDS = word_set(
    "a an the and or of for in on at to by with from as is are was were be it its this that "
    "what which who how when where why does did do has have had can could will would should "
    "my our your their any all"
)


# Who asks, and "to": the word after one says what is done, not what is asked about ("How do I
# fix it?", "how to reset").
REQUEST_SUBJECTS = word_set("i you we to")


def request_verbs(words: Sequence[str]) -> set[int]:
    """The positions of ``words`` (lower case, in order) that say what the asker does: the word
    after "I", "you", "we" or "to", and one joined to it by "or"/"and" ("add or remove"). A
    question names what it asks about in its other words."""
    verbs: set[int] = set()
    for i, word in enumerate(words):
        if word in REQUEST_SUBJECTS and i + 1 < len(words):
            verbs.add(i + 1)
            if i + 3 < len(words) and words[i + 2] in ("or", "and"):
                verbs.add(i + 3)
    return verbs


def in_a_row(phrase: str) -> str:
    """A regular expression, read alike by Python and PostgreSQL, for ``phrase``'s words
    written in a row, apart by spaces or hyphens ("face id": "Face ID", "face-id")."""
    return r"[\s-]+".join(map(re.escape, phrase.split()))
