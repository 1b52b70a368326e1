"""Reading a metric question: which metric or line item it asks for, for which fiscal years
and how (a value, a change, an average, a CAGR), and the metric a question defines itself
("DPO is defined as: 365 * (average accounts payable between FY2019 and FY2020) / (FY2020
COGS)"), evaluated over a line-item lookup. chop_rag.answers.formulas computes the answer."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date

from chop_rag.questions.line_items import ITEMS, METRICS, STATEMENT_OF, Item, Metric
from chop_rag.text.arithmetic import ExpressionError, arithmetic
from chop_rag.text.periods import periods

_AVERAGE = re.compile(r"\b(?:(\w+)[- ]year\s+)?average\b", re.I)
_CAGR = re.compile(r"\bcagr\b|\bcompound(?:ed)?\s+annual\s+growth", re.I)
_GROWTH = re.compile(
    r"\b(?:growth(?:\s+rate)?|year[- ]over[- ]year|yoy|change|grew|increase|decrease|decline"
    r"|drop|improv\w*)\b",
    re.I,
)
_DIRECTION = re.compile(
    r"\b(?:improv\w*|increas\w*|grow\w*|grew|higher|ris(?:e|en|ing)|rose|declin\w*|decreas\w*"
    r"|drop\w*|lower|fall\w*|fell|reduc\w*|worsen\w*|deteriorat\w*)\b",
    re.I,
)
_TREND = re.compile(
    r"\b(?:consistent|fluctuat\w*|stable|volatil\w*|trend\w*|historical\w*)\b", re.I
)
_UP = re.compile(r"\b(?:improv\w*|increas\w*|grow\w*|grew|higher|ris(?:e|en|ing)|rose)\b", re.I)
_DEFINED = re.compile(r"\b(?:is\s+)?defined\s+as\b|\bdefine\s+[\w\s]+\s+as\b", re.I)
# A question whose first sentence asks for causes or an explanation ("What drove the change in
# gross margin?", "Why did SG&A fall as a share of net sales?") asks for the narrative that
# gives them, not for the figure it names; a later "explain why" (FinanceBench's "if gross
# margin is not a useful metric ..., explain why") does not make it one
_CAUSES = re.compile(
    r"\b(?:what|which)\s+(?:factors?\s+|items?\s+)?(?:drove|drives|driven|caused?|causes"
    r"|led\s+to|leads\s+to|contributed|accounts?\s+for|explains?)\b|\bwhy\b"
    r"|\breasons?\s+(?:for|behind)\b|\bexplain\b",
    re.I,
)
# A question that asks which member of a breakdown ranks first ("Which region had the highest
# revenue?", "which of its segments had the lowest net income?") compares a segment table's
# members, which the consolidated statement's line does not break down; "which year" still
# asks for the line's own periods
_WHICH_MEMBER = re.compile(
    r"\bwhich\s+(?!(?:fiscal\s+)?(?:years?|quarters?|periods?|months?|half)\b)", re.I
)
_RANKS_FIRST = re.compile(
    r"\b(?:best|worst|most|least|highest|lowest|largest|smallest|biggest|greatest)\b", re.I
)


@dataclass
class Asked:
    """What a metric question asks: the metric (or a line item's growth), the years."""

    metric: Metric | None
    item: Item | None  # a line item asked for itself (its value, growth or CAGR)
    years: list[int]
    mode: str  # "value", "average", "change", "growth", "cagr"
    # the quarter asked of a fiscal year ("Q2 FY2023", "2023Q2", "second quarter of 2023")
    quarters: dict[int, int] = field(default_factory=dict)
    # the day a period asked ends ("the quarter ended July 29, 2023", "as of June 30, 2024"),
    # by the year written
    ended: dict[int, date] = field(default_factory=dict)


_DEFINITION = re.compile(
    r"(?:\b([\w&' ()-]{2,60}?)\s+(?:is|are)\s+defined\s+as|\bdefine\s+([\w&' ()-]{2,60}?)\s+as)"
    r"\s*:?\s*(.+?)(?=\.\s|\.$|\?|$)",
    re.I,
)
_WORD_OPERATORS = (
    (re.compile(r"\bdivided\s+by\b|\bover\b|÷", re.I), " / "),
    (re.compile(r"\bmultiplied\s+by\b|\btimes\b|×", re.I), " * "),
    (re.compile(r"\bminus\b|\bless\b|\bsubtract(?:ed)?\b|(?<!\w)[-–](?!\w)", re.I), " - "),
    (re.compile(r"\bplus\b|\badded\s+to\b", re.I), " + "),
)
_OPERATOR = re.compile(r"([()+\-*/])")


def definitions(question: str) -> list[tuple[str, str]]:
    """(name, definition) of every metric the question defines, in order: "DPO is defined
    as: 365 * (average accounts payable between FY2019 and FY2020) / (FY2020 COGS)"."""
    return [
        ((m.group(1) or m.group(2)).strip(), m.group(3).strip(" :"))
        for m in _DEFINITION.finditer(question)
    ]


def defined(
    definition: str,
    get: Callable[[str, int], float],
    year: int,
    others: Sequence[tuple[str, str]] = (),
) -> float:
    """The value of a metric the question defines, for ``year``: each phrase between the
    operators is a number, a line item ("FY2020 COGS", "average accounts payable between
    FY2019 and FY2020", "change in inventory between ..."), a standard metric or another
    metric the question defines. A phrase that names none raises ExpressionError."""
    text = definition
    for pattern, operator in _WORD_OPERATORS:
        text = pattern.sub(operator, text)
    out: list[str] = []
    for part in _OPERATOR.split(text):
        phrase = " ".join(part.split()).strip(" ,;:")
        if not phrase or _OPERATOR.fullmatch(phrase):
            out.append(phrase)
        elif re.fullmatch(r"\d+(?:\.\d+)?", phrase.replace(",", "")):
            out.append(phrase.replace(",", ""))
        else:
            out.append(repr(_phrase_value(phrase, get, year, others)))
    try:
        return arithmetic(ast.parse(" ".join(out), mode="eval").body)
    except SyntaxError as err:
        raise ExpressionError(f"not arithmetic: {definition!r}") from err


def _phrase_value(
    phrase: str, get: Callable[[str, int], float], year: int, others: Sequence[tuple[str, str]]
) -> float:
    named = _years(phrase)
    words = _FILLER.sub(" ", phrase)
    average = re.match(r"\s*average\s+(.+?)\s+between\b", words, re.I)
    change = re.match(r"\s*change\s+(.+?)\s+between\b", words, re.I)
    spanned = average or change
    core = spanned.group(1) if spanned else words
    core = _FY_WORDS.sub(" ", core).strip()
    for name, definition in others:
        if name and re.search(rf"\b{re.escape(name)}\b", core, re.I):
            return defined(definition, get, named[-1] if named else year, others)
    at = named[-1] if named else year
    metric = next((m for m in METRICS if m.asked.search(core)), None)
    item = _item_named(core)
    if item is not None and (metric is None or _longer(item.asked, metric.asked, core)):
        if average:
            first, last = (named[0], named[-1]) if len(named) > 1 else (at - 1, at)
            return (get(item.key, first) + get(item.key, last)) / 2
        if change:
            first, last = (named[0], named[-1]) if len(named) > 1 else (at - 1, at)
            return get(item.key, last) - get(item.key, first)
        return get(item.key, at)
    if metric is not None:
        return metric.compute(get, at)
    raise ExpressionError(f"{phrase!r} names no line item")


_FILLER = re.compile(r"\b(?:the|of|in|for|at|end|year|fiscal|annual)\b", re.I)
_FY_WORDS = re.compile(r"\b(?:FY\s*['’]?\d{2,4}|(?:19|20)\d\d|and)\b", re.I)


def _item_named(text: str) -> Item | None:
    found = [(m.end() - m.start(), i) for i in ITEMS.values() if (m := i.asked.search(text))]
    return max(found, key=lambda pair: pair[0])[1] if found else None


def _longer(first: re.Pattern[str], second: re.Pattern[str], text: str) -> bool:
    a, b = first.search(text), second.search(text)
    return bool(a) and (not b or (a.end() - a.start()) >= (b.end() - b.start()))  # type: ignore[union-attr]


def read_metric_question(question: str) -> Asked | None:
    """The metric and fiscal years a question asks for, None when it asks for no known
    metric or line item with a year, for what caused one (_CAUSES) or for which member of a
    breakdown ranks first (_WHICH_MEMBER, _RANKS_FIRST). A defined metric is read by the name
    it defines ("X is defined as ..."): its definition names which standard metric it is."""
    asked_part = _DEFINED.split(question)[0]
    first_sentence = re.split(r"(?<=[?.])\s", question.strip(), maxsplit=1)[0]
    if _CAUSES.search(first_sentence) or (
        _WHICH_MEMBER.search(first_sentence) and _RANKS_FIRST.search(first_sentence)
    ):
        return None
    years = _years(asked_part) or _years(question)
    if not years:
        # "Are gross margins historically consistent?": the years the statement prints
        named = next((m for m in METRICS if m.asked.search(asked_part)), None)
        if named is None or definitions(question):
            return None
        trend = _DIRECTION.search(question) or _TREND.search(question)
        return Asked(named, None, [], "change" if trend else "value")
    text = question
    metric = next((m for m in METRICS if m.asked.search(asked_part)), None)
    metric = metric or next((m for m in METRICS if m.asked.search(text)), None)
    item = None
    if metric is None:
        found = [(m.start(), m.start() - m.end(), i) for i in ITEMS.values()
                 if (m := i.asked.search(asked_part))]  # fmt: skip
        item = min(found, key=lambda f: (f[0], f[1]))[2] if found else None
        if item is None and not definitions(question):
            return None
    span = _span_years(question, years)
    if _CAGR.search(question):
        mode = "cagr"
    elif _AVERAGE.search(asked_part) and len(span) > 1 and not _is_balance_average(asked_part):
        mode = "average"
    elif len(years) > 1 and _GROWTH.search(question):
        mode = "growth" if item is not None else "change"
    elif len(years) > 1:
        mode = "change"
    elif _DIRECTION.search(question) and metric is not None:
        # "improving gross margin as of FY2023": the year against the one before
        years, mode = [years[0] - 1, years[0]], "change"
    else:
        mode = "value"
    quarters = {
        p.fiscal_year: p.fiscal_quarter
        for p in periods(asked_part)
        if p.fiscal_year and p.fiscal_quarter and p.day is None
    }
    ended = {p.day.year: p.day for p in periods(asked_part) if p.day is not None}
    return Asked(metric, item, span if mode in ("average",) else years, mode, quarters, ended)


def _years(text: str) -> list[int]:
    """The fiscal years written: "FY2022", "fiscal 2021", "2021 fiscal period", and a bare
    "2022" ("between 2022 and the 2021 fiscal period")."""
    named = {p.fiscal_year for p in periods(text) if p.fiscal_year and not p.day}
    bare = {int(y) for y in re.findall(r"(?<![\d$,.])((?:19|20)\d\d)(?![\d,]|\.\d)", text)}
    return sorted(named | bare) if named else sorted(bare)


def _is_balance_average(text: str) -> bool:
    """ "average inventory between FY2018 and FY2019" is a metric's input, not "a 3 year
    average of the metric"."""
    m = _AVERAGE.search(text)
    return bool(m and not m.group(1) and re.search(r"average\s+\w+(?:\s+\w+)?\s+between", text))


def _span_years(question: str, years: list[int]) -> list[int]:
    """Every year of "FY2015 - FY2017" (a range), else the years written."""
    if len(years) == 2 and re.search(r"\b(?:through|to|-|–)\b|\s[-–]\s", question):
        return list(range(years[0], years[1] + 1))
    return years


def statements_needed(question: str) -> list[str]:
    """The statements whose rows a metric question needs: those printing its inputs (the
    inputs its definition names, else the standard metric's, else the line item asked)."""
    asked = read_metric_question(question)
    if asked is None:
        return []
    keys: set[str] = set()
    for _name, definition in definitions(question):
        keys |= {i.key for i in ITEMS.values() if i.asked.search(definition)}
        keys |= {k for m in METRICS if m.asked.search(definition) for k in m.needs}
    if asked.metric is not None:
        keys |= set(asked.metric.needs)
    if asked.item is not None:
        keys.add(asked.item.key)
    return [name for name, items in STATEMENT_OF.items() if keys & set(items)]
