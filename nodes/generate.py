"""generate: answer from the retrieved chunks only, citing them, or say that they do not answer.

Two cases are decided before any LLM call, because a small model cannot be trusted with them:
no sources at all, and a question about a model that no retrieved chunk is about (answering
from a twin product's manual is the failure CHOP exists to prevent).
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime
from pydantic import BaseModel, Field

import prompts
from chop.config import Context
from chop.llm import structured_call
from chop.state import AnswerState, Source
from chop.store import store_for

SOURCE_CHARS = 1200
ANSWER_CHARS = 2000


class AnswerReply(BaseModel):
    # No maxLength on the answer: llama.cpp compiles it into a grammar rule per character and
    # fails (segfaults) on long limits; the length is bounded by the model's max_tokens instead.
    answer: str
    answerable: bool
    citations: list[int] = Field(max_length=8)


def format_sources(sources: list[Source]) -> str:
    blocks = []
    for s in sources:
        about = " | ".join(x for x in (s["model"], s["category"], ", ".join(s["nouns"])) if x)
        blocks.append(f"[{s['number']}] {s['doc_title']} ({about})\n{s['text'][:SOURCE_CHARS]}")
    return "\n\n".join(blocks)


def _models(sources: list[Source]) -> list[str]:
    return list(dict.fromkeys(s["model"] or s["doc_title"] for s in sources))


def generate(state: AnswerState, runtime: Runtime[Context]) -> dict[str, Any]:
    ctx = runtime.context
    sources = state.get("sources", [])
    asked_model = state.get("question_model")
    asked_documents = set(state.get("question_documents", []))

    def about_asked(source: Source) -> bool:
        if asked_documents:
            return source["doc_id"] in asked_documents
        return not asked_model or (source["model"] or "").lower() == asked_model.lower()

    if not sources:
        return {
            "answer": "The collection has no passages for this question.",
            "answerable": False,
            "citations": [],
        }
    if asked_model and not any(about_asked(s) for s in sources):
        about = ", ".join(_models(sources)[:3])
        return {
            "answer": f"The documents do not cover {asked_model}. The closest passages are "
            f"about {about}, a different model, so they are not used to answer.",
            "answerable": False,
            "citations": [],
        }
    messages = prompts.render(
        "generate", question=state["question"], sources=format_sources(sources)
    )
    result = structured_call(ctx, store_for(ctx), "answer", messages, AnswerReply)
    stats = result.stats()
    if result.value is None:
        return {
            "answer": "No answer could be generated (the model failed: "
            f"{result.error}); the sources below are the most relevant passages.",
            "answerable": False,
            "citations": [],
            "error": result.error or "the model gave no answer",
            "stats": stats,
        }
    # Only sources of the asked model may back the answer (twins' chunks look alike).
    numbers = {s["number"] for s in sources if about_asked(s)}
    citations = [n for n in dict.fromkeys(result.value.citations) if n in numbers]
    return {
        "answer": result.value.answer.strip()[:ANSWER_CHARS],
        "answerable": result.value.answerable,
        "citations": citations,
        "stats": stats,
    }
