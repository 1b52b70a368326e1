"""A server without keys serves only its own page, on this machine's own names.

Without ``CHOP_API_KEYS`` the server trusts whoever reaches it from this machine (deploy/auth.py
checks the client's address), and a browser on this machine is this machine: any web page it
shows could call the server, read its answers and upload files, or reach it under a name of
its own that resolves to 127.0.0.1 (DNS rebinding). So a key-less server refuses, with one
sentence and before any route or the server's CORS runs,

- a request addressed (``Host``) to a name that is not a loopback name (``localhost``,
  ``127.0.0.1``, ``[::1]``) or one ``CHOP_SERVER_HOSTS`` lists, and
- a request a page of another origin sent (its ``Origin`` is not this server's own, or the
  browser says ``Sec-Fetch-Site: cross-site`` / ``same-site``),

and grants no private-network access (``langgraph dev`` would, for LangGraph Studio). A server
with keys leaves both to the keys and to CORS (``"http": {"cors": ...}`` in langgraph.json).
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from chop_rag.config import env_setting

LOOPBACK_NAMES = frozenset({"localhost"})
PRIVATE_NETWORK_HEADER = b"access-control-allow-private-network"
HOST_HEADER = re.compile(r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:[0-9]{1,5})?")


def has_keys() -> bool:
    """Whether the deployment set CHOP_API_KEYS (read on every request, as the auth does)."""
    return any(key.strip() for key in str(env_setting("CHOP_API_KEYS")).split(","))


def configured_hosts() -> frozenset[str]:
    """The names CHOP_SERVER_HOSTS adds to the loopback names, lower case."""
    names = str(env_setting("CHOP_SERVER_HOSTS")).split(",")
    return frozenset(name.strip().lower().rstrip(".") for name in names if name.strip())


def host_name(host: str) -> str | None:
    """The name of a ``Host`` header (``[::1]:2024`` -> ``::1``), lower case; None unless the
    header is a name or an address and a port, nothing else (no ``user@``, no path)."""
    if not HOST_HEADER.fullmatch(host):
        return None
    name = urlsplit(f"//{host}").hostname
    return name.rstrip(".") if name else None


def is_loopback_name(name: str | None) -> bool:
    if name is None:
        return False
    if name in LOOPBACK_NAMES or name in configured_hosts():
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def refusal(host: str | None, origin: str | None, fetch_site: str | None) -> str | None:
    """Why a key-less server refuses a request with these headers, in one sentence; None when
    it may answer."""
    if not is_loopback_name(host_name(host or "")):
        return (
            f"this chop server has no CHOP_API_KEYS set, so it answers only requests addressed "
            f"to localhost, not to {host or 'no host'!r}; set CHOP_SERVER_HOSTS to add a name "
            f"of this machine, or CHOP_API_KEYS to serve others"
        )
    own = (host or "").lower()
    if origin is not None:
        parts = urlsplit(origin.strip().lower())
        if parts.scheme not in {"http", "https"} or parts.netloc != own:
            return (
                f"this chop server has no CHOP_API_KEYS set, so it answers only its own page, "
                f"not a page from {origin!r}"
            )
    if fetch_site in {"cross-site", "same-site"}:
        return (
            "this chop server has no CHOP_API_KEYS set, so it answers only its own page, not a "
            f"request from another site (Sec-Fetch-Site: {fetch_site})"
        )
    return None


class OwnPageOnly:
    """ASGI middleware: on a key-less server, requests of other origins and hosts are refused
    (403, one sentence), and no response grants private-network access."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in {"http", "websocket"} or has_keys():
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        why = refusal(headers.get("host"), headers.get("origin"), headers.get("sec-fetch-site"))
        if why is not None:
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008, "reason": why[:120]})
                return
            await JSONResponse({"detail": why}, status_code=403)(scope, receive, send)
            return

        async def without_private_network(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [
                    (name, value)
                    for name, value in message.get("headers", [])
                    if name.lower() != PRIVATE_NETWORK_HEADER
                ]
            await send(message)

        await self.app(scope, receive, without_private_network)
