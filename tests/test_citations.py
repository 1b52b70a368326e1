"""Where an answer's citations go (chop_rag.answers.citations) and how it is streamed
(chop_rag.answers.streaming): ``[n]`` markers after the spans each source gave, one standard
citation annotation per span, and the message written sentence by sentence."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, AIMessageChunk

from chop_rag.answers.citations import answer_content, marked_answer
from chop_rag.answers.streaming import WrittenAnswer, answer_chunks, written_units
from chop_rag.state import Source


def source(number: int, text: str, **metadata: Any) -> Source:
    return Source(
        number=number,
        chunk_id=100 + number,
        doc_id=f"manual-{number}.pdf",
        doc_title=f"Manual {number}",
        chunk_index=number,
        model=None,
        category=None,
        nouns=[],
        text=text,
        score=0.5,
        metadata=metadata,
    )


FILTER = source(
    1,
    "Clean the air filter every 4 weeks. Let it dry fully before refitting it.",
    headings=["Care", "Cleaning the air filter"],
    pages=[12],
)
TANK = source(2, "Empty the water tank when the tank light comes on.", pages=[14])


def test_one_quoted_source_gets_one_marker_and_one_annotation_over_its_words() -> None:
    text = "Clean the air filter every 4 weeks. Let it dry fully before refitting it."
    marked, (citation,) = marked_answer(text, [1], [FILTER, TANK])
    assert marked == text + " [1]"
    assert (citation["start_index"], citation["end_index"]) == (0, len(marked))
    assert citation["type"] == "citation" and citation["title"] == "Manual 1"
    assert citation["cited_text"] == text  # the source's own words
    extras = citation["extras"]
    assert extras["number"] == 1 and extras["doc_id"] == "manual-1.pdf"
    assert extras["section"] == "Care › Cleaning the air filter" and extras["pages"] == [12]


def test_each_source_is_cited_after_the_sentences_it_gave() -> None:
    text = "Clean the air filter every 4 weeks. Empty the water tank when the tank light comes on."
    marked, citations = marked_answer(text, [1, 2], [FILTER, TANK])
    assert marked == (
        "Clean the air filter every 4 weeks. [1] "
        "Empty the water tank when the tank light comes on. [2]"
    )
    spans = [marked[c["start_index"] : c["end_index"]] for c in citations]
    assert spans == [
        "Clean the air filter every 4 weeks. [1]",
        "Empty the water tank when the tank light comes on. [2]",
    ]
    assert [c["extras"]["number"] for c in citations] == [1, 2]


def test_a_sentence_no_source_writes_belongs_to_the_one_before_it() -> None:
    text = "Yes. Clean the air filter every 4 weeks."
    marked, (citation,) = marked_answer(text, [1], [FILTER])
    assert marked == "Yes. Clean the air filter every 4 weeks. [1]"
    assert citation["start_index"] == 0


def test_a_span_that_names_its_source_gets_no_second_marker() -> None:
    text = "Filter interval (weeks): 4 [1]. Empty the water tank when the tank light comes on."
    marked, citations = marked_answer(text, [1, 2], [FILTER, TANK])
    assert marked == text + " [2]"
    assert [marked[c["start_index"] : c["end_index"]] for c in citations] == [
        "Filter interval (weeks): 4 [1].",
        "Empty the water tank when the tank light comes on. [2]",
    ]


def test_a_cited_source_no_sentence_comes_from_backs_the_whole_answer() -> None:
    text = "Clean the air filter every 4 weeks."
    marked, citations = marked_answer(text, [1, 2], [FILTER, TANK])
    assert marked == "Clean the air filter every 4 weeks. [1] [2]"
    whole = citations[-1]
    assert whole["extras"]["number"] == 2 and whole["start_index"] == 0
    assert whole["end_index"] == len(marked)
    assert whole["cited_text"].startswith("Empty the water tank")  # the source's opening


def test_an_answer_citing_nothing_is_plain_text_without_annotations() -> None:
    (block,) = answer_content("The documents do not cover the Coolwave 999Z.", [], [FILTER])
    assert block == {"type": "text", "text": "The documents do not cover the Coolwave 999Z."}
    # a number no source has is not cited
    assert marked_answer("Clean it.", [7], [FILTER]) == ("Clean it.", [])


def test_the_answer_is_written_sentence_by_sentence_with_its_markers() -> None:
    assert written_units("First one. [1] Second:\n- a line\nLast? [2] [3]") == [
        "First one. [1] ",
        "Second:\n",
        "- a line\n",
        "Last? [2] [3]",
    ]


def test_the_chunks_merge_into_the_message_itself() -> None:
    text = "Clean the air filter every 4 weeks. Empty the water tank when the tank light comes on."
    message = AIMessage(
        id="chop-1",
        content_blocks=answer_content(text, [1, 2], [FILTER, TANK]),
        additional_kwargs={"chop": {"citations": [1, 2]}},
    )
    chunks = answer_chunks(message)
    assert len(chunks) == 2 and {c.id for c in chunks} == {"chop-1"}
    assert [len(c.content[0].get("annotations", [])) for c in chunks] == [1, 1]  # type: ignore[union-attr]
    assert chunks[-1].additional_kwargs == message.additional_kwargs
    assert chunks[-1].chunk_position == "last" and not chunks[0].additional_kwargs
    merged: AIMessageChunk = chunks[0]
    for chunk in chunks[1:]:
        merged += chunk
    assert merged.text == message.text
    assert merged.content_blocks[0]["annotations"] == message.content_blocks[0]["annotations"]  # type: ignore[typeddict-item]


def test_the_written_answer_streams_as_a_chat_model_and_invokes_whole() -> None:
    message = AIMessage(
        id="chop-2",
        content_blocks=answer_content("Clean it. Dry it. Refit it.", [], []),
    )
    model = WrittenAnswer(answer=message)
    assert [chunk.text for chunk in model.stream("q")] == ["Clean it. ", "Dry it. ", "Refit it."]
    assert model.invoke("q").text == "Clean it. Dry it. Refit it."
