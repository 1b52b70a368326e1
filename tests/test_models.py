"""Model construction: one instance per setting, however many documents ask at once."""

from __future__ import annotations

import threading
import time

from chop.models import built_once


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
