"""The local model's pick among rows the rules rank alike, on the real offline default
(llama.cpp + Qwen2.5-Coder-1.5B): its reply is structured output naming one of the rows shown.
Slow (a minute or two on 2 CPU cores under load); the rules around it are specified with a
fake chooser in tests/test_statement_layouts.py."""

from __future__ import annotations

import pytest

from chop_rag import prompts
from chop_rag.answers.row_choice import RowChoice, reply_index, rows_listed
from chop_rag.answers.statement_rows import table_rows
from chop_rag.config import Context
from chop_rag.models.llm import structured_call
from chop_rag.questions.line_items import ITEMS

pytestmark = pytest.mark.slow

KESTREL = """Consolidated Statements of Operations
(in millions)
2024 2023
Net sales 8,500 8,000
Total revenues 9,000 8,400
Operating income 900 800
"""


def test_the_local_model_names_one_of_the_candidate_rows(context: Context) -> None:
    rows = table_rows(KESTREL, 1)[:2]
    messages = prompts.render(
        "choose_row",
        rows=rows_listed(rows),
        question="What was the FY2024 operating margin of Kestrel Works?",
        item=ITEMS["revenue"].name,
        period="FY2024",
    )
    result = structured_call(context, None, "answer_row", messages, RowChoice)
    assert result.value is not None, result.error
    assert reply_index(result.value, len(rows)) in (0, 1)
