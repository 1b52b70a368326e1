"""Dialogue continuity: which documents a turn of a conversation is about, decided by rules.

CHOP decides between consecutive chunks whether the second continues the first (it inherits
the signature) or shifts (a new one is read). Between the turns of a conversation the same
decision says which documents the new question is about, read from the question and the
thread's last turn (``Turn``), with what any question names as chop_rag.questions.facts reads it and
chop_rag.questions.matching matches it against the stored identity cards (the product model,
company, period and form):

- the conversation's first turn: ``first``, asked as written;
- names nothing, or the documents already in view: ``continue``, asked as
  "[<previous documents>] <question>";
- names other documents and asks its own question: ``switch``, asked as written;
- only names other documents ("What about the S9?", "And for FY2021?", "and the 410X?"):
  ``switch_same_question``, asked as "[<new documents>] <previous topic>".

Nothing stale is carried over a switch: a new model or company drops the previous period and
form; a new period alone keeps the company ("And for FY2021?" is the same company's FY2021).
A turn that refers back with a pronoun is read by its own content words (the words left once
pronouns, filler, question words and names are gone): with none ("Where is that setting?",
"Can you tell me more about that?") it asks the previous question again, asked with the
previous topic beside it; with some ("How do I reset it?", "And how do I edit them?") it asks
its own question, and the pronoun is resolved as a person would: to the thing the previous
question named ("them" after "How can I view my notes?" is the notes) when the documents in
view say what the turn asks of that thing in one passage ("Edit notes"), else to the device
itself ("reset it" after a question about the air filter, in a manual no passage of which
resets a filter).
A turn that only names another document asks the previous question whole, its period
included ("What about Netflix?" after Microsoft's FY2016 revenue is Netflix's FY2016).
The standalone question names its documents the way
a user would ("[Galaxy Note10] How can I ...?"), so retrieval and the answer read it exactly as
a one-off question: nothing in chop_rag.retrieval.retrieve or chop_rag.answers.answering knows about
conversations.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from typing_extensions import TypedDict

from chop_rag.labelling.cards import DocumentCard
from chop_rag.questions.codes import Listed
from chop_rag.questions.facts import QuestionFacts, read_question
from chop_rag.questions.matching import match_question, resolve, without_names
from chop_rag.questions.pronouns import (
    PRONOUNS,
    agreeing,
    describes,
    first_pronoun,
    has_pronoun,
    never_the_device,
    resolved_pronoun,
    words_of,
)
from chop_rag.text.words import FUNCTION_WORDS, request_verbs, word_set
from chop_rag.types import plain_copy

Decision = Literal["first", "continue", "switch", "switch_same_question"]


class Names(TypedDict, total=False):
    """What a (standalone) question names, as chop_rag.questions.matching resolves it."""

    model: str  # a stored product model ("Galaxy Note10")
    company: str  # a company, as people call it ("Best Buy")
    period: str  # as written ("FY2021", "Q2 2023"); a default "latest" year is not named
    kind: str  # a form ("10-K")
    unknown: str  # a model-like name no stored document has ("Galaxy S30")


class Turn(TypedDict, total=False):
    """The typed resolution of a conversation's last turn (the chat graph's ``turn``)."""

    asked: str  # the user's words
    question: str  # the standalone question actually asked
    decision: Decision
    reason: str
    inherited: dict[str, Any]  # what came from the previous turn: names, topic
    names: Names  # what the standalone question names (the next turn may inherit it)
    topic: str  # the question without the words that name its documents
    documents: list[str]  # the documents retrieval resolved it to
    label: str | None  # what they were named by ("Galaxy Note10", "Best Buy FY2023")


@dataclass(frozen=True)
class Continuity:
    """The decision for one turn, and what it takes from the previous one."""

    decision: Decision
    reason: str
    names: Names  # what the turn itself names
    topic: str  # the turn's own words without the names (may be empty)
    refers_back: bool = False  # a pronoun and no topic of its own ("Where is that setting?")
    asked: str = ""  # the user's words
    # a pronoun, and content words of its own ("reset" of "How do I reset it?"): it asks its
    # own question, the pronoun resolved by inherit
    own_words: tuple[str, ...] = ()


# Words that carry no topic of their own: "What about the Galaxy S9?", "And for FY2021?",
# "Same for the S9 Plus", "Is it the same on the 410X?", "How about my Note10 then?"
FILLER = word_set(
    "a about also am an and any anything are as at but can could do does doing for how i if in is "
    "it its it's let's me my of on ok okay one ones or please same say so tell than that the then "
    "there this those these to too what what's whats which with would you your yours now instead "
    "model version device phone hmm right well regarding concerning re case thing question answer "
    "works work way again here there's likewise apply applies true go goes mine model's plus"
)
# Words that ask without naming a thing: "Where is that setting?", "How often ...", "Can you
# tell me more about that?" carry no topic of their own.
ASKING = word_set(
    "where when why who whom whose often long much many find found locate located more "
    "setting settings option options show explain mean means meaning info information detail "
    "details describe need needs want know use used using get got should will shall may might "
    "must has have had be been being all really exactly possible there's where's up out off let "
    "lets make another thanks thank"
)
# Periods and forms: a turn made of these alone ("And for FY2021?") names, it does not ask.
_PERIOD_OR_FORM = re.compile(
    r"^(fy'?\d{2,4}|fiscal|years?|quarters?|q[1-4]|h[12]|halfs?|halves|(19|20)\d\d|'?\d\d|"
    r"10-?k|10-?q|8-?k|annual|quarterly|reports?|filings?|earnings|releases?|first|second|third|"
    r"fourth|last|previous|prior|next|period|ended|ending)$"
)
# a sentence a name leaves empty: "I have a [Galaxy Note10]." says only which device
_OWNING = word_set(
    "i have got own use using bought am with a an my the this is phone device tablet samsung new "
    "model"
)


def asks_nothing(topic: str) -> bool:
    """Whether ``topic`` (a question without its names) is only filler, periods and forms."""
    return all(w in FILLER or _PERIOD_OR_FORM.match(w) for w in words_of(topic))


# a period or form written in a question: the topic a later turn re-asks leaves it out, as the
# turn's names carry it ("And for FY2021?" must not be asked "... in FY2022 ... [FY2021]")
_PERIOD_PHRASE = re.compile(
    r"(?:\b(?:in|for|of|during|as of|at the end of|from)\s+)?(?:the\s+)?"
    r"(?:\b(?:q[1-4]|h[12]|first|second|third|fourth)\s+(?:fiscal\s+)?(?:quarter|half)?\s*(?:of\s+)?)?"
    r"(?:\b(?:fiscal\s+(?:year\s+)?|fy\s*'?)\d{2,4}\b|\b(?:19|20)\d\d\b)"
    r"|\b(?:in\s+)?(?:the|its|their)?\s*\b10-?[kq]\b",
    re.IGNORECASE,
)
# words a topic does not end on once the names after them are gone ("the filter of the ?")
_DANGLING = word_set("of the a an on my for in with to from at about")


def tidy(topic: str, asks: bool | None = None, names: frozenset[str] = frozenset()) -> str:
    """``topic`` without periods and forms, nor words left dangling at the end (or words of
    ``names`` there: "on my note 10"); ending in "?" when it ``asks`` (by default: when it
    did)."""
    text = _PERIOD_PHRASE.sub(" ", topic)
    asks = text.rstrip().endswith("?") if asks is None else asks
    found = text.replace("?", " ").split()
    while found and (found[-1].lower().strip(",.;:") in _DANGLING or among(found[-1], names)):
        found.pop()
    sentence = " ".join(found).rstrip(" ,;:")
    return f"{sentence}?" if asks and sentence else sentence


_MODEL_WORD = re.compile(r"(?i)(?=.*\d)(?=.*[a-z])")


def among(word: str, names: frozenset[str]) -> bool:
    """Whether ``word`` is one of ``names``, however hyphenated ("Note-10" is "note10")."""
    lowered = word.lower().strip(",.;:?!")
    return lowered in names or re.sub(r"[^a-z0-9+]", "", lowered) in names


def name_words(cards: Sequence[DocumentCard]) -> set[str]:
    """The words of the cards' names: a turn written of these alone asks nothing."""
    values = [v for c in cards for v in (c.product_model, c.entity, *c.names, *c.acronyms) if v]
    found: set[str] = set()
    for value in values:  # "Note 10+" is written "note10", "note-10 plus", "note 10"
        written = words_of(value)
        found.update(written, (a + b for a, b in itertools.pairwise(written)))
    # "S9+" is written "s9", "s9 plus"
    found |= {w.rstrip("+") for w in found}
    return found | {part for w in found for part in re.findall(r"[a-z]+|\d+", w)}


