"""Schema-constrained LLM calls with a durable cache, retries, and a recorded failure.

Every LLM task of chop (continuity, CNM, document profile, answer) goes through
:func:`structured_call`: the reply is held to a JSON schema by the provider (llama.cpp grammar,
OpenAI ``response_format`` or function calling), validated with pydantic, cached in PostgreSQL
under (model, schema, prompt), and retried with backoff on errors and invalid output, within
one deadline (Context.llm_deadline_s) for all attempts together: the HTTP client does not
retry on its own, so a hung endpoint costs one deadline, not attempts × client retries ×
timeout, and every attempt is counted. When the retries are spent the call returns
``value=None`` with the error, and the caller applies its documented fallback; nothing raises
into the graph but a database outage longer than its bound (chop_rag.store.DatabaseUnavailable:
the cache waits out shorter ones). An endpoint that let a task's request time out (it
accepted and never answered: the task missed its deadline), or gave no reply to OUTAGE_AFTER
tasks in a row, is not asked again for OUTAGE_PROBE_S seconds (then one task probes it), and
tasks that were waiting for a slot meanwhile are not sent: a run against a hung server ends
in about one deadline, a dead one in seconds, with its labels left to relabel, not after one
deadline per task.
Each ingest through chop_rag.api starts with the endpoint trusted again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import psycopg
import tenacity
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import Runnable
from langgraph.constants import TAG_NOSTREAM
from pydantic import BaseModel, ValidationError

from chop_rag.config import Context
from chop_rag.models.construction import chat_model_identity, get_chat_model, is_in_process
from chop_rag.stage_profile import Span, timed
from chop_rag.store import Store

log = logging.getLogger(__name__)
SchemaT = TypeVar("SchemaT", bound=BaseModel)

MAX_ATTEMPTS = 3
MIN_ATTEMPT_S = 0.5  # an attempt with less time left than this is not started
OUTAGE_AFTER = 4  # tasks in a row without a reply before chop stops asking the endpoint
OUTAGE_PROBE_S = 60.0  # then one task asks again after this long: a server may come back
REQUEST_ERRORS = {400, 404, 413, 422}  # the server answered: this request, not the endpoint
_in_process_lock = threading.Lock()
_slots_lock = threading.Lock()
_semaphores: dict[int, threading.BoundedSemaphore] = {}
_fence = re.compile(r"^\s*```(?:json)?\s*|\s*```\s*$")
# A reasoning model (DeepSeek-R1 and its distills) behind a server that does not hold it to the
# schema opens with its thinking; the JSON follows. (A grammar, in-process or a server's, starts
# the reply at the JSON and the model never thinks aloud.)
_thinking = re.compile(r"^\s*<think>.*?</think>", re.DOTALL)


class InvalidOutput(ValueError):
    """The model answered, but not with a value of the schema."""


class EndpointDown(RuntimeError):
    """Another task found the endpoint down while this one waited for its turn: not asked."""


@dataclass
class _Outage:
    failures: int = 0  # tasks in a row that got no reply
    opened_at: float | None = None  # when chop stopped asking
    probing: bool = False
    last_error: str = ""


_outages: dict[str, _Outage] = {}
_outages_lock = threading.Lock()


def reset_outages() -> None:
    """Forget every endpoint's failures (a new process, or a test, starts from here)."""
    with _outages_lock:
        _outages.clear()


def _endpoint_down(model_identity: str) -> str | None:
    """Why not to ask the endpoint now, or None; after OUTAGE_PROBE_S one task may probe."""
    with _outages_lock:
        outage = _outages.get(model_identity)
        if outage is None or outage.opened_at is None:
            return None
        if not outage.probing and time.monotonic() - outage.opened_at >= OUTAGE_PROBE_S:
            outage.probing = True
            return None
        return _down_message(outage)


def _down_message(outage: _Outage) -> str:
    return (
        f"EndpointDown: no reply within a task's deadline, or to {outage.failures} tasks in a "
        f"row; not asked again for {OUTAGE_PROBE_S:.0f} s (last: {outage.last_error})"
    )


