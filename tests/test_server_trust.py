"""Issue 36, item 1: a caller of the LangGraph server chooses what to ask and where to look,
never where the server sends its key or keeps its data; and only callers with a key (or on the
server's own machine) get in.

These specify the rules without a server; tests/test_server.py sends the same contexts to a
real ``langgraph dev`` and checks that nothing was created and no request was made.
"""

from __future__ import annotations

import inspect
import typing
from dataclasses import fields
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from langgraph_sdk import Auth
from langgraph_sdk.runtime import ServerRuntime

from chop.config import CALLER_SETTINGS, Context, DeploymentSetting, deployment_settings
from chop.reading.documents import InvalidInput
from deploy import auth as server_auth
from deploy import graphs as served
from graphs.answer import graph as answer_graph
from graphs.checked import refuse_server_paths, refuse_server_run_settings, server_roots

SERVER_RUN = {"configurable": {"langgraph_request_id": "r-1"}}


def server_runtime(context: dict[str, Any]) -> Any:
    return SimpleNamespace(context=context)


@pytest.mark.parametrize(
    "setting",
    [
        "openai_base_url",
        "embedding_base_url",
        "database_url",
        "data_dir",
        "chat_provider",
        "chat_model",
        "embedding_model",
        "max_concurrency",
        "llm_timeout_s",
    ],
)
def test_a_server_run_cannot_set_endpoints_files_models_or_limits(setting: str) -> None:
    for factory in (served.ingest, served.answer, served.decide_cnm):
        with pytest.raises(DeploymentSetting, match=f"{setting} cannot be chosen by a run"):
            factory(server_runtime({"collection": "manuals", setting: "http://evil:9/v1"}))


def test_every_served_graph_is_a_factory_of_the_runs_server_runtime() -> None:
    """The server passes a run's runtime (its context) only to a factory whose one parameter
    is annotated ServerRuntime; given anything else, no context would be checked."""
    for factory in (served.ingest, served.decide_cnm, served.answer, served.chat):
        (parameter,) = inspect.signature(factory).parameters
        assert typing.get_type_hints(factory)[parameter] is ServerRuntime, factory.__name__


def test_a_server_run_may_choose_its_collection_and_how_to_search() -> None:
    context = {"collection": "manuals", "k": 3, "search": "hybrid", "answer": "quote"}
    assert served.answer(server_runtime(context)) is answer_graph


def test_every_setting_is_either_a_callers_or_the_deployments() -> None:
    names = {spec.name for spec in fields(Context)}
    assert names >= CALLER_SETTINGS, CALLER_SETTINGS - names
    assert deployment_settings() == names - CALLER_SETTINGS
    assert {"openai_base_url", "database_url", "data_dir"} <= deployment_settings()


def test_the_graph_itself_refuses_deployment_settings_on_a_server_run() -> None:
    """Served without a factory, the graph still refuses: the server stamps every run."""
    with pytest.raises(DeploymentSetting, match="data_dir"):
        refuse_server_run_settings(SERVER_RUN, {"data_dir": "/tmp/elsewhere"})  # type: ignore[arg-type]
    with pytest.raises(DeploymentSetting, match="openai_base_url"):
        answer_graph.invoke(
            {"question": "How do I reset it?"},
            SERVER_RUN,  # type: ignore[arg-type]
            context={"openai_base_url": "http://127.0.0.1:9/v1"},
        )


def test_python_callers_are_the_deployment_and_may_set_everything() -> None:
    refuse_server_run_settings(None, {"data_dir": "/tmp/x", "openai_base_url": "http://x"})
    refuse_server_run_settings({"configurable": {}}, {"data_dir": "/tmp/x"})


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(server_auth.API_KEYS_VARIABLE, "k-one, k-two")


@pytest.mark.usefixtures("keys")
def test_with_keys_a_request_needs_one_of_them_from_anywhere() -> None:
    keys = server_auth.api_keys()
    assert keys == ["k-one", "k-two"]
    assert server_auth.caller_identity("k-two", "203.0.113.7", keys) == "key-2"
    for key, host in ((None, "127.0.0.1"), ("k-three", "127.0.0.1"), ("", "::1")):
        with pytest.raises(Auth.exceptions.HTTPException) as refused:
            server_auth.caller_identity(key, host, keys)
        assert refused.value.status_code == 401


def test_without_keys_only_this_machine_gets_in(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(server_auth.API_KEYS_VARIABLE, raising=False)
    assert server_auth.api_keys() == []
    for host in ("127.0.0.1", "::1", "localhost"):
        assert server_auth.caller_identity(None, host, []) == "local"
    for host in ("192.0.2.10", "2001:db8::1", None):
        with pytest.raises(Auth.exceptions.HTTPException, match="CHOP_API_KEYS"):
            server_auth.caller_identity(None, host, [])


def test_the_key_is_read_from_x_api_key_or_a_bearer_token() -> None:
    assert server_auth.presented_key({b"x-api-key": b" k-one "}, None) == "k-one"
    assert server_auth.presented_key({}, "Bearer k-two") == "k-two"
    assert server_auth.presented_key({}, "Basic abc") is None


def test_a_server_run_reads_only_paths_under_the_deployments_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    allowed = tmp_path / "manuals"
    (allowed / "sub").mkdir(parents=True)
    (tmp_path / "secret").mkdir()
    (allowed / "link").symlink_to(tmp_path / "secret")
    monkeypatch.setenv("CHOP_SERVER_PATHS", str(allowed))
    refuse_server_paths(SERVER_RUN, {"paths": [str(allowed), str(allowed / "sub")]})  # type: ignore[arg-type]
    for outside in (
        "/etc",
        str(tmp_path / "secret"),
        str(allowed / "link"),
        f"{allowed}/../secret",
    ):
        with pytest.raises(InvalidInput, match="outside the folders a server run may read"):
            refuse_server_paths(SERVER_RUN, {"paths": [outside]})  # type: ignore[arg-type]
    refuse_server_paths(None, {"paths": ["/etc"]})  # Python callers are the deployment


def test_by_default_a_server_run_reads_its_folder_and_data_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CHOP_SERVER_PATHS", raising=False)
    monkeypatch.setenv("CHOP_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    assert server_roots() == [tmp_path.resolve(), (tmp_path / "data").resolve()]


def test_only_the_pages_own_files_load_without_a_key() -> None:
    for path in ("/chop/", "/chop", "/chop/static/app.js"):
        assert server_auth.is_page_file("GET", path), path
    for method, path in (
        ("GET", "/chop/api/collections"),
        ("POST", "/chop/"),
        ("GET", "/threads"),
        ("GET", "/chop/staticx"),
    ):
        assert not server_auth.is_page_file(method, path), (method, path)
