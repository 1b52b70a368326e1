"""Answerability: chop says when the documents it found do not answer, and says when two
documents disagree, before an answer is written (chop_rag.answers.answerability,
chop_rag.answers.conflicts; the judge_answerability and compare_sources nodes)."""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver

from chop_rag.answers.answerability import (
    cheap_judgment,
    content_words,
    judged_passages,
    proper_names,
    signals,
)
from chop_rag.answers.conflicts import aligned, opposed, opposed_pair
from chop_rag.api import ask, ingest
from chop_rag.config import Context
from chop_rag.graphs.answer import build_answer_graph
from chop_rag.graphs.chat import build_chat_graph
from chop_rag.reading.documents import make_document
from chop_rag.state import ReadPassage, Source
from chop_rag.text.spelling import lemma, typo_of_function_word
from tests.fakes import ScriptedChatModel, replying, sensible_reply

FILTER = "Clean the mesh filter every 4 weeks with warm water and let it dry fully. " * 3
TANK = "Empty the water tank when the full light shows, then refit it firmly. " * 3
MANUAL = (
    "Cleaning the filter. Always unplug the unit before cleaning the filter. "
    "Never spray water into the air outlet. Wipe the filter with a dry cloth."
)
BULLETIN = (
    "Cleaning the filter. You do not need to unplug the unit before cleaning the filter. "
    "Spray water directly into the air outlet while the unit is running."
)


def one_manual(context: Context) -> Context:
    ctx = context.with_overrides(continuity_mode="rules", chunk_tokens=60, chunk_overlap=0)
    text = "\n\n".join([FILTER, TANK])
    ingest(documents=[make_document("m330", "Coolwave 330C", text)], context=ctx)
    return ctx


def passage(
    text: str, scores: list[float], doc: str = "d1", title: str = "Coolwave 330C"
) -> ReadPassage:
    source = Source(
        number=1, chunk_id=1, doc_id=doc, doc_title=title, chunk_index=0, model=title,
        category=None, nouns=[], text=text, score=1.0, metadata={},
    )  # fmt: skip
    sentences = [s.strip() + "." for s in text.split(".") if s.strip()]
    return ReadPassage(source=source, heading="", text=text, sentences=sentences, scores=scores)


# ------------------------------------------------------------------ the cheap signals
def test_the_questions_content_words_leave_out_how_it_is_asked() -> None:
    assert content_words("How do I set up Apple Pay on my phone?") == ["apple", "pay", "phone"]
    assert content_words("Is it possible to use the timer?") == ["timer"]


def test_a_word_the_question_names_that_no_passage_writes_is_missing() -> None:
    found = signals("How do I refit the water tanks?", [passage(TANK, [0.7])])
    assert found["missing"] == [] and found["covered"] == 1.0  # "refit", "tanks": written
    found = signals("How do I set up Apple Pay?", [passage("Samsung Pay holds your cards.", [0.5])])
    assert found["missing"] == ["apple"]


def test_what_the_asker_does_need_not_be_written_only_what_the_question_names() -> None:
    low = passage("Low volume. Turn the volume up with the remote.", [0.6])
    never = lambda openings: set()  # noqa: E731  the documents write none of the missing words
    found = signals("Can I fix the low volume?", [low], never)
    assert found["missing"] == [] and found["unknown"] == []  # "fix": what is done
    assert cheap_judgment(found)[0] is True
    found = signals("How do I fix Apple Pay?", [low], never)
    assert found["unknown"] == ["apple", "pay"]  # the things named still must be written


def test_a_typo_or_another_form_of_a_written_word_names_nothing_the_documents_never_write() -> None:
    """A paraphrased TV question was declined for "tne" (of "tne smart hub") and another for
    "became" (the manual writes "becomes"): neither names a thing the documents lack."""
    hub = passage("Smart Hub. Search for content in Smart Hub. The screen becomes black.", [0.6])
    writes = lambda openings: {o for o in openings if o in {"becom", "searc", "smart", "hub"}}  # noqa: E731
    found = signals("What is the search in tne smart hub?", [hub], writes)
    assert found["missing"] == [] and "tne" in found["words"]
    found = signals("Why the screen became black?", [hub], writes)
    assert found["missing"] == [] and found["unknown"] == []
    assert cheap_judgment(found)[0] is True
    # a name is not a typo: "Siri" (of "sir") and "QLED" (of "led") stay things never written
    found = signals("Can I use Siri or a QLED panel?", [hub], writes)
    assert found["unknown"] == ["siri", "qled", "panel"]
    assert cheap_judgment(found) == (False, "rule:never-written")