def _record_reply(model_identity: str, error: str | None, *, missed_deadline: bool = False) -> None:
    """A task's outcome: ``error`` None when the endpoint replied, else why it did not. One
    request that timed out is enough to stop asking: every task behind it would wait as long."""
    with _outages_lock:
        outage = _outages.setdefault(model_identity, _Outage())
        if error is None:
            outage.failures, outage.opened_at, outage.probing = 0, None, False
            return
        outage.failures += 1
        outage.last_error = error
        if outage.probing or missed_deadline or outage.failures >= OUTAGE_AFTER:
            outage.opened_at, outage.probing = time.monotonic(), False


def _down_since(model_identity: str, started: float) -> str | None:
    """Why not to send this task's request: the endpoint was found down after it started
    (it waited for a slot or a backoff meanwhile), else None."""
    with _outages_lock:
        outage = _outages.get(model_identity)
        if outage is None or outage.opened_at is None or outage.opened_at < started:
            return None
        return _down_message(outage)


def _timed_out(error: BaseException) -> bool:
    """Whether ``error`` is a request that got no reply in time (httpx's and openai's
    timeouts, asyncio's and the builtin TimeoutError)."""
    return isinstance(error, TimeoutError) or "Timeout" in type(error).__name__


def _replied(error: Exception) -> bool:
    """Whether the endpoint answered this request (badly) rather than not at all."""
    return isinstance(error, InvalidOutput) or getattr(error, "status_code", None) in REQUEST_ERRORS


@dataclass
class CallResult(Generic[SchemaT]):
    """A validated value (or None after the retries), and what it cost."""

    value: SchemaT | None
    cached: bool = False
    seconds: float = 0.0
    attempts: int = 0
    error: str | None = None
    raw: str | None = None
    spans: list[Span] = field(default_factory=list)  # one "llm" span per request sent

    @property
    def llm_calls(self) -> int:
        return 0 if self.cached else self.attempts

    def stats(self) -> dict[str, float]:
        """What this task adds to a run's counters (summed by chop_rag.state.add_counts)."""
        return {
            "llm_tasks": 1,
            "llm_calls": self.llm_calls,
            "llm_seconds": self.seconds,
            "cache_hits": int(self.cached),
            "llm_failures": int(self.value is None),
        }

    def progress(self) -> dict[str, int]:
        """What a progress event reports of this task (the CLI's live counters)."""
        return {"llm_calls": self.llm_calls, "cache_hits": int(self.cached)}


def cache_key(model_identity: str, schema: type[BaseModel], messages: list[BaseMessage]) -> str:
    """What the model was asked: its identity, the schema it was held to (as sent, without the
    class's name, so renaming a reply class keeps its answers) and the messages."""
    payload = json.dumps(
        [model_identity, _json_schema(schema), [(m.type, m.content) for m in messages]],
        sort_keys=True,
    )
    return hashlib.sha256(payload.encode()).hexdigest()


def parse_reply(reply: Any, schema: type[SchemaT]) -> SchemaT:
    """Validate a model reply (text, message, dict or model instance) against ``schema``."""
    if isinstance(reply, schema):
        return reply
    if isinstance(reply, dict):
        try:
            return schema.model_validate(reply)
        except ValidationError as exc:
            raise InvalidOutput(_short(str(exc))) from exc
    if isinstance(reply, AIMessage) and reply.tool_calls:  # function calling
        return parse_reply(reply.tool_calls[0]["args"], schema)
    text = reply.content if isinstance(reply, AIMessage) else reply
    if not isinstance(text, str):
        raise InvalidOutput(f"expected text, got {type(text).__name__}")
    text = _fence.sub("", _thinking.sub("", text)).strip()
    try:
        return schema.model_validate_json(text)
    except ValidationError as exc:
        error = exc
    try:  # a raw newline inside a string (a grammar let it through): every field is cleaned later
        return schema.model_validate(json.loads(text, strict=False))
    except ValueError:
        raise InvalidOutput(f"{_short(str(error))} in reply {_short(text)!r}") from error


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _one_line(error: Exception) -> str:
    """A database error in one line (libpq's span three: "server closed the connection ...")."""
    return _short(" ".join(str(error).split()) or type(error).__name__)


def _json_schema(schema: type[BaseModel]) -> dict[str, Any]:
    body = schema.model_json_schema()
    body.pop("title", None)
    return body


