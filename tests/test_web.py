"""chop's page in a real browser, against `chop serve` on the embedded defaults.

Debian's chromium (scripts/install.sh installs it), driven by playwright from PyPI, opens the
page the LangGraph server serves (langgraph.json "http" app: chop_rag/web). The chat model is
chop's OpenAI-compatible stub (near-zero latency); the embedder the local MiniLM. Each test
does what a person would do, in order (the module shares one server): add a folder and watch
the progress reach its end, read the documents with their cards, have bad uploads refused,
ask and follow up, read the cited source with its highlighted sentence, and see an error in
words once the LLM is gone. Screenshots of the three views go to $SCREENSHOTS_DIR.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from chop_rag.config import Context
from chop_rag.harness.sample_corpus import write_sample_corpus
from chop_rag.harness.stub_llm import StubServer
from chop_rag.store import store_for
from chop_rag.web.serve import port_is_free, stop
from chop_rag.web.uploads import upload_folder
from tests.langgraph_server import free_port, log_tail, missing_server_packages
from tests.pdfs import BODY, BOLD, LARGE, make_styled_pdf

pytestmark = pytest.mark.server

ROOT = Path(__file__).resolve().parents[1]
# A test run leaves the checkout as it was: screenshots go to a temporary folder unless
# SCREENSHOTS_DIR names one (the README's: SCREENSHOTS_DIR=docs/screenshots).
SCREENSHOTS = Path(os.environ.get("SCREENSHOTS_DIR") or tempfile.mkdtemp(prefix="chop-shots-"))
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
STARTUP_S = 180
RUN_MS = 120_000
QUESTION = "How often do I clean the filter of the Coolwave 330C?"
SAFETY = [
    "Keep the heater one metre away from curtains, bedding and furniture.",
    "Never cover the air outlet grille while the heater is running.",
    "Do not use the heater in a bathroom, a shower room or near a swimming pool.",
    "Place the heater on a flat and stable floor, never on a carpet with long pile.",
    "Do not use an extension lead, because it can overheat under a continuous load.",
    "Children must be supervised so that they do not play with the appliance.",
    "Switch the heater off and unplug it before you move it to another room.",
    "Do not insert objects into the grille, as this may cause an electric shock.",
    "A damaged power cord must be replaced by an authorised service centre.",
    "Do not operate the heater in rooms where petrol, paint or gases are stored.",
    "Keep the plug and the socket dry, and never touch them with wet hands.",
    "The housing becomes hot during use; touch only the control knobs and handle.",
]
AIRWELL_PAGES: list[list[tuple[str, str]]] = [  # (line, style): headings in a larger font
    [("Airwell 20 Fan Heater Manual", LARGE), ("Safety instructions", BOLD)]
    + [(line, BODY) for line in SAFETY],
    [
        ("Thermal cut-out", BOLD),
        ("If the Airwell 20 overheats, the thermal cut-out switches it off.", BODY),
        ("Unplug the heater and let it cool for 30 minutes before switching it on again.", BODY),
    ],
]


def missing_browser() -> str | None:
    if not Path(CHROMIUM).exists():
        return f"{CHROMIUM} is missing (apt-get install chromium; scripts/install.sh does)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install 'chop-rag[dev]')"
    return missing_server_packages()


@dataclass
class Served:
    url: str
    collection: str
    corpus: Path
    data_dir: Path
    stub: StubServer
    log: Path


def wait_for_page(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + STARTUP_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"chop serve exited with {process.returncode}:\n{log_tail(log)}")
        with contextlib.suppress(OSError), urllib.request.urlopen(f"{url}/chop/", timeout=2) as r:
            if r.status == 200:
                return
        time.sleep(0.5)
    pytest.fail(f"chop serve did not serve the page within {STARTUP_S}s:\n{log_tail(log)}")


@pytest.fixture(scope="module")
def served(data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """`chop serve` (subprocess, its own process group) with the stub LLM and a fresh
    collection; dropped, with its uploads, at the end."""
    if reason := missing_browser():
        pytest.skip(reason)
    folder = tmp_path_factory.mktemp("web")
    corpus = folder / "manuals"
    write_sample_corpus(corpus)
    collection = f"t_web_{uuid.uuid4().hex[:10]}"
    stub = StubServer(latency=(0.0, 0.005)).start()
    port = free_port()
    log = folder / "serve.log"
    env = {
        **os.environ,
        "CHOP_DATA_DIR": str(data_dir),
        "CHOP_DATABASE_URL": os.environ.get("CHOP_DATABASE_URL", ""),
        "CHOP_COLLECTION": collection,
        "CHOP_CHAT_PROVIDER": "openai",
        "CHOP_OPENAI_BASE_URL": f"{stub.base_url.rstrip('/')}/v1",
        "CHOP_CHAT_MODEL": "stub",
        "CHOP_EMBEDDING_PROVIDER": "local",
        "CHOP_EMBEDDING_MODEL": "all-MiniLM-L6-v2",
        "CHOP_LLM_TIMEOUT_S": "10",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    command = [sys.executable, "-m", "chop_rag.cli", "serve", "--no-browser", "--port", str(port)]
    command += ["--log-level", "info"]  # the log a failure prints
    with log.open("wb") as out:
        process = subprocess.Popen(
            command, cwd=folder, env=env, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    ctx = Context(
        database_url=env["CHOP_DATABASE_URL"], data_dir=str(data_dir), collection=collection
    )
    try:
        wait_for_page(url, process, log)
        yield Served(url, collection, corpus, data_dir, stub, log)
    except BaseException:
        print(f"--- chop serve log ---\n{log_tail(log)}")
        raise
    finally:
        stop(process)  # SIGTERM: chop serve stops the server's own process group first
        stub.stop()
        deadline = time.monotonic() + 30
        while not port_is_free("127.0.0.1", port) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert port_is_free("127.0.0.1", port), "the LangGraph server outlived chop serve"
        with contextlib.suppress(Exception):
            store_for(ctx).drop_collection(collection)
        shutil.rmtree(upload_folder(data_dir, collection), ignore_errors=True)


@pytest.fixture(scope="module")
def browser(served: Served) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        chromium = driver.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture(scope="module")
def page(browser: Any, served: Served) -> Iterator[Any]:
    """One tab at 1280×800 for the whole conversation, as a person keeps it open."""
    tab = browser.new_page(viewport={"width": 1280, "height": 800})
    tab.set_default_timeout(RUN_MS)
    tab.goto(f"{served.url}/chop/?collection={served.collection}")
    tab.locator("body[data-ready]").wait_for()
    yield tab
    tab.close()


def screenshot(page: Any, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def expect(locator: Any) -> Any:
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(locator)


def post(url: str, data: bytes) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(url, data=data, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def test_a_folder_added_on_the_page_is_listed_with_its_cards(page: Any, served: Served) -> None:
    page.get_by_role("tab", name="Documents").click()
    expect(page.locator("#documents-empty")).to_contain_text(
        f"Collection '{served.collection}' has no documents yet"
    )

    page.get_by_label("Or add a folder on the server").fill(str(served.corpus))
    page.get_by_role("button", name="Add folder").click()
    progress = page.locator("#progress-text")
    progress.filter(has_text="Done:").wait_for()
    done = r"Done: added 3, updated 0, unchanged 0, deleted 0; \d+ chunks stored"
    assert re.search(done, progress.inner_text())
    bar = page.locator("#progress-bar")
    assert bar.get_attribute("value") == bar.get_attribute("max") == "1"

    rows = page.locator("#documents tbody tr")
    rows.nth(2).wait_for()
    assert rows.count() == 3
    row = rows.filter(has_text="coolwave-330c.md")
    assert "Coolwave 330C" in row.inner_text()  # the identity card's model
    assert int(row.locator("td.chunks").inner_text()) > 0

    # The new collection is offered by the collection selector (Store.collection_names).
    expect(page.locator(f'#collections option[value="{served.collection}"]')).to_have_count(1)

    # The same folder again: unchanged, nothing stored twice.
    page.get_by_role("button", name="Add folder").click()
    progress.filter(has_text="unchanged 3").wait_for()
    assert rows.count() == 3


def test_uploads_are_checked_and_stay_in_the_collections_folder(
    page: Any, served: Served, tmp_path: Path
) -> None:
    page.get_by_role("tab", name="Documents").click()
    rows = page.locator("#documents tbody tr")

    program = tmp_path / "setup.exe"
    program.write_bytes(b"MZ\x90\x00\x03")
    page.get_by_label("Add files").set_input_files(str(program))
    page.get_by_role("button", name="Upload and add").click()
    expect(page.locator("#notice")).to_contain_text("'setup.exe' is not a document chop reads")

    twin = tmp_path / "copy-of-330c.md"
    twin.write_bytes((served.corpus / "coolwave-330c.md").read_bytes())
    page.get_by_label("Add files").set_input_files(str(twin))
    page.get_by_role("button", name="Upload and add").click()
    expect(page.locator("#notice")).to_have_text(
        "'copy-of-330c.md' is already stored as coolwave-330c.md (the same bytes)"
    )

    fresh = tmp_path / "breezeline-100.md"
    fresh.write_text(
        "# Breezeline 100 dehumidifier\n\n## Emptying the tank\n\n"
        "Empty the water tank of the Breezeline 100 when the tank light turns red.\n",
        encoding="utf-8",
    )
    manual = tmp_path / "airwell-20.pdf"
    manual.write_bytes(make_styled_pdf(AIRWELL_PAGES))
    page.get_by_label("Add files").set_input_files([str(fresh), str(manual)])
    page.get_by_role("button", name="Upload and add").click()
    page.locator("#progress-text").filter(has_text="Done: added 2").wait_for()
    rows.filter(has_text="airwell-20.pdf").wait_for()
    assert rows.count() == 5
    folder = upload_folder(served.data_dir, served.collection)
    assert sorted(p.name for p in folder.iterdir()) == ["airwell-20.pdf", "breezeline-100.md"]

    # A folder that is not there: the ingest's problem, in words, under the progress.
    missing = served.corpus.parent / "no-such-manuals"
    page.get_by_label("Or add a folder on the server").fill(str(missing))
    page.get_by_role("button", name="Add folder").click()
    expect(page.locator("#progress-warnings")).to_contain_text(
        f"skipped {missing}: no such file or directory"
    )
    # A folder outside those the server may read (CHOP_SERVER_PATHS; chop serve: the folder it
    # was started in): refused in words, nothing read (issue 36).
    page.get_by_label("Or add a folder on the server").fill("/etc")
    page.get_by_role("button", name="Add folder").click()
    expect(page.locator("#progress-text")).to_contain_text(
        "The ingest failed: path '/etc' is outside the folders a server run may read"
    )

    # Names a browser would never send, sent anyway: refused, nothing written outside.
    api = f"{served.url}/chop/api/collections/{served.collection}/uploads?name="
    for name in ("../escape.md", "..%2Fescape.md", "%2Ftmp%2Fescape.md", "..", ".hidden.md"):
        status, body = post(api + name, b"# escape\n")
        assert status == 400 and "file name" in body["error"], (name, body)
    assert not (folder.parent / "escape.md").exists()
    assert not Path("/tmp/escape.md").exists()
    assert sorted(p.name for p in folder.iterdir()) == ["airwell-20.pdf", "breezeline-100.md"]
    status, body = post(f"{served.url}/chop/api/collections/No-Such/uploads?name=a.md", b"x")
    assert status == 400 and "collection name 'No-Such'" in body["error"]

    # Deleting the uploaded document removes its file too.
    page.once("dialog", lambda dialog: dialog.accept())
    rows.filter(has_text="breezeline-100.md").get_by_role("button", name="Delete").click()
    rows.filter(has_text="breezeline-100.md").wait_for(state="detached")
    assert rows.count() == 4
    assert sorted(p.name for p in folder.iterdir()) == ["airwell-20.pdf"]
    screenshot(page, "documents")
    page.set_viewport_size({"width": 390, "height": 844})  # a phone: the table as cards
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    screenshot(page, "documents-phone")
    page.set_viewport_size({"width": 1280, "height": 800})


# Every text an answer showed, in order (window.chopWritten): what the page rendered as the
# run's updates and the answer's chunks arrived.
RECORD_WRITTEN = """() => {
  window.chopWritten = [];
  new MutationObserver((records) => {
    for (const record of records) {
      if (!record.target.matches || !record.target.matches(".message.assistant .text")) continue;
      window.chopWritten.push(record.target.textContent);
    }
  }).observe(document.getElementById("conversation"), {childList: true, subtree: true});
}"""


def ask(page: Any, question: str) -> Any:
    """Type ``question``, press Enter, and return the answer's message once it is complete."""
    turn = int(page.locator("body").get_attribute("data-turns") or 0)  # questions sent so far
    page.get_by_label("Your question").fill(question)
    page.get_by_label("Your question").press("Enter")
    answer = page.locator(f'.message.assistant[data-turn="{turn + 1}"]')
    answer.wait_for()
    expect(answer).not_to_have_class(re.compile("pending"), timeout=RUN_MS)
    return answer


