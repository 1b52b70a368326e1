"""What an answer is made of: the passages the model reads and the answer composed from them.

A small local model that paraphrases several fragments loses the fact that was asked for (the
interval, the setting's name, the figure) and pads the manual's steps with invented ones. So
the answer a user reads is built around the source's own words: the passage whose sentences
match the question best (retrieval's first, unless another is clearly better), quoted whole
when it is a short section or around its best sentence. The model adds a yes/no question's
verdict and, with CHOP_ANSWER=lead, a short direct answer, shown only when the passage backs
every figure and nearly every word of it.

The passages are whole sections where the document has them: the best chunk's neighbours under
the same heading, so steps split over two chunks are read together, and only sources of the
documents the question resolved to (twin products' chunks look alike and must not be mixed in).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, cast

from pydantic import BaseModel

from chop_rag.answers.statement_rows import is_figure_line
from chop_rag.retrieval.retrieve import is_about
from chop_rag.state import Source
from chop_rag.text.grounding import without_instructions
from chop_rag.text.words import word_set

PASSAGE_CHARS = 1500  # one section, as the model reads it (about 375 tokens)
PROMPT_CHARS = 4000  # all passages together: the prompt's cost on 2 cores is its length
MAX_PASSAGES = 4
MAX_SENTENCE_CHARS = 400
ANSWER_CHARS = 700  # the passage's words an answer quotes: a short section whole
# a quoted sentence this long cites each retrieved chunk holding it (quoted_in); a shorter line
# ("Balance Sheet") is printed in many
QUOTED_CHARS = 30
BACKED_SHARE = 0.8  # of the model's content words that must be written in the passage
COVERED_SHARE = 0.6  # of the question's content words a passage must write to be about it
REASON_SHARE = 0.34  # of them a filing's stated reason must write to decide the question
YesNo = Literal["yes", "no"]
LeadStatus = Literal["backed", "unbacked", "none"]  # what became of the model's short answer
VerdictStatus = Literal["backed", "overruled", "unsaid", "none"]  # what became of the verdict
UNSAID = "The sources found do not say yes or no."

_sentence_end = re.compile(
    r"(?<=[.!?])\s+(?=[\"'(\[A-Z0-9•\-])"  # "... filter. Switch ..."
    r"|(?<=[a-z)][.!?:])(?=[A-Z][a-z])"  # glued sentences of extracted text: "settings.From"
)
_space = re.compile(r"[ \t\u00a0]+")
_AUXILIARIES = frozenset(
    [
        "am",
        "are",
        "can",
        "could",
        "did",
        "do",
        "does",
        "has",
        "have",
        "is",
        "may",
        "might",
        "must",
        "shall",
        "should",
        "was",
        "were",
        "will",
        "would",
    ]
)
_verdict_words = re.compile(r"^(?:yes|no)\b[,.!:;]?\s*", re.IGNORECASE)
_negation = re.compile(
    r"\b(?:not|no|never|cannot|unable|unavailable|unsupported|impossible|neither|nor|only)\b"
    r"|n't\b",
    re.IGNORECASE,
)
_question_negation = re.compile(r"\b(?:not|without|never|no)\b|n't\b", re.IGNORECASE)
# Words that frame a yes/no question rather than name what it asks about.
_FRAMING_WORDS = frozenset(["possible", "able", "allowed", "way", "any", "there", "me", "my"])
_clause_break = re.compile(r"[\]:;.!]\s+|\]")


class AnswerReply(BaseModel):
    """The model's short answer; kept only when the passages back every word of it."""

    # No maxLength: llama.cpp compiles it into a grammar rule per character and fails on long
    # limits; the length is bounded by the model's max_tokens instead.
    answer: str


class YesNoReply(BaseModel):
    """A yes/no question's verdict, then the short answer that gives the reason."""

    verdict: YesNo
    answer: str


