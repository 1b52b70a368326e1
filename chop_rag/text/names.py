"""Names as documents and questions write them, read the same on both sides.

A company goes by shorter names than its registrant's ("Best Buy Co., Inc." is "Best Buy",
"Johnson & Johnson" is "J&J"): ingest stores them on the cards (chop_rag.labelling.identity) and
question matching compares them (chop_rag.questions.matching). A product's name is written many
ways (``Note10`` = ``Note 10`` = ``note-10``; ``S9 Plus`` = ``S9+`` ≠ ``S9``): both a card's
names and a question's words are compared in one normalised form. An identifier no person
would write (an SEC accession number) names nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from chop_rag.text.grounding import tokens
from chop_rag.text.words import FUNCTION_WORDS, word_set

_ACCESSION = re.compile(r"^\d{10}-\d{2}-\d{6}$")  # an SEC filing's id: 0000764478-23-000006


def is_identifier(title: str) -> bool:
    """A title no person would recognise: an SEC accession number."""
    return bool(_ACCESSION.match(title.strip()))


# ------------------------------------------------------------------ companies

# Words that make a company's name legal rather than what people call it (general English
# and common foreign legal forms): "Best Buy Co., Inc." is "Best Buy".
LEGAL_SUFFIXES = sorted(
    word_set(
        "inc incorporated corp corporation co company companies plc ltd limited llc lp l.p "
        "nv n.v sa s.a ag se holdings holding group"
    ),
    key=len,
    reverse=True,
)
_LEGAL_SUFFIX = re.compile(
    r"[,\s]+(" + "|".join(re.escape(s).replace(r"\.", r"\.?") for s in LEGAL_SUFFIXES) + r")\.?$",
    re.I,
)
_ACRONYM_MAX = 4


def short_name(entity: str) -> str:
    """What people call a company: without legal suffixes and a leading article ("The Coca-Cola
    Company" → "Coca-Cola", "Best Buy Co., Inc." → "Best Buy")."""
    short = entity
    while True:
        stripped = _LEGAL_SUFFIX.sub("", short).strip(" ,&")
        if stripped == short or not stripped:
            break
        short = stripped
    words = short.split()
    if len(words) > 1 and words[0].lower() in ("the", "a", "an"):
        short = " ".join(words[1:])
    return short


def entity_aliases(entity: str) -> list[str]:
    """Names a person uses for a company: its short name, a leading acronym ("MGM"), "and"
    for "&" and the "J&J" initials."""
    short = short_name(entity)
    aliases = [short] if short != entity else []
    first = short.split()[0] if short.split() else ""
    letters = re.sub(r"[^A-Za-z0-9]", "", first)
    if (
        first.isupper()
        and 2 <= len(letters) <= _ACRONYM_MAX
        and first != short
        and letters.lower() not in FUNCTION_WORDS
    ):
        aliases.append(first)  # "MGM" of "MGM Resorts International"
    if "&" in short:
        aliases.append(short.replace("&", "and"))
        initials = "".join(w[0] for w in short.replace("&", " ").split())
        if len(initials) >= 2:
            aliases.append(f"{initials[0]}&{initials[1:]}")
            aliases.append(f"{initials[0]}n{initials[1:]}")  # "J&J" is written "JnJ" too
    return list(dict.fromkeys(a for a in aliases if a))


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


# ------------------------------------------------------------------ names, normalised

_common = {"wi-fi", "wifi", "usb", "5g", "4g", "3g", "4k", "8k", "2k", "hd", "mp3", "mp4",
           "1st", "2nd", "3rd", "4th", "lte", "q1", "q2", "q3", "q4", "h1", "h2"}  # fmt: skip


def name_tokens(text: str) -> list[str]:
    """Lowercase tokens where "plus" joins the previous token as "+" ("S9 Plus" → s9+)."""
    out: list[str] = []
    for token in tokens(text):
        if token == "plus" and out and not out[-1].endswith("+"):
            out[-1] += "+"
        else:
            out.append(token)
    return out


def name_key(name: str) -> str:
    """A name written without spaces, in normalised tokens: "Galaxy Note 10 Plus" →
    galaxynote10+."""
    return "".join(name_tokens(name))


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


def line_words(names: Sequence[str]) -> set[str]:
    """The brand or product-line words of a collection's model names: the first word of each
    name of two words or more ("coolwave", "breeze", "galaxy")."""
    return {parts[0] for name in names if len(parts := name_tokens(name)) > 1}