def _bind(
    chat_model: BaseChatModel, ctx: Context, schema: type[BaseModel], name: str, timeout: float
) -> Runnable:
    """The chat model, held to ``schema`` the way its provider supports; a remote request gives up
    after ``timeout`` seconds."""
    if ctx.chat_provider == "openai" and ctx.structured_output == "function_calling":
        return chat_model.bind_tools([schema], tool_choice=schema.__name__, timeout=timeout)
    if ctx.chat_provider == "openai" and ctx.structured_output == "json_schema":
        return chat_model.bind(
            response_format={
                "type": "json_schema",
                "json_schema": {"name": name, "schema": _json_schema(schema), "strict": False},
            },
            timeout=timeout,
        )
    if ctx.chat_provider == "openai":
        return chat_model.bind(
            response_format={"type": "json_object", "schema": _json_schema(schema)},
            timeout=timeout,
        )
    # llama.cpp (in-process, or its server): a grammar compiled from the schema.
    return chat_model.bind(response_format={"type": "json_object", "schema": _json_schema(schema)})


def structured_call(
    ctx: Context,
    store: Store | None,
    task: str,
    messages: list[BaseMessage],
    schema: type[SchemaT],
) -> CallResult[SchemaT]:
    """Ask the chat model for one ``schema`` value; cached, retried, never raising."""
    model_identity = chat_model_identity(ctx)
    key = cache_key(model_identity, schema, messages)
    if store is None or not ctx.use_cache:
        return _asked(ctx, store, task, messages, schema, model_identity, key)
    # A claim: a prompt that another worker (or task) is asking right now is waited for and
    # read from the cache, not paid twice (chop_rag.store.claims).
    with store.claims.claim(key, lambda: _cache_get(store, key)) as hit:
        if hit is not None:
            try:
                return CallResult(parse_reply(hit, schema), cached=True)
            except InvalidOutput:
                pass  # schema changed since it was stored: ask again
        return _asked(ctx, store, task, messages, schema, model_identity, key)


def _asked(
    ctx: Context,
    store: Store | None,
    task: str,
    messages: list[BaseMessage],
    schema: type[SchemaT],
    model_identity: str,
    key: str,
) -> CallResult[SchemaT]:
    """The model's answer (retried within the deadline), kept in the cache."""
    down = _endpoint_down(model_identity)
    if down is not None:
        return CallResult(None, error=down)
    started = time.monotonic()
    attempts = 0
    busy = 0.0  # seconds the model worked (not waiting for the in-process lock)
    raw: str | None = None
    spans: list[Span] = []
    deadline: float | None = None  # starts with the first attempt, not while queued for a slot

    def remaining() -> float:
        return ctx.llm_deadline_s if deadline is None else deadline - time.monotonic()

    def attempt(msgs: list[BaseMessage]) -> SchemaT:
        nonlocal attempts, raw, busy, deadline
        chat_model = get_chat_model(ctx)  # built (or loaded) once, outside the deadline
        lock = _in_process_lock if is_in_process(ctx) else _slots(ctx.max_concurrency)
        with lock:  # llama.cpp in this process runs one call at a time
            if (down := _down_since(model_identity, started)) is not None:
                raise EndpointDown(down)  # found down while this task waited: not sent
            attempts += 1
            began = time.perf_counter()
            if deadline is None:
                deadline = time.monotonic() + ctx.llm_deadline_s
            timeout = max(MIN_ATTEMPT_S, min(ctx.llm_timeout_s, remaining()))
            notice = _slow_reply_notice(ctx, model_identity, timeout)
            try:
                with timed("llm", spans):
                    # a structured reply is chop's input, not a chat message: "nostream" keeps
                    # it out of a graph's stream_mode="messages" (the chat graph streams its
                    # answer)
                    reply = _bind(chat_model, ctx, schema, task, timeout).invoke(
                        msgs, config={"tags": [TAG_NOSTREAM]}
                    )
            finally:
                if notice is not None:
                    notice.cancel()
            busy += time.perf_counter() - began
            raw = reply.content if isinstance(reply, AIMessage) else str(reply)  # type: ignore[assignment]
            value = parse_reply(reply, schema)
            # stored before the slot is freed: a worker killed at any moment has paid for at most
            # max_concurrency answers that are not in the cache (tests/test_external_postgres.py)
            if store is not None:
                _cache_put(store, key, model_identity, value.model_dump(mode="json"))
            return value

    backoff = tenacity.wait_exponential(multiplier=0.5, max=8) + tenacity.wait_random(0, 0.5)
    retrying = tenacity.Retrying(
        retry=tenacity.retry_if_not_exception_type(EndpointDown),
        stop=lambda state: state.attempt_number >= MAX_ATTEMPTS or remaining() < MIN_ATTEMPT_S,
        wait=lambda state: min(
            max(backoff(state), _retry_after(state)), max(0.0, remaining() - MIN_ATTEMPT_S)
        ),
        reraise=True,
    )
    try:
        value = retrying(attempt, messages)
    except EndpointDown as exc:
        return CallResult(
            None, seconds=busy, attempts=attempts, error=str(exc), raw=raw, spans=spans
        )
    except Exception as exc:  # every failure ends in the caller's fallback
        error = f"{type(exc).__name__}: {_short(str(exc))}"
        _record_reply(
            model_identity, None if _replied(exc) else error, missed_deadline=_timed_out(exc)
        )
        return CallResult(None, seconds=busy, attempts=attempts, error=error, raw=raw, spans=spans)
    _record_reply(model_identity, None)
    return CallResult(value, seconds=busy, attempts=attempts, raw=raw, spans=spans)