def test_a_feature_named_as_a_proper_name_is_written_only_where_its_words_stand_together() -> None:
    """ "Face ID" on a Galaxy: the manual writes "face" (face recognition) and "ID" (Samsung
    account ID), never the feature; "Touch Bar" likewise. Both were answered."""
    lock = passage("Face recognition. Unlock the screen with your face. Enter your ID.", [0.68])
    writes_words = lambda openings: {o for o in openings if " " not in o}  # noqa: E731
    found = signals("How do I unlock it with Face ID?", [lock], writes_words)
    assert found["unknown"] == ["face id"]
    assert cheap_judgment(found) == (False, "rule:never-written")
    found = signals("How do I use Face Recognition?", [lock], writes_words)  # written together
    assert found["missing"] == [] and cheap_judgment(found) == (True, "rule:close")
    assert proper_names("Can I Cancel Scheduled Viewing on the TV?") == ["cancel scheduled viewing"]
    assert proper_names("Where is the Dynamic Island on it?") == ["dynamic island"]
    assert proper_names("How do I set Face ID up") == ["face id"]  # the frame is not the name
    # capitals by style name nothing: each word would have to stand in a row with the next
    assert proper_names("How Do I Reset My Phone Settings?") == []
    assert proper_names("HOW TO RESET PHONE SETTINGS") == []
    assert proper_names("where is Reset My Phone in settings") == [], "a frame word splits a run"


def test_only_a_lower_case_non_word_one_edit_from_a_function_word_is_read_as_its_typo() -> None:
    assert typo_of_function_word("tne") == "the" and typo_of_function_word("waht") == "what"
    assert typo_of_function_word("tne", written_lower=False) is None  # "TNE": a name
    assert typo_of_function_word("lte") is None  # not a function word's typo: LTE
    assert typo_of_function_word("imessage") is None  # one edit from "message": a thing
    assert typo_of_function_word("became") is None  # an English word
    assert lemma("became") == "become" and lemma("children") == "child"


def test_the_judge_reads_the_quoted_passage_then_the_closest_other_one() -> None:
    quoted, far, close = passage(FILTER, [0.5]), passage(TANK, [0.3]), passage(TANK, [0.52])
    assert judged_passages([quoted, far, close]) == [0, 2]
    assert judged_passages([quoted, far]) == [0], "a passage about something else is not read"


def test_close_and_written_answers_far_and_unwritten_declines_and_between_asks_the_llm() -> None:
    assert cheap_judgment({"similarity": 0.7, "covered": 1.0, "missing": []})[0] is True
    assert cheap_judgment({"similarity": 0.1, "covered": 1.0, "missing": []})[0] is False
    assert cheap_judgment({"similarity": 0.35, "covered": 0.5, "missing": ["apple"]})[0] is False
    assert cheap_judgment({"similarity": 0.5, "covered": 0.5, "missing": ["zoom"]})[0] is None
    assert cheap_judgment({"similarity": 0.7, "covered": 0.4, "missing": ["zoom"]})[0] is None
    written = {"similarity": 0.45, "covered": 0.5, "missing": []}
    assert cheap_judgment(written) == (True, "rule:written"), "the passages write every thing"
    close = {"similarity": 0.7, "covered": 0.4, "missing": ["enable"], "unknown": []}
    assert cheap_judgment(close)[0] is True, "every word is one the documents write"
    assert cheap_judgment({**close, "unknown": ["carplay"]})[0] is False


# ------------------------------------------------------------------ on the answer path
def test_a_question_the_manuals_do_not_answer_is_declined_naming_the_closest_section(
    context: Context, store: Any, scripted: ScriptedChatModel
) -> None:
    ctx = one_manual(context)
    result = ask("What is the recipe for banana bread?", context=ctx)
    assert result["answerable"] is False and result["citations"] == []
    assert result["answer"].startswith("The documents do not answer this; the closest")
    assert "Coolwave 330C" in result["answer"] and result["sources"], "sources stay visible"
    assert scripted.count("answer") == 0
    assert json.dumps(result)


