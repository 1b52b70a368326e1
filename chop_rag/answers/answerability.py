"""Whether the passages found answer the question, judged before an answer is written.

Retrieval always returns the k nearest chunks, so a question the documents do not answer
("the towing capacity of the Galaxy A50", "a recipe for banana bread") still gets passages,
and quoting them answers with confidence what was never asked. The judgment follows CHOP's
own pattern at ingest: cheap signals decide the clear cases, the local LLM only the band
between them.

Cheap signals, read from the passages read_passages prepared and one look-up in the store:
- ``similarity``: the best sentence's cosine similarity to the question (the embedder's own
  scale, not retrieval's fused and boosted scores);
- ``covered``: the share of the question's content words (the question without the words
  that name its documents, function words and asking words) that the best passage, its
  heading or its document's title writes; ``missing``: those no passage writes;
  ``unknown``: those the documents asked about never write anywhere ("Apple" of "Apple
  Pay" in a Galaxy manual, "projector" in a phone's). A word is read as the asker meant it
  first (its dictionary form; a typo of a function word names nothing), and a feature named
  as a proper name ("Face ID") is written only where its words stand in a row.

A question whose words the best passage writes and whose best sentence is close answers, and
so does one every thing of which some passage writes (what the asker does, "fix", need not be
written); one that names a thing its documents never write, or no passage writes with its
best sentence far, does not; a question with a word no passage writes and a best sentence
neither close nor far goes to the LLM judge (prompts/judge_answerability.md), which reads the
passage the answer would quote, then the closest other one. A judge that fails answers, as
before the judgment existed, and the failure is recorded.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel

from chop_rag.answers.answering import stem
from chop_rag.state import Answerability, ReadPassage
from chop_rag.text.spelling import lemma, typo_of_function_word
from chop_rag.text.words import FUNCTION_WORDS, in_a_row, request_verbs, word_set

# A best sentence at least this close answers without asking the model, when the question
# names nothing its documents never write (or, without that look-up, when CLEAR_COVERED of its
# words are written in the best passage): the 1.5B judge declined answerable questions there
# and decided no unanswerable one (bench/results/answerability).
CLEAR_SIMILARITY = 0.55
CLEAR_COVERED = 0.75
# Below FAR_SIMILARITY with a content word no passage writes, or below NO_SIMILARITY whatever
# the words, the passages are about something else.
FAR_SIMILARITY = 0.45
NO_SIMILARITY = 0.2
# A question naming a word its documents never write (the feature is not theirs) declines
# unless a sentence is this close all the same.
SURE_SIMILARITY = 0.75
CLOSEST_CHARS = 80

_word = re.compile(r"[a-z0-9]+(?:[+-][a-z0-9]*)*")
_typed_word = re.compile(_word.pattern, re.IGNORECASE)
# Words that frame a question or a request rather than name what it asks about.
_ASKING_WORDS = word_set(
    "i me my mine we us our you your it its they them this that these those there here a an "
    "the and or but of for in on at to by with from as into onto about after before over under "
    "is are was were be been being am do does did done doing have has had having can could "
    "will would should shall may might must not no yes how what which who whom whose when where "
    "why whether if then than so too very just also any all some each every much many more most "
    "please tell know want need like way ways possible able get use using used go make let "
    "there's what's how's it's i'm thing things something anything one without within "
    "set up turn find see show put out off down often long soon usually exactly properly correctly "
    "sometimes still again really even ever maybe getting got gets "
    # "what is wrong", "what does E2 mean", "what happens if": a troubleshooting question's frame
    "wrong mean means meaning happen happens happened happening"
)
PREFIX_CHARS = 5  # a word is written where a word of the passage shares its first letters


class AnswerabilityReply(BaseModel):
    """The judge's verdict on one passage, and what the passage is about in a few words."""

    answers: bool
    covers: str


def content_words(text: str) -> list[str]:
    """The words of ``text`` that say what it asks about, stemmed, in order, once each."""
    words = [w for w in _word.findall(text.lower()) if w not in _ASKING_WORDS]
    words = [w for w in words if w not in FUNCTION_WORDS and len(w) > 1]
    return list(dict.fromkeys(stem(w) for w in words))


def asked_actions(text: str) -> set[str]:
    """The stems of the words that say what the asker does ("fix" of "Can I fix the low
    volume?"; chop_rag.text.words.request_verbs)."""
    words = _word.findall(text.lower())
    return {stem(words[i]) for i in request_verbs(words)}


