"""End to end on the real offline defaults: llama.cpp + Qwen2.5-Coder-1.5B, MiniLM, pgvector.

Slow (a few minutes on 2 CPU cores): it ingests the sample corpus of three near-identical
manuals with the real LLM and checks what CHOP promises: every chunk carries its own manual's
model, a model-specific question retrieves that manual's chunk first, and the answer a user
reads states the manual's fact ("every 4 weeks") or its steps in order.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from chop_rag.api import ask, ingest
from chop_rag.config import Context
from chop_rag.harness.sample_corpus import SAMPLE_MODELS, SAMPLE_QUESTIONS, write_sample_corpus
from chop_rag.labelling.cnm import names_product

pytestmark = pytest.mark.slow


@pytest.fixture
def sample_context(context: Context, store, tmp_path: Path) -> Context:  # type: ignore[no-untyped-def]
    # The fixture's context has the LLM cache off: a warm cache from an earlier run would
    # otherwise answer every call and this test would no longer exercise the local model.
    report = ingest([write_sample_corpus(tmp_path)[0].parent], context=context)
    assert report["added"] == 3 and not report["problems"]
    assert report["stats"]["llm_calls"] > 0 and report["stats"].get("cache_hits", 0) == 0
    return context


def test_sample_corpus_end_to_end_with_the_local_models(sample_context: Context, store) -> None:  # type: ignore[no-untyped-def]
    rows = store.chunks(sample_context.collection)
    for model in SAMPLE_MODELS:
        mine = [r for r in rows if r["doc_title"].startswith(model)]
        assert mine, model
        assert {r["model"] for r in mine} == {model}, "every chunk carries its manual's model"
        assert not any(names_product(r["category"] or "", model) for r in mine), (
            "a category never just repeats the model name"
        )
        assert all(r["prefix"].startswith(model) for r in mine)
        assert mine[0]["continuity"] == "first"
        assert {r["cnm_source"] for r in mine} <= {"heading", "inherited", "extracted"}
        assert mine[0]["cnm_source"] == "heading", "a Markdown manual is labelled from headings"

    for item in [q for q in SAMPLE_QUESTIONS if q["in_corpus"]]:
        result = ask(item["question"], context=sample_context)
        top = result["sources"][0]
        assert top["doc_title"].startswith(item["model"]), item["question"]
        assert {s["model"] for s in result["sources"]} == {item["model"]}, "no twin's chunk"
        assert item["expected_phrase"].lower() in " ".join(
            s["text"].lower() for s in result["sources"]
        ), item["question"]

    for model, interval in (("330C", "every 4 weeks"), ("410X", "every 6 weeks")):
        asked = f"How often should I clean the air filter on the Coolwave {model}?"
        answer = ask(asked, context=sample_context)["answer"]
        assert answer.startswith(f"Clean the air filter {interval}"), answer

    drain = ask("How do I drain the water tank of the Coolwave 410X?", context=sample_context)
    steps = ["switch the unit off", "unscrew the drain cap", "refit the rubber plug"]
    at = [drain["answer"].lower().find(step) for step in steps]
    assert -1 not in at and at == sorted(at), ("the drain steps, in order", drain["answer"])

    declined = ask(
        "How often should I clean the air filter on the Coolwave 999Z?", context=sample_context
    )
    assert declined["answerable"] is False and "999Z" in declined["answer"]
