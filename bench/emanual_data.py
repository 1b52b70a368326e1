"""E-Manual QA data: manuals as chop's loader reads them, questions, and their gold sections.

Each manual is the ONE document ``chop_rag.reading.loaders.load_file`` makes of its JSON file (the
product path: title from the file name, one span per section with its heading). The gold labels are
the sections' character spans on that text. The ``none`` structure is the same text loaded as a
``.txt`` (no spans, no headings), as a user with a plain-text copy would ingest it.
"""

from __future__ import annotations

import csv
import json
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from chop_rag.reading.documents import SourceDocument, make_document
from chop_rag.reading.loaders import LoadError, load_file

S10_CORPUS = "s10_manual_corpus.json"
TV_CORPUS = "smart_tv_remote_manual_corpus.json"
OTHER_CORPORA = "other_emanuals_corpus"
S9_CORPUS = f"{OTHER_CORPORA}/Galaxy_S9.json"
S10_QUESTIONS = "s10_50_questions.csv"
TV_QUESTIONS = "smart_tv_remote_50_questions.csv"
REMOTE_QA = "smart_remote_QA"

S10_DEVICE = "Galaxy S10"
TV_DEVICE = "Samsung Smart TV remote"
DEVICE_OF_FILE = {S10_CORPUS: S10_DEVICE, TV_CORPUS: TV_DEVICE}
QUESTION_FILES = {S10_DEVICE: S10_QUESTIONS, TV_DEVICE: TV_QUESTIONS}
REQUIRED_FILES = (S10_CORPUS, TV_CORPUS, S9_CORPUS, S10_QUESTIONS, TV_QUESTIONS)

# The one question template: the device named in square brackets before the question.
QUESTION_TEMPLATE = "[{device}] {question}"
TINY_SECTIONS = 6
TINY_QUESTIONS = 2
STRUCTURES = ("headings", "none")

_QUOTES = str.maketrans({"’": "'", "‘": "'", "ʼ": "'", "`": "'", "“": '"', "”": '"'})


@dataclass(frozen=True)
class Section:
    """A section's title and its character span [start, end) in the manual's document."""

    title: str
    start: int
    end: int


@dataclass
class Manual:
    """One manual as chop's loader reads it, with the evaluation labels beside it.

    ``loaded`` is what ``chop_rag.reading.loaders.load_file`` returns for the JSON file (headings
    visible as span metadata); ``sections`` are the gold labels (title and character span of each
    non-empty section, from the loader's ``{"section": key}`` spans and the file's own titles).
    """

    device: str  # how the questions name it ("[Galaxy S10] ...")
    loaded: SourceDocument
    sections: list[Section]

    @property
    def doc_id(self) -> str:
        return self.loaded["doc_id"]

    @property
    def title(self) -> str:
        return self.loaded["title"]

    @property
    def text(self) -> str:
        return self.loaded["text"]

    def document(self, structure: str = "headings") -> SourceDocument:
        """What a method ingests: the loaded JSON (``headings``) or the same text saved as a
        ``.txt`` and loaded as such (``none``: no spans, no headings)."""
        if structure == "headings":
            return self.loaded
        if structure != "none":
            raise ValueError(f"unknown structure {structure!r} ({' | '.join(STRUCTURES)})")
        return plain_text_document(self.loaded)


def plain_text_document(loaded: SourceDocument) -> SourceDocument:
    """``loaded``'s text written to "<title>.txt" and read back by chop's loader; the id stays
    so gold labels still apply. Raises if the text loader changed the text."""
    with tempfile.TemporaryDirectory(prefix="chop-bench-") as folder:
        name = re.sub(r"[^\w+.-]+", " ", loaded["title"]).strip() or "manual"
        path = Path(folder) / f"{name}.txt"
        path.write_text(loaded["text"], encoding="utf-8")
        (plain,) = load_file(path)
    if plain["text"] != loaded["text"]:
        raise ValueError(f"{loaded['title']}: the .txt loader changed the text")
    return make_document(
        loaded["doc_id"],
        plain["title"],
        plain["text"],
        source=loaded["source"],
        metadata={**plain["metadata"], "path": loaded["source"], "format": "text"},
        spans=plain["spans"],
    )


@dataclass(frozen=True)
class Question:
    qid: str
    device: str
    question: str
    section_path: str
    answer: str
    group: str = ""  # the question file or folder it comes from

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
    """The data folder or one of its files is not there; the message says how to name it."""

    def __str__(self) -> str:
        return f"{super().__str__()} (set --data or CHOP_EMANUAL_DATA)"


# --------------------------------------------------------------------------- names
def device_name(path: Path) -> str:
    """The device a corpus file is about: the two main files by name, others from the stem."""
    rel = path.name
    if rel in DEVICE_OF_FILE:
        return DEVICE_OF_FILE[rel]
    return " ".join(path.stem.replace("_", " ").split())