def is_yes_no_question(question: str) -> bool:
    """Whether the question asks for yes or no: its asking clause opens with an auxiliary verb
    ("Can I ...", "Does the S10 ...", "Is there ..."), also after what names the device
    ("[Galaxy S10] Can ...", "Galaxy S10: Can ...", "I have a Galaxy S10. Can ..."), and does
    not offer two directions to choose from ("Did wages increase or decrease ...?": "yes"
    answers nothing there)."""
    asking = question.rsplit("?", 1)[0] if "?" in question else question
    clause = _clause_break.split(asking)[-1]
    words = clause.split()
    opens = bool(words) and words[0].lower().strip(",") in _AUXILIARIES
    return opens and not offers_directions(clause)


# Words that name a direction or a state, so "A or B" of two of them is a choice, not a yes/no.
_DIRECTION_WORDS = frozenset((
    "up", "down", "on", "off", "more", "less", "fewer", "better", "worse", "higher", "lower",
    "gain", "loss", "profit",
))  # fmt: skip
_DIRECTION_STEMS = (
    "increas", "decreas", "rise", "rose", "risen", "rising", "fall", "fell", "grow", "grew",
    "shrink", "shrank", "improv", "declin", "worsen", "deteriorat", "expand", "contract",
    "strengthen", "weaken", "positive", "negative", "enabl", "disabl", "lose", "lost", "losing",
)  # fmt: skip
_alternatives = re.compile(r"\b([a-z]+)\s+or\s+([a-z]+)\b", re.IGNORECASE)


def _names_direction(word: str) -> bool:
    word = word.lower()
    return word in _DIRECTION_WORDS or word.startswith(_DIRECTION_STEMS)


def offers_directions(clause: str) -> bool:
    """Whether ``clause`` asks to choose between two directions or states joined by "or"
    ("improved or declined", "higher or lower", "on or off")."""
    return any(
        _names_direction(first) and _names_direction(second)
        for first, second in _alternatives.findall(clause)
    )


def split_sentences(text: str) -> list[str]:
    """The text's sentences and lines, in order: a list item or a table row is one unit, a
    sentence running past MAX_SENTENCE_CHARS is cut there."""
    units: list[str] = []
    for line in text.splitlines():
        line = _space.sub(" ", line).strip()
        for sentence in _sentence_end.split(line):
            sentence = sentence.strip()
            while sentence:
                units.append(sentence[:MAX_SENTENCE_CHARS])
                sentence = sentence[MAX_SENTENCE_CHARS:].strip()
    return units


_TERMINAL = (".", "!", "?", ":", ")", '"', "”", "'")


def filing_units(text: str, render: Callable[[str], str | None]) -> list[str]:
    """A filing passage's units as a quote may use them: sentences of its paragraphs (the
    PDF's wrapped lines joined) and its table rows, each row rendered by ``render`` with its
    periods and unit ("Total revenue, in millions: 2022 66,608; 2021 62,286") or, when it
    renders none, kept as its own line (a row of a table whose header was not read: "Corporate
    bonds Level 2 416,420 213,875", never joined into a sentence). A passage cut inside a
    sentence or a word ("gment revenues ...") does not open or close a quote: a first unit that
    starts in lower case and a last one that does not end a sentence are left out."""
    units: list[str] = []
    rows: set[int] = set()
    paragraph: list[str] = []

    def flush() -> None:
        joined = " ".join(paragraph)
        paragraph.clear()
        units.extend(part.strip() for part in _sentence_end.split(joined) if part.strip())

    for raw in text.splitlines():
        line = _space.sub(" ", raw).strip()
        if not line:
            flush()
            continue
        rendered = render(line)
        if rendered is None and is_figure_line(line):
            rendered = line
        if rendered is not None:
            flush()
            rows.add(len(units))
            units.append(rendered)
            continue
        paragraph.append(line)
    flush()
    first, last = 0, len(units)
    if units and 0 not in rows and not units[0][:1].isupper() and not units[0][:1].isdigit():
        first = 1
    if last - first > 1 and last - 1 not in rows and not units[-1].endswith(_TERMINAL):
        last -= 1
    return units[first:last]


