"""Model construction: one instance per setting, however many documents ask at once."""

from __future__ import annotations

import hashlib
import threading
import time
from pathlib import Path

import pytest

from chop_rag.config import Context
from chop_rag.models import construction as models
from chop_rag.models.construction import built_once
from chop_rag.models.weights import ModelUnavailable


def test_models_asked_for_at_the_same_moment_are_built_once() -> None:
    builds: list[str] = []

    @built_once
    def load(name: str) -> object:
        builds.append(name)
        time.sleep(0.2)  # loading weights takes a while: others ask in the meantime
        return object()

    got: list[object] = []
    askers = [threading.Thread(target=lambda: got.append(load("qwen"))) for _ in range(6)]
    for asker in askers:
        asker.start()
    for asker in askers:
        asker.join()
    assert builds == ["qwen"], "six documents starting together load one model, not six"
    assert all(model is got[0] for model in got)
    load("other")
    assert builds == ["qwen", "other"]


def test_a_gguf_path_in_chat_model_picks_the_local_model_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gguf = tmp_path / "other-model.gguf"
    gguf.write_bytes(b"GGUF and then weights")
    shipped = tmp_path / "shipped.gguf"
    monkeypatch.setattr(models, "local_gguf_path", lambda data_dir: shipped)
    ctx = Context(data_dir=str(tmp_path), chat_model=str(gguf))
    assert models.local_chat_gguf(ctx) == gguf.resolve()
    other = f"local:{hashlib.sha256(gguf.read_bytes()).hexdigest()[:16]}"
    assert models.chat_model_identity(ctx) == other, "answers of another model are not reused"
    default = Context(data_dir=str(tmp_path))
    assert models.local_chat_gguf(default) == shipped, "a model name keeps the shipped file"
    assert models.chat_model_identity(default) == f"local:{models.LOCAL_GGUF_SHA256[:16]}"


def test_a_missing_gguf_file_is_one_clear_error(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-model.gguf"
    ctx = Context(data_dir=str(tmp_path), chat_model=str(missing))
    with pytest.raises(ModelUnavailable, match=r"no-such-model\.gguf.*does not exist"):
        models.get_chat_model(ctx)
    with pytest.raises(ModelUnavailable, match="does not exist"):
        models.chat_model_identity(ctx)
