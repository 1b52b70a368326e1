"""``chop serve``: the LangGraph dev server with chop's graphs and page, on localhost.

It is ``langgraph dev`` with the configuration of the repository's ``langgraph.json`` (graphs,
PostgreSQL checkpointer, the page's routes), written into ``<data_dir>/server/`` and run from
there, so the server's own files stay out of the folder it is started in. Settings come from
the environment as for every chop command; with none, the embedded PostgreSQL under
``CHOP_DATA_DIR`` and the local models. Offline: no analytics, no version check, no tracing,
and the browser opens chop's page, not LangGraph Studio (which needs the internet).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import webbrowser
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from chop_rag.config import Context, python_path_with_chop

# What langgraph.json says (tests/test_web.py checks that the two agree).
SERVER_CONFIG: dict[str, Any] = {
    "graphs": {
        "ingest": "chop_rag.deploy.graphs:ingest",
        "answer": "chop_rag.deploy.graphs:answer",
        "chat": "chop_rag.deploy.graphs:chat",
    },
    "checkpointer": {"path": "chop_rag.deploy.checkpointer.postgres_checkpointer"},
    "http": {
        "app": "chop_rag.deploy.webapp:app",
        "enable_custom_route_auth": True,
        # No other origin: chop's page is the server's own. A deployment whose page lives
        # elsewhere lists that origin (docs/deploy.md); never "*".
        "cors": {
            "allow_origins": [],
            "allow_methods": ["GET", "POST", "PUT", "PATCH", "DELETE"],
            "allow_headers": ["content-type", "x-api-key", "authorization"],
            "expose_headers": ["x-pagination-total", "x-pagination-next", "content-location"],
            "allow_credentials": False,
        },
    },
    # Studio's "x-auth-scheme: langsmith" goes through deploy/auth.py too, not around it
    "auth": {"path": "chop_rag.deploy.auth:auth", "disable_studio_auth": True},
}
PAGE = "/chop/"
STARTUP_S = 180  # the first start creates the embedded database and loads the embedder


class ServeError(RuntimeError):
    """chop serve cannot start, with the sentence that says why."""


def langgraph_command() -> str:
    beside = Path(sys.executable).with_name("langgraph")
    found = str(beside) if beside.exists() else shutil.which("langgraph")
    if not found:
        raise ServeError(
            "chop serve needs the LangGraph server: pip install 'chop-rag[server]' "
            "(langgraph-cli[inmem])"
        )
    return found


def port_is_free(host: str, port: int) -> bool:
    """Whether a server could listen on ``port`` now (as uvicorn does, SO_REUSEADDR: the
    connections of a server just stopped, in TIME_WAIT, do not count)."""
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def write_config(folder: Path) -> Path:
    """The server's langgraph.json in ``folder`` (made if missing)."""
    folder.mkdir(parents=True, exist_ok=True)
    config = {"dependencies": ["."], **SERVER_CONFIG}
    target = folder / "langgraph.json"
    target.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    return target


def server_environment(ctx: Context) -> dict[str, str]:
    env = {
        **os.environ,
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "LANGGRAPH_NO_VERSION_CHECK": "1",
        "HF_HUB_OFFLINE": os.environ.get("HF_HUB_OFFLINE", "1"),
        "LANGSMITH_TRACING": os.environ.get("LANGSMITH_TRACING", "false"),
        # the server runs in another folder: a relative data dir must still mean this one
        "CHOP_DATA_DIR": str(Path(ctx.data_dir).expanduser().absolute()),
        "CHOP_COLLECTION": ctx.collection,
        # the page may add folders under the one chop serve was started in (and its uploads)
        "CHOP_SERVER_PATHS": os.environ.get("CHOP_SERVER_PATHS")
        or os.pathsep.join([os.getcwd(), str(Path(ctx.data_dir).expanduser().absolute())]),
    }
    env["PYTHONPATH"] = python_path_with_chop()
    return env


