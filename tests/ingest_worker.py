"""A separate ingest process for the crash test: a slow scripted LLM that logs every call."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from chop_rag.api import ingest
from chop_rag.config import Context
from chop_rag.models.construction import use_models
from tests.fakes import ScriptedChatModel, sensible_reply


def main(folder: str, collection: str, data_dir: str, identity: str, calls_log: str) -> None:
    log = Path(calls_log)

    def slow(task: str, user: str) -> str:
        time.sleep(0.15)
        with log.open("a") as out:
            out.write(task + "\n")
        return sensible_reply(task, user)

    model = ScriptedChatModel(calls=[], responder=slow, cache_identity=identity)
    ctx = Context(data_dir=data_dir, collection=collection, continuity_mode="llm",
                  chunk_tokens=60, chunk_overlap=10, max_concurrency=2)  # fmt: skip
    events: list[str] = []
    with use_models(chat_model=model):
        report = ingest([folder], context=ctx, durable=True,
                        on_event=lambda e: events.append(str(e.get("event"))))  # fmt: skip
    print(json.dumps({"report": report, "resumed": "resumed" in events}))


if __name__ == "__main__":
    main(*sys.argv[1:6])
