"""What the page may write, and what `chop serve` serves: no browser, no server, no database.

Uploads land in their collection's folder under their own base name or are refused with one
sentence; the same bytes are never stored twice; `chop serve` runs what langgraph.json says;
the page loads nothing from outside the package.
"""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path

import pytest

from chop.web.serve import SERVER_CONFIG, write_config
from chop.web.uploads import UploadRefused, checked_name, store_upload, upload_folder

ROOT = Path(__file__).resolve().parents[1]
STATIC = ROOT / "chop" / "web" / "static"
MANUAL = b"# Coolwave 330C\n\nClean the filter every 4 weeks.\n"


@pytest.mark.parametrize(
    "name",
    [
        "../escape.md",
        "..\\escape.md",
        "/etc/cron.d/escape.md",
        "sub/escape.md",
        "..",
        ".",
        ".hidden.md",
        "C:escape.md",
        "line\nbreak.md",
        "nul\x00.md",
        "",
        "   ",
        "trailing.md ",
        "x" * 300 + ".md",
    ],
)
def test_a_name_that_is_not_a_plain_base_name_is_refused(name: str, tmp_path: Path) -> None:
    folder = tmp_path / "uploads" / "manuals"
    with pytest.raises(UploadRefused):
        store_upload(folder, name, MANUAL, max_file_mb=50)
    assert not any(tmp_path.rglob("*escape*"))


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("setup.exe", b"MZ\x90\x00", "'setup.exe' is not a document chop reads: unsupported"),
        ("notes", b"text", "'notes' is not a document chop reads: unsupported file type (no"),
        ("a.pdf.meta.json", b"{}", "'a.pdf.meta.json' is an identity sidecar, not a document"),
        ("report.pdf", b"<html>not a pdf", "'report.pdf' is not a PDF (it does not start"),
        ("manual.txt", b"ELF\x00\x01\x02", "'manual.txt' is not a text document"),
        ("empty.md", b"", "'empty.md' is empty"),
    ],
)
def test_what_no_loader_reads_is_refused_before_it_is_written(
    name: str, data: bytes, message: str, tmp_path: Path
) -> None:
    with pytest.raises(UploadRefused, match=re.escape(message)):
        store_upload(tmp_path, name, data, max_file_mb=50)
    assert list(tmp_path.iterdir()) == []


def test_a_file_over_the_size_limit_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UploadRefused, match="larger than the limit of 1 MB"):
        store_upload(tmp_path, "big.txt", b"a" * (1024 * 1024 + 1), max_file_mb=1)


def test_the_same_bytes_are_stored_once(tmp_path: Path) -> None:
    folder = upload_folder(tmp_path, "manuals")
    first = store_upload(folder, "coolwave.md", MANUAL, max_file_mb=50)
    assert first.path == folder / "coolwave.md" and not first.unchanged
    again = store_upload(folder, "coolwave.md", MANUAL, max_file_mb=50)
    assert again.unchanged  # the same name and bytes: the ingest finds it unchanged
    with pytest.raises(UploadRefused, match=r"'copy\.md' is already stored as coolwave\.md"):
        store_upload(folder, "copy.md", MANUAL, max_file_mb=50)
    elsewhere = tmp_path / "shared" / "manual.md"  # ingested from a server folder earlier
    elsewhere.parent.mkdir()
    elsewhere.write_bytes(b"# Another manual\n")
    with pytest.raises(UploadRefused, match=r"already stored as manual\.md"):
        store_upload(
            folder, "mine.md", b"# Another manual\n", max_file_mb=50, stored=[str(elsewhere)]
        )
    edited = store_upload(folder, "coolwave.md", MANUAL + b"Edited.\n", max_file_mb=50)
    assert not edited.unchanged and edited.path.read_bytes().endswith(b"Edited.\n")
    assert sorted(p.name for p in folder.iterdir()) == ["coolwave.md"]


def test_a_symlink_in_the_folder_cannot_carry_an_upload_outside(tmp_path: Path) -> None:
    folder = tmp_path / "uploads"
    folder.mkdir()
    outside = tmp_path / "outside.md"
    (folder / "link.md").symlink_to(outside)
    with pytest.raises(UploadRefused, match="points outside the collection's folder"):
        store_upload(folder, "link.md", MANUAL, max_file_mb=50)
    assert not outside.exists()


def test_the_folder_is_named_by_a_checked_collection(tmp_path: Path) -> None:
    assert upload_folder(tmp_path, "manuals") == tmp_path / "uploads" / "manuals"
    with pytest.raises(ValueError, match=re.escape("collection name '../x'")):
        upload_folder(tmp_path, "../x")
    assert checked_name("Coolwave 330C manual (2024).pdf") == "Coolwave 330C manual (2024).pdf"


def test_chop_serve_serves_what_langgraph_json_says(tmp_path: Path) -> None:
    repository = json.loads((ROOT / "langgraph.json").read_text())
    written = json.loads(write_config(tmp_path).read_text())
    for key in ("graphs", "checkpointer", "http", "auth"):
        assert written[key] == repository[key] == SERVER_CONFIG[key], key
    assert repository["http"]["app"] == "deploy.webapp:app"


def test_the_page_loads_nothing_from_outside_the_package() -> None:
    files = {path.name: path.read_text(encoding="utf-8") for path in STATIC.iterdir()}
    assert set(files) == {"index.html", "app.css", "app.js"}
    for name, text in files.items():
        assert not re.search(r"(src|href)=\"(https?:)?//", text), name
        assert "@import" not in text and "cdn" not in text.lower(), name
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert '"chop.web" = ["static/*.html", "static/*.css", "static/*.js"]' in pyproject


def test_chop_serve_on_a_busy_port_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    from chop.cli import main

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert main(["serve", "--no-browser", "--port", str(port)]) == 2
    assert f"error: port {port} on 127.0.0.1 is in use: pick another with --port" in (
        capsys.readouterr().err.replace("\n", " ")
    )
