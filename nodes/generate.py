"""generate: answer in the sources' own words, citing them, or say plainly that they do not.

Two cases are decided before any LLM call, because a small model cannot be trusted with them:
no sources at all, and a question about a model, company or period that no stored document
covers (answering from a twin product's manual or another year's filing is the failure CHOP
exists to prevent). Otherwise the answer quotes the section that answers best and the model
adds what it can back from it: a yes/no verdict, a short direct answer (chop.answers.answering).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from langgraph.runtime import Runtime

import prompts
from chop.answers.answering import (
    AnswerReply,
    Passage,
    SectionReader,
    YesNoReply,
    best_passage,
    best_sentences,
    build_passages,
    checked_verdict,
    compose,
    extract,
    filing_units,
    heading_path,
    is_yes_no_question,
    shown,
)
from chop.answers.figures import (
    FigureReply,
    Row,
    answering_rows,
    figure_answer,
    has_figure_lines,
    is_figure_question,
    relevant_rows,
    row_for_line,
    row_line,
    stated,
    table_rows,
)
from chop.answers.formulas import compute, statements_needed
from chop.answers.formulas import verdict as figure_verdict
from chop.config import Context
from chop.models.construction import get_embedder
from chop.models.embedders import embed_queries
from chop.models.llm import structured_call
from chop.questions.statements import STATEMENTS
from chop.state import AnswerState, Source
from chop.store import SearchFilter, Store, store_for
from nodes.retrieve import to_source

SECTION_WINDOW = 6  # chunks on either side of a hit that may belong to its section
# chunks above a table's continuation that may hold its header: a statement with dot leaders
# ("Accrued expenses........ 678,364") spans several chunks
HEADER_WINDOW = 12
NOT_ANSWERED = "The passages found do not answer this question."


def declined(answer: str, **extra: Any) -> dict[str, Any]:
    return {"answer": answer, "answerable": False, "citations": [], **extra}


def generate(state: AnswerState, runtime: Runtime[Context]) -> dict[str, Any]:
    ctx = runtime.context
    store = store_for(ctx)
    sources = state.get("sources", [])
    if not sources:
        return declined("The collection has no passages for this question.")
    unknown = state.get("question_unknown")
    if unknown:
        titles = ", ".join(dict.fromkeys(s["doc_title"] for s in sources[:3]))
        return declined(
            f"The documents do not cover {unknown}. The closest passages are from {titles}, "
            "so they are not used to answer."
        )

    sections: dict[int, list[Source]] = {}  # by chunk id: passages and table rows read once

    def read_section(source: Source) -> list[Source]:
        """The chunks next to ``source`` under the same heading path, in order."""
        if source["chunk_id"] not in sections:
            sections[source["chunk_id"]] = section_around(source)
        return sections[source["chunk_id"]]

    def section_around(source: Source) -> list[Source]:
        index = source["chunk_index"]
        path = heading_path(source)
        if not path:
            return [source]
        around = store.neighbours(
            ctx.collection, source["doc_id"], index - SECTION_WINDOW, index + SECTION_WINDOW
        )
        chunks = [to_source(source["number"], hit) for hit in around]
        at = next((i for i, c in enumerate(chunks) if c["chunk_id"] == source["chunk_id"]), None)
        if at is None:
            return [source]
        first = last = at
        while first > 0 and heading_path(chunks[first - 1]) == path:
            first -= 1
        while last + 1 < len(chunks) and heading_path(chunks[last + 1]) == path:
            last += 1
        return chunks[first : last + 1]

    def read_near(source: Source, first: int, last: int) -> tuple[str, list[int]]:
        """The text and pages of the chunks ``first``..``last`` places from ``source``: the
        header above a table's continuation, or the rest of a statement below its start."""
        index = source["chunk_index"]
        near = [
            to_source(source["number"], hit)
            for hit in store.neighbours(
                ctx.collection, source["doc_id"], index + first, index + last
            )
        ]
        pages = [p for chunk in near for p in chunk["metadata"].get("pages") or ()]
        return "\n".join(chunk["text"] for chunk in near), pages

    question = state["question"]
    yes_no = is_yes_no_question(question)
    resolution: dict[str, Any] = dict(state.get("question_resolution") or {})
    filings = bool(resolution.get("filings"))
    topic = resolution.get("topic") or question
    computed_note = ""
    plain_rows: list[Row] = []
    if filings and ctx.answer == "quote" and (yes_no or is_figure_question(question)):
        # a metric over the statements' rows, computed by code (chop.answers.formulas)
        extra = statement_sources(ctx, store, question, resolution, len(sources))
        rows = rows_of(extra, read_section, read_near, whole=True) + rows_of(
            sources, read_section, read_near
        )
        computed = compute(question, rows)
        if computed is not None and computed.plain:
            # a line item asked for itself: the statement row it was read from, and the rows
            # the question names, answer it below
            plain_rows = computed.rows
            computed = None
        if computed is not None and computed.value is not None:
            said = figure_verdict(question, computed) if yes_no else None
            opening = {"yes": "Yes. ", "no": "No. "}.get(said or "", "")
            return {
                "answer": opening + computed.text,
                "answerable": True,
                "citations": computed.citations,
                "sources": [*sources, *extra] if extra else sources,
                "answer_note": "computed by chop from the statements' rows (chop.answers.formulas)",
                "stats": {"answer_figures": 1.0},
            }
        if computed is not None:
            computed_note = computed.text  # what could not be computed, and what was missing
    figure_fallback: dict[str, Any] = {}  # why a figure question is answered by quoting
    if ctx.answer == "lead" and not yes_no and is_figure_question(question):
        rows = relevant_rows(rows_of(sources, read_section), question)
        if rows:
            figure = answer_from_rows(ctx, store, question, rows)
            if "answer" in figure:
                return figure
            figure_fallback = figure
    passages = build_passages(sources, read_section)
    if not passages:
        return declined(NOT_ANSWERED)
    if filings:  # whole sentences and table rows with their periods, not a cut window
        for passage in passages:
            pages = passage.source["metadata"].get("pages") or ()
            found = table_rows(passage.text, passage.source["number"], pages)

            def render(line: str, found: list[Row] = found) -> str | None:
                row = row_for_line(line, found)
                return row_line(row) if row is not None else None

            passage.sentences = filing_units(passage.text, render) or passage.sentences
    embedder = get_embedder(ctx)
    sentences = [sentence for passage in passages for sentence in passage.sentences]
    vectors = np.vstack([embed_queries(embedder, [question]), embedder.embed(sentences)])
    scores = sentence_scores(passages, vectors)
    best = best_passage(passages, scores)
    chosen = passages[best]
    extracted = extract(chosen, scores[best])
    if not yes_no and ctx.answer == "quote":
        answer = compose(chosen, extracted, None)
        # the line items a figure question asks for, as their tables print them; matched on
        # the question's topic, as the company's name in "attributable to General Mills" is no
        # line item
        rows = (
            list(
                {
                    id(row): row
                    for row in [*plain_rows, *answering_rows(rows_of(sources, read_section), topic)]
                }.values()
            )
            if is_figure_question(question)
            else []
        )
        return {
            "answer": " ".join(
                [
                    *([computed_note] if computed_note else []),
                    *(stated(row, question) for row in rows),
                    answer.text,
                ]
            ),
            "answerable": True,
            "citations": list(dict.fromkeys([*(row.source for row in rows), *answer.citations])),
            **figure_fallback,
        }
    messages = prompts.render(
        "generate_yes_no" if yes_no else "generate", question=question, passages=shown([chosen])
    )
    schema: type[AnswerReply | YesNoReply] = YesNoReply if yes_no else AnswerReply
    result = structured_call(ctx, store, "answer", messages, schema)
    reply = result.value
    verdict, verdict_status = checked_verdict(
        reply.verdict if isinstance(reply, YesNoReply) else None,
        reply.answer if isinstance(reply, YesNoReply) else "",
        question,
        chosen,
        best_sentences(chosen, scores[best]),
        stated_only=filings,
    )
    lead = reply.answer if reply and ctx.answer == "lead" else None
    answer = compose(chosen, extracted, lead, verdict, unsaid=verdict_status == "unsaid")
    stats = {**result.stats(), f"answer_lead_{answer.lead}": 1.0}
    if yes_no and reply is not None:
        stats[f"answer_verdict_{verdict_status}"] = 1.0
    for name, value in figure_fallback.get("stats", {}).items():
        stats[name] = stats.get(name, 0.0) + value
    note = figure_fallback.get("answer_note", "")
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
    return {
        "answer": answer.text,
        "answerable": True,
        "citations": answer.citations,
        "answer_note": note,
        "stats": stats,
        **error,
    }


