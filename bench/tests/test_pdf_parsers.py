"""The PDF parser comparison (bench/studies/pdf_parsers.py) on a two-page filing made here."""

from __future__ import annotations

import json
from pathlib import Path

from bench.studies.pdf_parsers import found, found_in_order, main, recall, words


def two_page_pdf() -> bytes:
    """A valid PDF: a bold heading and a sentence on page 1, a sentence on page 2."""
    pages = [
        ["BT /F2 10 Tf 72 720 Td (Results of Operations) Tj ET",
         "BT /F1 10 Tf 72 700 Td (Revenue was $1,234 million in fiscal 2023.) Tj ET"],
        ["BT /F1 10 Tf 72 720 Td (Net income rose by 5% to $321 million.) Tj ET"],
    ]  # fmt: skip
    objects = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        2: b"<< /Type /Pages /Kids [6 0 R 8 0 R] /Count 2 >>",
        3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        4: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold >>",
        5: b"<< /Font << /F1 3 0 R /F2 4 0 R >> >>",
    }
    for n, ops in enumerate(pages):
        page_id = 6 + 2 * n
        stream = "\n".join(ops).encode()
        objects[page_id] = (
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources 5 0 R "
            f"/Contents {page_id + 1} 0 R >>"
        ).encode()
        objects[page_id + 1] = b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream"
    out = bytearray(b"%PDF-1.4\n")
    offsets = {}
    for number in sorted(objects):
        offsets[number] = len(out)
        out += b"%d 0 obj\n" % number + objects[number] + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offsets[n] for n in sorted(objects))
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def test_word_matching() -> None:
    assert words("Revenue: $1,234 million") == ["revenue", "1", "234", "million"]
    assert found_in_order(["net", "income"], ["the", "net", "income", "rose"])
    assert not found_in_order(["income", "net"], ["the", "net", "income", "rose"])
    assert recall(["a", "a", "b"], ["a", "b"]) == 2 / 3
    titles = {(1, "changesinourcreditratingsmayli")}
    assert found(titles, {(1, "changesinourcreditratingsmaylimit")}, loose=False) == 0
    assert found(titles, {(1, "changesinourcreditratingsmaylimit")}, loose=True) == 1
    assert found(titles, {(2, "changesinourcreditratingsmaylimit")}, loose=True) == 0


def test_both_parsers_are_timed_and_compared_on_pages_evidence_and_headings(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    (data / "pdfs").mkdir(parents=True)
    (data / "pdfs" / "ACME_2023_10K.pdf").write_bytes(two_page_pdf())
    evidence = {
        "doc_name": "ACME_2023_10K",
        "evidence_page_num": 1,  # zero-based: page 2
        "evidence_text": "Net income rose by 5% to $321 million.",
        "evidence_text_full_page": "Net income rose by 5% to $321 million.",
    }
    question = {"financebench_id": "q1", "doc_name": "ACME_2023_10K", "evidence": [evidence]}
    (data / "questions.jsonl").write_text(json.dumps(question) + "\n")
    out = tmp_path / "out"
    assert main(["--data", str(data), "--out", str(out)]) == 0
    results = json.loads((out / "results.json").read_text())
    totals = results["totals"]
    assert totals["page_counts_equal"] == 1 and totals["pdfium_fell_back"] == []
    for parser in ("pdfium", "pypdf"):
        assert totals[parser]["pages"] == 2 and totals[parser]["cpu_s"] >= 0
        assert results["evidence"][parser]["found_word_for_word"] == 1.0
    [row] = results["files"]
    assert row["headings"] == {"pypdf": 1, "pdfium": 1}
    assert row["headings_matched"]["pypdf_in_pdfium"] == 1
    assert "| pdfium | 1 | 2 |" in (out / "results.md").read_text()
