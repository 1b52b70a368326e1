"""Issue 27, item 6: what nobody had tried. Two ingests of one collection at the same time, a
sidecar that points outside the input folder, files and folders the user cannot read."""

from __future__ import annotations

import contextvars
import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from chop_rag.api import ingest
from chop_rag.config import Context
from chop_rag.harness.sample_corpus import write_sample_corpus
from chop_rag.store import Store
from tests.fakes import ScriptedChatModel, slowed
from tests.ingest_runs import checkpointed_threads


def run_at_once(*runs: Any, stagger: float = 0.0) -> list[Any]:
    """Start every run in its own thread at the same moment (or ``stagger`` seconds apart);
    their results (or errors)."""
    outcomes: list[Any] = [None] * len(runs)
    start = threading.Barrier(len(runs))

    def worker(position: int) -> None:
        start.wait()
        threading.Event().wait(stagger * position)
        try:
            outcomes[position] = runs[position]()
        except Exception as exc:
            outcomes[position] = exc

    threads = [
        threading.Thread(target=contextvars.copy_context().run, args=(worker, i))
        for i in range(len(runs))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    return outcomes


@pytest.mark.parametrize(
    ("durable", "stagger"),
    [(True, 0.0), (True, 1.0), (False, 0.0)],
    ids=["durable", "durable-second-starts-midway", "not-durable"],
)
def test_two_ingests_of_one_collection_at_the_same_time_store_it_once(
    context: Context,
    store: Store,
    scripted: ScriptedChatModel,
    tmp_path: Path,
    durable: bool,
    stagger: float,
) -> None:
    write_sample_corpus(tmp_path / "manuals")

    scripted.responder = slowed(0.02)  # both runs are inside the graph at once
    ctx = context.with_overrides(continuity_mode="llm", chunk_tokens=60, chunk_overlap=10)
    reports = run_at_once(
        lambda: ingest([tmp_path / "manuals"], context=ctx, durable=durable),
        lambda: ingest([tmp_path / "manuals"], context=ctx, durable=durable),
        stagger=stagger,
    )
    assert not [r for r in reports if isinstance(r, Exception)], reports
    assert sum(r["added"] for r in reports) == 3, reports
    assert len(store.documents(ctx.collection)) == 3
    chunks = store.chunks(ctx.collection)
    assert len({(c["doc_id"], c["chunk_index"]) for c in chunks}) == len(chunks)
    if durable:
        assert checkpointed_threads(ctx) == [], "no thread is left behind by either run"


@pytest.mark.usefixtures("scripted")
def test_a_sidecar_that_links_outside_the_folder_is_refused(
    context: Context, store: Store, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere" / "secret.meta.json"
    outside.parent.mkdir()
    outside.write_text(json.dumps({"entity": "Someone Else Inc.", "fiscal_year": 1999}))
    folder = tmp_path / "manuals"
    write_sample_corpus(folder)
    manual = sorted(folder.iterdir())[0]
    (folder / (manual.name + ".meta.json")).symlink_to(outside)
    report = ingest(folder, context=context)
    assert report["added"] == 3
    (problem,) = [p for p in report["problems"] if p["source"].endswith(".meta.json")]
    assert problem["reason"] == "metadata ignored: it links outside the document's folder"
    identity = store.documents(context.collection)[str(manual.resolve())].metadata
    assert "Someone Else" not in json.dumps(identity)


@pytest.mark.usefixtures("store", "scripted")
def test_a_huge_sidecar_is_refused_before_it_is_read(context: Context, tmp_path: Path) -> None:
    folder = tmp_path / "manuals"
    write_sample_corpus(folder)
    manual = sorted(folder.iterdir())[0]
    (folder / (manual.name + ".meta.json")).write_text(" " * 2_000_000 + "{}")
    report = ingest(folder, context=context)
    (problem,) = [p for p in report["problems"] if p["source"].endswith(".meta.json")]
    assert problem["reason"].startswith("metadata ignored: larger than")


@pytest.mark.usefixtures("store", "scripted")
def test_a_file_or_folder_the_user_cannot_read_is_one_line_and_the_rest_loads(
    context: Context, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # this runs as root, which reads everything: the permission errors are injected where
    # the operating system would raise them for another user
    folder = tmp_path / "manuals"
    write_sample_corpus(folder)
    locked_file = sorted(folder.iterdir())[0]
    locked_dir = folder / "private"
    locked_dir.mkdir()
    (locked_dir / "notes.md").write_text("# Notes\n\nSecret notes about the filter.\n")
    real_open, real_os_open, real_scandir = Path.open, os.open, os.scandir

    def open_unless_locked(self: Path, *args: Any, **kwargs: Any) -> Any:
        if self == locked_file:
            raise PermissionError(13, "Permission denied", str(self))
        return real_open(self, *args, **kwargs)

    def os_open_unless_locked(path: Any, *args: Any, **kwargs: Any) -> Any:
        if Path(path) == locked_file:
            raise PermissionError(13, "Permission denied", str(path))
        return real_os_open(path, *args, **kwargs)

    def scandir_unless_locked(path: Any = ".") -> Any:
        if Path(path) == locked_dir:
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(Path, "open", open_unless_locked)
    monkeypatch.setattr(os, "open", os_open_unless_locked)  # the loaders open with os.open
    monkeypatch.setattr(os, "scandir", scandir_unless_locked)
    report = ingest(folder, context=context, durable=True)
    assert report["added"] == 2
    reasons = {p["source"]: p["reason"] for p in report["problems"]}
    assert reasons == {str(locked_file): "permission denied", str(locked_dir): "permission denied"}