def normalise_title(title: str) -> str:
    return " ".join(title.translate(_QUOTES).casefold().split())


# --------------------------------------------------------------------------- manuals
def check_data(root: Path) -> None:
    if not root.is_dir():
        raise DataMissing(f"E-Manual data folder not found: {root}")
    missing = [name for name in REQUIRED_FILES if not (root / name).is_file()]
    if missing:
        raise DataMissing(f"E-Manual data folder {root} lacks: {', '.join(missing)}")


def section_titles(path: Path) -> dict[str, str]:
    """The file's own title of every section key (the gold labels' names)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, json.JSONDecodeError) as err:
        raise LoadError(f"unreadable: {err}") from None
    if not isinstance(data, dict):
        raise LoadError("not an E-Manual corpus")
    return {
        str(key): " ".join(str(value.get("title") or "").split())
        for key, value in data.items()
        if isinstance(value, dict)
    }


def build_manual(path: Path, max_sections: int | None = None) -> Manual:
    """One manual through chop's loader; raises LoadError for an empty or odd file.

    ``max_sections`` keeps the document up to the end of the first that many non-empty
    sections (the ``tiny`` subset)."""
    (loaded,) = load_file(path)
    titles = section_titles(path)
    spans = [s for s in loaded["spans"] if "section" in s["meta"]]
    if not spans:
        raise LoadError("the loader gave no section spans")
    if max_sections is not None:
        spans = spans[:max_sections]
        end = spans[-1]["end"]
        loaded = make_document(
            loaded["doc_id"],
            loaded["title"],
            loaded["text"][:end],
            source=loaded["source"],
            metadata=loaded["metadata"],
            spans=[s for s in loaded["spans"] if s["end"] <= end],
        )
    sections = [
        Section(titles.get(str(s["meta"]["section"]), ""), s["start"], s["end"]) for s in spans
    ]
    return Manual(device_name(path), loaded, sections)


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
                group=f"{path.stem}",
            )
            for row in csv.DictReader(handle)
        ]


_FIELD = re.compile(r'^\s*"(Section Hierarchy|Link|Question|Answer)"\s*:\s*"(.*)"\s*,?\s*$')
_FIELD_NAMES = {"Section Hierarchy": "section_path", "Link": "link"}


def parse_remote_qa(text: str) -> list[dict[str, str]]:
    """The records of one smart_remote_QA file, read line by line: the files are not valid
    JSON (unescaped quotes inside answers, trailing or missing commas), but every field sits
    on its own line as ``"Key": "value"``. A record ends at ``}`` or when a key repeats."""
    records: list[dict[str, str]] = []
    current: dict[str, str] = {}
    for line in text.splitlines():
        found = _FIELD.match(line)
        if found:
            key = _FIELD_NAMES.get(found.group(1), found.group(1).lower())
            if key in current:
                records.append(current)
                current = {}
            current[key] = found.group(2).replace('\\"', '"').strip()
        elif line.strip().startswith("}") and current:
            records.append(current)
            current = {}
    if current:
        records.append(current)
    return [r for r in records if r.get("question") and "section_path" in r]


def remote_group(folder: Path) -> str:
    """ "Normal Q&A" → "Normal", "Yes_No Q&A" → "Yes/No"."""
    return folder.name.replace(" Q&A", "").replace("_", "/").strip()


def load_remote_questions(root: Path) -> list[Question]:
    """The ~680 TV questions of smart_remote_QA/, one group per folder, in file order."""
    questions: list[Question] = []
    for folder in sorted(p for p in (root / REMOTE_QA).iterdir() if p.is_dir()):
        group = remote_group(folder)
        for path in sorted(folder.glob("*.json")):
            records = parse_remote_qa(path.read_text(encoding="utf-8-sig"))
            questions += [
                Question(
                    qid=f"{group}/{path.stem}/{n}",
                    device=TV_DEVICE,
                    question=r["question"],
                    section_path=r["section_path"],
                    answer=r.get("answer", ""),
                    group=group,
                )
                for n, r in enumerate(records, start=1)
            ]
    return questions


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
        remote = load_remote_questions(root) if (root / REMOTE_QA).is_dir() else []
        notes = [] if remote else [f"{REMOTE_QA}/ not found: only the 50 CSV questions"]
        return Corpus(manuals, tv_questions + remote, skipped, notes)
    if subset == "full":
        manuals, skipped = load_manuals(all_manual_paths(root))
        return Corpus(manuals, s10_questions + tv_questions, skipped)
    if subset == "tiny":
        manuals, skipped = load_manuals([root / S10_CORPUS, root / S9_CORPUS], TINY_SECTIONS)
        questions, note = tiny_questions(manuals[0], s10_questions)
        return Corpus(manuals, questions, skipped, [note])
    raise ValueError(f"unknown subset {subset!r} ({' | '.join(SUBSETS)})")
