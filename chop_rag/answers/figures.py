"""Figures from the tables of filings: the rows a question needs, and arithmetic done by code.

A small local model paraphrases or miscopies numbers, and cannot be trusted to multiply. So a
question that asks for a figure is answered in three steps: the table rows of the sections
retrieval found are read here ("Inventories  $ 2,757  $ 2,904" under a "2023   2022" header
becomes a row with a value per period); the model only writes an arithmetic expression over
those rows (``(R2[2023] - R2[2022]) / R2[2022] * 100``); the expression is checked and
evaluated here, and the answer states the result with every operand and the source it came
from. A figure in the answer is therefore either printed in a cited source or computed from
such figures by the expression shown.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Iterable, Sequence

from pydantic import BaseModel

from chop_rag.answers.statement_rows import (  # noqa: F401 (the rows' names, read here too)
    MAX_LABEL_CHARS,
    Row,
    _number,
    _written,
    has_figure_lines,
    row_for_line,
    table_rows,
)
from chop_rag.text.arithmetic import ExpressionError, arithmetic

MAX_ROWS = 24  # rows shown to the model: a statement's worth, in its prompt budget

_UNITLESS = re.compile(
    r"\b(?:days?|ratio|turns?|per share|percent|margin|rate|number|employees|stores)\b",
    re.IGNORECASE,
)
_ROW_REFERENCE = re.compile(r"\bR(\d+)\s*\[\s*(-?\d+)\s*\]")
_DECIMALS = re.compile(r"\b(one|two|three|1|2|3)\s+decimal", re.IGNORECASE)
_PERCENT_ASKED = re.compile(r"%|\bpercent|\bpercentage\b|\bmargin\b|\bcagr\b", re.IGNORECASE)
_WORD = re.compile(r"[a-z]{3,}")
_QUANTITY_CUES = re.compile(
    r"\bhow (?:much|many)\b|\bratio\b|\bmargin\b|\baverage\b|\bpercent|%|\brate\b|\bamount\b|"
    r"\btotal\b|\bchange\b|\bgrowth\b|\bcagr\b|\bround\b|\busd\b|\bturnover\b|\bdays\b|"
    # "What was Kestrel Works' capital expenditure in FY2023?": names may be possessive
    r"\bwhat (?:is|was|were|are) (?:the |its |their )?(?:[\w&.'’-]+ ){0,6}(?:of|for|in)\b",
    re.IGNORECASE,
)


class FigureReply(BaseModel):
    """The model's part of a figure answer: which rows and what arithmetic, nothing else."""

    figures: str  # the figures needed, each with its reference: the model reasons before it writes
    expression: str  # e.g. "(R1[2023] + R1[2022]) / 2"; "" when the rows lack a figure it needs


def is_figure_question(question: str) -> bool:
    """Whether the question asks for a quantity (an amount, a ratio, a change, a count)."""
    return bool(_QUANTITY_CUES.search(question))


def distinct(rows: Iterable[Row]) -> list[Row]:
    """The rows in order, each line once: the same line read from two overlapping sources is
    kept as the first (better-ranked) source printed it."""
    first: dict[tuple[str, tuple[float | None, ...]], Row] = {}
    for row in rows:
        first.setdefault((row.label.lower(), tuple(row.values)), row)
    return list(first.values())


def relevant_rows(rows: Iterable[Row], question: str, limit: int = MAX_ROWS) -> list[Row]:
    """The rows whose labels share the most words with the question, in their table order, so
    a statement's neighbouring lines stay together; duplicates (the same line read from two
    overlapping sources) once."""
    asked = set(_WORD.findall(question.lower()))
    ranked = sorted(
        enumerate(distinct(rows)),
        key=lambda item: (-len(asked & set(_WORD.findall(item[1].label.lower()))), item[0]),
    )
    return [row for _, row in sorted(ranked[:limit], key=lambda item: item[0])]


