"""The other ways a question's word may be read: its dictionary form, and the word a typo meant.

A question can name something its documents never write only in the word as the asker typed
it: "became" (the manual writes "becomes"), "tne" (a typo of "the"). Answerability declines a
question that names what its documents never write, so it reads each such word in these other
forms first. Both come from well-kept word lists shipped in their wheels (simplemma's lemmas,
pyspellchecker's English frequencies), so nothing is downloaded at run time.

A correction is read only where it cannot turn a name into a word: for a lower-case word no
English dictionary holds, one edit away from a function word ("tne", "hte", "waht"). A
product or brand ("Siri", "QLED", "imessage") is left as written: its one-edit neighbours
("sir", "led", "message") are other things.
"""

from __future__ import annotations

from functools import cache

import simplemma
from spellchecker import SpellChecker

from chop_rag.text.words import FUNCTION_WORDS

MIN_TYPO_LETTERS = 3  # "hw", "te": too short to tell a typo from an abbreviation


@cache
def _english() -> SpellChecker:
    return SpellChecker(language="en", distance=1)


def lemma(word: str) -> str:
    """The dictionary form of an English ``word`` (lower case): "became" → "become"."""
    return str(simplemma.lemmatize(word, lang="en")).lower()


def typo_of_function_word(word: str, *, written_lower: bool = True) -> str | None:
    """The function word a typed ``word`` (lower case) misspells, or None: "tne" → "the".
    ``written_lower``: the question wrote it in lower case (a capitalised or upper-case word
    is taken as a name)."""
    if not written_lower or len(word) < MIN_TYPO_LETTERS or not word.isalpha():
        return None
    english = _english()
    if word in english:
        return None
    meant = english.correction(word)
    return meant if meant in FUNCTION_WORDS | _MORE_FUNCTION_WORDS else None


# Function words FUNCTION_WORDS leaves out because a company's name may hold them; a typo of
# one is still no thing a question names.
_MORE_FUNCTION_WORDS = frozenset({"you", "not", "but", "about", "there", "then", "than", "into"})