def without_models(topic: str, vocabulary: frozenset[str]) -> str:
    """``topic`` without a model written in a way without_names does not see ("Galaxy
    S-10", "Note-10"), with the capitalised brand word just before it."""
    words = topic.split()
    dropped = [bool(among(w, vocabulary) and _MODEL_WORD.search(w)) for w in words]
    for i in range(1, len(words)):
        if dropped[i] and words[i - 1][:1].isupper() and words[i - 1].lower() not in _OWNING:
            dropped[i - 1] = True
    return " ".join(w for w, drop in zip(words, dropped, strict=True) if not drop)


def own_topic(
    question: str, cards: Sequence[DocumentCard], brands: frozenset[str] = frozenset()
) -> str:
    """``question`` without the words that name ``cards``
    (chop_rag.questions.matching.without_names), and without the sentences that only say which
    device it is ("I have a Galaxy Note10.")."""
    vocabulary = frozenset(name_words(cards))
    sentences = re.split(r"(?<=[.!?])\s+", question.strip())
    kept = [
        s
        for s in sentences
        if (
            (t := without_names(s, cards)) == s
            and not any(among(w, vocabulary) for w in words_of(s))
        )
        or not all(w in _OWNING or among(w, vocabulary) for w in words_of(t))
    ]
    topic = without_names(" ".join(kept), cards) if kept else ""
    topic = without_models(topic, vocabulary)
    if all(w in FILLER or among(w, vocabulary | brands) for w in words_of(topic)):
        return ""  # the question is all names ("galaxy S10?"); without_names keeps those
    return tidy(topic, asks=question.rstrip().endswith("?"), names=vocabulary)


