"""Database outages: every Store and checkpointer call waits one out (retried with backoff)
instead of failing, up to a bound, and the run carries on when the database is back."""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable
from contextvars import ContextVar
from typing import ParamSpec, Protocol, TypeVar

import psycopg
import tenacity

R = TypeVar("R")
# The pool logs each failed reconnect ("error connecting in 'pool-1': ... the database system
# is shutting down") while it waits out a database restart it then survives; a failure that
# lasts ends as PoolTimeout, which the CLI reports in one line.
logging.getLogger("psycopg.pool").setLevel(logging.ERROR)


class _CleanupOfALostConnection(logging.Filter):
    """psycopg warns of a second error it ignores while the first propagates, when it
    closes a pipeline or a COPY or rolls back on a connection an outage cut ("error ignored
    terminating <psycopg.Pipeline [BAD]>: the connection is lost", "error ignored in
    rollback on <psycopg.Connection [ACTIVE, pipeline=ABORTED]>: … cannot exit pipeline
    mode"): the first error is the one handled (Outage retries the call, one line for the
    outage), so the second is not printed beside it."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("error ignored ")


logging.getLogger("psycopg").addFilter(_CleanupOfALostConnection())

log = logging.getLogger("chop_rag.store")  # one logger for the store, whichever module
P = ParamSpec("P")
DEFAULT_OUTAGE_S = 900.0  # Context.database_outage_s
CONNECTION_WAIT_S = 10.0  # one wait for a pooled connection; an outage is waited out in several
PROBE_S = 2.0  # the wait of a call made after an outage outlasted its bound
# How long a pool keeps retrying one lost connection (psycopg_pool's reconnect_timeout) before
# it gives up and lets a waiting call start a fresh attempt. Its retries back off (1, 2, 4 ...
# s): with the default five minutes, a pool still waited 16 s or more after the server was
# back, so a call made then failed past the bound (CI, a database-outage test's teardown).
RECONNECT_S = 5.0


class DatabaseUnavailable(RuntimeError):
    """The database stayed unreachable longer than the outage bound: the run ends here."""


class Outage:
    """The outages of one database as every caller sees them: the first failed call begins
    one (one line), every call waits and retries until the database answers or the outage
    has lasted ``bound_s`` (then DatabaseUnavailable, for every caller at once), and the first
    call that begins after it and gets its answer from the database ends it (one line): a
    connection that passed its check, or a cached answer, proves nothing while a server shuts
    down. A run carries on when the server comes back."""

    def __init__(self, bound_s: float = DEFAULT_OUTAGE_S, url: str | None = None) -> None:
        self.bound_s = bound_s
        self.url = url  # to ask the server itself whether it is back (connection_wait_s)
        self.started: float | None = None  # when the first failed call began (for the bound)
        self.noticed = 0.0  # when it failed: only a call asked after this can end the outage
        self.ended = 0.0  # when the last outage ended: a call asked before it fails stale
        self.last_error = ""
        self._lock = threading.Lock()
        self._attempt = threading.local()  # when this thread's current attempt began

    def call(self, work: Callable[[], R], *, asks_database: bool = False) -> R:
        """``work()``, retried with backoff through an outage of at most ``bound_s``.
        ``asks_database``: every success is the database's answer (else only one that took a
        connection from Store.connection)."""

        def attempt() -> R:
            began = self._attempt.began = time.monotonic()
            token = asked_database.set(asks_database)
            try:
                result = work()
                if asked_database.get():
                    self._answered(began)
                return result
            finally:
                asked_database.reset(token)

        if self._given_up():
            raise DatabaseUnavailable(self._gave_up())
        retrying = tenacity.Retrying(
            retry=tenacity.retry_if_exception_type(psycopg.OperationalError),
            stop=self._outlasted,
            wait=tenacity.wait_exponential(multiplier=0.25, max=5),
            reraise=False,
        )
        try:
            return retrying(attempt)
        except tenacity.RetryError as gave_up:
            raise DatabaseUnavailable(self._gave_up()) from gave_up.last_attempt.exception()

    def _given_up(self) -> bool:
        """The outage has outlasted its bound and the server still refuses a fresh connection:
        a call fails at once. (Each call waiting PROBE_S for a pooled connection first kept a
        durable run's cache and checkpoint writes going 40 s past a 4 s bound.)"""
        started = self.started
        if started is None or time.monotonic() - started <= self.bound_s:
            return False
        return not self._server_answers()

    def _gave_up(self) -> str:
        return (
            f"the database has been unreachable for {self.bound_s:.0f} s "
            f"(last: {self.last_error}); what finished is stored: run the same command again "
            "once it is back (a durable run resumes, finished documents are skipped)"
        )

    def connection_wait_s(self) -> float:
        """How long one call may wait for a pooled connection: CONNECTION_WAIT_S, or what is
        left of the bound during an outage (so a run ends at the bound, not a wait later)."""
        started = self.started
        if started is None:
            return CONNECTION_WAIT_S
        left = self.bound_s - (time.monotonic() - started)
        if left <= 0:  # past it: calls queued behind the outage end at once, unless it is over
            return CONNECTION_WAIT_S if self._server_answers() else PROBE_S
        return max(PROBE_S, min(CONNECTION_WAIT_S, left + 0.5))

    def _server_answers(self) -> bool:
        """A fresh connection, not the pool's (whose reconnects back off for many seconds
        after a long outage): is the server back?"""
        if self.url is None:
            return True
        try:
            psycopg.connect(self.url, connect_timeout=int(PROBE_S)).close()
        except psycopg.Error:
            return False
        return True

    def _outlasted(self, state: tenacity.RetryCallState) -> bool:
        """Record a failed call; True when the outage has lasted longer than the bound. A call
        asked before the last outage ended (a long wait for a pooled connection) failed in
        that outage: it is retried without beginning another."""
        error = state.outcome.exception() if state.outcome else None
        with self._lock:
            now = time.monotonic()
            self.last_error = _one_line(error) if error else self.last_error
            stale = getattr(self._attempt, "began", now) < self.ended
            if self.started is None and not stale:  # it began when the failed call did
                self.started, self.noticed = min(now, state.start_time), now
                log.warning(
                    "database unreachable (%s); waiting up to %.0f s for it",
                    self.last_error,
                    self.bound_s,
                )
            return self.started is not None and now - self.started > self.bound_s

    def _answered(self, asked: float) -> None:
        """The database answered a call that asked at ``asked``: an outage that had begun by
        then is over (an answer to an earlier call proves nothing about now)."""
        if self.started is None or asked < self.noticed:
            return
        with self._lock:
            if self.started is not None and asked >= self.noticed:
                self.ended = time.monotonic()
                log.warning("database back after %.0f s", self.ended - self.started)
                self.started = None


def _one_line(error: BaseException) -> str:
    """An error in one short line (libpq's messages span three)."""
    text = " ".join(str(error).split()) or type(error).__name__
    return text if len(text) <= 200 else text[:200] + "…"


asked_database: ContextVar[bool] = ContextVar("chopasked_database", default=False)
_outages: dict[str, Outage] = {}
_outages_lock = threading.Lock()


def outage_for(url: str) -> Outage:
    """The Outage of the database at ``url``, shared by its Store and its checkpointer."""
    with _outages_lock:
        return _outages.setdefault(url, Outage(url=url))


class _WaitsOutOutages(Protocol):
    outage: Outage


def through_outages(method: Callable[P, R]) -> Callable[P, R]:
    """A Store method that waits out a database outage (Store.outage) instead of failing."""

    @functools.wraps(method)
    def waiting(*args: P.args, **kwargs: P.kwargs) -> R:
        store: _WaitsOutOutages = args[0]  # type: ignore[assignment]
        return store.outage.call(lambda: method(*args, **kwargs))

    return waiting
