"""Issue 26: nomic-embed-text-v1.5, the stronger offline embedder (CHOP_EMBEDDING_MODEL), built
from its PyPI zip parts, with its task prefixes, and bound to the collections it made.

These need its zip parts, which scripts/install.sh installs (CI runs them); an install made with
CHOP_INSTALL_NOMIC=0 leaves them out explicitly with ``-m "not nomic"``.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import numpy as np
import pytest

from chop_rag.api import ask, ingest
from chop_rag.config import Context
from chop_rag.models.construction import get_embedder
from chop_rag.models.embedders import Embedder, embed_queries
from chop_rag.models.weights import (
    MINILM,
    NOMIC,
    NOMIC_GGUF_SHA256,
    NOMIC_PREFIXES,
    NOMIC_Q8,
    ModelUnavailable,
    nomic_gguf_path,
)
from chop_rag.store import EmbedderMismatch, Store
from tests.fakes import ScriptedChatModel
from tests.ingest_runs import ingested, made_with, write_manual

pytestmark = pytest.mark.nomic

FILTER = (
    "## Cleaning the filter\n\nTake out the air filter every four weeks; rinse it in warm water."
)
WIFI = "## Wireless network\n\nOpen Settings, choose Network and pick your Wi-Fi network."
QUESTION = "How often should I wash the filter of the Coolwave 330C?"


@pytest.fixture(scope="module")
def nomic(data_dir: Path) -> Embedder:
    return get_embedder(Context(data_dir=str(data_dir), embedding_model=NOMIC))


def test_the_model_is_inflated_from_its_zip_parts_once_and_verified(
    nomic: Embedder, data_dir: Path
) -> None:
    gguf = nomic_gguf_path(data_dir)
    digest = hashlib.sha256()
    with gguf.open("rb") as src:
        while block := src.read(1 << 22):
            digest.update(block)
    assert digest.hexdigest() == NOMIC_GGUF_SHA256
    made = gguf.stat().st_mtime_ns
    assert nomic_gguf_path(data_dir).stat().st_mtime_ns == made, "not inflated a second time"


def test_vectors_are_768_wide_at_unit_length(nomic: Embedder) -> None:
    vectors = nomic.embed([FILTER, WIFI])
    assert (nomic.name, nomic.dimension, vectors.shape) == (NOMIC, 768, (2, 768))
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_a_question_and_a_passage_get_their_own_task_prefix(nomic: Embedder) -> None:
    as_question, as_passage = embed_queries(nomic, [QUESTION])[0], nomic.embed([QUESTION])[0]
    assert float(as_question @ as_passage) < 0.99, "the same words, embedded for two tasks"
    passages = nomic.embed([WIFI, FILTER])
    assert int(np.argmax(passages @ as_question)) == 1


def test_chunks_are_cut_at_the_same_tokens_as_with_minilm(nomic: Embedder, data_dir: Path) -> None:
    """nomic reads bert-base-uncased word pieces, MiniLM's: both embedders see the same chunks."""
    minilm = get_embedder(Context(data_dir=str(data_dir)))
    text = f"Galaxy S10 | Settings > Connections | {WIFI} Wi-Fi Direct™, 12.5% café."
    assert nomic.tokenizer.token_spans(text) == minilm.tokenizer.token_spans(text)


def test_an_unknown_local_embedder_is_one_clear_error(data_dir: Path) -> None:
    with pytest.raises(ModelUnavailable, match="unknown local embedding model 'nomic'"):
        get_embedder(Context(data_dir=str(data_dir), embedding_model="nomic"))


@pytest.fixture
def nomic_collection(
    context: Context, store: Store, scripted: ScriptedChatModel, tmp_path: Path
) -> Context:
    def manual(folder: Path) -> Path:
        return write_manual(folder, "330c.md", "Coolwave 330C Manual", FILTER, WIFI)

    return ingested(context.with_overrides(embedding_model=NOMIC), tmp_path / "manuals", manual)


def test_a_nomic_collection_records_the_embedder_and_its_prefixes_and_answers_with_it(
    nomic_collection: Context, store: Store
) -> None:
    record = made_with(store, nomic_collection)
    assert (record.embedder, record.dimension) == (NOMIC, 768)
    assert record.settings["embedder_prefixes"] == NOMIC_PREFIXES
    sources = ask(QUESTION, context=nomic_collection)["sources"]
    assert "every four weeks" in sources[0]["text"]
    assert "Wi-Fi" not in sources[0]["text"], "each section is its own chunk"


def test_a_reader_with_another_embedder_gets_one_line_naming_both(
    nomic_collection: Context,
) -> None:
    """Another width (MiniLM) or the same width (nomic quantised): never pgvector's dimension
    error, never neighbours from another vector space."""
    for reader, width in ((MINILM, 384), (NOMIC_Q8, 768)):
        other = nomic_collection.with_overrides(embedding_model=reader)
        named = re.escape(
            f"was embedded with {NOMIC} (768 dimensions); this run's embedder is {reader} "
            f"({width} dimensions)"
        )
        with pytest.raises(EmbedderMismatch, match=named) as raised:
            ask(QUESTION, context=other)
        assert "\n" not in str(raised.value)


def test_a_minilm_collection_refuses_a_nomic_reader(
    context: Context, store: Store, scripted: ScriptedChatModel, tmp_path: Path
) -> None:
    write_manual(tmp_path / "manuals", "330c.md", "Coolwave 330C Manual", FILTER)
    ingest([tmp_path / "manuals"], context=context)
    assert made_with(store, context).settings["embedder_prefixes"] == {}
    with pytest.raises(EmbedderMismatch, match=f"embedder is {re.escape(NOMIC)} \\(768"):
        ask(QUESTION, context=context.with_overrides(embedding_model=NOMIC))