def test_a_question_whose_words_the_section_writes_is_answered_without_the_judge(
    context: Context, store: Any, scripted: ScriptedChatModel
) -> None:
    ctx = one_manual(context)
    result = ask("How often do I clean the mesh filter of the Coolwave 330C?", context=ctx)
    assert result["answerable"] is True and "every 4 weeks" in result["answer"]
    assert scripted.count("answerability") == 0


def test_a_yes_no_question_gets_the_same_judgment(
    context: Context, store: Any, scripted: ScriptedChatModel
) -> None:
    ctx = one_manual(context)
    result = ask("Can I pay with Apple Pay on the Coolwave 330C?", context=ctx)
    assert result["answerable"] is False and not result["answer"].startswith(("Yes", "No"))
    assert scripted.count("answer") == 0


def test_where_the_signals_are_unclear_the_llm_judges_and_its_no_declines(
    context: Context, store: Any, scripted: ScriptedChatModel, monkeypatch: Any
) -> None:
    ctx = one_manual(context)
    monkeypatch.setattr(  # the signals are unclear: the judge is asked
        "chop_rag.nodes.judge_answerability.cheap_judgment", lambda found: (None, "unclear")
    )
    scripted.responder = replying(
        answerability=json.dumps({"answers": False, "covers": "cleaning the filter"})
    )
    graph = build_answer_graph()
    out = graph.invoke(
        {"question": "How often do I clean the mesh filter?"},
        context=ctx.with_overrides(use_cache=False),
        output_keys=["answer", "answerable", "answerability"],
    )
    assert out["answerable"] is False and out["answerability"]["decided_by"] == "llm"
    assert scripted.count("answerability") == 1


def test_a_second_passage_the_judge_finds_answering_is_the_one_quoted(
    context: Context, store: Any, scripted: ScriptedChatModel, monkeypatch: Any
) -> None:
    ctx = one_manual(context).with_overrides(use_cache=False)
    monkeypatch.setattr(  # the signals are unclear: the judge is asked
        "chop_rag.nodes.judge_answerability.cheap_judgment", lambda found: (None, "unclear")
    )
    monkeypatch.setattr("chop_rag.answers.answerability.FAR_SIMILARITY", -1.0)  # both are read

    def judge(task: str, user: str) -> str:
        if task != "answerability":
            return sensible_reply(task, user)
        answers = "water tank" in user.split("Question:")[-1].split("\n", 1)[-1]
        return json.dumps({"answers": answers, "covers": "the water tank"})

    scripted.responder = judge
    out = build_answer_graph().invoke(
        {"question": "How often do I clean the mesh filter?"},
        context=ctx,
        output_keys=["answer", "answerable", "answerability"],
    )
    assert out["answerable"] is True and out["answerability"]["decided_by"] == "llm"
    assert "water tank" in out["answer"] and scripted.count("answerability") == 2


def test_a_failing_judge_answers_as_before_and_records_it(
    context: Context, store: Any, scripted: ScriptedChatModel, monkeypatch: Any
) -> None:
    ctx = one_manual(context).with_overrides(use_cache=False)
    monkeypatch.setattr(  # the signals are unclear: the judge is asked
        "chop_rag.nodes.judge_answerability.cheap_judgment", lambda found: (None, "unclear")
    )
    scripted.responder = replying(answerability="not json")
    out = build_answer_graph().invoke(
        {"question": "How often do I clean the mesh filter?"},
        context=ctx,
        output_keys=["answer", "answerable", "answerability", "stats"],
    )
    assert out["answerable"] is True and "every 4 weeks" in out["answer"]
    assert out["answerability"]["decided_by"] == "llm-fallback"
    assert out["stats"]["answerability_model_failures"] == 1


def test_a_declined_turn_says_so_in_the_chat_messages_metadata(
    context: Context, store: Any, scripted: ScriptedChatModel
) -> None:
    ctx = one_manual(context)
    graph = build_chat_graph().builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    messages = [{"role": "user", "content": "Who won the 2018 FIFA World Cup?"}]
    out = graph.invoke({"messages": messages}, config=config, context=ctx)
    answer = out["messages"][-1]
    assert isinstance(answer, AIMessage)
    meta = answer.additional_kwargs["chop"]
    assert meta["answerable"] is False and meta["declined"] is True and meta["sources"]