def _written(passage: ReadPassage) -> set[str]:
    """The stems and PREFIX_CHARS-letter openings of the words the passage, its heading and
    its document's title write ("refitting" is written where "refit" is)."""
    source = passage["source"]
    text = " ".join(
        [passage["text"], passage["heading"], source["doc_title"], source["model"] or ""]
    )
    stems = {stem(w) for w in _word.findall(text.lower())}
    # a model named as one word ("Note10", "S9+") is written where its title spells it apart
    squashed = re.sub(r"[^a-z0-9+]", "", f"{source['doc_title']} {source['model'] or ''}".lower())
    named = {
        squashed[i:j]
        for i in range(len(squashed))
        for j in range(i + 2, len(squashed) + 1)
        if any(c.isdigit() for c in squashed[i:j])
    }
    return stems | {w[:PREFIX_CHARS] for w in stems if len(w) > PREFIX_CHARS} | named


# A feature's proper name: two or more words in a row, each capitalised or in capitals ("Face
# ID", "Touch Bar", "Apple CarPlay"); the words that frame the question are not part of it.
TITLE_STYLE = 0.6  # more than this share of a text's words capitalised: its style
_NAME = re.compile(r"(?<![\w'])(?:[A-Z][\w+-]*|[0-9]+[A-Z][\w+-]*)(?:[ \t]+(?:[A-Z][\w+-]*))+")


def proper_names(text: str) -> list[str]:
    """The feature names ``text`` writes as proper names, lower case ("face id" of "unlock it
    with Face ID"): each of its words may be written somewhere while the feature is not. The
    words that frame a question split a run ("Reset My Phone" names nothing), and a text
    that capitalises most of its words does so by style, not to name things."""
    letters = [w for w in _typed_word.findall(text)[1:] if w.isalpha() and len(w) > 1]
    cased = [w for w in letters if not w.isupper()]  # "ID", "SD": acronyms in any style
    if len(cased) > 1 and sum(w[0].isupper() for w in cased) > TITLE_STYLE * len(cased):
        return []  # "How Do I Reset My Phone?"
    if len(letters) > 2 and len(letters) - len(cased) > TITLE_STYLE * len(letters):
        return []  # "HOW DO I RESET MY PHONE?"
    names: list[str] = []
    for match in _NAME.finditer(text):
        run: list[str] = []
        for word in [*match.group(0).lower().split(), ""]:
            if word and word not in _ASKING_WORDS and word not in FUNCTION_WORDS:
                run.append(word)
                continue
            if len(run) >= 2:
                names.append(" ".join(run))
            run = []
    return list(dict.fromkeys(names))


def _writes_name(name: str, passages: Sequence[ReadPassage]) -> bool:
    """A passage, its heading or its document's title writes ``name``'s words in a row."""
    pattern = re.compile(r"\b" + in_a_row(name), re.IGNORECASE)
    return any(
        pattern.search(" ".join([p["text"], p["heading"], p["source"]["doc_title"]]))
        for p in passages
    )


def _is_written(word: str, written: set[str]) -> bool:
    return word in written or (len(word) > PREFIX_CHARS and word[:PREFIX_CHARS] in written)


NAMES_NOTHING = ""  # the reading of a typo of a function word ("tne")


def other_readings(text: str) -> dict[str, set[str]]:
    """Each content word of ``text`` (stemmed) and the other stems it may be read as
    (chop_rag.text.spelling): its dictionary form ("became": "becom", written where the
    manual writes "becomes"), or NAMES_NOTHING for a typo of a function word ("tne")."""
    readings: dict[str, set[str]] = {}
    for typed in _typed_word.findall(text):
        word = typed.lower()
        if typo_of_function_word(word, written_lower=typed.islower()):
            forms = {NAMES_NOTHING}
        else:
            forms = {stem(lemma(word))} - {stem(word)}
        if forms:
            readings.setdefault(stem(word), set()).update(forms)
    return readings


def _written_as(word: str, written: set[str], readings: dict[str, set[str]]) -> bool:
    """``word`` is written as typed, or in one of its other readings."""
    return _is_written(word, written) or any(
        form == NAMES_NOTHING or _is_written(form, written) for form in readings.get(word, ())
    )


def opening(word: str) -> str:
    """The first letters a written form of ``word`` starts with ("imag" of "images")."""
    return word[:PREFIX_CHARS] if len(word) > PREFIX_CHARS else word


