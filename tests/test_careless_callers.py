"""Issue 27, item 4: a careless call is one clear error naming what is wrong, never a silent
wrong result (no passages, zero counts) and never a run away across the file system."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from chop_rag.api import ask, ingest
from chop_rag.cli import EXIT_LLM_UNAVAILABLE, main
from chop_rag.config import Context
from chop_rag.graphs.answer import graph as answer_graph
from chop_rag.graphs.ingest import graph as ingest_graph
from chop_rag.harness.sample_corpus import write_sample_corpus
from chop_rag.retrieval.retriever import ChopRetriever
from chop_rag.store import UnknownCollection, store_for
from tests.fakes import ScriptedChatModel

QUESTION = "How often do I clean the filter of the Coolwave 330C?"


def down(task: str, user: str) -> str:
    raise ConnectionError("the LLM endpoint refused the connection")


@pytest.mark.usefixtures("store", "scripted")
def test_one_folder_given_as_a_string_or_a_path_is_one_path(
    context: Context, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_sample_corpus(tmp_path / "manuals")
    monkeypatch.chdir(tmp_path)  # a relative name: its characters would all be missing paths
    report = ingest("manuals", context=context)
    assert report["added"] == 3 and report["problems"] == []
    assert ingest(Path("manuals"), context=context)["unchanged"] == 3


def test_paths_that_are_not_paths_are_a_type_error_naming_them(context: Context) -> None:
    with pytest.raises(TypeError, match=r"paths must be a path or a list of paths, not int"):
        ingest(42, context=context)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"paths\[1\] must be a str or Path, not NoneType"):
        ingest(["manuals", None], context=context)  # type: ignore[list-item]


def test_an_unknown_collection_is_named_by_ask_the_graph_and_the_retriever(
    context: Context, scripted: ScriptedChatModel
) -> None:
    missing = context.with_overrides(collection=f"t_typo_{uuid.uuid4().hex[:8]}")
    expected = rf"collection '{missing.collection}' does not exist"
    with pytest.raises(UnknownCollection, match=expected):
        ask(QUESTION, context=missing)
    with pytest.raises(UnknownCollection, match=expected):
        answer_graph.invoke({"question": QUESTION}, context=missing)
    with pytest.raises(UnknownCollection, match=expected):
        ChopRetriever(context=missing).invoke(QUESTION)
    assert scripted.calls == [], "nothing is asked of the LLM for a collection that is not there"
    assert not store_for(missing).collection_exists(missing.collection), "nor is it created"


@pytest.mark.parametrize(
    ("context_keys", "named"),
    [({"colection": "manuals"}, "colection"), ({"k": 3, "serach": "hybrid"}, "serach")],
)
def test_a_misspelt_context_key_is_refused_by_name(
    context: Context, context_keys: dict[str, Any], named: str
) -> None:
    for graph, run_input in ((answer_graph, {"question": QUESTION}), (ingest_graph, {})):
        with pytest.raises(ValueError, match=rf"unknown setting\(s\): {named}"):
            graph.invoke(run_input, context=context_keys)


@pytest.mark.usefixtures("scripted")
def test_unknown_input_keys_are_refused_by_name_instead_of_an_ingest_of_nothing(
    context: Context, tmp_path: Path
) -> None:
    write_sample_corpus(tmp_path / "manuals")
    with pytest.raises(ValueError, match=r"unknown input key\(s\) 'path'.*paths, documents"):
        ingest_graph.invoke({"path": [str(tmp_path / "manuals")]}, context=context)
    with pytest.raises(ValueError, match=r"unknown input key\(s\) 'k'"):
        answer_graph.invoke({"question": QUESTION, "k": 3}, context=context)


def test_a_meta_value_of_the_wrong_kind_names_the_field_and_the_value(
    context: Context, tmp_path: Path
) -> None:
    with pytest.raises(ValueError, match=r"'fiscal_year' must be a whole number, not 'abc'"):
        ingest(tmp_path, meta={"fiscal_year": "abc"}, context=context)
    with pytest.raises(ValueError, match=r"meta must be an object of identity fields, got list"):
        ingest(tmp_path, meta=["fiscal_year", 2023], context=context)  # type: ignore[arg-type]


@pytest.mark.usefixtures("store", "cli_env")
def test_chop_ask_exits_non_zero_with_one_line_when_the_llm_fails(
    context: Context,
    scripted: ScriptedChatModel,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    write_sample_corpus(tmp_path / "manuals")
    ingest([tmp_path / "manuals"], context=context)
    monkeypatch.setenv("CHOP_ANSWER", "lead")  # the model writes part of every answer
    scripted.responder = down
    capsys.readouterr()
    assert main(["ask", QUESTION, "--collection", context.collection]) == EXIT_LLM_UNAVAILABLE
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    said = [line for line in lines if line.startswith("LLM unavailable:")]
    assert said == lines[-1:], "one line, after the sources and the retrieval note"
    assert said[0] == (
        "LLM unavailable: the answer quotes the sources only: "
        "ConnectionError: the LLM endpoint refused the connection"
    )
    assert main(["ask", QUESTION, "--collection", context.collection, "--json"]) == 3


@pytest.mark.usefixtures("store")
def test_an_llm_outage_message_always_names_the_last_error(
    context: Context, scripted: ScriptedChatModel, tmp_path: Path
) -> None:
    # headed manuals need only the profile call per document: before, those failures were not
    # reported and the message ended in an empty "(last: )"
    write_sample_corpus(tmp_path / "manuals")
    scripted.responder = down
    report = ingest([tmp_path / "manuals"], context=context)
    message = report["llm_unavailable"]
    assert "(last: )" not in message
    assert "(last: ConnectionError: the LLM endpoint refused the connection)" in message


def test_ingest_of_a_path_that_does_not_exist_raises_a_named_error(
    context: Context, tmp_path: Path
) -> None:
    """As `chop ingest /no/such/folder` exits 1: no report of zeros that reads as success."""
    import asyncio

    from chop_rag.api import aingest
    from chop_rag.reading.documents import PathNotFound

    missing = str(tmp_path / "no-such-folder")
    with pytest.raises(PathNotFound, match=f"^no such file or folder: {missing}$") as raised:
        ingest(missing, context=context)
    assert isinstance(raised.value, FileNotFoundError) and raised.value.paths == [missing]
    with pytest.raises(FileNotFoundError, match="no such file or folder"):
        asyncio.run(aingest([missing, missing + "-2"], context=context))
    assert not store_for(context).collection_exists(context.collection), "nothing started"