@dataclass
class Passage:
    """A section (or a chunk, where the document has no headings) as the model reads it."""

    source: Source  # the best-ranked source of the section: its number is the citation
    heading: str
    text: str
    sentences: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.sentences:
            self.sentences = split_sentences(self.text)


def heading_path(source: Source) -> tuple[str, ...]:
    return tuple(source["metadata"].get("headings") or ())


def sources_about(
    sources: Sequence[Source], documents: Sequence[str], model: str | None
) -> list[Source]:
    """The sources an answer may use, renumbered from 1: those of the documents the question
    resolved to, else those labelled with the model it names, else all of them
    (chop_rag.retrieval.retrieve.is_about, the rule ChopRetriever keeps to as well)."""
    kept = [s for s in sources if is_about(s["doc_id"], s["model"], documents, model)]
    return [cast(Source, {**s, "number": i}) for i, s in enumerate(kept, start=1)]


SectionReader = Callable[[Source], list[Source]]
"""The chunks of a source's section in document order, the source among them."""


def build_passages(sources: Sequence[Source], read_section: SectionReader) -> list[Passage]:
    """Passages in the sources' rank order, one per section: a second hit in a section the
    first already brought in adds nothing; the section's text is cut around the hit's chunk to
    PASSAGE_CHARS, and passages stop at MAX_PASSAGES or PROMPT_CHARS."""
    passages: list[Passage] = []
    seen: set[int] = set()
    budget = PROMPT_CHARS
    for source in sources:
        if source["chunk_id"] in seen:
            continue
        section = read_section(source) or [source]
        seen.update(chunk["chunk_id"] for chunk in section)
        # a sentence addressed to a labeller or an AI is the document's, not an answer
        text = around(section, source["chunk_id"], min(PASSAGE_CHARS, budget))
        text = without_instructions(text)
        if not text.strip():
            continue
        headings = heading_path(source)
        passages.append(Passage(source, headings[-1] if headings else "", text))
        budget -= len(text)
        if len(passages) == MAX_PASSAGES or budget < PASSAGE_CHARS // 4:
            break
    return passages


def around(section: Sequence[Source], chunk_id: int, limit: int) -> str:
    """The section's text, at most ``limit`` characters: whole when it fits, else the hit's
    chunk with as much of what follows and then precedes it as fits."""
    texts = [chunk["text"].strip() for chunk in section]
    at = next((i for i, chunk in enumerate(section) if chunk["chunk_id"] == chunk_id), 0)
    first = last = at
    size = len(texts[at])
    while True:
        grew = False
        if last + 1 < len(texts) and size + len(texts[last + 1]) <= limit:
            last += 1
            size += len(texts[last])
            grew = True
        if first > 0 and size + len(texts[first - 1]) <= limit:
            first -= 1
            size += len(texts[first])
            grew = True
        if not grew:
            break
    return "\n".join(texts[first : last + 1])[:limit]


def shown(passages: Sequence[Passage]) -> str:
    """The passages as the prompt shows them: a header naming the document and section, then
    the text."""
    return "\n\n".join(
        f"--- {' > '.join(p for p in (passage.source['doc_title'], passage.heading) if p)} ---\n"
        f"{passage.text}"
        for passage in passages
    )


def best_sentences(passage: Passage, scores: Sequence[float], count: int = 2) -> list[str]:
    """The passage's ``count`` sentences that match the question best."""
    ranked = sorted(
        range(len(passage.sentences)), key=lambda i: -scores[i] if i < len(scores) else 1.0
    )
    return [passage.sentences[i] for i in ranked[:count]]