def test_a_question_and_its_follow_up_are_answered_with_cited_sources(
    page: Any, served: Served
) -> None:
    page.get_by_role("tab", name="Ask").click()
    page.evaluate(RECORD_WRITTEN)
    first = ask(page, QUESTION)
    expect(first.locator(".text")).to_contain_text("Clean the air filter every 4 weeks")
    expect(first.locator(".cited")).to_contain_text("Cited: Coolwave 330C User Manual")
    # shown as it arrived: the sources found, then the answer sentence by sentence
    final = str(first.locator(".text").text_content())
    written = [str(text) for text in page.evaluate("window.chopWritten")]
    assert any(re.match(r"Found \d+ sources? \(Coolwave 330C", text) for text in written), written
    partial = [text for text in written if text and text != final and final.startswith(text)]
    assert partial, written
    assert re.search(r"\[\d+\]", final), "the answer marks its citations"
    marker = first.get_by_role("button", name="Source 1: Coolwave 330C User Manual")
    marker.click()  # a marker opens its source's card
    expect(page.locator('#source-cards .card[data-number="1"]')).to_be_focused()
    page.get_by_role("tab", name="Ask").click()

    follow_up = ask(page, "And how do I reset it?")
    expect(follow_up.locator(".note").first).to_contain_text(
        "Follow-up on the same document (names no document: still about Coolwave 330C"
    )
    expect(follow_up.locator(".note").nth(1)).to_contain_text("Asked as: “[Coolwave 330C]")
    assert follow_up.locator(".text").inner_text().strip()

    switched = ask(page, "What about the Coolwave 410X?")
    expect(switched.locator(".note").first).to_contain_text("This question switched documents (")
    expect(switched.locator(".cited")).to_contain_text("Cited: Coolwave 410X User Manual")
    screenshot(page, "ask")

    first.get_by_role("button", name=re.compile(r"Show \d+ sources?")).click()
    expect(page.get_by_role("tab", name=re.compile("Sources"))).to_have_attribute(
        "aria-selected", "true"
    )
    card = page.locator("#source-cards .card").first
    expect(card).to_have_class(re.compile("is-cited"))
    expect(card.locator(".title")).to_have_text("Coolwave 330C User Manual")
    expect(card.locator(".identity")).to_contain_text("Coolwave 330C")
    expect(card.locator(".section").first).to_contain_text("Cleaning the air filter")
    card.locator(".passage[data-section=whole]").wait_for()  # the whole section, fetched
    marks = card.locator("mark")
    expect(marks.first).to_contain_text("Clean the air filter every 4 weeks")
    unquoted = card.locator(".passage").inner_text()
    assert "## Cleaning the air filter" in unquoted  # the section's own text, heading too
    assert "Cleaning the air filter" not in marks.all_inner_texts()[0]
    for sentence in ("Clean the air filter every 4 weeks", "press and hold SLEEP"):
        assert unquoted.count(sentence) == 1, unquoted  # adjacent chunks' overlap said once
    screenshot(page, "sources")

    # Keyboard only: the arrow keys move between the views, as tabs do.
    page.get_by_role("tab", name=re.compile("Sources")).focus()
    page.keyboard.press("ArrowRight")
    expect(page.get_by_role("tab", name="Documents")).to_be_focused()
    expect(page.get_by_role("tab", name="Documents")).to_have_attribute("aria-selected", "true")
    page.keyboard.press("ArrowLeft")
    page.set_viewport_size({"width": 390, "height": 844})  # a phone: one column, no overflow
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    screenshot(page, "sources-phone")
    page.set_viewport_size({"width": 1280, "height": 800})


