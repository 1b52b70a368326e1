"""How far an extractive answer could go on the E-Manual answer set, from the answers already
published by bench.answers (no model, no database):

    python -m bench.studies.answer_ceiling        # reads bench/results/answers/emanual.jsonl

Per question it scores, by ROUGE-L against the reference answer: the published answer; the
answer cut to its first N sentences (does a shorter quote score better?); the whole gold
section; and the oracle: the best run of consecutive sentences of the gold section (at most
MAX_RUN), chosen knowing the reference, so the most any sentence selection inside the right
section could score. Writes bench/results/answer-ceiling/results.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.answers import EMANUAL_DATA, emanual_cases, scored
from bench.emanual import DEFAULT_OUT
from bench.metrics import mean
from bench.report import REPO_ROOT, dated, md_table, page, script_main, script_parser
from chop_rag.answers.answering import split_sentences

MAX_RUN = 12  # sentences in the oracle's run, at most
CUTS = (1, 2, 3, 4, 6, 8)


def best_run(text: str, reference: str) -> float:
    """The best ROUGE-L of a run of consecutive sentences of ``text`` (the oracle)."""
    sentences = split_sentences(text)
    return max(
        (
            scored(" ".join(sentences[first:last]), reference)["rouge_l"]
            for first in range(len(sentences))
            for last in range(first + 1, min(len(sentences), first + MAX_RUN) + 1)
        ),
        default=0.0,
    )


def _plain(text: str) -> str:
    return " ".join(text.split()).lower()


def quotes(sentences: Sequence[str], section: str) -> bool:
    """Whether most of the answer's sentences are the section's own."""
    plain = _plain(section)
    return sum(_plain(s)[:60] in plain for s in sentences) * 2 >= max(1, len(sentences))


def run(args: argparse.Namespace) -> dict[str, Any]:
    answers = {
        record["qid"]: record
        for record in map(json.loads, Path(args.answers).read_text().splitlines())
    }
    rows: list[dict[str, Any]] = []
    for case in emanual_cases(args.emanual_data, None):
        answer = answers.get(case.qid)
        if answer is None or not case.gold_text:
            continue
        sentences = split_sentences(answer["answer"])
        rows.append(
            {
                "qid": case.qid,
                "quotes_gold": quotes(sentences, case.gold_text),
                "answer": answer["rouge_l"],
                "top_chunk": answer["top_chunk"]["rouge_l"],
                "gold_section": scored(case.gold_text, case.reference)["rouge_l"],
                "gold_best_run": best_run(case.gold_text, case.reference),
                **{
                    f"answer_first_{n}": scored(" ".join(sentences[:n]), case.reference)["rouge_l"]
                    for n in CUTS
                },
            }
        )
    keys = [k for k in rows[0] if k not in ("qid", "quotes_gold")] if rows else []
    groups = {
        "answer quotes the gold section": [r for r in rows if r["quotes_gold"]],
        "answer quotes another section": [r for r in rows if not r["quotes_gold"]],
    }
    return {
        "settings": dated({"answers": os.path.relpath(args.answers, REPO_ROOT)}),
        "questions": len(rows),
        "mean_rouge_l": {k: round(mean([r[k] for r in rows]), 3) for k in keys},
        "by_section": {
            name: {
                "questions": len(group),
                **{k: round(mean([r[k] for r in group]), 3) for k in ("answer", "gold_section")},
            }
            for name, group in groups.items()
            if group
        },
        "per_question": rows,
    }


def markdown(results: dict[str, Any]) -> str:
    return page(
        "How far an extractive answer could go (bench.studies.answer_ceiling)",
        f"{results['settings']['date']} · {results['questions']} E-Manual questions, "
        f"ROUGE-L F1 against the reference, from {results['settings']['answers']}",
        md_table(["answer as", "mean ROUGE-L"], list(results["mean_rouge_l"].items())),
        md_table(
            ["questions", "n", "answer ROUGE-L", "gold section ROUGE-L"],
            [
                [name, g["questions"], g["answer"], g["gold_section"]]
                for name, g in results["by_section"].items()
            ],
        ),
        "gold_best_run: the best run of consecutive sentences of the gold section, chosen "
        "knowing the reference (an oracle: the most sentence selection inside the right "
        "section could score). answer_first_N: the published answer cut to N sentences.",
    )


def parser() -> argparse.ArgumentParser:
    p = script_parser("bench.studies.answer_ceiling", __doc__)
    p.add_argument("--answers", default=str(DEFAULT_OUT / "answers" / "emanual.jsonl"))
    p.add_argument("--emanual-data", type=Path, default=EMANUAL_DATA)
    p.add_argument("--out", type=Path, default=DEFAULT_OUT / "answer-ceiling")
    return p


main = script_main(parser, run, markdown=markdown)


if __name__ == "__main__":
    raise SystemExit(main())
