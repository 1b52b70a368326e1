"""What the page may write, and what `chop serve` serves: no browser, no server, no database.

Uploads land in their collection's folder under their own base name or are refused with one
sentence; the same bytes are never stored twice; `chop serve` runs what langgraph.json says;
the page loads nothing from outside the package; a key-less server answers only its own page
on this machine's names, and stops reading an upload past the size limit.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

import pytest

from chop_rag.web.app import app
from chop_rag.web.origin import OwnPageOnly
from chop_rag.web.serve import SERVER_CONFIG, write_config
from chop_rag.web.uploads import UploadRefused, checked_name, store_upload, upload_folder

ROOT = Path(__file__).resolve().parents[1]
STATIC = ROOT / "chop_rag" / "web" / "static"
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
        "report\u202efdp.md",  # a right-to-left override: shows as "reportdm.pdf"
        "\u2067manual.md",
        "manual\u200e.md",
        "zero\u200bwidth.md",
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
    assert repository["http"]["app"] == "chop_rag.deploy.webapp:app"


def test_the_page_loads_nothing_from_outside_the_package() -> None:
    files = {path.name: path.read_text(encoding="utf-8") for path in STATIC.iterdir()}
    assert set(files) == {"index.html", "app.css", "app.js"}
    for name, text in files.items():
        assert not re.search(r"(src|href)=\"(https?:)?//", text), name
        assert "@import" not in text and "cdn" not in text.lower(), name
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert '"chop_rag.web" = ["static/*.html", "static/*.css", "static/*.js"]' in pyproject


def test_chop_serve_on_a_busy_port_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    from chop_rag.cli import main

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert main(["serve", "--no-browser", "--port", str(port)]) == 2
    assert f"error: port {port} on 127.0.0.1 is in use: pick another with --port" in (
        capsys.readouterr().err.replace("\n", " ")
    )


def test_a_name_with_a_direction_changing_character_is_refused_in_one_sentence(
    tmp_path: Path,
) -> None:
    with pytest.raises(UploadRefused) as refused:
        store_upload(tmp_path, "invoice\u202efdp.exe.md", MANUAL, max_file_mb=50)
    assert str(refused.value) == (
        "the file name 'invoice\\u202efdp.exe.md' holds an invisible or direction-changing "
        "character (U+202E), so it would show as another name"
    )


@pytest.fixture
def keyless(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CHOP_API_KEYS", raising=False)
    monkeypatch.delenv("CHOP_SERVER_HOSTS", raising=False)


@pytest.mark.usefixtures("keyless")
def test_a_keyless_server_answers_only_its_own_page_on_this_machines_names(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from starlette.testclient import TestClient

    with TestClient(app, base_url="http://localhost:2024") as client:
        assert client.get("/chop/").status_code == 200
        own = client.get("/chop/", headers={"Origin": "http://localhost:2024"})
        assert own.status_code == 200
        for headers, said in (
            ({"Host": "attacker.example:2024"}, "not to 'attacker.example:2024'"),
            ({"Host": "localhost.attacker.example"}, "addressed to localhost"),
            ({"Host": "127.0.0.1.nip.io:2024"}, "addressed to localhost"),
            ({"Host": "attacker.example@localhost:2024"}, "addressed to localhost"),
            ({"Host": "xn--lcalhost-ufb:2024"}, "addressed to localhost"),
            ({"Origin": "http://attacker.example"}, "not a page from 'http://attacker.example'"),
            ({"Origin": "null"}, "not a page from 'null'"),
            ({"Origin": "http://localhost:3000"}, "only its own page"),  # another port
            ({"Sec-Fetch-Site": "cross-site"}, "not a request from another site"),
        ):
            refused = client.get("/chop/", headers=headers)
            assert refused.status_code == 403, headers
            assert said in refused.json()["detail"], headers
            assert "access-control-allow-origin" not in refused.headers
        for host in ("127.0.0.1:2024", "[::1]:2024", "LOCALHOST:2024"):
            assert client.get("/chop/", headers={"Host": host}).status_code == 200, host
        monkeypatch.setenv("CHOP_SERVER_HOSTS", "chop-box.lan")
        assert client.get("/chop/", headers={"Host": "chop-box.lan:2024"}).status_code == 200
        monkeypatch.setenv("CHOP_API_KEYS", "k1")  # with keys: the keys and CORS decide
        assert client.get("/chop/", headers={"Host": "chop.example.com"}).status_code == 200


@pytest.mark.usefixtures("keyless")
def test_a_keyless_server_grants_no_private_network_access() -> None:
    from starlette.responses import Response
    from starlette.testclient import TestClient

    async def studio_friendly(scope: object, receive: object, send: object) -> None:
        response = Response("ok", headers={"Access-Control-Allow-Private-Network": "true"})
        await response(scope, receive, send)  # type: ignore[arg-type]

    client = TestClient(OwnPageOnly(studio_friendly), base_url="http://localhost")
    answered = client.options("/threads", headers={"Origin": "http://localhost"})
    assert answered.status_code == 200
    assert "access-control-allow-private-network" not in answered.headers


@pytest.mark.usefixtures("keyless")
def test_an_upload_without_a_length_stops_at_the_size_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A chunked body declares no length: it is counted as it arrives and refused once past
    the limit, without the rest being read."""
    monkeypatch.setenv("CHOP_MAX_FILE_MB", "1")
    received: list[int] = []
    answer: list[MutableMapping[str, Any]] = []

    async def receive() -> dict[str, Any]:
        received.append(1)  # 10 MB on offer, in 256 KB blocks
        return {
            "type": "http.request",
            "body": b"x" * (256 * 1024),
            "more_body": len(received) < 40,
        }

    async def send(message: MutableMapping[str, Any]) -> None:
        answer.append(message)

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/chop/api/collections/manuals/uploads",
        "raw_path": b"/chop/api/collections/manuals/uploads",
        "query_string": b"name=big.md",
        "headers": [(b"host", b"localhost:2024"), (b"transfer-encoding", b"chunked")],
        "scheme": "http",
        "server": ("127.0.0.1", 2024),
        "client": ("127.0.0.1", 5000),
        "root_path": "",
        "http_version": "1.1",
    }
    asyncio.run(app(scope, receive, send))
    assert answer[0]["status"] == 413
    assert json.loads(answer[1]["body"]) == {"error": "the file is larger than the limit of 1 MB"}
    assert len(received) <= 6, f"{len(received)} blocks of 256 KB were read"
