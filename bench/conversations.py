"""Conversations on near-identical manuals: do follow-up turns keep the manual they are about?

One command (results in bench/results/conversations/results.{json,md}):

    python -m bench.conversations               # ingest the 11 phone manuals, run, report
    python -m bench.conversations --reuse       # reuse the collection of an earlier run

Collection: the 11 Galaxy phone manuals that hold the gold sections of most of the 50 S10 dev
questions (S10, Note 10, Note 10+, Note 9, Note 8, S9, S9+, S8, S8+, A50, A20: twins S9/S9+
and S8/S8+ are word for word identical), ingested by chop's ingest graph with the default
Context (each manual's JSON through chop_rag.reading.loaders, as ``chop ingest`` reads it).

Threads (seeded, written to threads.jsonl): each is six turns over three devices A, B, C and
five distinct S10 dev questions whose gold section exists in the device asked about:
  1. ``first``           the question naming A ("I have a Samsung Galaxy Note10. ...",
                         "... on my s9 plus?", "[Galaxy A50] ...": four templates)
  2. ``follow-up``       another question, device not named ("Thanks. ...", "And ...")
  3. ``what about``      only names B ("What about the Galaxy S9?", "And the note-10?", six
                         templates): turn 2's question about B
  4. ``follow-up``       another question, device not named: about B now
  5. ``pronoun``         refers back to turn 4 ("Where do I find that?", "How do I do it?")
  6. ``new device``      its own question naming C ("... on my S8 Plus?")
  7. ``antecedent``      a question about C, device not named ("How can I view all my notes?")
  8. ``pronoun, new``    refers back to turn 7 and asks something new about what it names
                         ("And how do I edit them?", "How do I delete one?"): a hand-written
                         pair of S10 dev questions (NEW_PRONOUN), drawn with a generator of
                         its own so turns 1-6 are those of runs before turns 7-8 existed
Devices are written as people write them (bench.device_naming.pick_variant: "Note10",
"s9 plus", "S-10", ...). Each turn is measured three ways (four), on the top source an answer shows:
  - ``thread``: the turn in its thread (the chat graph, chop_rag.api.Conversations);
  - ``ceiling``: the question it stands for asked alone with its device named
    ("[<device>] <question>", the data README's template);
  - ``alone``: the turn's words asked alone (what chop did before conversations);
  - ``resolved`` (``pronoun, new`` only): the turn's own words with the pronoun written out as
    a person reads it (NEW_PRONOUN, by hand), asked alone with its device named: the same
    question without the conversation, where ``ceiling`` is another wording of it.
The thread runs the whole chat graph; ceiling and alone run the answer graph up to its
retrieve node (the sources are final there).
Doc@1: the top source is from the gold device's manual. Hit@1: it also overlaps a gold section.
Default Context throughout (answers extractive, Context.answer = "quote"; the local model
gives a yes/no question's verdict, which changes no source).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver

from bench.device_naming import pick_variant
from bench.emanual import DEFAULT_OUT, index_chop, overlaps, resolve_data
from bench.emanual_data import (
    S10_QUESTIONS,
    GoldMatch,
    Manual,
    Question,
    check_data,
    load_manuals,
    load_questions,
    match_gold,
)
from bench.metrics import mean
from bench.report import (
    dumps_plain,
    log,
    md_table,
    run_header,
    script_main,
    script_parser,
    write_report,
)
from chop_rag.api import conversations
from chop_rag.config import Context
from chop_rag.graphs.answer import build_answer_graph
from chop_rag.models.construction import get_embedder
from chop_rag.store import store_for

SUBSET = "conversations"
SEED = 35
THREADS = 12
COLLECTION = "bench_conversations"
PHONES = (
    "s10_manual_corpus.json",
    *(
        f"other_emanuals_corpus/Galaxy_{name}.json"
        for name in ("Note_10", "Note_10+", "Note_9", "Note_8", "S9", "S9+", "S8", "S8+", "A50",
                     "A20")
    ),
)  # fmt: skip
FIRST = (
    "I have a Samsung {device}. {question}",
    "{bare} on my {device}?",
    "[{device}] {question}",
    "My phone is a {device}. {question}",
)
FOLLOW_UP = ("{question}", "Thanks. {question}", "And {lower}", "Another thing: {question}")
WHAT_ABOUT = (
    "What about the {device}?",
    "And the {device}?",
    "Same question for my {device}.",
    "How about on a {device}?",
    "Is it the same on the {device}?",
    "and for the {device}",
)
PRONOUN = (
    "Where do I find that?",
    "How do I do it?",
    "Can you tell me more about that?",
    "Where is that setting?",
)
NEW_DEVICE = ("{bare} on my {device}?", "I also have a {device}. {question}")
# (the dev question before, follow-ups that refer back to it with a pronoun and ask something
# new, each with the words a person reads it as (the pronoun written out by hand), the dev
# question they stand for): "them" is the notes, "one" a group, "it" the camera
NEW_PRONOUN: tuple[tuple[str, tuple[tuple[str, str], ...], str], ...] = (
    ("439", (("And how do I edit them?", "And how do I edit my notes?"),
             ("Can I edit them too?", "Can I edit my notes too?")), "451"),
    ("111", (("How do I delete one?", "How do I delete a group?"),
             ("And how can I get rid of one of them?", "And how can I get rid of a group?")),
     "8"),
    ("111", (("How do I link them?", "How do I link contacts?"),
             ("Can I link two of them together?", "Can I link two contacts together?")), "578"),
    ("268", (("Can I snooze them?", "Can I snooze notifications?"),
             ("Where do I find the option to snooze one?",
              "Where do I find the option to snooze a notification?")), "501"),
    ("561", (("How do I clear them all?", "How do I clear all the certificates?"),
             ("And how can I remove all of them?", "And how can I remove all the certificates?")),
     "32"),
    ("266", (("Can I set a shutter sound for it?", "Can I set a shutter sound for the camera?"),
             ("Does it let me turn on a shutter sound?",
              "Does the camera let me turn on a shutter sound?")), "186"),
    ("218", (("Can I take one with a palm swipe instead?",
              "Can I take a screenshot with a palm swipe instead?"),
             ("How do I capture one by swiping my palm?",
              "How do I capture a screenshot by swiping my palm?")), "549"),
    ("518", (("Can I apply a custom theme to it?",
              "Can I apply a custom theme to the Always On Display?"),
             ("How do I give it a custom theme?",
              "How do I give the Always On Display a custom theme?")), "575"),
    ("285", (("And how do I change its timeout?", "And how do I change the screen timeout?"),
             ("How long does it stay on, and can I change that?",
              "How long does the screen stay on, and can I change that?")), "64"),
)  # fmt: skip
KINDS = ("first", "follow-up", "what about", "follow-up", "pronoun", "new device", "antecedent",
         "pronoun, new")  # fmt: skip


@dataclass(frozen=True)
class Turn:
    kind: str
    text: str  # what the user writes
    device: str  # the manual it is about (its loader device name)
    question: Question  # the dev question it stands for
    resolved: str = ""  # a pronoun turn's own words, the pronoun written out by hand

    def ceiling(self) -> str:
        return f"[{self.device}] {self.question.question.strip()}"

    def resolved_alone(self) -> str | None:
        """The turn's own words as a person reads them, asked alone with its device named."""
        return f"[{self.device}] {self.resolved}" if self.resolved else None


