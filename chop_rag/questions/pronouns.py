"""What a follow-up's pronoun can stand for, read as a person reads it: a pronoun that points
back (not the "it" of "Is it possible to"), the things of the previous question it agrees with
in number ("them": the certificates; "it": the camera; "one": either), and the words that
describe a thing rather than name it ("installed", "available"). chop_rag.questions.conversation
decides which of those things the documents say together with what the turn asks."""

from __future__ import annotations

import re
from collections.abc import Sequence

from chop_rag.text.words import word_set

# Words pointing back at what the previous turn was about.
PRONOUNS = word_set("it its it's this that these those them they one ones there")
# those that stand for several things, and those for one of several ("delete one"): neither
# is ever the device itself
PLURAL_PRONOUNS = word_set("these those them they")
INSTANCE_PRONOUNS = word_set("one ones")
# "it" that points at nothing: "Is it possible to ...", "it is safe to ...", "it's hard to ..."
# (English extraposition: the subject is the clause after "to" or "that")
_EXPLETIVE_IT = re.compile(
    r"\b(?:(?:is|was|will|would)\s+it|it\s+(?:is|was|will\s+be|would\s+be)|it's)"
    r"\s+(?:\w+\s+)?\w+\s+(?:to|that)\b",
    re.IGNORECASE,
)
# Words that describe a thing rather than name it: participles ("installed", "advanced") and
# "-able" adjectives ("available")
_DESCRIBING = re.compile(r"^[a-z]{4,}ed$|^[a-z]{5,}[ai]ble$")
# adverbs that end as plurals do ("Always On Display" is one thing)
_ADVERBS_IN_S = word_set("always sometimes perhaps afterwards towards backwards forwards besides")
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'+-]*")


def words_of(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def has_pronoun(topic: str) -> bool:
    """Whether ``topic`` points back with a pronoun (not the "it" of "Is it possible to")."""
    return first_pronoun(topic) is not None


def first_pronoun(topic: str) -> str | None:
    """The turn's first pronoun that points back (not the "it" of "Is it possible to")."""
    return next((w for w in words_of(_EXPLETIVE_IT.sub(" ", topic)) if w in PRONOUNS), None)


def never_the_device(pronoun: str | None) -> bool:
    """ "them", "one": a thing or things named, never the device a question is about."""
    return pronoun in PLURAL_PRONOUNS | INSTANCE_PRONOUNS


def agreeing(things: Sequence[str], pronoun: str | None, strict: bool = False) -> list[str]:
    """The things a pronoun can stand for by number, as a reader matches them: "them" a plural
    ("certificates"), "it" a singular ("camera"), "one" either; all of them when none
    agrees, unless ``strict``."""
    if pronoun is None or pronoun in INSTANCE_PRONOUNS:
        return list(things)
    plural = pronoun in PLURAL_PRONOUNS
    kept = [t for t in things if is_plural(t) == plural]
    return kept if kept or strict else list(things)


def is_plural(word: str) -> bool:
    return (
        len(word) > 3
        and word.endswith("s")
        and not word.endswith(("ss", "us", "is"))
        and word not in _ADVERBS_IN_S
    )


def describes(word: str) -> bool:
    """Whether ``word`` describes a thing rather than names it ("installed", "available")."""
    return bool(_DESCRIBING.search(word))


def resolved_pronoun(text: str, meant: str) -> str:
    """``text`` with its first pronoun replaced by what it means, as a self-contained rewrite
    says it: "edit them" → "edit the notes", "change its timeout" → "change the screen
    timeout", "delete one" → "delete one of the contacts groups", "capture one" → "capture a
    screenshot". Written after the pronoun instead ("them (notes)"), the pronoun stayed in the
    words retrieval embeds."""
    for match in _WORD.finditer(text):
        pronoun = match.group().lower()
        if pronoun in PRONOUNS:
            return f"{text[: match.start()]}{_standing_for(pronoun, meant)}{text[match.end() :]}"
    return f"{text} ({meant})"


def _standing_for(pronoun: str, meant: str) -> str:
    if pronoun in INSTANCE_PRONOUNS:
        if is_plural(meant.rsplit(maxsplit=1)[-1] if meant.strip() else meant):
            return f"{pronoun} of the {meant}"
        return f"{'an' if meant[:1].lower() in 'aeiou' else 'a'} {meant}"
    if pronoun == "there":
        return f"in the {meant}"
    if pronoun == "it's":
        return f"the {meant} is"
    return f"the {meant}"
