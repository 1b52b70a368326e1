"""decline: say in one sentence that the documents do not answer, and what they cover that
comes closest; the sources stay visible beside it, none is cited."""

from __future__ import annotations

from typing import Any

from chop_rag.answers.answerability import declined_text
from chop_rag.state import AnswerState


def decline(state: AnswerState) -> dict[str, Any]:
    judged = state["answerability"]
    answer = (
        judged["reason"]
        if judged["decided_by"].startswith("rule:") and judged["reason"]
        else declined_text(judged)
    )
    return {
        "answer": answer,
        "answerable": False,
        "citations": [],
        "answer_note": f"declined ({judged['decided_by']})",
        "stats": {f"answer_declined_{judged['decided_by'].split(':')[0]}": 1.0},
    }
