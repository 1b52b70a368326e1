"""The sample corpus must stay a fair test of CHOP: near-identical manuals, model only in titles."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from chop_rag.harness.sample_corpus import (
    SAMPLE_MODELS,
    SAMPLE_QUESTIONS,
    manual_filename,
    render_manual,
    write_sample_corpus,
)

SECTIONS = [
    "Safety instructions",
    "Unpacking and installation",
    "Control panel",
    "Operating modes",
    "Cleaning the air filter",
    "Draining the water tank",
    "Wi-Fi pairing",
    "Troubleshooting and error codes",
    "Specifications",
]


@pytest.fixture
def manuals(tmp_path: Path) -> dict[str, str]:
    """Model name -> manual text, as written to disk (so the writer itself is exercised)."""
    paths = write_sample_corpus(tmp_path / "corpus")
    return {
        model: path.read_text(encoding="ascii")
        for model, path in zip(SAMPLE_MODELS, paths, strict=True)
    }


def _sections(text: str) -> dict[str, str]:
    """Split a manual at its ## headings, to check structure and per-section length."""
    parts = re.split(r"^## (.+)$", text, flags=re.MULTILINE)
    return {parts[i].strip(): parts[i + 1] for i in range(1, len(parts), 2)}


def test_three_models_of_one_line() -> None:
    assert len(SAMPLE_MODELS) == 3
    assert len(set(SAMPLE_MODELS)) == 3
    assert len({model.split()[0] for model in SAMPLE_MODELS}) == 1


def test_files_written_named_after_models(tmp_path: Path) -> None:
    paths = write_sample_corpus(tmp_path / "new" / "folder")
    assert [p.name for p in paths] == ["coolwave-225b.md", "coolwave-330c.md", "coolwave-410x.md"]
    assert [p.name for p in paths] == [manual_filename(m) for m in SAMPLE_MODELS]
    for path in paths:
        assert path.is_file()
        assert path.parent == tmp_path / "new" / "folder"
        path.read_bytes().decode("ascii")  # plain ASCII, or this raises


def test_idempotent_and_deterministic(tmp_path: Path) -> None:
    first = write_sample_corpus(tmp_path)
    contents = [p.read_bytes() for p in first]
    first[0].write_text("stale", encoding="ascii")
    second = write_sample_corpus(str(tmp_path))
    assert second == first
    assert [p.read_bytes() for p in second] == contents
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in first)


def test_unknown_model_is_refused() -> None:
    with pytest.raises(KeyError):
        render_manual("Coolwave 999Z")


def test_title_names_model_and_body_rarely_does(manuals: dict[str, str]) -> None:
    for model, text in manuals.items():
        title, _, body = text.partition("\n")
        assert title == f"# {model} User Manual"
        assert 1 <= body.count(model) <= 2
        for other in SAMPLE_MODELS:
            if other != model:
                assert other not in text


def test_same_sections_in_same_order(manuals: dict[str, str]) -> None:
    for text in manuals.values():
        sections = _sections(text)
        assert list(sections) == SECTIONS
        for name, section in sections.items():
            assert 80 <= len(section.split()) <= 180, name
        assert 900 <= len(text.split()) <= 1300


def test_manuals_are_near_duplicates(manuals: dict[str, str]) -> None:
    texts = list(manuals.values())
    for a, b in [(texts[0], texts[1]), (texts[1], texts[2]), (texts[0], texts[2])]:
        lines_a = [line for line in a.splitlines() if line.strip()]
        lines_b = {line for line in b.splitlines() if line.strip()}
        shared = sum(line in lines_b for line in lines_a)
        assert shared / len(lines_a) > 0.7


def test_questions_shape() -> None:
    in_corpus = [q for q in SAMPLE_QUESTIONS if q["in_corpus"]]
    outside = [q for q in SAMPLE_QUESTIONS if not q["in_corpus"]]
    assert len(in_corpus) >= 6
    assert {q["model"] for q in in_corpus} == set(SAMPLE_MODELS)
    assert len(outside) == 1
    assert outside[0]["model"] not in SAMPLE_MODELS
    assert outside[0]["expected_phrase"] == ""
    for q in SAMPLE_QUESTIONS:
        assert set(q) == {"question", "model", "expected_phrase", "in_corpus"}
        assert q["model"] in q["question"]
        assert q["question"].isascii()


@pytest.mark.parametrize(
    "question", [q for q in SAMPLE_QUESTIONS if q["in_corpus"]], ids=lambda q: q["question"]
)
def test_expected_phrase_only_in_its_model(question: dict, manuals: dict[str, str]) -> None:
    phrase = question["expected_phrase"].lower()
    assert phrase
    for model, text in manuals.items():
        assert (phrase in text.lower()) == (model == question["model"]), model