SLOW_REPLY_S = 15.0  # a remote call silent this long gets one line saying chop is waiting
_last_slow_notice: dict[str, float] = {}


def _slow_reply_notice(ctx: Context, model_identity: str, timeout: float) -> threading.Timer | None:
    """A timer that says, once per endpoint and SLOW_REPLY_S, that a remote LLM call has had
    no reply yet and how long chop will still wait: a hung endpoint is not a silent run."""
    if is_in_process(ctx) or timeout <= SLOW_REPLY_S:
        return None

    def say() -> None:
        now = time.monotonic()
        if now - _last_slow_notice.get(model_identity, -1e9) < SLOW_REPLY_S:
            return
        _last_slow_notice[model_identity] = now
        endpoint = ctx.openai_base_url or "the OpenAI API"
        log.warning(
            "no reply from the LLM endpoint %s for %.0f s; waiting up to %.0f s more for this "
            "call (CHOP_LLM_TIMEOUT_S), %.0f s for the task (CHOP_LLM_DEADLINE_S)",
            endpoint,
            SLOW_REPLY_S,
            timeout - SLOW_REPLY_S,
            ctx.llm_deadline_s,
        )

    timer = threading.Timer(SLOW_REPLY_S, say)
    timer.daemon = True
    timer.start()
    return timer


def _retry_after(state: tenacity.RetryCallState) -> float:
    """The wait an HTTP 429/503 asked for (``retry-after-ms`` or ``Retry-After`` seconds)."""
    error = state.outcome.exception() if state.outcome else None
    headers = getattr(getattr(error, "response", None), "headers", None) or {}
    try:
        if "retry-after-ms" in headers:
            return float(headers["retry-after-ms"]) / 1000
        return float(headers.get("retry-after", 0))
    except (TypeError, ValueError):  # an HTTP date: the backoff decides
        return 0.0


def _slots(limit: int) -> threading.BoundedSemaphore:
    """At most ``limit`` remote LLM calls in flight in this process (Context.max_concurrency)."""
    with _slots_lock:
        return _semaphores.setdefault(max(1, limit), threading.BoundedSemaphore(max(1, limit)))


def _cache_get(store: Store, key: str) -> Any | None:
    """A cache that cannot be read is a miss: the answer is asked for again, not lost."""
    try:
        return store.cache_get(key)
    except psycopg.Error as exc:
        log.warning("LLM cache read failed (%s); asking the model", _one_line(exc))
        return None


def _cache_put(store: Store, key: str, model_identity: str, value: Any) -> None:
    try:
        store.cache_put(key, model_identity, value)
    except psycopg.Error as exc:
        log.warning("LLM cache write failed (%s); the answer is used but not kept", _one_line(exc))


def chat_messages(system: str, user: str) -> list[BaseMessage]:
    return [SystemMessage(content=system), HumanMessage(content=user)]
