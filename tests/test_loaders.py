"""Loaders: every supported format becomes a SourceDocument; every bad input one Problem."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from pypdf import PdfReader

from chop_rag.reading.documents import SourceDocument
from chop_rag.reading.loaders import (
    SUPPORTED_SUFFIXES,
    LoadError,
    clean_title,
    load_emanual,
    load_file,
    load_paths,
    normalize_text,
)
from tests.pdfs import encrypt_pdf, make_pdf

# --------------------------------------------------------------------------- helpers


def span_texts(doc: SourceDocument, key: str) -> dict[object, str]:
    return {s["meta"][key]: doc["text"][s["start"] : s["end"]] for s in doc["spans"]}


def write_emanual(path: Path, sections: dict[str, Any]) -> Path:
    path.write_text(json.dumps(sections), encoding="utf-8")
    return path


def only_problem(problems: list, path: Path) -> str:
    matching = [p for p in problems if p["source"] == str(path)]
    assert len(matching) == 1, problems
    reason = matching[0]["reason"]
    assert "\n" not in reason
    return reason


# --------------------------------------------------------------------------- pdf helper sanity


def test_handmade_pdf_is_readable_by_pypdf() -> None:
    reader = PdfReader(io.BytesIO(make_pdf(["Hello (world)", "Second"], title="T")))
    assert [p.extract_text() for p in reader.pages] == ["Hello (world)", "Second"]


# --------------------------------------------------------------------------- plain text


def test_plain_text_is_normalised_and_titled_by_stem(tmp_path: Path) -> None:
    path = tmp_path / "washing_machine-WM 200.txt"
    path.write_bytes(b"\r\nline one   \r\nline two\t\r\n\r\n\r\n\r\n\r\n\r\nend\r\n")
    [doc] = load_file(path)
    assert doc["text"] == "line one\nline two\n\n\nend"
    assert doc["title"] == "washing machine WM 200"
    assert doc["doc_id"] == doc["source"] == str(path.resolve())
    assert doc["metadata"] == {"path": str(path.resolve()), "format": "text"}
    assert doc["spans"] == []


def test_utf8_bom_is_dropped_and_cp1252_text_is_decoded(tmp_path: Path) -> None:
    bom = tmp_path / "bom.txt"
    bom.write_bytes(b"\xef\xbb\xbfcaf\xc3\xa9")
    legacy = tmp_path / "legacy.text"
    legacy.write_bytes(b"caf\xe9 au lait \x96 \x93quoted\x94")
    assert load_file(bom)[0]["text"] == "café"
    assert load_file(legacy)[0]["text"] == "café au lait – “quoted”"


def test_normalize_text_keeps_content_and_collapses_blank_runs() -> None:
    assert normalize_text("a  \r\nb\rc\n\n\n\n\n\nd\n") == "a\nb\nc\n\n\nd"
    assert normalize_text("a\n\n\nb") == "a\n\n\nb"


def test_clean_title_turns_separators_into_spaces() -> None:
    assert clean_title("  Galaxy__S10-user_manual ") == "Galaxy S10 user manual"


# --------------------------------------------------------------------------- markdown


def test_markdown_headings_become_spans(tmp_path: Path) -> None:
    path = tmp_path / "guide.md"
    path.write_text(
        "Intro text.\n\n"
        "# Dishwasher **DW-5**\n\nOverview.\n\n"
        "## Cleaning\n\nRinse.\n\n"
        "### Filter\n\nTwist it out.\n\n"
        "```\n# not a heading\n```\n\n"
        "## Safety\n\nUnplug first.\n",
        encoding="utf-8",
    )
    [doc] = load_file(path)
    assert doc["title"] == "Dishwasher DW-5"
    assert doc["metadata"]["format"] == "markdown"
    assert doc["text"].startswith("Intro text.\n\n# Dishwasher **DW-5**")
    sections = span_texts(doc, "heading")
    assert list(sections) == [
        "Dishwasher DW-5",
        "Dishwasher DW-5 > Cleaning",
        "Dishwasher DW-5 > Cleaning > Filter",
        "Dishwasher DW-5 > Safety",
    ]
    assert sections["Dishwasher DW-5 > Cleaning > Filter"] == (
        "### Filter\n\nTwist it out.\n\n```\n# not a heading\n```"
    )
    assert sections["Dishwasher DW-5 > Safety"] == "## Safety\n\nUnplug first."


def test_markdown_without_h1_is_titled_by_file_stem(tmp_path: Path) -> None:
    path = tmp_path / "oven_manual.markdown"
    path.write_text("## Setup\n\nPlug in.\n", encoding="utf-8")
    [doc] = load_file(path)
    assert doc["title"] == "oven manual"
    assert span_texts(doc, "heading") == {"Setup": "## Setup\n\nPlug in."}


def test_markdown_front_matter_is_not_read_as_headings(tmp_path: Path) -> None:
    path = tmp_path / "fm.md"
    path.write_text("---\ntitle: Fridge F1\n---\nBody text.\n", encoding="utf-8")
    [doc] = load_file(path)
    assert doc["title"] == "Fridge F1"
    assert doc["spans"] == []
    assert "Body text." in doc["text"]


# --------------------------------------------------------------------------- html


def test_html_drops_scripts_and_keeps_headings(tmp_path: Path) -> None:
    path = tmp_path / "page.html"
    path.write_text(
        """<!DOCTYPE html><html><head><title>Kettle K2 manual</title>
        <style>body { color: red }</style><script>var secret = 1;</script></head>
        <body><nav><a href="/">Home</a> <a href="/x">Other</a></nav>
        <p>Read <b>all</b> of this.</p>
        <h1>Kettle K2</h1><p>First   paragraph.</p>
        <h2>Descaling</h2><ul><li>Vinegar</li><li>Water</li></ul>
        <!-- a comment -->
        <table><tr><th>Mode</th><th>Temp</th></tr><tr><td>Tea</td><td>80</td></tr></table>
        <script>alert("x")</script><pre>keep   this
  indented</pre>
        </body></html>""",
        encoding="utf-8",
    )
    [doc] = load_file(path)
    text = doc["text"]
    assert doc["title"] == "Kettle K2 manual"
    assert doc["metadata"]["format"] == "html"
    for dropped in ("secret", "alert", "color", "Home", "Other", "a comment"):
        assert dropped not in text
    assert "Read all of this." in text
    assert "Kettle K2\n\nFirst paragraph." in text
    assert "- Vinegar\n- Water" in text
    assert "Mode | Temp\nTea | 80" in text
    assert "keep   this\n  indented" in text
    sections = span_texts(doc, "heading")
    assert list(sections) == ["Kettle K2", "Kettle K2 > Descaling"]
    assert sections["Kettle K2"] == "Kettle K2\n\nFirst paragraph."
    assert sections["Kettle K2 > Descaling"].startswith("Descaling\n\n- Vinegar")


def test_html_title_falls_back_to_first_h1_then_file_stem(tmp_path: Path) -> None:
    with_h1 = tmp_path / "a.htm"
    with_h1.write_text("<body><h2>Part</h2><h1>Toaster T9</h1><p>x</p></body>")
    bare = tmp_path / "toaster_t9.html"
    bare.write_text("<p>Just text.</p>")
    assert load_file(with_h1)[0]["title"] == "Toaster T9"
    assert load_file(bare)[0]["title"] == "toaster t9"


# --------------------------------------------------------------------------- pdf


def test_pdf_pages_are_kept_as_metadata(tmp_path: Path) -> None:
    path = tmp_path / "manual.pdf"
    path.write_bytes(make_pdf(["Page one\nsecond line", "", "Page three"], title="Blender B3"))
    [doc] = load_file(path)
    assert doc["title"] == "Blender B3"
    assert doc["text"] == "Page one\nsecond line\n\nPage three"
    assert doc["metadata"] == {"path": str(path.resolve()), "format": "pdf", "pages": 3}
    assert span_texts(doc, "page") == {1: "Page one\nsecond line", 3: "Page three"}


@pytest.mark.parametrize(
    "junk",
    ["untitled", "Microsoft Word - draft.docx", "  ", "scan.pdf",
     "0000764478-23-000006", "UNITED STATES SECURITIES AND EXCHANGE COMMISSION"],
)  # fmt: skip
def test_pdf_junk_title_falls_back_to_file_stem(tmp_path: Path, junk: str) -> None:
    path = tmp_path / "mixer_M4.pdf"
    path.write_bytes(make_pdf(["text"], title=junk))
    assert load_file(path)[0]["title"] == "mixer M4"


def test_pdf_with_empty_user_password_still_loads(tmp_path: Path) -> None:
    path = tmp_path / "owner_only.pdf"
    path.write_bytes(encrypt_pdf(make_pdf(["open text"]), user_password=""))
    assert load_file(path)[0]["text"] == "open text"


# --------------------------------------------------------------------------- e-manual json


def test_emanual_json(tmp_path: Path) -> None:
    path = write_emanual(
        tmp_path / "Galaxy_S10.json",
        {
            "section_0": {"title": "Getting started", "text": ["Charge the", "battery."]},
            "section_1": {"title": "Camera", "text": ["Tap the", " shutter. "], "extra": 1},
            "section_2": {"title": "Empty", "text": []},
            "section_10": {"title": "Settings", "text": ["Open Settings."]},
        },
    )
    [doc] = load_file(path)
    assert doc["title"] == "Galaxy S10"
    assert doc["metadata"]["format"] == "emanual"
    assert doc["text"] == "Charge the battery.\n\nTap the shutter.\n\nOpen Settings."
    assert [s["meta"] for s in doc["spans"]] == [
        {"heading": "Getting started", "section": "section_0"},
        {"heading": "Camera", "section": "section_1"},
        {"heading": "Settings", "section": "section_10"},
    ]
    assert span_texts(doc, "section")["section_1"] == "Tap the shutter."


def test_emanual_title_comes_from_file_name_or_caller(tmp_path: Path) -> None:
    sections = {"section_0": {"title": "A", "text": ["x"]}}
    path = write_emanual(tmp_path / "s10_manual_corpus.json", sections)
    assert load_emanual(path)["title"] == "S10"
    assert load_emanual(path, title="Samsung Galaxy S10")["title"] == "Samsung Galaxy S10"


def test_empty_emanual_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "empty.json"
    path.write_text("{}")
    docs, problems = load_paths([path])
    assert docs == []
    assert only_problem(problems, path) == "empty: no sections"


def test_json_of_another_shape_is_not_a_format_chop_reads_whatever_its_name(
    tmp_path: Path,
) -> None:
    corpus = write_emanual(tmp_path / "Galaxy_S10_corpus.json", {"section_0": {"text": ["x"]}})
    other = tmp_path / "Galaxy_S10_corpus_stats.json"
    other.write_text('{"sections": 12, "section_names": ["Basics"]}')
    docs, problems = load_paths([tmp_path])
    assert [doc["title"] for doc in docs] == ["Galaxy S10"]
    assert only_problem(problems, other).endswith(": not a format chop reads")
    assert load_file(corpus)[0]["metadata"]["format"] == "emanual"


# --------------------------------------------------------------------------- unreadable files


def first_half(data: bytes) -> bytes:
    return data[: len(data) // 2]


NOT_AN_EMANUAL = r"^JSON is not an E-Manual corpus \(expected section_N"


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        pytest.param(
            "locked.pdf",
            encrypt_pdf(make_pdf(["secret text"]), user_password="pw"),
            r"^encrypted PDF$",
            id="encrypted-pdf",
        ),
        pytest.param(
            "cut.pdf",
            first_half(make_pdf(["Some text", "More text"])),
            r"^unreadable PDF: ",
            id="truncated-pdf",
        ),
        pytest.param(
            "scan.pdf",
            make_pdf(["", ""]),
            r"^PDF has no extractable text \(scanned\?\)$",
            id="pdf-without-text",
        ),
        pytest.param(
            "fake.pdf", b"just some words", r"^unreadable PDF: no %PDF header$", id="not-a-pdf"
        ),
        pytest.param(
            "package.json", b'{"name": "chop", "version": 1}', NOT_AN_EMANUAL, id="json-object"
        ),
        pytest.param("package.json", b"[1, 2, 3]", NOT_AN_EMANUAL, id="json-list"),
        pytest.param(
            "package.json", b'{"section_0": "just a string"}', NOT_AN_EMANUAL, id="json-section"
        ),
        pytest.param("broken.json", b'{"section_0": ', r"^invalid JSON: ", id="invalid-json"),
        pytest.param(
            "README", b"text", r"^unsupported file type \(no suffix", id="unsupported-suffix"
        ),
    ],
)
def test_a_file_chop_cannot_read_is_one_load_error(
    tmp_path: Path, name: str, content: bytes, message: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(LoadError, match=message):
        load_file(path)


# --------------------------------------------------------------------------- batches


def test_each_bad_file_gets_one_line_and_the_rest_loads(tmp_path: Path) -> None:
    good = tmp_path / "good.txt"
    good.write_text("fine text")
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    blank = tmp_path / "blank.md"
    blank.write_text("  \n\t\n")
    binary = tmp_path / "image.txt"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    nul_garbage = tmp_path / "garbage.txt"
    nul_garbage.write_bytes(b"\xff\xfe\x00garbage")
    undecodable = tmp_path / "undecodable.txt"
    undecodable.write_bytes(b"caf\xe9 \x81\x8d\x9d bytes")
    missing = tmp_path / "missing.txt"
    big = tmp_path / "big.txt"
    big.write_bytes(b"a" * (2 * 1024 * 1024))
    unsupported = tmp_path / "notes.docx"
    unsupported.write_bytes(b"PK\x03\x04")
    also_good = tmp_path / "also_good.md"
    also_good.write_text("# Also\n\ngood")

    paths = [good, empty, blank, binary, nul_garbage, undecodable, missing, big, unsupported]
    docs, problems = load_paths([*paths, also_good], max_file_mb=1)

    assert [d["title"] for d in docs] == ["good", "Also"]
    assert len(problems) == len(paths) - 1
    assert only_problem(problems, empty) == "empty: no text"
    assert only_problem(problems, blank) == "empty: no text"
    assert only_problem(problems, binary) == "binary file, not text"
    assert only_problem(problems, nul_garbage) == "binary file, not text"
    assert only_problem(problems, undecodable) == "not valid UTF-8 text"
    assert only_problem(problems, missing) == "no such file or directory"
    assert only_problem(problems, big) == "2 MB is over the 1 MB limit (CHOP_MAX_FILE_MB)"
    assert only_problem(problems, unsupported).startswith("unsupported file type '.docx'")


def test_oversize_file_is_refused_before_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    big = tmp_path / "big.pdf"
    big.write_bytes(b"%PDF-1.4\n" + b"0" * (3 * 1024 * 1024))

    def no_open(*args: object, **kwargs: object) -> None:
        raise AssertionError("file was opened")

    real_os_open = os.open

    def os_open_but_not_big(path: Any, *args: Any, **kwargs: Any) -> int:
        if Path(path) == big:
            raise AssertionError("file was opened")
        return real_os_open(path, *args, **kwargs)

    monkeypatch.setattr(Path, "open", no_open)
    monkeypatch.setattr(os, "open", os_open_but_not_big)  # where the loaders open files
    with pytest.raises(LoadError, match=r"^3 MB is over the 1 MB limit"):
        load_file(big, max_file_mb=1)


def test_directory_with_many_files(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    for n in range(2000):
        folder = root / f"group{n % 10}" / ("deep" if n % 3 == 0 else "")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"doc{n:04d}.txt").write_text(f"document number {n}")
    (root / "ignored.docx").write_bytes(b"PK")
    (root / ".hidden.txt").write_text("hidden file")
    (root / ".git").mkdir()
    (root / ".git" / "config.txt").write_text("hidden dir")

    docs, problems = load_paths([root])
    assert problems == []
    assert len(docs) == 2000
    assert sorted(d["text"] for d in docs) == sorted(f"document number {n}" for n in range(2000))
    assert not any("hidden" in d["text"] for d in docs)
    again, _ = load_paths([root])
    assert [d["doc_id"] for d in again] == [d["doc_id"] for d in docs]  # stable order


def test_file_reached_twice_is_loaded_once(tmp_path: Path) -> None:
    path = tmp_path / "one.txt"
    path.write_text("once")
    docs, problems = load_paths([tmp_path, path, str(path)])
    assert [d["text"] for d in docs] == ["once"]
    assert problems == []


def test_empty_directory_is_reported(tmp_path: Path) -> None:
    (tmp_path / "only.docx").write_bytes(b"PK")
    docs, problems = load_paths([tmp_path])
    assert docs == []
    assert only_problem(problems, tmp_path) == "no supported files in directory"


def test_supported_suffixes_are_lower_case_and_matched_case_insensitively(tmp_path: Path) -> None:
    assert {".txt", ".md", ".html", ".pdf", ".json"} <= SUPPORTED_SUFFIXES
    assert all(s == s.lower() for s in SUPPORTED_SUFFIXES)
    path = tmp_path / "LOUD.TXT"
    path.write_text("shouting")
    assert load_file(path)[0]["text"] == "shouting"


def test_a_sidecar_sets_identity_fields_and_a_broken_one_is_one_problem(tmp_path: Path) -> None:
    (tmp_path / "acme.txt").write_text("Annual figures.")
    (tmp_path / "acme.txt.meta.json").write_text('{"kind": "10-K", "fiscal_year": 2023}')
    (tmp_path / "zenith.txt").write_text("Quarterly figures.")
    (tmp_path / "zenith.meta.json").write_text('{"colour": "red"}')
    documents, problems = load_paths([tmp_path])
    by_name = {Path(d["source"]).name: d for d in documents}
    assert set(by_name) == {"acme.txt", "zenith.txt"}, "sidecars are not documents"
    assert by_name["acme.txt"]["metadata"]["identity"] == {"kind": "10-K", "fiscal_year": 2023}
    assert "identity" not in by_name["zenith.txt"]["metadata"]
    assert [Path(p["source"]).name for p in problems] == ["zenith.meta.json"]
    assert "unknown identity field 'colour'" in problems[0]["reason"]


def test_pdfs_parsed_by_worker_processes_load_exactly_as_in_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in range(4):
        pages = [f"Report {n} page {p}: revenue grew in fiscal {2020 + n}." for p in range(3)]
        (tmp_path / f"report-{n}.pdf").write_bytes(make_pdf(pages, title=f"Report {n}"))
    (tmp_path / "notes.md").write_text("# Notes\n\nPlain notes beside the reports.\n")
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4\n1 0 obj << /Type /Catalog")
    alone = load_paths([tmp_path], workers=1)
    assert len(alone[0]) == 5 and len(alone[1]) == 1
    assert load_paths([tmp_path], workers=2) == alone, "same documents, order and problems"
    monkeypatch.setattr("sys.executable", "/bin/false")  # a worker that cannot start
    assert load_paths([tmp_path], workers=2) == alone, "its files are parsed here instead"


def _alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (a zombie waiting to be reaped does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(x) for x in (task / "children").read_text().split()]
    return found


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads /proc (Linux)")
def test_parse_workers_of_a_killed_ingest_exit_with_it(tmp_path: Path) -> None:
    page = tmp_path / "page.txt"
    page.write_text("Filter care. Clean the filter every two weeks.\n" * 50, encoding="utf-8")
    parent = subprocess.Popen(
        [sys.executable, "-c",
         "import sys; from pathlib import Path; "
         "from chop_rag.reading.loaders.workers import load_in_workers;"
         f"load_in_workers([Path({str(page)!r})] * 200000, 50, 2)"],
        cwd=Path(__file__).resolve().parents[1],
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while len(workers := _children(parent.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert len(workers) == 2, "two parse workers started"
    finally:
        parent.kill()
        parent.wait()
    deadline = time.monotonic() + 10
    while any(map(_alive, workers)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(map(_alive, workers)), "no parse worker outlives its ingest"