STATEMENT_CHUNKS = 5  # of each statement a metric needs: its best chunks, read as sections


def statement_sources(
    ctx: Context, store: Store, question: str, resolution: dict[str, Any], numbered: int
) -> list[Source]:
    """The best chunks of the statements a metric question needs (the income statement for
    a margin, the balance sheet for a ratio of balances), from the documents it resolved to,
    numbered after the ``numbered`` sources retrieval gave."""
    documents = tuple(resolution.get("documents") or ())
    wanted = statements_needed(question)
    if not documents or not wanted:
        return []
    vector = embed_queries(get_embedder(ctx), [resolution.get("topic") or question])[0]
    found: list[Source] = []
    seen: set[int] = set()
    for statement in (s for s in STATEMENTS if s.name in wanted):
        hits = store.search(
            ctx.collection,
            vector,
            STATEMENT_CHUNKS,
            where=SearchFilter(doc_ids=documents, titled=statement.titled()),
            query_text=resolution.get("topic") or question,
            ef_search=ctx.ef_search,
        )
        for hit in hits:
            if hit.id not in seen:
                seen.add(hit.id)
                found.append(to_source(numbered + len(found) + 1, hit))
    return found


def rows_of(
    sources: list[Source],
    read_section: SectionReader,
    read_near: Callable[[Source, int, int], tuple[str, list[int]]] | None = None,
    whole: bool = False,
) -> list[Row]:
    """The table rows of the sources' sections, each section read once, in rank order. A
    section holding a table's rows without its header is read after the text above it; with
    ``whole`` (a statement's best chunks), a table is read on into the chunks below it, as a
    statement's later rows ("Total current liabilities") may lie there under another heading."""
    rows: list[Row] = []
    seen: set[int] = set()
    for source in sources:
        if source["chunk_id"] in seen:
            continue
        section = read_section(source)
        seen.update(chunk["chunk_id"] for chunk in section)
        pages = sorted({p for chunk in section for p in chunk["metadata"].get("pages") or ()})
        text = "\n".join(chunk["text"] for chunk in section)
        headings = heading_path(source)
        statement = headings[-1] if headings else ""
        found = table_rows(text, source["number"], pages, statement)
        if read_near is not None and has_figure_lines(text):
            if not found:
                above, _ = read_near(section[0], -HEADER_WINDOW, -1)
                text = f"{above}\n{text}"
            if whole:
                below, more = read_near(section[-1], 1, HEADER_WINDOW)
                text = f"{text}\n{below}"
                pages = sorted({*pages, *more})
            if not found or whole:
                found = table_rows(text, source["number"], pages, statement)
        rows.extend(found)
    return rows


