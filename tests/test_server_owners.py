"""Issue 45, item 2: deny by default. Behind a real ``langgraph dev`` with two keys, every
resource the server exposes (threads and their runs, assistants, crons, the store) belongs to
the key that made it: the other key neither sees nor changes it, however it asks. The graphs'
own assistants are read by every key and changed by none.

The rules themselves (deploy/auth.py) are also checked without a server, at the end.
"""

from __future__ import annotations

import asyncio
import urllib.error
import urllib.request
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from langgraph_sdk import Auth

from chop_rag.deploy import auth as server_auth
from tests.langgraph_server import RUN_S, langgraph_dev, missing_server_packages

ANN, BOB = "key-of-ann", "key-of-bob"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if reason := missing_server_packages():
        pytest.skip(reason)
    folder = tmp_path_factory.mktemp("owners")
    (folder / "server").mkdir()
    settings = {
        "CHOP_API_KEYS": f"{ANN},{BOB}",
        "CHOP_CHAT_PROVIDER": "openai",
        "CHOP_OPENAI_BASE_URL": "http://127.0.0.1:9/v1",  # no run here reaches a model
        "CHOP_SERVER_PATHS": str(folder / "served"),
    }
    with langgraph_dev(folder / "server", folder / "data", settings) as url:
        yield url


def client(url: str, key: str) -> Any:
    from langgraph_sdk import get_sync_client

    return get_sync_client(url=url, api_key=key, timeout=RUN_S)


def refused(call: Any, *args: Any, **kwargs: Any) -> str:
    """The server's answer to a call it must refuse (403 forbidden or 404 not found), as text."""
    import httpx

    with pytest.raises(httpx.HTTPStatusError) as error:
        call(*args, **kwargs)
    assert error.value.response.status_code in (403, 404, 409), error.value.response.text
    return error.value.response.text


@pytest.mark.server
def test_a_key_never_reaches_another_keys_assistants(server: str) -> None:
    ann, bob = client(server, ANN), client(server, BOB)
    mine = ann.assistants.create("chat", context={"collection": "ann_private"}, name="ann's")
    assistant_id = mine["assistant_id"]

    assert assistant_id in {a["assistant_id"] for a in ann.assistants.search(graph_id="chat")}
    for found in (
        bob.assistants.search(),
        bob.assistants.search(graph_id="chat"),
        bob.assistants.search(metadata={"owner": "key-1"}),
        bob.assistants.search(name="ann"),
    ):
        assert assistant_id not in {a["assistant_id"] for a in found}
    assert bob.assistants.count(graph_id="chat") < ann.assistants.count(graph_id="chat")
    refused(bob.assistants.get, assistant_id)
    refused(bob.assistants.get_graph, assistant_id)
    refused(bob.assistants.get_versions, assistant_id)
    refused(bob.assistants.update, assistant_id, context={"collection": "bobs"})
    refused(bob.assistants.set_latest, assistant_id, 1)
    refused(bob.assistants.delete, assistant_id)
    # nor by creating one with its id
    refused(bob.assistants.create, "chat", assistant_id=assistant_id, if_exists="do_nothing")
    # nor by running it, on a thread of its own or none
    refused(bob.runs.create, None, assistant_id, input={"messages": []})
    thread = bob.threads.create()
    refused(bob.runs.create, thread["thread_id"], assistant_id, input={"messages": []})
    assert ann.assistants.get(assistant_id)["context"] == {"collection": "ann_private"}

    # a key cannot hand its assistant to the other, nor pass it off as the server's own
    forged = bob.assistants.create(
        "chat", metadata={"owner": "key-1", "created_by": "system"}, name="forged"
    )
    assert forged["metadata"]["owner"] == "key-2"
    assert "created_by" not in forged["metadata"]
    assert forged["assistant_id"] not in {a["assistant_id"] for a in ann.assistants.search()}
    refused(ann.assistants.get, forged["assistant_id"])
    moved = ann.assistants.update(assistant_id, metadata={"owner": "key-2"})
    assert moved["metadata"]["owner"] == "key-1"


