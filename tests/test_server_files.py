"""Issue 45: no caller of a real server reads a file outside the allowed folders, whichever way
it names one, and a key-less ``chop serve`` answers only its own page.

A real ``langgraph dev`` with two keys (tests/langgraph_server.py) is sent every route a run
has to a file: the input's paths, a ``command`` that updates the state or sends to a node, a
``documents`` item's source, a thread's state updated and resumed, a folder that links out;
then the page's file route is asked for a PDF by a ``doc_id`` a caller chose. A real ``chop
serve`` without keys is sent a cross-origin preflight and upload, a foreign ``Host``, a chunked
upload larger than the limit and a name with a right-to-left override. Each is refused with one
sentence, and nothing outside the allowed folders is stored or handed back.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import select
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from chop_rag.reading.documents import make_document
from chop_rag.store import store_for
from tests.langgraph_server import (
    RUN_S,
    chop_serve,
    langgraph_dev,
    missing_server_packages,
    server_context,
    stub_llm,
    stub_settings,
)
from tests.pdfs import make_pdf

pytestmark = pytest.mark.server

OUTSIDE = "is outside the folders a server run may read"
SECRET = "the vault key is 1234"


def refusal(call: Callable[[], Any]) -> str:
    """The sentence a run was refused with; '' when it ran."""
    try:
        result = call()
    except Exception as err:  # the SDK raises a failed run's error
        return str(err)
    if isinstance(result, dict) and isinstance(result.get("__error__"), dict):
        return str(result["__error__"].get("message"))
    return ""


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read()


def request(
    url: str, method: str, headers: dict[str, str], body: bytes | None = None
) -> tuple[int, dict[str, str], bytes]:
    sent = urllib.request.Request(url, data=body, method=method, headers=headers)
    try:
        with urllib.request.urlopen(sent, timeout=30) as response:
            return response.status, {k.lower(): v for k, v in response.headers.items()}, b""
    except urllib.error.HTTPError as err:
        return err.code, {k.lower(): v for k, v in err.headers.items()}, err.read()


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    """An allowed folder with one manual and a link to a secret folder beside it."""
    allowed, secret = tmp_path / "allowed", tmp_path / "secret"
    allowed.mkdir()
    secret.mkdir()
    (allowed / "coolwave.md").write_text(
        "# Coolwave 330C\n\nClean the filter of the Coolwave 330C every four weeks.\n"
    )
    (secret / "passwords.md").write_text(f"# Vault\n\nThe password is hunter2 and {SECRET}.\n")
    (secret / "statement.pdf").write_bytes(make_pdf([f"Bank statement: {SECRET}."]))
    (allowed / "linked").symlink_to(secret)
    return allowed, secret


def test_no_route_of_a_keyed_server_reads_a_file_outside_the_allowed_folders(
    data_dir: Path, tmp_path: Path, folders: tuple[Path, Path]
) -> None:
    if reason := missing_server_packages():
        pytest.skip(reason)
    from langgraph_sdk import get_sync_client

    allowed, secret = folders
    collection = f"t_files_{uuid.uuid4().hex[:10]}"
    context: Any = {"collection": collection, "use_cache": False}
    ctx = server_context(data_dir, collection)
    server_dir = tmp_path / "server"
    server_dir.mkdir()
    secret_pdf = str(secret / "statement.pdf")
    with stub_llm() as stub_url:
        settings = stub_settings(stub_url, allowed, CHOP_API_KEYS="key-of-ann,key-of-bob")
        try:
            with langgraph_dev(server_dir, data_dir, settings) as url:
                ann = get_sync_client(url=url, api_key="key-of-ann", timeout=RUN_S)
                stolen = {"page_content": "x", "metadata": {"source": secret_pdf}}
                task = {
                    "document": {"doc_id": secret_pdf, "title": "t", "text": "x"},
                    "fingerprint": "f",
                }
                routes: dict[str, Any] = {
                    "input paths": {"input": {"paths": [str(secret)]}},
                    "input paths through ..": {"input": {"paths": [f"{allowed}/../secret"]}},
                    "a command's update": {
                        "input": None,
                        "command": {"update": {"paths": [str(secret)]}, "goto": "load"},
                    },
                    "a command's Send to load": {
                        "input": None,
                        "command": {"goto": {"node": "load", "input": {"paths": [str(secret)]}}},
                    },
                    "a command's Send past load": {
                        "input": None,
                        "command": {"goto": {"node": "index_document", "input": task}},
                    },
                    "a document's source": {"input": {"documents": [stolen]}},
                }
                for route, run in routes.items():
                    said = refusal(
                        lambda run=run: ann.runs.wait(None, "ingest", context=context, **run)
                    )
                    assert OUTSIDE in said, route

                # A folder that links out is walked without the link.
                thread = ann.threads.create()["thread_id"]
                result: Any = ann.runs.wait(
                    thread, "ingest", input={"paths": [str(allowed)]}, context=context
                )
                assert result["report"]["added"] == 1, result
                problem = {p["source"]: p["reason"] for p in result["problems"]}
                assert "a link out of the folders" in problem[str(allowed / "linked")]

                # A thread's state, updated and resumed, names the secret folder.
                paused = ann.threads.create()["thread_id"]
                ann.runs.wait(
                    paused,
                    "ingest",
                    input={"paths": [str(allowed)]},
                    context=context,
                    interrupt_before=["load"],
                )
                ann.threads.update_state(paused, {"paths": [str(secret)]})
                said = refusal(lambda: ann.runs.wait(paused, "ingest", input=None, context=context))
                assert OUTSIDE in said, "a resumed thread's state"

                stored = store_for(ctx).documents(collection)
                assert list(stored) == [str(allowed / "coolwave.md")]

                # CORS is explicit: a page of another origin is granted nothing, keys or not.
                preflight = {
                    "Origin": "http://attacker.example",
                    "Access-Control-Request-Method": "POST",
                    "Access-Control-Request-Headers": "x-api-key",
                }
                _, headers, _ = request(f"{url}/runs/wait", "OPTIONS", preflight)
                assert "access-control-allow-origin" not in headers, headers

                # The page's file route: another key asks for the secret PDF by its path.
                route = f"{url}/chop/api/collections/{collection}/file?doc_id={quote(secret_pdf)}"
                status, _, body = get(route, {"x-api-key": "key-of-bob"})
                assert status == 404 and SECRET.encode() not in body
                assert json.loads(body)["error"].startswith("no document")
        finally:
            with contextlib.suppress(Exception):
                store_for(ctx).drop_collection(collection)


def test_the_file_route_hands_back_only_files_under_the_allowed_folders(
    data_dir: Path, tmp_path: Path, folders: tuple[Path, Path], scripted: Any
) -> None:
    """A document stored under a path outside the folders (by the deployment's own Python, or
    before this rule) is not handed back by the page, nor is its section."""
    if reason := missing_server_packages():
        pytest.skip(reason)
    from chop_rag.api import ingest

    allowed, secret = folders
    collection = f"t_files_{uuid.uuid4().hex[:10]}"
    ctx = server_context(data_dir, collection)
    secret_pdf = str(secret / "statement.pdf")
    own_pdf = allowed / "manual.pdf"
    own_pdf.write_bytes(make_pdf(["Coolwave 330C: clean the filter every four weeks."]))
    ingest(paths=[str(own_pdf)], context=ctx)
    through_link = str(allowed / "linked" / "statement.pdf")
    placed = [make_document(secret_pdf, "t", "x"), make_document(through_link, "t", "y")]
    ingest(documents=placed, context=ctx)
    server_dir = tmp_path / "server"
    server_dir.mkdir()
    settings = {
        "CHOP_SERVER_PATHS": str(allowed),
        "CHOP_CHAT_PROVIDER": "openai",  # the page's routes call no model
        "CHOP_OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
    }
    try:
        with chop_serve(server_dir, data_dir, settings) as url:
            base = f"{url}/chop/api/collections/{collection}"
            status, _, body = get(f"{base}/file?doc_id={quote(str(own_pdf))}")
            assert status == 200 and body.startswith(b"%PDF-")
            for doc_id in (secret_pdf, through_link):
                status, _, body = get(f"{base}/file?doc_id={quote(doc_id)}")
                assert status == 404 and SECRET.encode() not in body, doc_id
                assert "not a file this server hands back" in json.loads(body)["error"]
                status, _, body = get(f"{base}/section?doc_id={quote(doc_id)}&chunk_index=0")
                assert status == 404, doc_id
    finally:
        with contextlib.suppress(Exception):
            store_for(ctx).drop_collection(collection)


def chunked_upload(url: str, path: str, total_mb: int) -> tuple[int, int, bytes]:
    """POST ``total_mb`` in chunks without a Content-Length, stopping as soon as the server
    answers; (status, megabytes sent, body)."""
    parts = url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(parts[0], int(parts[1]), timeout=60)
    connection.putrequest("POST", path)
    connection.putheader("Transfer-Encoding", "chunked")
    connection.endheaders()
    block = b"x" * (1024 * 1024)
    sent = 0
    assert connection.sock is not None
    with contextlib.suppress(OSError):  # the server may close once it has answered
        while sent < total_mb:
            if select.select([connection.sock], [], [], 0)[0]:
                break  # the server answered before the end
            connection.send(b"%x\r\n%s\r\n" % (len(block), block))
            sent += 1
        else:
            connection.send(b"0\r\n\r\n")
    response = connection.getresponse()
    body = response.read()
    connection.close()
    return response.status, sent, body


def test_a_keyless_chop_serve_answers_only_its_own_page(data_dir: Path, tmp_path: Path) -> None:
    if reason := missing_server_packages():
        pytest.skip(reason)
    collection = f"t_page_{uuid.uuid4().hex[:10]}"
    server_dir = tmp_path / "server"
    server_dir.mkdir()
    settings = {
        "CHOP_API_KEYS": "",
        "CHOP_COLLECTION": collection,
        "CHOP_CHAT_PROVIDER": "openai",  # the page's routes call no model
        "CHOP_OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
    }
    uploads = data_dir / "uploads" / collection
    with chop_serve(server_dir, data_dir, settings) as url:
        own = {"Origin": url, "Content-Type": "application/octet-stream"}
        status, _, _ = get(f"{url}/chop/api/collections", {"Origin": url})
        assert status == 200  # the page itself, from its own origin

        preflight = {
            "Origin": "http://attacker.example",
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Private-Network": "true",
        }
        status, headers, body = request(f"{url}/runs/wait", "OPTIONS", preflight)
        assert status == 403
        assert "answers only its own page" in json.loads(body)["detail"]
        assert "access-control-allow-origin" not in headers
        assert "access-control-allow-private-network" not in headers

        upload = f"{url}/chop/api/collections/{collection}/uploads?name=evil.md"
        status, _, body = request(
            upload, "POST", {**own, "Origin": "http://attacker.example"}, b"# planted\n"
        )
        assert status == 403 and not (uploads / "evil.md").exists()

        for address in (f"{url}/chop/api/collections", f"{url}/threads/search"):
            status, _, body = request(
                address, "GET" if "chop" in address else "POST",
                {"Host": "attacker.example", "Content-Type": "application/json"},
                None if "chop" in address else b"{}",
            )  # fmt: skip
            assert status == 403, address
            assert "addressed to localhost, not to 'attacker.example'" in body.decode()

        # a chunked upload past the 50 MB limit is refused without reading it all
        status, sent_mb, body = chunked_upload(
            url, f"/chop/api/collections/{collection}/uploads?name=huge.md", 260
        )
        assert status == 413 and sent_mb < 200, sent_mb
        assert json.loads(body) == {"error": "the file is larger than the limit of 50 MB"}

        name = quote("invoice\u202efdp.exe.md")
        status, _, body = request(
            f"{url}/chop/api/collections/{collection}/uploads?name={name}", "POST", own, b"# x\n"
        )
        assert status == 400
        assert "direction-changing character (U+202E)" in json.loads(body)["error"]
        assert not uploads.exists() or list(uploads.iterdir()) == []