def answer_from_rows(ctx: Context, store: Store, question: str, rows: list[Row]) -> dict[str, Any]:
    """A figure question answered by arithmetic over table rows (chop.answers.figures): the model
    writes the expression, code evaluates it. Without a usable expression the result has only
    an ``answer_note`` saying why, and the caller quotes the passage instead."""
    shown_rows = "\n".join(row.shown(number) for number, row in enumerate(rows, start=1))
    messages = prompts.render("generate_figure", question=question, rows=shown_rows)
    result = structured_call(ctx, store, "answer_figure", messages, FigureReply)
    stats = result.stats()
    expression = result.value.expression.strip() if result.value else ""
    answered = figure_answer(question, expression, rows) if expression else None
    if answered is None:
        why = (
            f"the model failed ({result.error})"
            if result.value is None
            else "the tables found do not hold the figures"
            if not expression
            else f"the model's arithmetic ({expression}) does not evaluate over the rows"
        )
        return {"answer_note": f"{why}; the answer quotes the passage", "stats": stats}
    text, citations = answered
    return {
        "answer": text,
        "answerable": True,
        "citations": citations,
        "answer_note": f"computed by chop from the cited rows: {expression}",
        "stats": {**stats, "answer_figures": 1.0},
    }


def sentence_scores(passages: list[Passage], vectors: np.ndarray) -> list[list[float]]:
    """Each passage's sentences' cosine similarity to the question (``vectors[0]``)."""
    unit = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    similarity = unit[1:] @ unit[0]
    scores: list[list[float]] = []
    offset = 0
    for passage in passages:
        count = len(passage.sentences)
        scores.append([float(x) for x in similarity[offset : offset + count]])
        offset += count
    return scores
