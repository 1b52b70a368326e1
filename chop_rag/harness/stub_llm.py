"""A stub OpenAI-compatible chat-completions server: a LATENCY STAND-IN for tests and benchmarks.

No model runs: each reply is the smallest value that fits the requested JSON schema (booleans
follow a hash of the prompt, strings are filler words, nullable fields null), after a seeded
delay (default 300-800 ms, about one small hosted-model call). Numbers measured against it say
how chop schedules LLM calls (concurrency, caching), never anything about answer quality.

    python -m chop_rag.harness.stub_llm --port 8011 --latency 0.3,0.8
    # then: CHOP_CHAT_PROVIDER=openai CHOP_OPENAI_BASE_URL=http://127.0.0.1:8011/v1 chop ingest ...

In-process (benchmarks, tests)::

    with serve_stub(latency=(0.3, 0.8)) as base_url:      # "http://127.0.0.1:<port>"
        Context(chat_provider="openai", openai_base_url=base_url + "/v1", ...)

Fault injection for tests: ``serve_stub(faults=["429", "500", "timeout", "invalid_json",
"missing_field", "ok"])``: each entry is used by one chat request, in arrival order; when the
list is spent every request is "ok".

- "429": HTTP 429 with ``Retry-After`` (whole seconds) and ``retry-after-ms`` headers
- "500": HTTP 500 with an OpenAI-style error body
- "timeout": waits ``timeout_sleep`` seconds (past the client's timeout) before a normal reply
- "invalid_json": HTTP 200 whose message content is truncated JSON
- "missing_field": HTTP 200 whose JSON lacks the schema's first required field
- "ok": a normal reply

Endpoints: POST /v1/chat/completions (also /chat/completions), GET /v1/models, and
GET /stub/stats (requests served, faults used, requests in flight and their peak).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import signal
import sys
import threading
import time
import uuid
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FAULTS = ("429", "500", "timeout", "invalid_json", "missing_field", "ok")
STUB_NOTICE = "stub LLM: latency stand-in only, replies are schema-shaped filler, not a model"
_WORDS = ("alpha", "bravo", "delta", "filter", "panel", "remote", "timer", "valve")

Json = Any


# --------------------------------------------------------------------------- schema instances
def prompt_digest(messages: Sequence[Json]) -> int:
    """A stable integer from the request's messages (the same prompt gives the same reply)."""
    text = json.dumps(messages, sort_keys=True, ensure_ascii=False)
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")


def make_instance(schema: Json, seed: int = 0) -> Json:
    """A small value valid for ``schema`` (the JSON-schema subset that pydantic emits).

    Handles type (also as a list), properties/required, items/minItems/maxItems,
    maxLength/minLength, enum/const, anyOf/oneOf (null preferred: nullable -> null), allOf,
    and $ref into $defs/definitions. Booleans alternate with ``seed`` and the field's path.
    """
    return _Instance(schema).value(schema, seed, "")


class _Instance:
    def __init__(self, root: Json) -> None:
        self.root = root

    def resolve(self, schema: Json) -> Json:
        seen = 0
        while isinstance(schema, dict) and "$ref" in schema and seen < 32:
            ref = schema["$ref"]
            if not ref.startswith("#/"):
                raise ValueError(f"unsupported $ref {ref!r}")
            target: Json = self.root
            for part in ref[2:].split("/"):
                target = target[part.replace("~1", "/").replace("~0", "~")]
            schema, seen = target, seen + 1
        return schema

    def value(self, schema: Json, seed: int, path: str) -> Json:
        schema = self.resolve(schema)
        if schema is True or schema == {} or schema is None:
            return None
        if "const" in schema:
            return schema["const"]
        if schema.get("enum"):
            return schema["enum"][_bit(seed, path, len(schema["enum"]))]
        if "allOf" in schema:
            merged: dict[str, Any] = {}
            for part in schema["allOf"]:
                merged.update(self.resolve(part))
            merged.update({k: v for k, v in schema.items() if k != "allOf"})
            return self.value(merged, seed, path)
        options = schema.get("anyOf") or schema.get("oneOf")
        if options:
            resolved = [self.resolve(o) for o in options]
            if any(_is_null(o) for o in resolved):
                return None
            return self.value(resolved[0], seed, path)
        kind = schema.get("type")
        if isinstance(kind, list):
            if "null" in kind:
                return None
            kind = kind[0] if kind else None
        if kind is None:
            kind = "object" if "properties" in schema else "string"
        if kind == "null":
            return None
        if kind == "boolean":
            return bool(_bit(seed, path, 2))
        if kind in ("integer", "number"):
            low = schema.get("minimum", schema.get("exclusiveMinimum", 0))
            number = max(0, low) + (1 if "exclusiveMinimum" in schema else 0)
            return int(number) if kind == "integer" else float(number)
        if kind == "string":
            return _string(schema, seed, path)
        if kind == "array":
            low = int(schema.get("minItems", 0))
            count = max(1, low)
            if "maxItems" in schema:
                count = min(count, int(schema["maxItems"]))
            items = schema.get("items", {})
            if isinstance(items, list):  # tuple form
                return [self.value(s, seed, f"{path}/{i}") for i, s in enumerate(items[:count])]
            return [self.value(items, seed + i, f"{path}/{i}") for i in range(count)]
        if kind == "object":
            properties = schema.get("properties", {})
            required = schema.get("required", list(properties))
            return {
                name: self.value(properties.get(name, {}), seed, f"{path}/{name}")
                for name in required
            }
        raise ValueError(f"unsupported schema type {kind!r}")