# ------------------------------------------------------------------ sources that disagree
def test_aligned_sentences_that_negate_each_other_or_differ_in_figures_are_opposed() -> None:
    unplug = "Always unplug the unit before cleaning the filter."
    keep = "You do not need to unplug the unit before cleaning the filter."
    assert aligned(unplug, keep) and opposed(unplug, keep)
    assert opposed("Clean the filter every 2 weeks.", "Clean the filter every 6 weeks.")
    assert not aligned(unplug, "Empty the water tank when the light shows.")
    assert not opposed("Clean the filter every 2 weeks.", "Clean the filter every 2 weeks.")


def test_a_year_is_when_not_a_figure_that_disagrees() -> None:
    """A 10-K's sentence about fiscal 2023 beside a release's table row: no figure of the one
    is a measure the other gives differently."""
    narrative = (
        "The decrease in cash used in financing activities in fiscal 2023 was driven by buybacks."
    )
    row = "Total cash used in investing activities (962) (1,372)"
    assert aligned(narrative, row) and not opposed(narrative, row)
    assert opposed(
        "Net sales were $2,023 million in 2023.", "Net sales were $1,900 million in 2023."
    )
    assert opposed("Revenue was 1,824 in 2023.", "Revenue was 1,900 in 2022.")


def test_the_cheap_pass_finds_the_opposed_pair_of_two_documents() -> None:
    manual = passage(MANUAL, [0.6, 0.7, 0.5, 0.4], doc="manual")
    bulletin = passage(BULLETIN, [0.6, 0.7, 0.5], doc="bulletin")
    pair = opposed_pair(manual, bulletin)
    assert pair is not None and "unplug" in pair[0] and "do not need" in pair[1]
    assert opposed_pair(manual, passage(FILTER, [0.5, 0.5, 0.5], doc="other")) is None


def manual_and_bulletin(context: Context, authoritative: bool = False) -> Context:
    """A manual and a service bulletin of one model (its card says so) that disagree."""
    ctx = context.with_overrides(continuity_mode="rules", chunk_tokens=80, chunk_overlap=0)
    model = {"model": "Coolwave 410X"}
    marked = {**model, "authoritative": "true"} if authoritative else model
    ingest(documents=[make_document("manual", "Coolwave 410X manual", MANUAL)], context=ctx,
           meta=marked)  # fmt: skip
    ingest(documents=[make_document("bulletin", "Coolwave 410X service bulletin", BULLETIN)],
           context=ctx, meta=model)  # fmt: skip
    return ctx


def test_documents_that_disagree_are_said_to_with_both_quoted(
    context: Context, store: Any, scripted: ScriptedChatModel
) -> None:
    ctx = manual_and_bulletin(context)
    result = ask("Do I need to unplug the Coolwave 410X before cleaning the filter?", context=ctx)
    answer = result["answer"]
    assert answer.startswith("The sources disagree:")
    assert "Coolwave 410X manual says" in answer and "service bulletin says" in answer
    assert "Always unplug" in answer and "do not need to unplug" in answer
    assert len(result["citations"]) >= 2 and scripted.count("conflict") == 1


def test_the_document_a_user_marks_authoritative_wins(
    context: Context, store: Any, scripted: ScriptedChatModel
) -> None:
    ctx = manual_and_bulletin(context, authoritative=True)
    result = ask("Should I spray water into the air outlet of the Coolwave 410X?", context=ctx)
    answer = result["answer"]
    assert "Coolwave 410X manual is marked authoritative; the answer follows it." in answer
    assert answer.index("manual says") < answer.index("bulletin says")


def test_a_judge_that_sees_no_conflict_is_believed(
    context: Context, store: Any, scripted: ScriptedChatModel
) -> None:
    ctx = manual_and_bulletin(context)
    scripted.responder = replying(
        conflict=json.dumps({"conflict": False, "first": "", "second": ""})
    )
    result = ask("Do I need to unplug the Coolwave 410X before cleaning the filter?", context=ctx)
    assert "disagree" not in result["answer"]


def test_the_store_tells_which_words_a_document_writes_anywhere(
    context: Context, store: Any, scripted: ScriptedChatModel
) -> None:
    ctx = one_manual(context)
    written = store.written(ctx.collection, ["m330"], ["refit", "tank", "banana", "coolw"])
    assert written == {"refit", "tank", "coolw"}  # word starts, the title's words too
    assert store.written(ctx.collection, ["other"], ["tank"]) == set()
    assert store.written(ctx.collection, [], ["tank"]) == {"tank"}, "no documents: all of them"
    assert store.written(ctx.collection, [], ["water tank", "tank water"]) == {"water tank"}
