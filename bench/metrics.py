"""Retrieval and answer metrics: pure functions over ranked relevance flags and strings.

``relevant`` is the ranked list of retrieved items, True where the item is relevant (binary
relevance). Every function returns a float in [0, 1].
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from collections.abc import Sequence

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation + "‘’“”")


def _check_k(k: int) -> None:
    if k <= 0:
        raise ValueError("k must be positive")


def first_relevant_rank(relevant: Sequence[bool]) -> int | None:
    """1-based rank of the first relevant item, None when there is none."""
    for rank, flag in enumerate(relevant, start=1):
        if flag:
            return rank
    return None


def hit_at_k(relevant: Sequence[bool], k: int) -> float:
    """1.0 when a relevant item is among the first ``k``, else 0.0."""
    _check_k(k)
    return 1.0 if any(relevant[:k]) else 0.0


def mrr_at_k(relevant: Sequence[bool], k: int) -> float:
    """Reciprocal rank of the first relevant item within the first ``k`` (0.0 when none)."""
    _check_k(k)
    rank = first_relevant_rank(relevant[:k])
    return 1.0 / rank if rank else 0.0


def dcg_at_k(relevant: Sequence[bool], k: int) -> float:
    """Discounted cumulative gain with binary gains: sum of 1/log2(rank + 1)."""
    _check_k(k)
    return sum(1.0 / math.log2(rank + 1) for rank, flag in enumerate(relevant[:k], 1) if flag)


def ndcg_at_k(relevant: Sequence[bool], k: int, n_relevant: int) -> float:
    """DCG@k over the ideal DCG@k of ``n_relevant`` relevant items (capped at k); 0 when none.

    ``n_relevant`` is the number of relevant items in the whole collection, not only among the
    retrieved ones; it is raised to the number retrieved if that is larger.
    """
    _check_k(k)
    ideal_count = min(max(n_relevant, sum(bool(f) for f in relevant[:k])), k)
    if ideal_count == 0:
        return 0.0
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, ideal_count + 1))
    return dcg_at_k(relevant, k) / ideal


def normalize_answer(text: str) -> str:
    """SQuAD normalisation: lower case, no punctuation, no articles, single spaces."""
    text = text.lower().translate(_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def token_f1(prediction: str, gold: str) -> float:
    """SQuAD token F1 between two answers after :func:`normalize_answer`."""
    predicted, expected = normalize_answer(prediction).split(), normalize_answer(gold).split()
    if not predicted or not expected:
        return float(predicted == expected)
    common = sum((Counter(predicted) & Counter(expected)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(predicted), common / len(expected)
    return 2 * precision * recall / (precision + recall)


def rouge_l(prediction: str, gold: str) -> float:
    """ROUGE-L F-measure (rouge-score package, Porter stemmer)."""
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    return float(scorer.score(gold, prediction)["rougeL"].fmeasure)


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


_FIGURE = re.compile(r"(?<![\w.])[-−(]?\$?\s?(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?\)?\s?(%|percent)?")
_YEAR_LIKE = range(1900, 2101)


def figures(text: str) -> list[tuple[float, bool]]:
    """The numbers written in ``text`` as (absolute value, is a percentage); years (1900–2100
    without decimals or a % sign) are dates, not figures."""
    found: list[tuple[float, bool]] = []
    for whole, fraction, percent in _FIGURE.findall(text):
        value = float(whole.replace(",", "") + (fraction or ""))
        if not fraction and not percent and int(value) in _YEAR_LIKE:
            continue
        found.append((abs(value), bool(percent)))
    return found


def numeric_match(answer: str, reference: str, tolerance: float = 0.01) -> bool | None:
    """Whether every figure of ``reference`` is in ``answer`` within ``tolerance`` (relative),
    a percentage only as a percentage; None when the reference states no figure."""
    wanted = figures(reference)
    if not wanted:
        return None
    given = figures(answer)

    def present(value: float, percent: bool) -> bool:
        return any(
            (p == percent or not percent) and abs(v - value) <= tolerance * max(abs(value), 1e-9)
            for v, p in given
        )

    return all(present(value, percent) for value, percent in wanted)


def yes_no_of(text: str) -> str | None:
    """ "yes" or "no" when ``text`` opens with one, else None."""
    words = normalize_answer(text).split()
    return words[0] if words and words[0] in ("yes", "no") else None


def supported_share(answer: str, sources: Sequence[str]) -> float:
    """The share of the answer's content words written in ``sources`` (chop's own check of a
    short answer, chop_rag.answers.answering.words_written_in)."""
    from chop_rag.answers.answering import words_written_in

    return words_written_in(answer, sources)
