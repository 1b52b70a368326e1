"""generate: answer in the sources' own words, citing them, or say plainly that they do not.

Two cases are decided before any LLM call, because a small model cannot be trusted with them:
no sources at all, and a question about a model, company or period that no stored document
covers (answering from a twin product's manual or another year's filing is the failure CHOP
exists to prevent). Otherwise the answer quotes the section that answers best and the model
adds what it can back from it: a yes/no verdict, a short direct answer (chop.answering).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from langgraph.runtime import Runtime

import prompts
from chop.answering import (
    AnswerReply,
    Passage,
    YesNoReply,
    best_passage,
    build_passages,
    compose,
    extract,
    heading_path,
    is_yes_no_question,
    shown,
)
from chop.config import Context
from chop.llm import structured_call
from chop.models import get_embedder
from chop.state import AnswerState, Source
from chop.store import store_for
from nodes.retrieve import to_source

SECTION_WINDOW = 6  # chunks on either side of a hit that may belong to its section
NOT_ANSWERED = "The passages found do not answer this question."


def declined(answer: str, **extra: Any) -> dict[str, Any]:
    return {"answer": answer, "answerable": False, "citations": [], **extra}


def generate(state: AnswerState, runtime: Runtime[Context]) -> dict[str, Any]:
    ctx = runtime.context
    store = store_for(ctx)
    sources = state.get("sources", [])
    if not sources:
        return declined("The collection has no passages for this question.")
    unknown = state.get("question_unknown")
    if unknown:
        titles = ", ".join(dict.fromkeys(s["doc_title"] for s in sources[:3]))
        return declined(
            f"The documents do not cover {unknown}. The closest passages are from {titles}, "
            "so they are not used to answer."
        )

    def read_section(source: Source) -> list[Source]:
        """The chunks next to ``source`` under the same heading path, in order."""
        index = source["chunk_index"]
        path = heading_path(source)
        if not path:
            return [source]
        around = store.neighbours(
            ctx.collection, source["doc_id"], index - SECTION_WINDOW, index + SECTION_WINDOW
        )
        chunks = [to_source(source["number"], hit) for hit in around]
        at = next((i for i, c in enumerate(chunks) if c["chunk_id"] == source["chunk_id"]), None)
        if at is None:
            return [source]
        first = last = at
        while first > 0 and heading_path(chunks[first - 1]) == path:
            first -= 1
        while last + 1 < len(chunks) and heading_path(chunks[last + 1]) == path:
            last += 1
        return chunks[first : last + 1]

    passages = build_passages(sources, read_section)
    if not passages:
        return declined(NOT_ANSWERED)
    embedder = get_embedder(ctx)
    question = state["question"]
    vectors = embedder.embed([question, *(x for p in passages for x in p.sentences)])
    scores = sentence_scores(passages, vectors)
    best = best_passage(passages, scores)
    chosen = passages[best]
    extracted = extract(chosen, scores[best])
    yes_no = is_yes_no_question(question)
    if not yes_no and ctx.answer == "quote":
        answer = compose(chosen, extracted, None)
        return {"answer": answer.text, "answerable": True, "citations": answer.citations}
    messages = prompts.render(
        "generate_yes_no" if yes_no else "generate", question=question, passages=shown([chosen])
    )
    schema: type[AnswerReply | YesNoReply] = YesNoReply if yes_no else AnswerReply
    result = structured_call(ctx, store, "answer", messages, schema)
    reply = result.value
    verdict = reply.verdict if isinstance(reply, YesNoReply) else None
    lead = reply.answer if reply and ctx.answer == "lead" else None
    answer = compose(chosen, extracted, lead, verdict)
    stats = {**result.stats(), f"answer_lead_{answer.lead}": 1.0}
    note = ""
    error: dict[str, str] = {}
    if reply is None:  # the passage's own words still answer; the failure is recorded
        stats["answer_model_failures"] = 1.0
        note = f"the model failed ({result.error}); the answer quotes the passage"
        error = {"error": result.error or "the model gave no answer"}
    elif answer.lead == "unbacked":
        note = "the model's short answer is not backed by the passage and is left out"
    return {
        "answer": answer.text,
        "answerable": True,
        "citations": answer.citations,
        "answer_note": note,
        "stats": stats,
        **error,
    }


def sentence_scores(passages: list[Passage], vectors: np.ndarray) -> list[list[float]]:
    """Each passage's sentences' cosine similarity to the question (``vectors[0]``)."""
    unit = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    similarity = unit[1:] @ unit[0]
    scores: list[list[float]] = []
    offset = 0
    for passage in passages:
        count = len(passage.sentences)
        scores.append([float(x) for x in similarity[offset : offset + count]])
        offset += count
    return scores
