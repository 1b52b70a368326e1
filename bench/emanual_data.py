"""E-Manual QA data: manuals as continuous documents, questions, and their gold sections.

Each manual becomes ONE document (its sections' texts joined with a blank line, in order),
titled with its device name. Section boundaries are kept only here, as hidden evaluation labels
(character spans); the documents handed to a method carry no spans.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field
from pathlib import Path

from chop.documents import SourceDocument, make_document
from chop.loaders import LoadError, emanual_sections

S10_CORPUS = "s10_manual_corpus.json"
TV_CORPUS = "smart_tv_remote_manual_corpus.json"
OTHER_CORPORA = "other_emanuals_corpus"
S9_CORPUS = f"{OTHER_CORPORA}/Galaxy_S9.json"
S10_QUESTIONS = "s10_50_questions.csv"
TV_QUESTIONS = "smart_tv_remote_50_questions.csv"

S10_DEVICE = "Galaxy S10"
TV_DEVICE = "Samsung Smart TV remote"
DEVICE_OF_FILE = {S10_CORPUS: S10_DEVICE, TV_CORPUS: TV_DEVICE}
QUESTION_FILES = {S10_DEVICE: S10_QUESTIONS, TV_DEVICE: TV_QUESTIONS}
REQUIRED_FILES = (S10_CORPUS, TV_CORPUS, S9_CORPUS, S10_QUESTIONS, TV_QUESTIONS)

# The one question template: the device named in square brackets before the question.
QUESTION_TEMPLATE = "[{device}] {question}"
SECTION_SEPARATOR = "\n\n"
TINY_SECTIONS = 6
TINY_QUESTIONS = 2

_QUOTES = str.maketrans({"’": "'", "‘": "'", "ʼ": "'", "`": "'", "“": '"', "”": '"'})


@dataclass(frozen=True)
class Section:
    """A section's title and its character span [start, end) in the manual's document."""

    title: str
    start: int
    end: int


@dataclass
class Manual:
    device: str
    doc_id: str
    source: str
    text: str
    sections: list[Section]

    def document(self) -> SourceDocument:
        """The document a method sees: title and text, no section spans."""
        return make_document(self.doc_id, self.device, self.text, source=self.source, spans=[])


@dataclass(frozen=True)
class Question:
    qid: str
    device: str
    question: str
    section_path: str
    answer: str

    @property
    def templated(self) -> str:
        return QUESTION_TEMPLATE.format(device=self.device, question=self.question.strip())


@dataclass(frozen=True)
class GoldMatch:
    """Where a question's gold lies: section indices, and how they were found.

    ``how``: "exact" (title equals the path's last element), "normalised" (equal after
    casefolding, apostrophes and whitespace), "parent" (nearest parent in the path), "none".
    """

    sections: tuple[int, ...]
    how: str
    matched: str | None = None


@dataclass
class Corpus:
    manuals: list[Manual]
    questions: list[Question]
    skipped: list[str] = field(default_factory=list)  # "file: reason" of manuals left out
    notes: list[str] = field(default_factory=list)

    def manual(self, device: str) -> Manual:
        for manual in self.manuals:
            if manual.device == device:
                return manual
        raise KeyError(device)


class DataMissing(RuntimeError):
    """The data folder or one of its files is not there."""


# --------------------------------------------------------------------------- names
def device_name(path: Path) -> str:
    """The device a corpus file is about: the two main files by name, others from the stem."""
    rel = path.name
    if rel in DEVICE_OF_FILE:
        return DEVICE_OF_FILE[rel]
    return " ".join(path.stem.replace("_", " ").split())


def slug(device: str) -> str:
    """A short stable document id: "Galaxy Note 10+" → "emanual/galaxy-note-10-plus"."""
    text = device.casefold().replace("+", " plus ")
    return "emanual/" + "-".join(re.findall(r"[a-z0-9]+", text))


def normalise_title(title: str) -> str:
    return " ".join(title.translate(_QUOTES).casefold().split())


# --------------------------------------------------------------------------- manuals
def check_data(root: Path) -> None:
    if not root.is_dir():
        raise DataMissing(f"E-Manual data folder not found: {root}")
    missing = [name for name in REQUIRED_FILES if not (root / name).is_file()]
    if missing:
        raise DataMissing(f"E-Manual data folder {root} lacks: {', '.join(missing)}")


def build_manual(path: Path, max_sections: int | None = None) -> Manual:
    """One manual as one continuous document; raises LoadError for an empty or odd file."""
    items = emanual_sections(path)[:max_sections]
    device = device_name(path)
    parts: list[str] = []
    sections: list[Section] = []
    offset = 0
    for title, text in items:
        if not text:
            sections.append(Section(title, offset, offset))  # empty: nothing can overlap it
            continue
        if parts:
            offset += len(SECTION_SEPARATOR)
        sections.append(Section(title, offset, offset + len(text)))
        parts.append(text)
        offset += len(text)
    return Manual(device, slug(device), str(path), SECTION_SEPARATOR.join(parts), sections)


def load_manuals(
    paths: list[Path], max_sections: int | None = None
) -> tuple[list[Manual], list[str]]:
    """The manuals of ``paths`` in order, and one "file: reason" line per manual left out."""
    manuals: list[Manual] = []
    skipped: list[str] = []
    for path in paths:
        try:
            manuals.append(build_manual(path, max_sections))
        except LoadError as err:
            skipped.append(f"{path.name}: {err}")
    ids = [m.doc_id for m in manuals]
    if len(set(ids)) != len(ids):
        raise ValueError(f"two manuals share a document id: {sorted(ids)}")
    return manuals, skipped


def all_manual_paths(root: Path) -> list[Path]:
    others = sorted((root / OTHER_CORPORA).glob("*.json"))
    return [root / S10_CORPUS, root / TV_CORPUS, *others]


# --------------------------------------------------------------------------- questions
def load_questions(path: Path, device: str) -> list[Question]:
    with path.open(encoding="utf-8-sig", newline="") as handle:
        return [
            Question(
                qid=str(row["question_id"]).strip(),
                device=device,
                question=row["question"],
                section_path=row["section_path"],
                answer=row["answer"],
            )
            for row in csv.DictReader(handle)
        ]


def match_gold(section_path: str, sections: list[Section]) -> GoldMatch:
    """The gold sections of a question: by the path's last element, else its nearest parent."""
    path = [part.strip() for part in section_path.split(">") if part.strip()]
    if not path:
        return GoldMatch((), "none")
    exact = tuple(i for i, s in enumerate(sections) if s.title == path[-1])
    if exact:
        return GoldMatch(exact, "exact", path[-1])
    for depth, part in enumerate(reversed(path)):
        wanted = normalise_title(part)
        found = tuple(i for i, s in enumerate(sections) if normalise_title(s.title) == wanted)
        if found:
            return GoldMatch(found, "normalised" if depth == 0 else "parent", part)
    return GoldMatch((), "none")