ANSWER_ROWS = 3  # rows an answer states: the line item asked for, with a close second or two
# words of a figure question that name no line item
_GENERIC_WORDS = frozenset((
    "the", "and", "for", "what", "was", "were", "are", "year", "years", "end", "from", "based",
    "answer", "usd", "millions", "thousands", "billions", "amount", "fiscal", "how", "much",
    "total", "many", "with", "that", "this", "its", "their", "company",
    # how questions are framed: "answer in units of percents", "round to one decimal place",
    # "based on the information provided primarily within the statement of ..."
    "unit", "percent", "round", "decimal", "place", "please", "utilize", "using", "use",
    "provided", "primarily", "information", "within", "statement", "basing", "judgment",
    "defined", "define", "clearly", "shown", "outlined", "stated", "only", "details",
))  # fmt: skip
# the unit a question asks an amount in: "in USD millions", "in $ billions", "USD thousands"
_ASKED_UNIT = re.compile(
    r"\b(?:in|usd|\$)\s*(?:us\s*)?(?:usd\s*|\$\s*)?(million|thousand|billion)s?\b", re.I
)
_UNIT_SIZE = {"thousands": 1e3, "millions": 1e6, "billions": 1e9}


# Accounting words that name a line item; next to a matched word in the question, a row must
# have them too ("accounts payable" is not answered by "Accounts receivable").
_LINE_ITEM_WORDS = frozenset((
    "payable", "receivable", "inventory", "asset", "liability", "revenue", "sale", "income",
    "expense", "earning", "cash", "debt", "equity", "dividend", "capital", "expenditure",
    "depreciation", "amortization", "goodwill", "intangible", "tax", "interest", "cost", "good",
    "sold", "gross", "operating", "current", "noncurrent", "property", "plant", "equipment",
    "accrued", "deferred", "retained", "stock", "share", "treasury", "investment", "security",
    "lease", "borrowing", "margin", "profit", "loss", "net", "free", "flow", "working",
    "comprehensive", "administrative", "selling", "research", "development",
    "payment", "acquisition", "restructuring", "impairment", "pension", "benefit",
))  # fmt: skip


def _singular(word: str) -> str:
    if word.endswith("ies"):
        return word[:-3] + "y"
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


_GENERIC_STEMS = frozenset(_singular(word) for word in _GENERIC_WORDS)


def answering_rows(rows: Sequence[Row], question: str, limit: int = ANSWER_ROWS) -> list[Row]:
    """The rows that state what a figure question asks, best first: those whose labels share
    the question's distinctive words, each word weighing 1 / the number of rows whose label
    has it ("inventories" and "payable" name a line, "current" and "net" name many). A row
    counts when it shares a word that at most ``limit`` rows share, has the accounting words
    the question writes next to each word it shares ("accounts payable" is not answered by
    "Accounts receivable"), has a period for each value, and scores at least half the best
    row's."""
    asked = [_singular(w) for w in _WORD.findall(question.lower())]
    wanted = set(asked) - _GENERIC_STEMS
    # a row whose cells do not line up with its header's periods is not stated: which figure
    # is which year would be a guess
    unique = distinct(row for row in rows if all(row.periods))
    labels = [{_singular(w) for w in _WORD.findall(row.label.lower())} for row in unique]

    def beside_are_in(label: set[str]) -> bool:
        return all(
            asked[j] in label
            for i, word in enumerate(asked)
            if word in label and word in wanted
            for j in (i - 1, i + 1)
            if 0 <= j < len(asked) and asked[j] in _LINE_ITEM_WORDS
        )

    words = [wanted & label if beside_are_in(label) else set() for label in labels]
    spread: dict[str, int] = {}
    for label in labels:
        for word in wanted & label:
            spread[word] = spread.get(word, 0) + 1
    scored = [
        (sum(1 / spread[w] for w in shared), order)
        for order, shared in enumerate(words)
        if any(spread[w] <= limit for w in shared)
    ]
    if not scored:
        return []
    best = max(score for score, _ in scored)
    ranked = sorted((item for item in scored if item[0] >= best / 2), key=lambda i: (-i[0], i[1]))
    return [unique[order] for _, order in ranked[:limit]]


def stated(row: Row, question: str = "") -> str:
    """A row as an answer states it: the statement it is printed in, its label and unit, each
    period with its value, the value in the unit the question asks for when the table uses
    another, and the source ("Consolidated Balance Sheets: Accounts payable, in thousands:
    2018 303,493 (= 303.49 million) [2].")."""
    asked = _ASKED_UNIT.search(question)
    into = asked.group(1).lower() + "s" if asked else ""
    convert = bool(into and _unit_word(row)) and into != row.unit
    cells = []
    for period, value in zip(row.periods, row.values, strict=True):
        cell = (
            f"{row.column(period)} {_written(value, row.percent)}"
            if row.columns
            else f"{period} {_written(value, row.percent)}"
            if period
            else _written(value, row.percent)
        )
        if convert and value is not None:
            scaled = value * _UNIT_SIZE[row.unit] / _UNIT_SIZE[into]
            cell += f" (= {_written(round(scaled, 2))} {into.rstrip('s')})"
        cells.append(cell)
    return f"{row_heading(row)}: {'; '.join(cells)} [{row.source}]."


