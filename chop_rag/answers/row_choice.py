"""Which row states a line item, where the rules rank several alike and they disagree.

A statement may print two rows the synonym table reads as one line item ("Net sales" and
"Total revenues", "Income tax expense" on the statement and again in a reconciliation under
the same title). The rules rank rows by the statement that prints them; where rows rank alike
and state different figures, the local model is shown those rows (and only those) and names
one, as structured output; code still does all arithmetic. A reply that is missing, fails
validation after the model call's retries, or names no row shown falls back to the rules'
first row; either way the answer says which row was taken and why.

Not asked by default: on FinanceBench dev the shipped 1.5B model took "Net earnings (loss)"
per share for net income and a guarantor column's "Total current assets", where the
statement's own order had been right (2 of 26 figure answers lost), so chop_rag.answers.computed
keeps the statement's order. A caller passes a chooser to chop_rag.answers.formulas.compute
to use it (tests/test_row_choice_local.py asks the real model).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

from pydantic import BaseModel

from chop_rag.answers.statement_rows import Row
from chop_rag.questions.line_items import Item


class Candidate(Protocol):
    """An input read from a row (chop_rag.answers.formulas.Input)."""

    @property
    def row(self) -> Row: ...


CandidateT = TypeVar("CandidateT", bound=Candidate)


class RowChoice(BaseModel):
    """The model's choice: the number of the row that states the line item, 0 for none."""

    row: int


# (line item, the period as the answer names it, the candidate rows) → the index chosen,
# None when no valid choice came back
RowChooser = Callable[[Item, str, Sequence[Row]], int | None]


def choose_row(
    choose: RowChooser | None, item: Item, period: str, tied: Sequence[CandidateT]
) -> tuple[CandidateT, str]:
    """The input taken among rows the rules rank alike, and the sentence that records how."""
    labels = ", ".join(f'"{c.row.label}"' for c in tied)
    picked = choose(item, period, [c.row for c in tied]) if choose is not None else None
    if picked is not None and 0 <= picked < len(tied):
        chosen = tied[picked]
        return chosen, (
            f"({item.name} {period}: rows {labels} could state it; the local model chose "
            f'"{chosen.row.label}".)'
        )
    why = "the local model gave no valid choice" if choose is not None else "no model was asked"
    return tied[0], (
        f"({item.name} {period}: rows {labels} could state it; {why}, so the first as the "
        f'statement prints it, "{tied[0].row.label}", was taken.)'
    )


def rows_listed(rows: Sequence[Row]) -> str:
    """The candidate rows as the prompt shows them, numbered from 1."""
    from chop_rag.answers.figures import row_line

    return "\n".join(
        f"R{number} {row_line(row)} [{row.statement or 'table'}, source {row.source}]"
        for number, row in enumerate(rows, start=1)
    )


def reply_index(reply: RowChoice | None, count: int) -> int | None:
    """The 0-based index a reply names, None when it names no row shown."""
    if reply is None or not 1 <= reply.row <= count:
        return None
    return reply.row - 1