def wait_for(url: str, process: subprocess.Popen[bytes], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise ServeError(f"the server stopped while starting (exit {process.returncode})")
        with contextlib.suppress(OSError), urllib.request.urlopen(f"{url}/ok", timeout=2) as r:
            if r.status == 200:
                return
        time.sleep(0.5)
    raise ServeError(f"the server did not answer within {timeout_s:.0f} s")


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM the server's process group (the embedded PostgreSQL stops with it)."""
    if process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


def serve(
    ctx: Context,
    *,
    host: str = "127.0.0.1",
    port: int = 2024,
    open_browser: bool = True,
    log_level: str = "WARNING",
    announce: Any = print,
) -> int:
    """Run the server until it stops or Ctrl-C; returns its exit status."""
    command = langgraph_command()
    if not port_is_free(host, port):
        raise ServeError(f"port {port} on {host} is in use: pick another with --port")
    folder = Path(ctx.data_dir).expanduser().absolute() / "server"
    config = write_config(folder)
    arguments = ["dev", "--no-browser", "--no-reload", "--host", host, "--port", str(port)]
    arguments += ["--server-log-level", log_level.upper()]
    announce(f"starting the LangGraph server on port {port} (the first start makes the database)")
    env = {**server_environment(ctx), "LOG_LEVEL": log_level.upper()}  # langgraph-api's own log
    shown_host = "localhost" if host in {"127.0.0.1", "0.0.0.0", "::"} else host
    url = f"http://{shown_host}:{port}"
    with signals_as_ctrl_c():
        process = subprocess.Popen(
            [command, *arguments, "--config", str(config)],
            cwd=folder,
            env=env,
            start_new_session=True,  # its own group: stopped below, whatever stops this one
        )
        try:
            local = "127.0.0.1" if host == "0.0.0.0" else host
            wait_for(f"http://{local}:{port}", process, STARTUP_S)
            announce(f"chop is serving {url}{PAGE} (collection {ctx.collection}); Ctrl-C stops it")
            if open_browser:
                webbrowser.open(f"{url}{PAGE}")
            return process.wait()
        except KeyboardInterrupt:
            return 0
        finally:
            stop(process)


@contextlib.contextmanager
def signals_as_ctrl_c() -> Iterator[None]:
    """SIGTERM and SIGHUP (a process manager, a closed terminal) end the wait as Ctrl-C does,
    so the server's process group is stopped too instead of outliving this process."""

    def interrupt(number: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = {number: signal.getsignal(number) for number in (signal.SIGTERM, signal.SIGHUP)}
    for number in previous:
        signal.signal(number, interrupt)
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def add_serve_command(sub: Any, common: Any) -> None:
    """``chop serve``'s arguments, in the ``chop`` parser (``common`` adds --collection)."""
    p = sub.add_parser("serve", help="serve the graphs and the page on localhost")
    p.add_argument("--port", type=int, default=2024, help="port (default: 2024)")
    p.add_argument("--host", default="127.0.0.1", help="address (default: 127.0.0.1)")
    p.add_argument("--no-browser", action="store_true", help="do not open the page")
    p.add_argument(
        "--log-level",
        default="warning",
        choices=["debug", "info", "warning", "error"],
        help="the server's log level (default: warning)",
    )
    common(p)
    p.set_defaults(func=cmd_serve)


def cmd_serve(args: argparse.Namespace) -> int:
    """The LangGraph server with chop's graphs and page on localhost."""
    console = Console(stderr=True, soft_wrap=True)
    try:
        return serve(
            Context().with_overrides(collection=args.collection),
            host=args.host,
            port=args.port,
            open_browser=not args.no_browser,
            log_level=args.log_level,
            announce=lambda line: console.print(escape(line)),
        )
    except ServeError as err:
        console.print(f"[red]error:[/] {escape(str(err))}")
        return 2
