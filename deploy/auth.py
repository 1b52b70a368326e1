"""Who may call the LangGraph server, and whose threads they see (LangGraph custom auth).

``langgraph.json`` names this module under ``"auth"``, so ``langgraph dev`` and a deployed
server both run it on every request:

- ``CHOP_API_KEYS`` set (comma-separated keys, in the server's environment): a request must
  carry one of them, as ``x-api-key: KEY`` or ``Authorization: Bearer KEY``; anything else is
  refused with 401. Deploy with it set (docs/deploy.md).
- ``CHOP_API_KEYS`` unset: the server answers only requests from this machine (a loopback
  client address), which is what ``langgraph dev`` and ``chop serve`` on a laptop need; a
  request from any other address is refused with a message saying to set the keys.

Each caller sees only the threads (conversations, ingest runs) it created: threads carry their
owner in their metadata and every read, search and run on a thread is filtered by it. Which
settings a run may choose is a separate rule that holds for every caller, authenticated or not
(deploy/graphs.py).
"""

from __future__ import annotations

import hmac
import ipaddress
from typing import Any

from langgraph_sdk import Auth

from chop.config import env_setting

API_KEYS_VARIABLE = "CHOP_API_KEYS"

auth = Auth()


def api_keys() -> list[str]:
    """The keys the deployment accepts (read on every request: a restart is not needed)."""
    return [key.strip() for key in str(env_setting(API_KEYS_VARIABLE)).split(",") if key.strip()]


def presented_key(headers: dict[bytes, bytes], authorization: str | None) -> str | None:
    """The key a request carries: ``x-api-key``, else a bearer token."""
    raw = headers.get(b"x-api-key")
    if raw:
        return raw.decode("latin-1").strip()
    if authorization and authorization.lower().startswith("bearer "):
        return authorization[7:].strip()
    return None


def is_loopback(host: str | None) -> bool:
    try:
        return host is not None and ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def caller_identity(key: str | None, host: str | None, keys: list[str]) -> str:
    """The caller's identity, or Auth.exceptions.HTTPException(401) saying why not."""
    if keys:
        for number, accepted in enumerate(keys, start=1):
            if key is not None and hmac.compare_digest(key.encode(), accepted.encode()):
                return f"key-{number}"
        raise Auth.exceptions.HTTPException(
            status_code=401,
            detail="this chop server needs an API key: send it as 'x-api-key: KEY' or "
            "'Authorization: Bearer KEY'",
        )
    if is_loopback(host):
        return "local"
    raise Auth.exceptions.HTTPException(
        status_code=401,
        detail=f"this chop server has no {API_KEYS_VARIABLE} set, so it answers only requests "
        f"from its own machine; set {API_KEYS_VARIABLE} to serve other machines",
    )


# The page's own files (chop/web/static: HTML, CSS, JS) hold no data: a browser loads them
# with no way to send a key, and the page then asks for one before it calls any route.
PAGE_FILES = ("/chop", "/chop/")
PAGE_STATIC = "/chop/static/"


def is_page_file(method: str, path: str) -> bool:
    return method in ("GET", "HEAD") and (path in PAGE_FILES or path.startswith(PAGE_STATIC))


@auth.authenticate
async def authenticate(
    request: Any, method: str, path: str, headers: dict[bytes, bytes], authorization: str | None
) -> Auth.types.MinimalUserDict:
    client = getattr(request, "client", None)
    host = getattr(client, "host", None)
    try:
        identity = caller_identity(presented_key(headers, authorization), host, api_keys())
    except Auth.exceptions.HTTPException:
        if is_page_file(method, path) and ".." not in path:
            return {"identity": "page-visitor", "is_authenticated": False}
        raise
    return {"identity": identity, "is_authenticated": True}


@auth.on.threads
async def own_threads(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType:
    """A thread is its creator's: stamped on creation, filtered on every other action."""
    if isinstance(value, dict):
        metadata = value.get("metadata")
        if metadata is None:
            metadata = value["metadata"] = {}
        if isinstance(metadata, dict):
            metadata["owner"] = ctx.user.identity
    return {"owner": ctx.user.identity}