def content_words(topic: str) -> list[str]:
    """The words of ``topic`` that carry a topic: not filler, pronouns, question words nor
    periods ("reset" of "How do I reset it?"; none in "Where is that setting?")."""
    return [
        w
        for w in words_of(topic)
        if w not in FILLER
        and w not in PRONOUNS
        and w not in ASKING
        and w not in FUNCTION_WORDS
        and not _PERIOD_OR_FORM.match(w)
    ]


def refers_back(topic: str) -> bool:
    """A pronoun and no topic of its own: "Where is that setting?", "How do I do it?"."""
    return has_pronoun(topic) and not content_words(topic)


def things_named(topic: str) -> list[str]:
    """The content words of ``topic`` that name things, not what is done to them: the verb
    after "I", "you" or "to" (and one joined to it by "or"/"and") is left out: "How often
    should I clean the air filter?" names the air filter; "Is it possible to add or remove
    contacts from groups?" names contacts and groups."""
    found = words_of(topic)
    verbs = request_verbs(found)
    kept = [w for i, w in enumerate(found) if i not in verbs and not describes(w)]
    content = set(content_words(" ".join(kept)))
    return list(dict.fromkeys(w for w in kept if w in content))


def names_in(
    question: str, cards: Sequence[DocumentCard], listed: Listed | None = None
) -> tuple[Names, str]:
    """(what ``question`` names, its topic) read and matched as any question is (``listed``:
    what the documents' text holds, which tells a code or a brand from a model)."""
    facts = read_question(question)
    resolution = resolve(facts, cards, listed)
    names = Names()
    if resolution.product_model:
        names["model"] = resolution.product_model
    if resolution.company:
        names["company"] = resolution.company
    if facts.periods or facts.bare_years:
        named = resolution.period or resolution.unknown
        if named and "latest" not in named:
            names["period"] = named
        elif resolution.unknown:
            names["period"] = resolution.unknown
    if facts.kinds:
        names["kind"] = facts.kinds[0]
    if "model" not in names and "company" not in names:
        unknown = unknown_model(facts, cards, listed)
        if unknown:
            names["unknown"] = unknown
    meant = [card for card in cards if card.doc_id in set(resolution.in_view)]
    if meant:
        # words of any stored name ("galaxy" beside a card named "S10") name, they do not ask
        return names, own_topic(question, meant, frozenset(name_words(cards)))
    if "unknown" in names:  # what no document has is a name too
        without = re.sub(rf"(?i)\b{re.escape(names['unknown'])}", " ", question)
        return names, tidy(without, asks=question.rstrip().endswith("?"))
    return names, tidy(question)


