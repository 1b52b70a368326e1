"""Issue 36, item 1: a caller of the LangGraph server chooses what to ask and where to look,
never where the server sends its key or keeps its data; and only callers with a key (or on the
server's own machine) get in.

These specify the rules without a server; tests/test_server.py sends the same contexts to a
real ``langgraph dev`` and checks that nothing was created and no request was made.
"""

from __future__ import annotations

import inspect
import json
import re
import typing
from dataclasses import fields
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from langgraph.graph.state import CompiledStateGraph
from langgraph.pregel import Pregel
from langgraph.types import Command, Send
from langgraph_sdk import Auth
from langgraph_sdk.runtime import ServerRuntime

from chop_rag.config import CALLER_SETTINGS, Context, DeploymentSetting, deployment_settings
from chop_rag.deploy import auth as server_auth
from chop_rag.deploy import graphs as served
from chop_rag.graphs.answer import graph as answer_graph
from chop_rag.graphs.checked import refuse_server_paths, refuse_server_run_settings
from chop_rag.graphs.ingest import graph as ingest_graph
from chop_rag.reading.allowed import (
    OutsideFolders,
    named_file,
    open_for_reading,
    reading_within,
    refuse_documents_outside,
    refuse_paths_outside,
    server_folders,
)
from chop_rag.reading.documents import InvalidInput, make_document
from chop_rag.reading.loaders import load_one, load_paths

ROOT = Path(__file__).resolve().parent.parent
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
    for factory in (served.ingest, served.answer, served.chat):
        with pytest.raises(DeploymentSetting, match=f"{setting} cannot be chosen by a run"):
            factory(server_runtime({"collection": "manuals", setting: "http://evil:9/v1"}))


def test_every_served_graph_is_a_factory_of_the_runs_server_runtime() -> None:
    """The server passes a run's runtime (its context) only to a factory whose one parameter
    is annotated ServerRuntime; given anything else, no context would be checked."""
    for factory in (served.ingest, served.answer, served.chat):
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
    assert server_folders() == (tmp_path.resolve(), (tmp_path / "data").resolve())


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


@pytest.fixture
def folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """An allowed folder with a manual, and a secret folder beside it (CHOP_SERVER_PATHS)."""
    allowed, secret = tmp_path / "allowed", tmp_path / "secret"
    allowed.mkdir()
    secret.mkdir()
    (allowed / "manual.txt").write_text("Clean the filter every month.\n")
    (secret / "passwords.txt").write_text("root password: hunter2\n")
    (secret / "inner").mkdir()
    (secret / "inner" / "keys.txt").write_text("the vault key is 1234\n")
    monkeypatch.setenv("CHOP_SERVER_PATHS", str(allowed))
    return allowed, secret


def test_a_server_runs_folder_walk_never_leaves_the_allowed_folders_through_a_link(
    folders: tuple[Path, Path],
) -> None:
    allowed, secret = folders
    (allowed / "linked").symlink_to(secret)  # a linked folder
    (allowed / "sub").mkdir()
    (allowed / "sub" / "deeper").symlink_to(secret / "inner")  # a linked folder, deeper down
    (allowed / "stolen.txt").symlink_to(secret / "passwords.txt")  # a linked file
    (allowed / "own").mkdir()
    (allowed / "own" / "twice.txt").symlink_to(allowed / "manual.txt")  # a link that stays in
    within = server_folders()
    documents, problems = load_paths([str(allowed)], within=within)
    read = "\n".join(d["text"] for d in documents)
    assert "hunter2" not in read and "1234" not in read
    assert "Clean the filter" in read
    refused = {Path(p["source"]).name: p["reason"] for p in problems}
    assert "outside the folders a server run may read" in refused["stolen.txt"]
    assert "a link out of the folders" in refused["linked"]
    assert "a link out of the folders" in refused["deeper"]
    # parsed in worker processes (a batch of PDFs is), the same files are refused
    in_workers, problems = load_paths([str(allowed)], within=within, workers=2)
    assert [d["doc_id"] for d in in_workers] == [d["doc_id"] for d in documents]
    assert (
        "outside the folders"
        in {Path(p["source"]).name: p["reason"] for p in problems}["stolen.txt"]
    )
    # a Python caller is the deployment: it reads what it names
    documents, _ = load_paths([str(allowed)])
    assert "hunter2" in "\n".join(d["text"] for d in documents)


def test_a_file_is_checked_where_it_is_opened_not_only_where_it_was_named(
    folders: tuple[Path, Path],
) -> None:
    """A name checked while it was a plain file, and a link out by the time it is opened, is
    not read: the check looks at the file the kernel opened. So is a linked file inside a
    linked folder, and a sidecar that links out."""
    allowed, secret = folders
    swapped = allowed / "swapped.txt"
    swapped.write_text("an ordinary manual\n")
    refuse_paths_outside([str(swapped)], server_folders())  # the check the run's entry makes
    swapped.unlink()
    swapped.symlink_to(secret / "passwords.txt")  # ... then the name becomes a link
    with reading_within(server_folders()), pytest.raises(OutsideFolders):
        open_for_reading(swapped)
    documents, problems = load_one(swapped, within=server_folders())
    assert documents == [] and "outside the folders" in problems[0]["reason"]
    (secret / "inner" / "link.txt").symlink_to(secret / "passwords.txt")
    (allowed / "outer").symlink_to(secret / "inner")
    documents, problems = load_one(allowed / "outer" / "link.txt", within=server_folders())
    assert documents == [] and "outside the folders" in problems[0]["reason"]
    (allowed / "manual.txt.meta.json").symlink_to(secret / "passwords.txt")
    documents, problems = load_one(allowed / "manual.txt", within=server_folders())
    assert "metadata ignored" in problems[0]["reason"]