def tiny_questions(s10: Manual, candidates: list[Question]) -> tuple[list[Question], str]:
    """The first real questions whose gold (exact or normalised) lies in the tiny manual; if
    fewer than TINY_QUESTIONS, synthetic ones made from its sections 1, 2, ... (by construction:
    question "What is <title>?", section_path "<title>", answer the section text)."""
    found = [
        q
        for q in candidates
        if match_gold(q.section_path, s10.sections).how in ("exact", "normalised")
    ][:TINY_QUESTIONS]
    if len(found) == TINY_QUESTIONS:
        return found, "the first S10 questions whose gold title is in the first sections"
    synthetic: list[Question] = []
    for index, section in enumerate(s10.sections[1:], start=1):
        if len(found) + len(synthetic) == TINY_QUESTIONS:
            break
        body = s10.text[section.start : section.end]
        synthetic.append(
            Question(f"tiny-{index}", s10.device, f"What is {section.title}?", section.title, body)
        )
    note = (
        f"{len(found)} real S10 question(s) have their gold in the first {TINY_SECTIONS} "
        f"sections; {len(synthetic)} synthetic question(s) 'What is <section title>?' were made "
        "from sections 1.. of the tiny S10 manual (gold by construction)"
    )
    return found + synthetic, note


# --------------------------------------------------------------------------- subsets
SUBSETS = ("pair", "tv", "full", "tiny")


def load_subset(root: Path, subset: str) -> Corpus:
    """The manuals and questions of one subset (see the module docs of bench.emanual)."""
    check_data(root)
    s10_questions = load_questions(root / S10_QUESTIONS, S10_DEVICE)
    tv_questions = load_questions(root / TV_QUESTIONS, TV_DEVICE)
    if subset == "pair":
        manuals, skipped = load_manuals([root / S10_CORPUS, root / S9_CORPUS])
        return Corpus(manuals, s10_questions, skipped)
    if subset == "tv":
        manuals, skipped = load_manuals([root / TV_CORPUS])
        return Corpus(manuals, tv_questions, skipped)
    if subset == "full":
        manuals, skipped = load_manuals(all_manual_paths(root))
        return Corpus(manuals, s10_questions + tv_questions, skipped)
    if subset == "tiny":
        manuals, skipped = load_manuals([root / S10_CORPUS, root / S9_CORPUS], TINY_SECTIONS)
        questions, note = tiny_questions(manuals[0], s10_questions)
        return Corpus(manuals, questions, skipped, [note])
    raise ValueError(f"unknown subset {subset!r} ({' | '.join(SUBSETS)})")