def gold_of(manual: Manual, question: Question) -> GoldMatch:
    return match_gold(question.section_path, manual.sections)


def exact(manual: Manual, question: Question) -> bool:
    return gold_of(manual, question).how in ("exact", "normalised")


def new_pronoun_turns(
    manual: Manual, questions: Sequence[Question], rng: random.Random, asked: set[str]
) -> list[Turn]:
    """Turns 7 and 8 about ``manual``: a question naming no device, then a pronoun follow-up
    that asks something new about what it names (NEW_PRONOUN, both gold sections in it, not
    ``asked`` earlier in the thread)."""
    by_id = {q.qid: q for q in questions}
    usable = [
        (by_id[before], phrasings, by_id[after])
        for before, phrasings, after in NEW_PRONOUN
        if before in by_id and after in by_id and not {before, after} & asked
        and exact(manual, by_id[before]) and exact(manual, by_id[after])
    ]  # fmt: skip
    if not usable:
        return []
    before, phrasings, after = rng.choice(usable)
    text = before.question.strip()
    antecedent = rng.choice(FOLLOW_UP).format(
        question=text, bare=text.rstrip("?"), lower=text[:1].lower() + text[1:])  # fmt: skip
    written, read_as = rng.choice(phrasings)
    return [
        Turn("antecedent", antecedent, manual.device, before),
        Turn("pronoun, new", written, manual.device, after, read_as),
    ]