def unknown_model(
    facts: QuestionFacts, cards: Sequence[DocumentCard], listed: Listed | None = None
) -> str | None:
    """A model-like name ("Galaxy S30", "410X", "Coolwave 330C" beside a "Breeze 330C") that no
    stored document has, when the collection is of products: a switch to it must not inherit
    the previous manual. A code the documents list ("E2") is none."""
    models = [c.product_model for c in cards if c.product_model and not c.is_filing]
    if not models:
        return None
    other_brand = resolve(facts, cards, listed).unknown if listed is not None else None
    if other_brand:
        return other_brand  # another brand's model number ("Coolwave 330C")
    found = match_question(facts, models, []).unknown_model
    if not found or (listed is not None and found.lower() in listed):
        return None
    brand = re.search(rf"\b([A-Z][a-z]+)\s+{re.escape(found)}\b", facts.text)
    return f"{brand.group(1)} {found}" if brand and brand.group(1).lower() not in FILLER else found


def same_documents(new: Names, previous: Names) -> bool:
    """Whether what the turn names is already what the previous turn was about."""
    for key in ("model", "company", "unknown", "period", "kind"):
        if key in new and new.get(key) != previous.get(key):
            return False
    return True


def decide(
    question: str,
    previous: Turn | None,
    cards: Sequence[DocumentCard],
    listed: Listed | None = None,
) -> Continuity:
    """The continuity decision for ``question`` after the thread's ``previous`` turn
    (``listed``: what the documents' text holds of its words, chop_rag.questions.matching)."""
    names, topic = names_in(question, cards, listed)
    back = refers_back(topic)
    own = tuple(content_words(topic)) if has_pronoun(topic) and not back else ()
    decided = functools.partial(
        Continuity, names=names, topic=topic, refers_back=back, asked=question, own_words=own
    )
    if not previous:
        return decided("first", "the conversation's first question")
    before: Names = previous.get("names") or Names()
    shown = name_text(names)
    if not names:
        if not before:
            why = "names no document, and neither did the previous question"
            return decided("continue", why)
        why = f"names no document: still about {name_text(before)}"
        if back:
            why += "; refers back to the previous question"
        elif own:
            why += f"; refers back, and asks its own question ({', '.join(own)})"
        return decided("continue", why)
    if same_documents(names, before):
        return decided("continue", f"names {shown}, as the previous question did")
    if asks_nothing(topic):
        why = f"only names {shown}: the previous question, asked about it"
        return decided("switch_same_question", why)
    return decided("switch", f"names {shown}, another document")


def carried(names: Names, before: Names, whole: bool = False) -> Names:
    """The names of a turn that switched: its own, plus the previous company when it named
    only a period or form ("What was the revenue in FY2021?" of the same company); a new
    model, company or unknown name carries nothing over, unless the turn asks the previous
    question ``whole`` ("What about Netflix?": the period and form asked stay)."""
    if any(key in names for key in ("model", "company", "unknown")):
        if not whole:
            return Names(**names)
        kept = {k: v for k, v in before.items() if k in ("period", "kind")}
        return Names(**{**kept, **names})  # type: ignore[typeddict-item]
    kept = Names(**{k: v for k, v in before.items() if k in ("model", "company")})  # type: ignore[typeddict-item]
    if "period" not in names and "period" in before:
        kept["period"] = before["period"]
    if "kind" not in names and "kind" in before:
        kept["kind"] = before["kind"]
    return Names(**{**kept, **names})


def name_text(names: Names) -> str:
    """The names as a label: "Galaxy Note10", "Best Buy FY2021 10-K"."""
    parts = (names.get("model") or names.get("company") or names.get("unknown"),)
    rest = (names.get("period"), names.get("kind"))
    return " ".join(p for p in (*parts, *rest) if p)


def named(label: str, question: str) -> str:
    """``question`` naming its documents the way one-off questions do: "[<label>] <question>"."""
    return f"[{label}] {question}" if label else question