@pytest.mark.server
def test_the_graphs_own_assistants_are_read_by_every_key_and_changed_by_none(
    server: str,
) -> None:
    ann, bob = client(server, ANN), client(server, BOB)
    (chat,) = [a for a in bob.assistants.search(graph_id="chat") if a["metadata"].get("created_by")]
    assert ann.assistants.get(chat["assistant_id"])["graph_id"] == "chat"
    for key in (ann, bob):
        text = refused(key.assistants.update, chat["assistant_id"], context={"collection": "x"})
        assert "read-only" in text
        refused(key.assistants.set_latest, chat["assistant_id"], 1)
        refused(key.assistants.delete, chat["assistant_id"])
    after = ann.assistants.get(chat["assistant_id"])
    assert after["context"] == chat["context"] and after["config"] == chat["config"]
    assert after["version"] == chat["version"]


@pytest.mark.server
def test_a_key_never_reaches_another_keys_threads_or_their_runs(server: str) -> None:
    ann, bob = client(server, ANN), client(server, BOB)
    thread = ann.threads.create(metadata={"topic": "salaries"})
    thread_id = thread["thread_id"]

    assert thread_id not in {t["thread_id"] for t in bob.threads.search()}
    assert thread_id not in {
        t["thread_id"] for t in bob.threads.search(metadata={"topic": "salaries"})
    }
    assert bob.threads.count(metadata={"topic": "salaries"}) == 0
    refused(bob.threads.get, thread_id)
    refused(bob.threads.get_state, thread_id)
    refused(bob.threads.get_history, thread_id)
    refused(bob.threads.update, thread_id, metadata={"owner": "key-2"})
    refused(bob.threads.update_state, thread_id, {"messages": []}, as_node="reply")
    refused(bob.threads.copy, thread_id)
    refused(bob.threads.create, thread_id=thread_id, if_exists="do_nothing")
    refused(bob.runs.create, thread_id, "chat", input={"messages": []})
    refused(bob.runs.create, thread_id, "ingest", input={"paths": []}, if_not_exists="create")
    refused(bob.runs.list, thread_id)
    refused(bob.threads.delete, thread_id)
    assert bob.threads.search() == [] or all(
        t["metadata"]["owner"] == "key-2" for t in bob.threads.search()
    )
    kept = ann.threads.get(thread_id)
    assert kept["metadata"] == {"topic": "salaries", "owner": "key-1"}
    ann.threads.copy(thread_id)  # its owner may copy it: the copy is its own
    assert ann.threads.count(metadata={"topic": "salaries", "owner": "key-1"}) == 2


@pytest.mark.server
def test_a_key_never_reaches_another_keys_crons(server: str) -> None:
    ann, bob = client(server, ANN), client(server, BOB)
    thread = ann.threads.create()
    cron = ann.crons.create_for_thread(thread["thread_id"], "chat", schedule="0 0 1 1 *")
    cron_id = cron["cron_id"]
    assert cron_id in {c["cron_id"] for c in ann.crons.search()}
    assert cron_id not in {c["cron_id"] for c in bob.crons.search()}
    assert cron_id not in {c["cron_id"] for c in bob.crons.search(thread_id=thread["thread_id"])}
    refused(bob.crons.create_for_thread, thread["thread_id"], "chat", schedule="0 0 1 1 *")
    refused(bob.crons.delete, cron_id)
    assert cron_id in {c["cron_id"] for c in ann.crons.search()}