def build_threads(
    manuals: Sequence[Manual], questions: Sequence[Question], count: int, seed: int
) -> list[list[Turn]]:
    """``count`` threads of six turns, and two more where the third device's manual holds a
    NEW_PRONOUN pair; deterministic for ``seed`` (see the module docstring)."""
    rng = random.Random(seed)
    extra = random.Random(seed + 1)  # turns 7-8: turns 1-6 stay those of earlier runs
    threads: list[list[Turn]] = []
    while len(threads) < count:
        a, b, c = rng.sample(list(manuals), 3)
        usable = [q for q in questions if exact(a, q) and exact(b, q) and exact(c, q)]
        if len(usable) < 4:
            continue
        q1, q2, q4, q6 = rng.sample(usable, 4)

        def words(q: Question) -> dict[str, str]:
            text = q.question.strip()
            return {
                "question": text,
                "bare": text.rstrip("?"),
                "lower": text[:1].lower() + text[1:],
            }

        def name(m: Manual) -> str:
            return pick_variant(m.device, rng)[1]

        threads.append(
            [
                Turn("first", rng.choice(FIRST).format(device=name(a), **words(q1)), a.device, q1),
                Turn("follow-up", rng.choice(FOLLOW_UP).format(**words(q2)), a.device, q2),
                Turn("what about", rng.choice(WHAT_ABOUT).format(device=name(b)), b.device, q2),
                Turn("follow-up", rng.choice(FOLLOW_UP).format(**words(q4)), b.device, q4),
                Turn("pronoun", rng.choice(PRONOUN), b.device, q4),
                Turn("new device", rng.choice(NEW_DEVICE).format(device=name(c), **words(q6)),
                     c.device, q6),
            ]
        )  # fmt: skip
        threads[-1].extend(
            new_pronoun_turns(c, questions, extra, {t.question.qid for t in threads[-1]})
        )
    return threads


def scored(result: dict[str, Any], manual: Manual, question: Question) -> dict[str, Any]:
    """Doc@1 and Hit@1 of an answer's top source."""
    sources = result.get("sources") or []
    if not sources:
        return {"doc@1": False, "hit@1": False, "top": None}
    top = sources[0]
    meta = top.get("metadata") or {}
    right = top["doc_id"] == manual.doc_id
    hit = right and overlaps(
        int(meta.get("char_start", -1)), int(meta.get("char_end", -1)), manual,
        gold_of(manual, question),
    )  # fmt: skip
    return {"doc@1": right, "hit@1": bool(hit), "top": f"{top['doc_title']}#{top['chunk_index']}"}


