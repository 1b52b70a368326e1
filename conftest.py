"""Fixtures shared by tests/ and bench/tests/: one real PostgreSQL+pgvector for the session,
fresh collections per test, the real embedder."""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from chop_rag.config import Context
from chop_rag.models.construction import get_embedder
from chop_rag.models.llm import reset_outages
from chop_rag.store import Store, store_for


@pytest.fixture(autouse=True)
def endpoints_start_healthy() -> Iterator[None]:
    """An endpoint a test took down is not remembered as down by the next test."""
    reset_outages()
    yield
    reset_outages()


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The embedded database and the joined local model live here (outside the home folder)."""
    configured = os.environ.get("CHOP_TEST_DATA_DIR")
    folder = Path(configured) if configured else Path(tempfile.gettempdir()) / "chop-test-data"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def context(data_dir: Path) -> Context:
    """Defaults, a fresh collection, and the cache off so every test pays its own calls."""
    return Context(
        database_url=os.environ.get("CHOP_DATABASE_URL", ""),
        data_dir=str(data_dir),
        collection=f"t_{uuid.uuid4().hex[:12]}",
        use_cache=False,
        max_concurrency=4,
    )


@pytest.fixture
def store(context: Context) -> Iterator[Store]:
    store = store_for(context)
    yield store
    store.drop_collection(context.collection)


@pytest.fixture(scope="session")
def embedder(data_dir: Path):  # type: ignore[no-untyped-def]
    return get_embedder(Context(data_dir=str(data_dir)))