@dataclass(frozen=True)
class Standalone:
    """The question a turn is asked as, what it names, and what came from before."""

    question: str
    names: Names
    topic: str
    inherited: dict[str, Any]


# How closely the documents in view say a thing's word with one of the turn's own words:
# (thing, own words) -> NEXT_TO, IN_ONE_PASSAGE or 0 (chop_rag.store's said_together over the
# turn's documents)
SaidTogether = Callable[[str, Sequence[str]], int]
IN_ONE_PASSAGE = 1
NEXT_TO = 2  # within NEAR_WORDS words: "snooze a notification", "link the contacts"
NEAR_WORDS = 3


def referent(continuity: Continuity, previous: Turn, said: SaidTogether | None) -> list[str]:
    """What the turn's pronoun means, of the things the previous question named that agree
    with it in number: those the documents in view say most closely with what the turn asks
    (next to it: "snooze a notification" means the notification, not the sound of "notification
    sound", which an alarm's passage also says with "snooze"; else in one passage: "edit" and
    "notes"); none when no passage does ("reset" and "filter": "it" is the device), but "them"
    or "one" still means the things named ("remove all of them": the certificates). Without
    ``said`` (no documents to ask) the things named are taken, as a reader without the manual
    would."""
    pronoun = first_pronoun(continuity.topic)
    things = agreeing(things_named(previous.get("topic") or ""), pronoun)
    if said is None:
        return things
    closeness = {thing: int(said(thing, continuity.own_words)) for thing in things}
    closest = max(closeness.values(), default=0)
    meant = [thing for thing in things if closest and closeness[thing] == closest]
    if not meant and never_the_device(pronoun):
        # "them", "one of them": the things named, as a reader takes them
        return agreeing(things, pronoun, strict=True)
    return meant


def inherit(
    asked: str, continuity: Continuity, previous: Turn, said: SaidTogether | None = None
) -> Standalone:
    """``continue``: the previous turn's documents; with the previous topic when the turn
    refers back with no topic of its own, with what its pronoun means when it asks its own
    question ("And how do I edit them?" → "And how do I edit the notes?")."""
    before: Names = previous.get("names") or Names()
    names = Names(**{**before, **continuity.names})
    inherited: dict[str, Any] = {k: v for k, v in before.items() if k not in continuity.names}
    topic = continuity.topic
    question = asked
    if continuity.refers_back and previous.get("topic"):
        inherited["topic"] = previous["topic"]
        question = f"{asked} ({previous['topic']})"
        topic = f"{topic} ({previous['topic']})"
    elif continuity.own_words and (meant := referent(continuity, previous, said)):
        inherited["referent"] = " ".join(meant)
        question = resolved_pronoun(asked, inherited["referent"])
        topic = resolved_pronoun(topic, inherited["referent"])
    if not any(k in continuity.names for k in ("model", "company", "unknown")):
        question = named(name_text(names), question)
    return Standalone(question, names, topic, inherited)


def switch(asked: str, continuity: Continuity, previous: Turn | None) -> Standalone:
    """``first`` or ``switch``: the turn's own documents; of the previous turn at most the
    company when the turn named only another period or form."""
    before: Names = (previous or {}).get("names") or Names()
    names = carried(continuity.names, before)
    inherited: dict[str, Any] = {k: v for k, v in names.items() if k not in continuity.names}
    question = named(name_text(names), asked) if inherited else asked
    return Standalone(question, names, continuity.topic, inherited)


def reask(continuity: Continuity, previous: Turn) -> Standalone:
    """``switch_same_question``: the previous turn's topic asked about the documents named,
    with the period and form it asked about."""
    before: Names = previous.get("names") or Names()
    names = carried(continuity.names, before, whole=True)
    topic = previous.get("topic") or previous.get("question") or ""
    inherited: dict[str, Any] = {
        "topic": topic,
        **{k: v for k, v in names.items() if k not in continuity.names},
    }
    return Standalone(named(name_text(names), topic), names, topic, inherited)


def turn_of(continuity: Continuity, standalone: Standalone) -> Turn:
    """The thread's new ``turn``, before retrieval adds the documents it resolved to."""
    return plain_copy(
        Turn,
        standalone,
        asked=continuity.asked,
        decision=continuity.decision,
        reason=continuity.reason,
        documents=[],
        label=None,
    )