@pytest.mark.parametrize(
    "name",
    [
        "{secret}/passwords.txt",
        "{allowed}/../secret/passwords.txt",
        "{allowed}/linked",
        "{allowed}/linked/passwords.txt",
        "../secret/passwords.txt",
        "linked",
        "file://{secret}/passwords.txt",
        "/etc/passwd",
        "/etc/\x00passwd",
    ],
)
def test_every_name_a_server_run_gives_is_resolved_before_the_check(
    folders: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """Absolute, relative (against the server's folder), with ``..``, through a link, or a
    file: URI: each resolves outside and is refused, as a path and as a document's id."""
    allowed, secret = folders
    (allowed / "linked").symlink_to(secret)
    monkeypatch.chdir(allowed)
    name = name.format(allowed=allowed, secret=secret)
    if not name.startswith("file:"):
        with pytest.raises(OutsideFolders, match="outside the folders a server run may read"):
            refuse_paths_outside([name], server_folders())
    if named_file(name) is not None:
        document = make_document(name, "t", "x")
        with pytest.raises(OutsideFolders, match=f"document {re.escape(repr(name))}"):
            refuse_documents_outside([document], server_folders())


def test_a_plain_or_relative_document_id_or_a_web_address_names_no_outside_file(
    folders: tuple[Path, Path],
) -> None:
    allowed, _ = folders
    documents = [
        make_document("manual-7", "t", "x"),
        make_document("reports/2023/acme.pdf", "t", "x"),
        make_document("https://example.com/etc/passwd", "t", "x"),
        make_document(str(allowed / "manual.txt"), "t", "x"),
        make_document("manual-8", "t", "x", source="/home/alice/manual.pdf"),  # a label only
    ]
    refuse_documents_outside(documents, server_folders())


def test_every_route_of_a_server_run_to_a_file_meets_the_same_rule(
    folders: tuple[Path, Path],
) -> None:
    """The input, a command's update, a command's Send to load or straight to a document's
    pipeline, a document's source: each refused before anything runs (the load node and the
    document pipeline refuse them again, tests/test_server_files.py)."""
    _, secret = folders
    outside = str(secret / "passwords.txt")
    stolen = {"page_content": "x", "metadata": {"source": outside}}
    task = {"document": make_document(outside, "t", "x"), "fingerprint": "f"}
    for run_input in (
        {"paths": [outside]},
        {"documents": [stolen]},
        Command(update={"paths": [str(secret)]}, goto="load"),
        Command(goto=Send("load", {"paths": [outside]})),
        Command(goto=[Send("index_document", task)]),
    ):
        with pytest.raises(OutsideFolders):
            refuse_server_paths(SERVER_RUN, run_input)  # type: ignore[arg-type]


def test_the_nodes_that_read_files_refuse_them_whatever_the_entry_let_through(
    folders: tuple[Path, Path],
) -> None:
    """Past the run's entry (a graph served unchecked, a route the entry cannot see), the load
    node and the first node of a document's pipeline refuse the same names themselves."""
    _, secret = folders
    outside = str(secret / "passwords.txt")
    task = {"document": make_document(f"file://{outside}", "t", "x"), "fingerprint": "f"}
    unchecked = CompiledStateGraph.stream  # the plain graph's stream, without CheckedGraph's
    for run_input in (
        Command(update={"paths": [str(secret)]}, goto="load"),
        Command(update={"documents": [make_document(outside, "t", "x")]}, goto="load"),
        Command(goto=Send("index_document", task)),
    ):
        with pytest.raises(OutsideFolders, match="outside the folders a server run may read"):
            for _ in unchecked(ingest_graph, run_input, SERVER_RUN, context=Context()):  # type: ignore[arg-type]
                pass


def steps_inside(graph: Any) -> set[str]:
    """The names of every graph that runs inside ``graph``, at any depth (read from the nodes:
    ``get_subgraphs`` leaves out a subgraph compiled without checkpoints, as decide_cnm is)."""
    found: set[str] = set()
    for node in graph.nodes.values():
        if isinstance(node.bound, Pregel):
            found |= {node.bound.get_name(), *steps_inside(node.bound)}
    return found


def test_no_served_graph_is_an_internal_step_of_another() -> None:
    """A graph that runs only inside another (decide_cnm: one chunk's continuity decision,
    inside ingest) is no assistant and no MCP tool: the server offers each graph
    langgraph.json names as both, and no client has the chunk such a step takes."""
    names = json.loads((ROOT / "langgraph.json").read_text(encoding="utf-8"))["graphs"]
    graphs = {name: getattr(served, name)(server_runtime({})) for name in names}
    inside = {name: steps_inside(graph) for name, graph in graphs.items()}
    assert "decide_cnm" in inside["ingest"], "the rule must see ingest's internal steps"
    nested = sorted(
        f"{name} runs inside {outer}"
        for outer, steps in inside.items()
        for name in names
        if name != outer and name in steps
    )
    assert nested == []
