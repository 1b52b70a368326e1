"""Sources of different documents that disagree on the question, said rather than hidden.

A manual says "Always unplug the unit before cleaning"; a later bulletin about the same model
says "You do not need to unplug it". Quoting one of them answers with half of what the
collection says. The cheap first pass aligns sentences of the best passage with those of the
best passage of each other document (the same content words, most of them) and keeps a pair
whose polarity (one negates, the other does not) or figures differ; the local LLM then judges
the passages of such a pair (prompts/judge_conflict.md), so "do not spray the filter" beside
"spray the cloth" is not called a conflict. A judge that fails keeps the cheap pass's pair:
saying that the sources may disagree is the safe side, and the failure is recorded.

A document whose identity card is marked ``authoritative`` (``--meta authoritative=true`` or
its sidecar file) wins: the answer is read from it, and the other is still quoted.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from pydantic import BaseModel

from chop_rag.answers.answerability import content_words
from chop_rag.answers.answering import figures_in
from chop_rag.state import Disagreement, Quoted, ReadPassage

ALIGNED_SHARE = 0.5  # of the shorter sentence's content words the other must write
RELEVANT_GAP = 0.2  # another document's passage within this cosine of the best one's
SENTENCES_COMPARED = 6  # each passage's best sentences that are compared

_negation = re.compile(
    r"\b(?:not|no|never|cannot|don't|doesn't|mustn't|shouldn't|needn't|without|avoid)\b|n't\b",
    re.IGNORECASE,
)
# a year names when, not how much: "in fiscal 2023" beside "(962) (1,372)" is no disagreement
_YEAR = re.compile(r"(?<![\d.,$])(?:19|20)\d\d(?![\d%]|[.,]\d)")
_POLARITY_WORDS = frozenset(["not", "no", "never", "cannot", "without", "avoid", "always"])


class ConflictReply(BaseModel):
    """The judge's verdict on two passages, and the sentences that disagree."""

    conflict: bool
    first: str
    second: str


def _words(sentence: str) -> set[str]:
    return {w for w in content_words(sentence) if w not in _POLARITY_WORDS and not w.isdigit()}


def aligned(first: str, second: str) -> bool:
    """Whether two sentences speak of the same thing: most content words of the shorter are
    written in the other."""
    a, b = _words(first), _words(second)
    if len(a) < 2 or len(b) < 2:
        return False
    return len(a & b) / min(len(a), len(b)) >= ALIGNED_SHARE


def opposed(first: str, second: str) -> bool:
    """Whether aligned sentences say opposite things: one negates and the other does not, or
    both give figures other than years and the figures differ."""
    if bool(_negation.search(first)) != bool(_negation.search(second)):
        return True
    numbers_a, numbers_b = measures_in(first), measures_in(second)
    return bool(numbers_a and numbers_b and numbers_a != numbers_b)


def measures_in(sentence: str) -> set[str]:
    """The sentence's figures without its years."""
    return figures_in(_YEAR.sub(" ", sentence))


def _best_sentences(passage: ReadPassage) -> list[str]:
    ranked = sorted(range(len(passage["sentences"])), key=lambda i: -passage["scores"][i])
    return [passage["sentences"][i] for i in ranked[:SENTENCES_COMPARED]]


def rivals(passages: Sequence[ReadPassage]) -> list[ReadPassage]:
    """The best passage of each other document that is about as relevant as the best one."""
    if not passages:
        return []
    best = passages[0]
    top = max(best["scores"], default=0.0)
    seen = {best["source"]["doc_id"]}
    found: list[ReadPassage] = []
    for passage in passages[1:]:
        doc = passage["source"]["doc_id"]
        if doc in seen or max(passage["scores"], default=-1.0) < top - RELEVANT_GAP:
            continue
        seen.add(doc)
        found.append(passage)
    return found


def opposed_pair(first: ReadPassage, second: ReadPassage) -> tuple[str, str] | None:
    """The cheap pass: the first pair of aligned sentences of the two passages that say
    opposite things."""
    for a in _best_sentences(first):
        for b in _best_sentences(second):
            if aligned(a, b) and opposed(a, b):
                return a, b
    return None


def quoted(passage: ReadPassage, sentence: str) -> Quoted:
    source = passage["source"]
    return Quoted(number=source["number"], doc_title=source["doc_title"], sentence=sentence)


def disagreement(
    first: ReadPassage,
    second: ReadPassage,
    sentences: tuple[str, str],
    decided_by: str,
    authoritative: Mapping[str, bool],
) -> Disagreement:
    """The two sources that disagree, the authoritative one (if a user marked exactly one)
    first."""
    pair = [quoted(first, sentences[0]), quoted(second, sentences[1])]
    marked = [authoritative.get(p["source"]["doc_id"], False) for p in (first, second)]
    if marked == [False, True]:
        pair.reverse()
    return Disagreement(
        first=pair[0],
        second=pair[1],
        decided_by=decided_by,
        authoritative=pair[0]["doc_title"] if any(marked) and not all(marked) else None,
    )


def said(found: Disagreement) -> str:
    """The sentence an answer opens with when its sources disagree."""
    first, second = found["first"], found["second"]
    text = (
        f"The sources disagree: {first['doc_title']} says "
        f"“{first['sentence']}”, while {second['doc_title']} says "
        f"“{second['sentence']}”."
    )
    if found["authoritative"]:
        text += f" {found['authoritative']} is marked authoritative; the answer follows it."
    return text
