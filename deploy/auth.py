"""Who may call the LangGraph server, and what of the server's they see (LangGraph custom auth).

``langgraph.json`` names this module under ``"auth"`` (with ``disable_studio_auth``, so that
Studio's requests are no way around it), so ``langgraph dev`` and a deployed server both run
it on every request:

- ``CHOP_API_KEYS`` set (comma-separated keys, in the server's environment): a request must
  carry one of them, as ``x-api-key: KEY`` or ``Authorization: Bearer KEY``; anything else is
  refused with 401. Deploy with it set (docs/deploy.md).
- ``CHOP_API_KEYS`` unset: the server answers only requests from this machine (a loopback
  client address), which is what ``langgraph dev`` and ``chop serve`` on a laptop need; a
  request from any other address is refused with a message saying to set the keys.

Deny by default: every resource the server exposes has an owner rule below, and any other
resource or action LangGraph adds is refused (the ``@auth.on`` handler). A caller (a key, or
``local`` on a key-less server) sees and changes only its own:

- threads and their runs (conversations, ingest runs): the owner is stamped in the metadata
  on creation, and every read, search, copy, update, delete and run is filtered by it;
- assistants: the caller's own, stamped the same way; the graphs' own assistants (the server
  creates one per graph, ``created_by: system``) are read by everyone and changed by no one;
- crons: stamped and filtered like threads;
- the store: every namespace a caller names is put under its identity (``("notes",)`` is
  ``(identity, "notes")``), in puts, gets, deletes, searches and namespace listings alike.

Which settings a run may choose is a separate rule that holds for every caller, authenticated
or not (deploy/graphs.py).
"""

from __future__ import annotations

import hmac
import ipaddress
import sys
from typing import Any

from langgraph_sdk import Auth

from chop_rag.config import env_setting

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


# The page's own files (chop_rag/web/static: HTML, CSS, JS) hold no data: a browser loads them
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


# What langgraph_api writes in the metadata of the assistant it makes for each graph.
SYSTEM_METADATA = {"created_by": "system"}
STAMPED_ACTIONS = ("create", "update", "create_run")


def owner_filter(ctx: Auth.types.AuthContext) -> Auth.types.FilterType:
    return {"owner": ctx.user.identity}


def stamp_owner(ctx: Auth.types.AuthContext, value: Any) -> None:
    """Write the caller as the owner of what it creates or changes, over any owner it named;
    a caller cannot pass its resource off as the server's own (``created_by``)."""
    if ctx.action not in STAMPED_ACTIONS or not isinstance(value, dict):
        return
    metadata = value.get("metadata")
    if metadata is None:
        metadata = value["metadata"] = {}
    if isinstance(metadata, dict):
        metadata.pop("created_by", None)
        metadata["owner"] = ctx.user.identity


def is_system_assistant(assistant_id: Any) -> bool:
    """Whether ``assistant_id`` is one the server made for a graph (langgraph_api keeps their
    ids; outside a server there are none). The owner filter refuses them anyway; this only
    turns its "not found" into a sentence that says why."""
    graphs = sys.modules.get("langgraph_api.graph")  # loaded by the server, never imported here
    return str(assistant_id) in getattr(graphs, "SYSTEM_ASSISTANT_IDS", ())


@auth.on
async def refuse_the_rest(ctx: Auth.types.AuthContext, value: Any) -> bool:
    """Deny by default: a resource or action without an owner rule here is refused."""
    raise Auth.exceptions.HTTPException(
        status_code=403,
        detail=f"this chop server has no rule that lets a caller {ctx.action} {ctx.resource}",
    )


@auth.on.threads
async def own_threads(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType:
    """A thread is its creator's: stamped on creation, filtered on every other action (runs
    on a thread included: ``create_run``)."""
    stamp_owner(ctx, value)
    return owner_filter(ctx)


@auth.on.crons
async def own_crons(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType:
    """A cron is its creator's, as a thread is."""
    stamp_owner(ctx, value)
    return owner_filter(ctx)


@auth.on.assistants
async def own_assistants(ctx: Auth.types.AuthContext, value: Any) -> dict[str, Any]:
    """A caller's assistants are its own; the graphs' own are read by all, changed by none."""
    if ctx.action in ("read", "search"):
        return {"$or": [owner_filter(ctx), dict(SYSTEM_METADATA)]}
    if ctx.action in ("update", "delete") and is_system_assistant(value.get("assistant_id")):
        raise Auth.exceptions.HTTPException(
            status_code=403,
            detail="the graphs' own assistants are read-only: create an assistant of your own "
            "(POST /assistants) to keep other settings",
        )
    stamp_owner(ctx, value)
    return owner_filter(ctx)  # a system assistant has no owner: never matched


def own_namespace(identity: str, namespace: Any) -> tuple[str, ...]:
    """``namespace`` under the caller's identity: ``("notes",)`` is ``(identity, "notes")``;
    one already under it stays (a namespace the server listed can be used as it is)."""
    labels = tuple(namespace or ())
    return labels if labels[:1] == (identity,) else (identity, *labels)


@auth.on.store
async def own_store(ctx: Auth.types.AuthContext, value: Any) -> None:
    """Each caller's store items live under its identity: another caller's namespace, or a
    prefix of it, names one inside the caller's own, which holds nothing of theirs."""
    value["namespace"] = own_namespace(ctx.user.identity, value.get("namespace"))
