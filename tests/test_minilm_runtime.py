"""How the local MiniLM runs (issue 25): in bfloat16 where the CPU multiplies it natively, with
the float32 model's vectors to within rounding under the same name (a collection made either
way reads with the other; CHOP_EMBED_FLOAT32=1 keeps float32 throughout), and with the GIL
handed back often while it computes, so threads running Python do not stall it."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from chop_rag.config import Context
from chop_rag.models.construction import get_embedder
from chop_rag.models.embedders import (
    EMBEDDING_SWITCH_INTERVAL_S,
    SentenceTransformerEmbedder,
    bf16_matmuls_native,
)
from chop_rag.models.weights import MINILM

TEXTS = [
    "Clean the air filter every 4 weeks, or more often in dusty rooms.",
    "How do I drain the water tank of the Coolwave 410X?",
    "Merchandise inventories 5,409 5,209 Total current assets 12,901 13,049 " * 12,
]


def minilm(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, float32: str
) -> SentenceTransformerEmbedder:
    monkeypatch.setenv("CHOP_EMBED_FLOAT32", float32)
    embedder = get_embedder(Context(data_dir=str(data_dir)))
    assert isinstance(embedder, SentenceTransformerEmbedder)
    return embedder


def test_the_default_uses_bfloat16_only_where_the_cpu_has_it(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert minilm(data_dir, monkeypatch, "0").bfloat16 == bf16_matmuls_native()
    assert minilm(data_dir, monkeypatch, "1").bfloat16 is False


def test_both_precisions_give_the_same_vectors_under_one_name(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    default, exact = minilm(data_dir, monkeypatch, "0"), minilm(data_dir, monkeypatch, "1")
    assert default.name == exact.name == MINILM
    fast, reference = default.embed(TEXTS), exact.embed(TEXTS)
    assert fast.dtype == np.float32 and fast.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(fast, axis=1), 1.0, atol=1e-3)
    assert (fast * reference).sum(axis=1).min() > 0.999


def test_threads_hand_over_the_gil_often_only_while_the_model_computes(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedder = minilm(data_dir, monkeypatch, "0")
    seen: list[float] = []
    encode = embedder._model.encode

    def recording(*args: Any, **kwargs: Any) -> Any:
        seen.append(sys.getswitchinterval())
        return encode(*args, **kwargs)

    monkeypatch.setattr(embedder._model, "encode", recording)
    before = sys.getswitchinterval()
    embedder.embed(TEXTS)
    assert seen == [EMBEDDING_SWITCH_INTERVAL_S]
    assert sys.getswitchinterval() == before


def test_a_document_is_chunked_while_another_embeds(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Chunking reads token spans from its own copy of the tokenizer, so it never waits for an
    embedding batch to finish (it used to share the embedder's lock)."""
    embedder = minilm(data_dir, monkeypatch, "0")
    spans: list[list[tuple[int, int]]] = []
    with embedder._lock:  # an embedding batch in progress
        reader = threading.Thread(
            target=lambda: spans.append(embedder.tokenizer.token_spans(TEXTS[0]))
        )
        reader.start()
        reader.join(timeout=30)
        assert not reader.is_alive()
    assert spans and spans[0][0] == (0, 5)  # "Clean"