@pytest.mark.server
def test_each_key_has_a_store_of_its_own(server: str) -> None:
    ann, bob = client(server, ANN), client(server, BOB)
    ann.store.put_item(["notes"], "wifi", {"password": "hunter2"})
    assert ann.store.get_item(["notes"], "wifi")["value"] == {"password": "hunter2"}

    assert bob.store.get_item(["notes"], "wifi") is None
    assert bob.store.get_item(["key-1", "notes"], "wifi") is None
    for prefix in ([], ["notes"], ["key-1"], ["key-1", "notes"]):
        assert bob.store.search_items(prefix)["items"] == [], prefix
    assert bob.store.search_items([], query="password")["items"] == []
    for listing in (
        bob.store.list_namespaces(),
        bob.store.list_namespaces(prefix=["key-1"]),
        bob.store.list_namespaces(suffix=["notes"]),
    ):
        assert all(namespace[0] == "key-2" for namespace in listing["namespaces"])
    bob.store.put_item(["key-1", "notes"], "wifi", {"password": "bob's"})  # his own namespace
    bob.store.delete_item(["notes"], "wifi")
    bob.store.delete_item(["key-1", "notes"], "wifi")

    assert ann.store.get_item(["notes"], "wifi")["value"] == {"password": "hunter2"}
    (listed,) = ann.store.list_namespaces()["namespaces"]
    assert listed == ["key-1", "notes"]
    assert ann.store.get_item(listed, "wifi")["value"] == {"password": "hunter2"}


@pytest.mark.server
def test_a_request_that_says_it_comes_from_langgraph_studio_still_needs_a_key(
    server: str,
) -> None:
    """``langgraph dev`` lets ``x-auth-scheme: langsmith`` (Studio) past custom auth unless
    langgraph.json disables it: with it, any caller skipped the keys."""
    for method, path, body in (
        ("POST", "/threads", b"{}"),
        ("POST", "/threads/search", b"{}"),
        ("POST", "/assistants/search", b"{}"),
        ("POST", "/store/namespaces", b"{}"),
        ("GET", "/chop/api/collections", None),
    ):
        request = urllib.request.Request(
            f"{server}{path}", data=body, method=method,
            headers={"Content-Type": "application/json", "x-auth-scheme": "langsmith"},
        )  # fmt: skip
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        assert refused.value.code == 401, path


def context(action: str, resource: str, identity: str = "key-1") -> Any:
    return Auth.types.AuthContext(
        user=SimpleNamespace(identity=identity),
        permissions=[],
        resource=resource,  # type: ignore[arg-type]
        action=action,  # type: ignore[arg-type]
    )


def test_a_resource_without_an_owner_rule_is_refused() -> None:
    with pytest.raises(Auth.exceptions.HTTPException) as error:
        asyncio.run(server_auth.refuse_the_rest(ctx=context("read", "widgets"), value={}))
    assert error.value.status_code == 403


def test_a_store_namespace_is_always_under_the_callers_identity() -> None:
    for asked, stored in (
        ((), ("key-2",)),
        (None, ("key-2",)),
        (("notes",), ("key-2", "notes")),
        (("key-1", "notes"), ("key-2", "key-1", "notes")),
        (("key-2", "notes"), ("key-2", "notes")),
    ):
        value = {"namespace": asked}
        asyncio.run(server_auth.own_store(ctx=context("search", "store", "key-2"), value=value))
        assert value["namespace"] == stored, asked


def test_what_a_key_creates_or_changes_is_stamped_as_its_own() -> None:
    for resource, handler in (
        ("threads", server_auth.own_threads),
        ("assistants", server_auth.own_assistants),
        ("crons", server_auth.own_crons),
    ):
        for action in ("create", "update"):
            value: Any = {"metadata": {"owner": "key-1", "created_by": "system"}}
            found = asyncio.run(handler(ctx=context(action, resource, "key-2"), value=value))
            assert value["metadata"] == {"owner": "key-2"}, (resource, action)
            assert found == {"owner": "key-2"}


def test_keys_read_their_own_assistants_and_the_graphs() -> None:
    found = asyncio.run(server_auth.own_assistants(ctx=context("search", "assistants"), value={}))
    assert found == {"$or": [{"owner": "key-1"}, {"created_by": "system"}]}