def extract(passage: Passage, scores: Sequence[float]) -> str:
    """The passage's answer in its own words: the whole section when it is short, else the
    sentence that best matches the question with the one before it and as many that follow as
    fit in ANSWER_CHARS (the steps after an instruction's first line). Heading lines, and
    lines that only repeat the section's title, go (a piece of the title may open the quote:
    "GEOGRAPHIC OPERATIONS" before the sentences under it)."""
    heading = passage.heading.strip().lower()
    kept = [
        i
        for i, sentence in enumerate(passage.sentences)
        if not sentence.startswith("#") and sentence.strip().lower() != heading
    ]
    if not kept:
        return ""
    if sum(len(passage.sentences[i]) + 1 for i in kept) <= ANSWER_CHARS:
        return " ".join(passage.sentences[i] for i in kept)
    top = max(kept, key=lambda i: scores[i] if i < len(scores) else -1.0)
    position = kept.index(top)
    chosen = kept[max(0, position - 1) : position + 1]
    size = sum(len(passage.sentences[i]) + 1 for i in chosen)
    for index in kept[position + 1 :]:
        size += len(passage.sentences[index]) + 1
        if size - 1 > ANSWER_CHARS:
            break
        chosen.append(index)
    return " ".join(passage.sentences[i] for i in chosen)


_figure = re.compile(r"\d[\d,]*(?:\.\d+)?")
_word = re.compile(r"[a-z0-9]+")
_STOP_WORDS = word_set(
    "a an and are as at be been by can do does for from has have how i if in is it its may of on "
    "or that the their there these this to was were what when where which will with you your yes "
    "no not"
)


def figures_in(text: str) -> set[str]:
    return {f.replace(",", "").rstrip(".") for f in _figure.findall(text)}


def stem(word: str) -> str:
    """A word without its common English endings, so "cleaned" is backed by "clean"."""
    for ending in ("ing", "ed", "es", "s", "ly"):
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            return word[: -len(ending)]
    return word


def words_written_in(answer: str, texts: Sequence[str]) -> float:
    """The share of the answer's content words (not function words, any common ending) that
    ``texts`` write; 1.0 for an answer of function words only."""
    words = [stem(w) for w in _word.findall(answer.lower()) if w not in _STOP_WORDS]
    if not words:
        return 1.0
    present = {stem(w) for w in _word.findall(" ".join(texts).lower())}
    return sum(w in present for w in words) / len(words)


def is_backed(answer: str, texts: Sequence[str], share: float = BACKED_SHARE) -> bool:
    """Whether ``texts`` back ``answer``: every figure of it is written there, and at least
    ``share`` of its content words (generic padding such as "open the Settings app" or "the
    manual provides detailed instructions" is not)."""
    if not _word.search(answer) or not figures_in(answer) <= figures_in(" ".join(texts)):
        return False
    return words_written_in(answer, texts) >= share


def checked_verdict(
    verdict: YesNo | None,
    reason: str,
    question: str,
    passage: Passage,
    best: Sequence[str],
    stated_only: bool = False,
) -> tuple[YesNo | None, VerdictStatus]:
    """The model's verdict as the passage backs it. A small model says "no" whenever the
    passage does not repeat the question's words, so a "no" stands only where the passage
    says no: its reason (when the passage writes it) or a best-matching sentence holds a
    negation, or the question itself negates and the passage writes the reason. A "no" the
    passage does not say, on a passage that writes what the question asks about, becomes
    "yes" (the manual describes doing it); a verdict on a passage that is not about the
    question is left unsaid. With ``stated_only`` (filings: "is it a high growth company?" is
    not answered by a passage that merely mentions the company) a verdict stands only where
    the passage writes the model's reason (the filing's title and section path count for the
    words that name it) and the reason writes a third of the question's content words; a "no"
    also needs a negation there."""
    if verdict is None:
        return None, "none"
    about = [passage.text, passage.source["doc_title"], passage.source["model"] or ""]
    asked = question.split("?", 1)[0]  # not the instructions that may follow the question
    content = " ".join(
        w for w in _word.findall(asked.lower()) if w not in _FRAMING_WORDS | _AUXILIARIES
    )
    covered = words_written_in(content, [*about, passage.heading]) >= COVERED_SHARE
    # in a filing the reason's words naming it ("MGM Resorts", "FY2022") are its title's and
    # heading's; a manual's reason is backed by the passage's own words
    backing = [*about, passage.heading] if stated_only else [passage.text]
    reason_backed = bool(reason.strip()) and is_backed(reason, backing)
    if stated_only:  # filings: the passage must state the reason, and the reason the answer
        if not reason_backed or words_written_in(content, [reason]) < REASON_SHARE:
            return None, "unsaid"
        if verdict == "no" and not any(_negation.search(s) for s in [*best, reason]):
            return None, "unsaid"
        return verdict, "backed"
    if verdict == "yes":
        return ("yes", "backed") if covered or reason_backed else (None, "unsaid")
    evidence = [*best, reason] if reason_backed else list(best)
    if any(_negation.search(sentence) for sentence in evidence):
        return "no", "backed"
    if reason_backed and _question_negation.search(question):
        return "no", "backed"  # "Can I use it without the tank?" - "Refit the tank."
    return ("yes", "overruled") if covered else (None, "unsaid")


