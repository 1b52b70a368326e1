"""Claims on LLM cache keys: one worker asks the model, the others wait for its answer.

The cache alone lets a prompt be paid twice when two workers (or two tasks of one run) miss
it at the same moment: near-identical manuals in different batches, or overlapping batches.
A claim is a session advisory lock on the key's 64-bit hash, held on one autocommit
connection per process while the claimant asks the model; the others try it between reads
of the cache (chop_rag.store.locks: no snapshot is held while waiting), and take over if the
claimant's process dies (PostgreSQL drops a dead session's locks). Threads of one process
share that session, where advisory locks are re-entrant, so they queue on in-process locks
first.

A claim is an optimisation, never a condition: if its connection fails (an outage, a pooler
that drops session state) the call goes ahead unclaimed, as it did before claims existed.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import psycopg

TRY_CLAIM = "SELECT pg_try_advisory_lock(hashtextextended(%s, 0))"
RELEASE = "SELECT pg_advisory_unlock(hashtextextended(%s, 0))"
STRIPES = 4096  # in-process locks; two keys sharing one only queue, never wait for an answer
POLL_S = (0.05, 0.5)


class CacheClaims:
    """This process's claims on cache keys of the database at ``url``."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._conn: psycopg.Connection[Any] | None = None
        self._conn_lock = threading.Lock()
        self._stripes = [threading.Lock() for _ in range(STRIPES)]

    @contextmanager
    def claim(self, key: str, cached: Callable[[], Any | None]) -> Iterator[Any | None]:
        """Yield the cached value once another claimant has stored it, or None when this
        caller holds the claim and should ask the model (and store the answer) in the block."""
        with self._stripes[hash(key) % STRIPES]:
            value = cached()
            if value is not None:
                yield value
                return
            wait = POLL_S[0]
            while True:
                held = self._try(TRY_CLAIM, key)
                if held is not False:  # True, or None: no claims now (the connection failed)
                    try:
                        yield cached() if held else None  # stored while this one waited?
                    finally:
                        if held:
                            self._try(RELEASE, key)
                    return
                time.sleep(wait * random.uniform(0.5, 1.0))
                wait = min(wait * 2, POLL_S[1])
                value = cached()
                if value is not None:
                    yield value
                    return

    def _try(self, query: str, key: str) -> bool | None:
        """The lock function's answer; None when the claims connection is not usable."""
        with self._conn_lock:
            try:
                if self._conn is None or self._conn.closed:
                    self._conn = psycopg.connect(self.url, autocommit=True, connect_timeout=10)
                row = self._conn.execute(query, (key,)).fetchone()
                return bool(row and row[0])
            except psycopg.Error:
                if self._conn is not None:
                    self._conn.close()
                self._conn = None  # its locks went with it; the next claim reconnects
                return None

    def close(self) -> None:
        with self._conn_lock:
            if self._conn is not None:
                self._conn.close()
            self._conn = None