def test_a_pdf_source_links_to_its_page(page: Any, served: Served) -> None:
    page.get_by_role("tab", name="Ask").click()
    page.get_by_role("button", name="New conversation").click()
    answer = ask(page, "What do I do when the thermal cut-out of the Airwell 20 switches it off?")
    expect(answer.locator(".text")).to_contain_text("let it cool for 30 minutes")
    answer.get_by_role("button", name=re.compile(r"Show \d+ sources?")).click()
    card = page.locator("#source-cards .card").first
    expect(card.locator(".title")).to_contain_text("airwell 20", ignore_case=True)
    link = card.get_by_role("link", name="Open the PDF at page 2")
    href = str(link.get_attribute("href"))
    assert href.endswith("#page=2")
    response = page.request.get(served.url + href.split("#")[0])
    assert response.ok and response.headers["content-type"] == "application/pdf"
    assert response.body().startswith(b"%PDF-")
    # only stored documents are served, never another file
    other = page.request.get(
        f"{served.url}/chop/api/collections/{served.collection}/file?doc_id=/etc/passwd"
    )
    assert other.status == 404 and "no document '/etc/passwd'" in other.json()["error"]


def test_a_declined_question_says_why(page: Any, served: Served) -> None:
    page.get_by_role("tab", name="Ask").click()
    page.get_by_role("button", name="New conversation").click()
    answer = ask(page, "How do I clean the filter of the Coolwave 999Z?")
    expect(answer.locator(".note")).to_contain_text("chop declined to answer: ")