@dataclass(frozen=True)
class ComposedAnswer:
    text: str
    citations: list[int]
    lead: LeadStatus


def compose(
    passage: Passage,
    extracted: str,
    lead: str | None,
    verdict: YesNo | None = None,
    unsaid: bool = False,
    sources: Sequence[Source] = (),
) -> ComposedAnswer:
    """The answer a user reads: the verdict of a yes/no question (or that the sources do not
    say it, ``unsaid``), the model's short answer
    when the passage backs it (and it is not already in the passage's words below), then
    the passage's own words. An unbacked short answer is left out, never shown. It cites the
    passage's source and every one of ``sources`` whose text it quotes (quoted_in)."""
    lead = (lead or "").strip()
    if verdict:  # "Yes, you can ..." after the verdict's own "Yes."
        lead = _verdict_words.sub("", lead)
        lead = lead[:1].upper() + lead[1:]
    status: LeadStatus = "none"
    parts: list[str] = []
    if verdict:
        parts.append("Yes." if verdict == "yes" else "No.")
    elif unsaid:
        parts.append(UNSAID)
    if lead:
        about = [passage.source["doc_title"], passage.source["model"] or "", passage.heading]
        status = "backed" if is_backed(lead, [passage.text, *about]) else "unbacked"
        if status == "backed" and lead.lower().rstrip(".") not in extracted.lower():
            parts.append(lead if lead.endswith((".", "!", "?")) else lead + ".")
    parts.append(extracted)
    cited = [passage.source["number"], *quoted_in(passage, extracted, sources)]
    return ComposedAnswer(" ".join(p for p in parts if p), list(dict.fromkeys(cited)), status)


def quoted_in(passage: Passage, extracted: str, sources: Sequence[Source]) -> list[int]:
    """The numbers of the sources of the passage's document that share a sentence with the
    quote: the passage is the section read around one hit, so a quote may run on into another
    retrieved chunk of it, and cites that one too. A chunk's first or last line may be a piece
    of a sentence the chunking cut; a piece of QUOTED_CHARS or more counts."""
    quote = " ".join(extracted.split())
    quoted = [
        " ".join(sentence.split())
        for sentence in passage.sentences
        if len(sentence) >= QUOTED_CHARS and sentence in extracted
    ]

    def shares_a_sentence(text: str) -> bool:
        flat = " ".join(text.split())
        own = (" ".join(unit.split()) for unit in split_sentences(text))
        return any(sentence in flat for sentence in quoted) or any(
            len(unit) >= QUOTED_CHARS and unit in quote for unit in own
        )

    return [
        source["number"]
        for source in sources
        if source["doc_id"] == passage.source["doc_id"] and shares_a_sentence(source["text"])
    ]
