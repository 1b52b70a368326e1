"""ask_model: the model reads the best passage and gives what code cannot: a yes/no question's
verdict, or (CHOP_ANSWER=lead) a short direct answer. The answer a user reads is still built
around the passage's own words; the verdict stands only where the passage backs it, the short
answer only where the passage writes it (chop_rag.answers.answering). A failed model call still
answers in the passage's words, and says so."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from chop_rag import prompts
from chop_rag.answers.answering import (
    AnswerReply,
    YesNoReply,
    best_sentences,
    checked_verdict,
    compose,
    extract,
    is_yes_no_question,
    shown,
)
from chop_rag.answers.conflicts import said
from chop_rag.answers.passages import from_state
from chop_rag.config import Context
from chop_rag.models.llm import structured_call
from chop_rag.state import AnswerState
from chop_rag.store import store_for


def ask_model(state: AnswerState, runtime: Runtime[Context]) -> dict[str, Any]:
    ctx = runtime.context
    question = state["question"]
    yes_no = is_yes_no_question(question)
    filings = bool(dict(state.get("question_resolution") or {}).get("filings"))
    best = state["passages"][0]
    chosen = from_state(best)
    messages = prompts.render(
        "generate_yes_no" if yes_no else "generate", question=question, passages=shown([chosen])
    )
    schema: type[AnswerReply | YesNoReply] = YesNoReply if yes_no else AnswerReply
    result = structured_call(ctx, store_for(ctx), "answer", messages, schema)
    reply = result.value
    verdict, verdict_status = checked_verdict(
        reply.verdict if isinstance(reply, YesNoReply) else None,
        reply.answer if isinstance(reply, YesNoReply) else "",
        question,
        chosen,
        best_sentences(chosen, best["scores"]),
        stated_only=filings,
    )
    lead = reply.answer if reply and ctx.answer == "lead" else None
    extracted = extract(chosen, best["scores"])
    answer = compose(
        chosen,
        extracted,
        lead,
        verdict,
        unsaid=verdict_status == "unsaid",
        sources=state.get("sources", []),
    )
    stats = {**result.stats(), f"answer_lead_{answer.lead}": 1.0}
    if yes_no and reply is not None:
        stats[f"answer_verdict_{verdict_status}"] = 1.0
    fallback = dict(state.get("figure_fallback") or {})
    for name, value in fallback.get("stats", {}).items():
        stats[name] = stats.get(name, 0.0) + value
    note = fallback.get("answer_note", "")
    error: dict[str, str] = {}
    if reply is None:  # the passage's own words still answer; the failure is recorded
        stats["answer_model_failures"] = 1.0
        note = f"the model failed ({result.error}); the answer quotes the passage"
        error = {"error": result.error or "the model gave no answer"}
    elif verdict_status == "overruled":
        note = "the model said no, but the passage says nothing against it and describes it"
    elif verdict_status == "unsaid":
        note = "the passage found is not about what the question asks, so no verdict is given"
    elif answer.lead == "unbacked":
        note = "the model's short answer is not backed by the passage and is left out"
    found = state.get("disagreement")
    text, citations = answer.text, answer.citations
    if found:
        text = f"{said(found)} {text}"
        citations = list(
            dict.fromkeys([found["first"]["number"], found["second"]["number"], *citations])
        )
    return {
        "answer": text,
        "answerable": True,
        "citations": citations,
        "answer_note": note,
        "stats": stats,
        **error,
    }