def alone_sources(ctx: Context, question: str) -> dict[str, Any]:
    """The sources a one-off question gets: the answer graph stopped after its retrieve node
    (the sources are final there; generate only writes the answer, and measuring it thrice
    per turn would not fit the time the contended machine has)."""
    global _RETRIEVAL_ONLY
    if _RETRIEVAL_ONLY is None:
        _RETRIEVAL_ONLY = build_answer_graph().builder.compile(
            checkpointer=InMemorySaver(), interrupt_after=["retrieve"]
        )
    config: RunnableConfig = {"configurable": {"thread_id": uuid.uuid4().hex}}
    _RETRIEVAL_ONLY.invoke({"question": question}, config=config, context=ctx)
    return dict(_RETRIEVAL_ONLY.get_state(config).values)


_RETRIEVAL_ONLY: Any = None


def run_threads(
    ctx: Context,
    threads: Sequence[list[Turn]],
    manuals: dict[str, Manual],
    partial: Path | None = None,
) -> list[dict[str, Any]]:
    """Every turn of every thread, measured three ways; each finished thread's records are
    appended to ``partial`` (a run cut short still leaves them)."""
    records: list[dict[str, Any]] = []
    if partial is not None:
        partial.write_text("", "utf-8")
    with conversations(ctx) as talk:
        for number, thread in enumerate(threads):
            thread_id = f"bench-{number}"
            talk.delete(thread_id)
            for position, turn in enumerate(thread, start=1):
                manual = manuals[turn.device]
                in_thread = talk.ask(turn.text, thread_id)
                ceiling = alone_sources(ctx, turn.ceiling())
                alone = alone_sources(ctx, turn.text)
                resolved = turn.resolved_alone()
                read_alone = alone_sources(ctx, resolved) if resolved else None
                records.append(
                    {
                        "thread_no": number,
                        "turn": position,
                        "kind": turn.kind,
                        "text": turn.text,
                        "device": turn.device,
                        "qid": turn.question.qid,
                        "decision": in_thread["continuity"].get("decision"),
                        "asked_as": in_thread["question"],
                        "thread": scored(in_thread, manual, turn.question),
                        "ceiling": scored(ceiling, manual, turn.question),
                        "alone": scored(alone, manual, turn.question),
                        **(
                            {"resolved": scored(read_alone, manual, turn.question)}
                            if read_alone is not None
                            else {}
                        ),
                    }
                )
            if partial is not None:
                with partial.open("a", encoding="utf-8") as out:
                    for record in records[-len(thread) :]:
                        out.write(json.dumps(record) + "\n")
            log(f"thread {number + 1}/{len(threads)} done")
    return records


def summary(records: Sequence[dict[str, Any]]) -> dict[str, float]:
    out: dict[str, float] = {"turns": len(records)}
    for way in ("thread", "ceiling", "alone", "resolved"):
        measured = [r[way] for r in records if way in r]
        for metric in ("doc@1", "hit@1"):
            if measured:
                out[f"{way} {metric}"] = mean([float(m[metric]) for m in measured])
    return out


def markdown(results: dict[str, Any]) -> str:
    s = results["settings"]
    ways = ("thread", "ceiling", "alone", "resolved")
    header = ["turn kind", "n", *(f"{w} Doc@1" for w in ways), *(f"{w} Hit@1" for w in ways)]

    def cell(m: dict[str, float], key: str) -> str:
        return f"{m[key]:.3f}" if key in m else "–"

    rows = [
        [kind, int(m["turns"]), *(cell(m, f"{w} doc@1") for w in ways),
         *(cell(m, f"{w} hit@1") for w in ways)]
        for kind, m in results["groups"].items()
    ]  # fmt: skip
    decisions = ", ".join(f"{k} {v}" for k, v in results["decisions"].items())
    return "\n".join(
        [
            "# Conversations — follow-ups on 11 near-identical phone manuals",
            "",
            f"{s['date']} · embedder {s['embedder']} · {s['manuals']} manuals · {s['threads']} "
            f"threads of 6-8 turns (seed {s['seed']}) · default Context",
            "",
            "thread: the turn in its conversation; ceiling: the question it stands for asked "
            "alone with its device named (the dev question's words); alone: the turn's words "
            "asked alone (before conversations); resolved (pronoun, new): the turn's own words "
            "with its pronoun written out by hand, asked alone with its device named. Doc@1: "
            "the top source is from the right manual; Hit@1: and it overlaps the gold section.",
            "",
            md_table(header, rows),
            "",
            f"Continuity decisions taken, by turn kind: {decisions}.",
            "",
        ]
    )