def _is_null(schema: Json) -> bool:
    return isinstance(schema, dict) and schema.get("type") == "null"


def _bit(seed: int, path: str, modulo: int) -> int:
    mixed = hashlib.sha256(f"{seed}:{path}".encode()).digest()
    return int.from_bytes(mixed[:4], "big") % modulo


def _string(schema: Json, seed: int, path: str) -> str:
    word = _WORDS[_bit(seed, path, len(_WORDS))]
    low = int(schema.get("minLength", 0))
    if len(word) < low:
        word = (word * (low // len(word) + 1))[:low]
    if "maxLength" in schema:
        word = word[: int(schema["maxLength"])]
    return word


def requested_schema(body: Json) -> tuple[str, Json | None]:
    """What the request asks for: ("json", schema), ("tool", function spec) or ("text", None)."""
    response_format = body.get("response_format") or {}
    if isinstance(response_format, dict):
        if response_format.get("type") == "json_schema":
            spec = response_format.get("json_schema") or {}
            return "json", spec.get("schema", {})
        if response_format.get("type") == "json_object":
            return "json", response_format.get("schema", {"type": "object"})
        if "schema" in response_format:
            return "json", response_format["schema"]
    tools = body.get("tools") or []
    if tools:
        chosen = body.get("tool_choice")
        name = None
        if isinstance(chosen, dict):
            name = (chosen.get("function") or {}).get("name")
        for tool in tools:
            function = tool.get("function") or {}
            if name in (None, function.get("name")):
                return "tool", function
    return "text", None


# --------------------------------------------------------------------------- the server
class StubServer:
    """The stub on 127.0.0.1 (port 0: a free one), in a background thread; see the module doc."""

    def __init__(
        self,
        *,
        port: int = 0,
        latency: tuple[float, float] = (0.3, 0.8),
        seed: int = 0,
        faults: Sequence[str] | None = None,
        timeout_sleep: float = 30.0,
        retry_after: float = 0.05,
    ) -> None:
        unknown = [f for f in faults or () if f not in FAULTS]
        if unknown:
            raise ValueError(f"unknown fault(s) {unknown}; choose from {', '.join(FAULTS)}")
        low, high = latency
        if not 0 <= low <= high:
            raise ValueError(f"latency must be (low, high) with 0 <= low <= high, got {latency}")
        self.latency = (float(low), float(high))
        self.timeout_sleep = timeout_sleep
        self.retry_after = retry_after
        self._faults: deque[str] = deque(faults or ())
        self._random = random.Random(seed)
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self.requests = 0
        self.served: list[str] = []  # the fault (or "ok") each chat request got, in order
        self.in_flight = 0
        self.peak_in_flight = 0
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> StubServer:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, name="stub-llm", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes requests sleeping in a "timeout" fault
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def stats(self) -> dict[str, Any]:
        with self._lock:
            return {
                "notice": STUB_NOTICE,
                "requests": self.requests,
                "served": list(self.served),
                "faults_left": list(self._faults),
                "in_flight": self.in_flight,
                "peak_in_flight": self.peak_in_flight,
                "latency_s": list(self.latency),
            }

    def reset_peak(self) -> None:
        """Start measuring the peak of concurrent requests anew (e.g. per benchmark run)."""
        with self._lock:
            self.peak_in_flight = self.in_flight

    # -- request bookkeeping (called from handler threads)
    def begin(self) -> tuple[str, float]:
        with self._lock:
            fault = self._faults.popleft() if self._faults else "ok"
            self.requests += 1
            self.served.append(fault)
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            delay = self._random.uniform(*self.latency)
        return fault, delay

    def end(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def wait(self, seconds: float) -> None:
        if seconds > 0:
            self._stopping.wait(seconds)


def _handler_for(stub: StubServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive: clients reuse connections
        server_version = "chop-stub-llm/1"

        def log_message(self, format: str, *args: Any) -> None:
            pass  # quiet: benchmarks print their own tables

        def do_GET(self) -> None:
            path = self.path.split("?")[0].rstrip("/")
            if path in ("/v1/models", "/models"):
                self._json(
                    200,
                    {
                        "object": "list",
                        "data": [
                            {"id": "stub", "object": "model", "created": 0, "owned_by": "stub"}
                        ],
                    },
                )
            elif path == "/stub/stats":
                self._json(200, stub.stats())
            else:
                self._error(404, f"no route {self.path}", "not_found")

        def do_POST(self) -> None:
            path = self.path.split("?")[0].rstrip("/")
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            if path not in ("/v1/chat/completions", "/chat/completions"):
                self._error(404, f"no route {self.path}", "not_found")
                return
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError as exc:
                self._error(400, f"request body is not JSON: {exc}", "invalid_request_error")
                return
            fault, delay = stub.begin()
            try:
                self._chat(body, fault, delay)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a "timeout" fault does this on purpose)
            finally:
                stub.end()

        def _chat(self, body: Json, fault: str, delay: float) -> None:
            if fault == "429":
                headers = {
                    "Retry-After": str(max(1, round(stub.retry_after))),
                    "retry-after-ms": str(int(stub.retry_after * 1000)),
                }
                self._error(429, "stub: rate limited (injected)", "rate_limit_exceeded", headers)
                return
            if fault == "500":
                self._error(500, "stub: server error (injected)", "server_error")
                return
            stub.wait(stub.timeout_sleep if fault == "timeout" else delay)
            messages = body.get("messages") or []
            digest = prompt_digest(messages)
            mode, schema = requested_schema(body)
            if mode == "text":
                content: str | None = f"stub reply {digest % 1000}"
                value = None
            else:
                spec = schema if mode == "json" else (schema or {}).get("parameters", {})
                value = make_instance(spec, digest)
                if fault == "missing_field" and isinstance(value, dict) and value:
                    value.pop(next(iter(value)))
                content = json.dumps(value)
            if fault == "invalid_json":  # cut in half: never parses
                content = (content or "")[: len(content or "") // 2] or "{"
            message: dict[str, Any] = {"role": "assistant", "content": content}
            finish = "stop"
            if mode == "tool":
                call = {
                    "id": f"call_{uuid.uuid4().hex[:12]}",
                    "type": "function",
                    "function": {"name": (schema or {}).get("name", "tool"), "arguments": content},
                }
                message = {"role": "assistant", "content": None, "tool_calls": [call]}
                finish = "tool_calls"
            completion = {
                "id": f"chatcmpl-stub-{uuid.uuid4().hex[:12]}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", "stub"),
                "system_fingerprint": "stub",
                "choices": [
                    {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
                ],
                "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
            }
            if body.get("stream"):
                self._stream(completion)
            else:
                self._json(200, completion)

        def _stream(self, completion: Json) -> None:
            """The same reply as server-sent events: one delta, one finish, [DONE]."""
            choice = completion["choices"][0]
            base = {k: v for k, v in completion.items() if k not in ("choices", "usage")}
            base["object"] = "chat.completion.chunk"
            delta = {k: v for k, v in choice["message"].items() if v is not None}
            if "tool_calls" in delta:
                delta["tool_calls"] = [{"index": 0, **c} for c in delta["tool_calls"]]
            finish = choice["finish_reason"]
            events = [
                {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
                {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
            ]
            payload = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
            data = payload.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _error(
            self,
            status: int,
            message: str,
            kind: str,
            headers: dict[str, str] | None = None,
        ) -> None:
            body = {"error": {"message": message, "type": kind, "code": kind, "param": None}}
            self._json(status, body, headers)

        def _json(self, status: int, body: Json, headers: dict[str, str] | None = None) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

    return Handler


@contextmanager
def running_stub(**options: Any) -> Iterator[StubServer]:
    """Run the stub for the ``with`` block; yields the :class:`StubServer` (base_url, stats(),
    served). ``options`` are StubServer's: latency, faults, seed, port, timeout_sleep,
    retry_after."""
    server = StubServer(**options).start()
    try:
        yield server
    finally:
        server.stop()


@contextmanager
def serve_stub(**options: Any) -> Iterator[str]:
    """Like :func:`running_stub` but yields only its base URL (add "/v1" for OpenAI clients)."""
    with running_stub(**options) as server:
        yield server.base_url


def _latency(value: str) -> tuple[float, float]:
    parts = [float(p) for p in value.split(",")]
    if len(parts) == 1:
        parts = parts * 2
    if len(parts) != 2:
        raise argparse.ArgumentTypeError("latency is LOW,HIGH in seconds, e.g. 0.3,0.8")
    return parts[0], parts[1]


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m chop_rag.harness.stub_llm",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--port", type=int, default=0, help="0: a free port")
    p.add_argument("--latency", type=_latency, default=(0.3, 0.8), help="LOW,HIGH seconds")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--faults", default="", help=f"comma-separated, in order: {', '.join(FAULTS)}")
    args = p.parse_args(argv)
    faults = [f.strip() for f in args.faults.split(",") if f.strip()]
    server = StubServer(port=args.port, latency=args.latency, seed=args.seed, faults=faults)
    low, high = args.latency
    print(
        f"{STUB_NOTICE}\nserving {server.base_url}/v1 (latency {low}-{high} s); Ctrl-C stops",
        flush=True,
    )
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    server.start()
    try:
        while not stop.wait(3600):
            pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