def test_bad_questions_get_one_clear_message(page: Any, served: Served) -> None:
    page.get_by_role("tab", name="Ask").click()
    asked = page.locator(".message.user").count()
    page.get_by_label("Your question").fill("   ")
    page.get_by_role("button", name="Ask", exact=True).click()
    expect(page.locator("#notice")).to_have_text("Type a question first.")

    page.get_by_label("Your question").fill("filter " * 700)  # a huge paste: 4,900 characters
    page.get_by_role("button", name="Ask", exact=True).click()
    expect(page.locator("#notice")).to_have_text(
        "The question is 4,900 characters long; ask in at most 4,000."
    )
    assert page.locator(".message.user").count() == asked  # nothing was sent

    page.get_by_label("Collection").fill("no_such_collection")
    page.get_by_label("Collection").press("Enter")
    answer = ask(page, QUESTION)
    expect(answer.locator(".note.error")).to_contain_text(
        "collection 'no_such_collection' does not exist"
    )
    page.get_by_label("Collection").fill(served.collection)
    page.get_by_label("Collection").press("Enter")


def test_the_llm_down_is_said_in_words(page: Any, served: Served) -> None:
    served.stub.stop()  # the chat model's endpoint is gone from here on
    page.get_by_role("tab", name="Ask").click()
    page.get_by_role("button", name="New conversation").click()
    # a yes/no question needs the model's verdict (a plain one is answered by quoting alone);
    # not asked before, so no cached reply stands in for the model
    answer = ask(page, "Can I wash the filter of the Coolwave 330C with water?")
    expect(answer.locator(".note.error")).to_contain_text("The language model is unavailable (")
    # what is stored still answers: the section's own words, without the model's verdict
    expect(answer.locator(".text")).to_contain_text("filter")
    screenshot(page, "llm-down")