def run(args: argparse.Namespace) -> dict[str, Any]:
    root = resolve_data(args.data)
    check_data(root)
    manual_list, _skipped = load_manuals([root / name for name in PHONES])
    manuals = {m.device: m for m in manual_list}
    questions = load_questions(root / S10_QUESTIONS, "Galaxy S10")
    threads = build_threads(manual_list, questions, args.threads, args.seed)
    out = Path(args.out) / SUBSET
    out.mkdir(parents=True, exist_ok=True)
    (out / "threads.jsonl").write_text(
        "".join(json.dumps([t.text for t in thread]) + "\n" for thread in threads), "utf-8"
    )
    ctx = Context().with_overrides(collection=COLLECTION)
    store = store_for(ctx)
    costs: dict[str, Any] = {"reused": True}
    if not (args.reuse and store.collection_exists(COLLECTION)):
        log(f"ingesting {len(manual_list)} manuals into {COLLECTION} (default Context)")
        stats = index_chop(Context(), store, COLLECTION, [m.loaded for m in manual_list])
        costs = {
            "chunks": stats.chunks,
            "llm_calls": stats.llm_calls,
            "cache_hits": stats.cache_hits,
            "index_seconds": round(stats.index_seconds, 1),
        }
        log(f"ingested: {costs}")
    if args.ingest_only:
        return {}
    started = time.perf_counter()
    records = run_threads(ctx, threads, manuals, out / "partial.jsonl")
    kinds = dict.fromkeys(r["kind"] for r in records)
    groups = {kind: summary([r for r in records if r["kind"] == kind]) for kind in kinds}
    groups["follow-ups (turns 2-5)"] = summary([r for r in records if 2 <= r["turn"] <= 5])
    groups["all"] = summary([{k: v for k, v in r.items() if k != "resolved"} for r in records])
    decisions = {
        kind: "/".join(
            f"{d} {sum(r['decision'] == d for r in records if r['kind'] == kind)}"
            for d in dict.fromkeys(r["decision"] for r in records if r["kind"] == kind)
        )
        for kind in kinds
    }
    results: dict[str, Any] = {
        "settings": run_header(
            SUBSET,
            root,
            get_embedder(ctx).name,
            manuals=len(manual_list),
            threads=len(threads),
            seed=args.seed,
            collection=COLLECTION,
            answer=ctx.answer,
        ),
        "costs": {**costs, "turn_seconds": round(time.perf_counter() - started, 1)},
        "groups": groups,
        "decisions": decisions,
        "per_turn": records,
    }
    text = markdown(results)
    write_report(out, "results", dumps_plain(results), text)
    (out / "partial.jsonl").unlink(missing_ok=True)  # results.json holds every turn now
    print(text)
    return results


def parser() -> argparse.ArgumentParser:
    p = script_parser("bench.conversations", __doc__)
    p.add_argument("--data", default=None, help="E-Manual QA folder (default: ../shared/data)")
    p.add_argument("--out", default=str(DEFAULT_OUT), help="results folder")
    p.add_argument("--threads", type=int, default=THREADS, help="conversations to run")
    p.add_argument("--seed", type=int, default=SEED)
    p.add_argument("--reuse", action="store_true", help="reuse the collection if it exists")
    p.add_argument("--ingest-only", action="store_true", help="only (re)build the collection")
    return p


main = script_main(parser, run)


if __name__ == "__main__":
    sys.exit(main())