def signals(
    topic: str,
    passages: Sequence[ReadPassage],
    written_anywhere: Callable[[list[str]], set[str]] | None = None,
) -> dict[str, Any]:
    """The cheap signals (module docstring) of ``topic`` against ``passages`` (best first);
    with ``written_anywhere`` (the openings of words the documents write anywhere, from the
    store), ``unknown``: the missing words the documents never write at all."""
    words = content_words(topic)
    readings = other_readings(topic)
    written = [_written(p) for p in passages]
    best = written[0] if written else set()
    anywhere = set().union(*written) if written else set()
    covered = sum(_written_as(w, best, readings) for w in words) / len(words) if words else 1.0
    # what the asker does ("fix" of "how do I fix it") is said in the manual's own words
    # ("troubleshooting"); only the things a question names must be written
    done = asked_actions(topic)
    missing = [w for w in words if not _written_as(w, anywhere, readings) and w not in done]
    # a feature named as a proper name ("Face ID") is written only where its words stand in a
    # row, though each may be written apart ("face recognition", "Samsung account ID")
    names = [name for name in proper_names(topic) if not _writes_name(name, passages)]
    known: set[str] | None = None
    if (missing or names) and written_anywhere:
        asked = [opening(form) for w in missing for form in (w, *readings.get(w, ()))]
        known = written_anywhere(list(dict.fromkeys(asked + names)))
    unknown = [
        w for w in missing
        if known is not None and not any(opening(f) in known for f in (w, *readings.get(w, ())))
    ]  # fmt: skip
    if known is not None:  # a name none of whose words is unknown already ("Apple" of Apple Pay)
        never_named = [
            name for name in names
            if name not in known and not any(stem(w) in unknown for w in name.split())
        ]  # fmt: skip
        missing, unknown = missing + never_named, unknown + never_named
    return {
        "similarity": round(max(passages[0]["scores"], default=0.0), 3) if passages else 0.0,
        "covered": round(covered, 3),
        "missing": missing,
        "unknown": unknown,
        "words": words,
    }


def cheap_judgment(found: dict[str, Any]) -> tuple[bool | None, str]:
    """The cheap signals' decision: True (answers), False (does not) or None (unclear), and
    the rule that decided."""
    similarity, covered, missing = found["similarity"], found["covered"], found["missing"]
    if similarity < NO_SIMILARITY:
        return False, "rule:far"
    if found.get("unknown") and similarity < SURE_SIMILARITY:
        return False, "rule:never-written"
    if similarity < FAR_SIMILARITY and missing:
        return False, "rule:unwritten"
    if similarity >= CLEAR_SIMILARITY and (covered >= CLEAR_COVERED or "unknown" in found):
        # with the store's look-up, every word the question names is one its documents write
        return True, "rule:close"
    if not missing:
        # the passages write every thing the question names: the local judge's "no" there was
        # wrong on every answerable question it was asked (bench.answerability, bench.answers:
        # "Can I select Natural mode?" against the picture modes' section), so it is not asked
        return True, "rule:written"
    return None, "unclear"


JUDGED_PASSAGES = 2


def judged_passages(passages: Sequence[ReadPassage], count: int = JUDGED_PASSAGES) -> list[int]:
    """The passages the LLM judge reads in the band, in turn: the one the answer would quote,
    then the others whose best sentence comes closest (at least FAR_SIMILARITY)."""
    others = sorted(
        (i for i in range(1, len(passages)) if max(passages[i]["scores"], default=0.0)
         >= FAR_SIMILARITY),
        key=lambda i: -max(passages[i]["scores"], default=0.0),
    )  # fmt: skip
    return [0, *others][:count] if passages else []


def closest(passage: ReadPassage, covers: str = "") -> str:
    """What the documents cover that comes closest, as the decline names it: the best
    passage's section title (or the judge's words, or its opening) in its document."""
    what = passage["heading"].strip() or covers.strip()
    if not what:
        what = passage["sentences"][0] if passage["sentences"] else passage["text"]
    what = " ".join(what.split())
    if len(what) > CLOSEST_CHARS:
        what = what[:CLOSEST_CHARS].rsplit(" ", 1)[0] + " …"
    return f"“{what}” in {passage['source']['doc_title']}"


def judgment(
    answerable: bool, decided_by: str, found: dict[str, Any], passage: ReadPassage | None,
    covers: str = "", reason: str = "",
) -> Answerability:  # fmt: skip
    return Answerability(
        answerable=answerable,
        decided_by=decided_by,
        reason=reason,
        closest=closest(passage, covers) if passage is not None else "",
        signals=found,
    )


def declined_text(judged: Answerability) -> str:
    """The one sentence a declined answer says."""
    if judged["closest"]:
        return f"The documents do not answer this; the closest they cover is {judged['closest']}."
    return "The documents do not answer this."