def row_heading(row: Row) -> str:
    """ "Consolidated Statements of Earnings: Revenue, in millions": where the row is printed,
    its label and the unit its figures are in."""
    unit = f", in {row.unit}" if _unit_word(row) else ""
    where = f"{row.statement}: " if row.statement and row.statement != row.label else ""
    return f"{where}{row.label}{unit}"


def row_line(row: Row) -> str:
    """A row as a quote shows it: "Total revenue, in millions: 2022 66,608; 2021 62,286"."""
    cells = [
        f"{row.column(period)} {_written(value, row.percent)}"
        if row.columns
        else f"{period} {_written(value, row.percent)}"
        if period
        else _written(value, row.percent)
        for period, value in zip(row.periods, row.values, strict=True)
    ]
    unit = f", in {row.unit}" if _unit_word(row) else ""
    return f"{row.label}{unit}: {'; '.join(cells)}"


def evaluate(expression: str, rows: Sequence[Row]) -> tuple[float, list[tuple[Row, str]]]:
    """The value of ``expression`` (numbers, + - * / ** and parentheses, ``R<n>[<period>]``
    references to ``rows``, numbered from 1) and the operands it used, in order."""
    used: list[tuple[Row, str]] = []

    def reference(match: re.Match[str]) -> str:
        number, column = int(match.group(1)), match.group(2)
        if not 1 <= number <= len(rows):
            raise ExpressionError(f"R{number} is not one of the {len(rows)} rows shown")
        row = rows[number - 1]
        value = row.value(column)
        if value is None:
            raise ExpressionError(f"R{number} has no value for {column}")
        used.append((row, column))
        return f"({value!r})"

    numbers = _ROW_REFERENCE.sub(reference, expression.strip())
    if not used:
        raise ExpressionError("the expression uses no row")
    try:
        tree = ast.parse(numbers, mode="eval")
    except SyntaxError as exc:
        raise ExpressionError(f"not an arithmetic expression: {expression!r}") from exc
    value = arithmetic(tree.body)
    if not math.isfinite(value):
        raise ExpressionError("the expression has no finite value")
    return value, used


def figure_answer(
    question: str, expression: str, rows: Sequence[Row]
) -> tuple[str, list[int]] | None:
    """The answer a user reads for a figure question, and the sources it cites; None when the
    expression does not evaluate over the rows (the caller falls back to quoting)."""
    try:
        value, used = evaluate(expression, rows)
    except (ExpressionError, ZeroDivisionError, OverflowError):
        return None
    percent = bool(_PERCENT_ASKED.search(question)) or all(row.percent for row, _ in used)
    if percent and abs(value) < 1.5 and "100" not in expression and not used[0][0].percent:
        value *= 100  # a share asked for in percent and written as a fraction
    result = _written(value, percent, _decimals_asked(question))
    distinct = list({(id(row), column): (row, column) for row, column in used}.values())
    operands = "; ".join(
        f"{row.label} ({column}) {_written(row.value(column), row.percent)}"
        f"{_unit_word(row)} [{row.source}]"
        for row, column in distinct
    )
    if len(used) == 1 and not _is_computed(expression):
        row, column = used[0]
        text = f"{row.label} ({column}): {result}{_unit_word(row)} [{row.source}]."
    else:
        readable = _ROW_REFERENCE.sub(
            lambda m: f"{rows[int(m.group(1)) - 1].label} ({m.group(2)})", expression.strip()
        )
        text = f"{result}, computed as {readable}, from: {operands}."
    citations = list(dict.fromkeys(row.source for row, _ in used))
    return text, citations


def _unit_word(row: Row) -> str:
    """ " million" after a figure of a table "in millions"; nothing for a percentage, a count
    or a ratio in such a table (days, turns, per-share figures)."""
    if not row.unit or row.percent or _UNITLESS.search(row.label):
        return ""
    return f" {row.unit.rstrip('s')}"


def _is_computed(expression: str) -> bool:
    return bool(re.search(r"[-+*/]", _ROW_REFERENCE.sub("", expression)))


def _decimals_asked(question: str) -> int | None:
    match = _DECIMALS.search(question)
    if not match:
        return None
    word = match.group(1).lower()
    return {"one": 1, "two": 2, "three": 3}.get(word) or int(word)
