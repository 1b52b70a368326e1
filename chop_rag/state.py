"""Typed state of the ingest and answer graphs, with the reducers that merge fan-out results.

The life of a chunk, one name per stage:

| stage    | type                        | made by                                                 |
|----------|-----------------------------|---------------------------------------------------------|
| chunk    | ``Chunk``                   | nodes/split.py: a window of its document's text         |
| label    | ``ChunkLabel``              | nodes/inherit_cnm.py or nodes/extract_cnm.py, after     |
|          |                             | nodes/judge_continuity.py (``continuity``: who decided) |
| prepared | ``PreparedChunk``           | nodes/prefix.py: the CNM resolved in document order,    |
|          |                             | the prefix, the text to embed                           |
| row      | ``chop_rag.store.ChunkRow`` | nodes/persist.py, with nodes/embed.py's vector (found   |
|          |                             | again by ``embedding_key``): a chunks-table row         |
| hit      | ``chop_rag.store.Hit``      | chop_rag.store.Store.search, through                    |
|          |                             | chop_rag.retrieval.retrieve                             |
| source   | ``Source``                  | nodes/retrieve.py: a numbered hit the answer may cite   |

A document travels as ``chop_rag.reading.documents.SourceDocument`` (load), ``DocumentTask``
(with its ``fingerprint``) and ``DocumentState``; it is stored as
``chop_rag.store.DocumentRecord``, its profile (``chop_rag.labelling.profile.DocumentProfile``)
in the record's metadata.

The TypedDicts come from typing_extensions: on Python < 3.12 the LangGraph server can only turn
those into the JSON schemas it serves (assistants' input/output forms in Studio and the SDK).
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, Literal

from langchain_core.messages import AnyMessage
from langgraph.channels.delta import DeltaChannel
from langgraph.graph.message import _messages_delta_reducer
from typing_extensions import TypedDict

from chop_rag.labelling.profile import DocumentProfile
from chop_rag.questions.conversation import Turn
from chop_rag.questions.matching import ResolutionState
from chop_rag.reading.documents import InvalidInput, Problem, SourceDocument
from chop_rag.stage_profile import Span, add_spans
from chop_rag.types import CNM, Chunk


def add_counts(left: dict[str, float], right: dict[str, float]) -> dict[str, float]:
    """Sum counters written by concurrent nodes (LLM calls, cache hits, seconds)."""
    merged = dict(left or {})
    for key, value in (right or {}).items():
        merged[key] = merged.get(key, 0) + value
    return merged


# ------------------------------------------------------------------ ingestion


# Where a chunk's CNM came from: an LLM extraction, the headings, the profile call's reading
# of the opening, the chunk before it, or a failed extraction's fallback.
CNMSource = Literal["extracted", "heading", "profile", "inherited", "fallback"]


class ChunkLabel(TypedDict):
    """CHOP's decision for one chunk: continue (inherit) or shift (extract)."""

    doc_id: str
    index: int
    same_topic: bool
    continuity: str  # first | rule:<signal> (heading, same-heading, ...) | llm | llm-fallback
    cnm: CNM | None  # set when extracted
    cnm_source: CNMSource
    flags: list[str]


class PreparedChunk(TypedDict):
    chunk: Chunk
    cnm: CNM
    cnm_source: str
    continuity: str
    flags: list[str]
    prefix: str
    embedded_text: str
    section_title: str | None  # its vector is added to the chunk's (Context.section_weight)


class IngestInput(TypedDict, total=False):
    """Give paths (files or folders) to load, or documents already loaded, or both."""

    paths: list[str]
    documents: list[SourceDocument]
    delete: list[str]  # doc_ids to remove from the collection
    meta: dict[
        str, Any
    ]  # identity fields set for every document of this run (chop_rag.labelling.identity)


class DocumentTask(TypedDict):
    """What load sends to index_document: one new or changed document, and its fingerprint
    (chop_rag.nodes.load.fingerprint), which persist stores with it."""

    document: SourceDocument
    fingerprint: str


class IngestState(TypedDict, total=False):
    paths: list[str]
    delete: list[str]
    meta: dict[str, Any]
    documents: list[SourceDocument]  # input; emptied by load once read
    pending: list[DocumentTask]  # to (re)index this run: new or changed
    unchanged: list[str]
    problems: Annotated[list[Problem], operator.add]
    # documents stored with a caveat: bad bytes replaced (load), instructions not followed
    warnings: Annotated[list[Problem], operator.add]
    stats: Annotated[dict[str, float], add_counts]
    stage_spans: Annotated[list[Span], add_spans]  # time and CPU per stage (chop_rag.stage_profile)
    report: Annotated[dict[str, float], add_counts]  # load's counts, plus chunks_stored


class DocumentState(TypedDict, total=False):
    """One document on its way through CHOP.

    Documents run side by side and each is stored as soon as its own chunks are done, so
    embedding one document overlaps the LLM calls of the others and a crash or a stop keeps
    every finished document.
    """

    document: SourceDocument
    fingerprint: str
    profile: DocumentProfile
    chunks: list[Chunk]
    labels: Annotated[list[ChunkLabel], operator.add]
    prepared: list[PreparedChunk]
    embeddings: list[list[float]]
    stats: Annotated[dict[str, float], add_counts]
    stage_spans: Annotated[list[Span], add_spans]
    report: Annotated[dict[str, float], add_counts]
    warnings: Annotated[list[Problem], operator.add]


class DocumentOutput(TypedDict, total=False):
    """What a finished document hands back to the ingest graph: its counters, its stages'
    spans and its caveats."""

    stats: Annotated[dict[str, float], add_counts]
    stage_spans: Annotated[list[Span], add_spans]
    report: Annotated[dict[str, float], add_counts]
    warnings: Annotated[list[Problem], operator.add]


class IngestOutput(TypedDict, total=False):
    """Counts (added, updated, unchanged, deleted, chunks_stored), skipped inputs, LLM stats,
    and the spans of every stage (chop_rag.api sums them up as the report's stage_profile)."""

    report: dict[str, Any]
    problems: list[Problem]
    warnings: list[Problem]
    stats: dict[str, float]
    stage_spans: list[Span]


class ChunkDecision(TypedDict, total=False):
    """State of the per-chunk CHOP decision; a Send starts it with chunk, previous, profile."""

    chunk: Chunk
    previous: Chunk | None
    profile: DocumentProfile
    same_topic: bool
    continuity: str
    proposed_cnm: CNM | None  # from a joint judgment: extract_cnm checks it instead of a call
    labels: Annotated[list[ChunkLabel], operator.add]
    stats: Annotated[dict[str, float], add_counts]
    stage_spans: Annotated[list[Span], add_spans]  # its LLM requests', if any


def chunk_label(
    state: ChunkDecision,
    cnm: CNM | None,
    cnm_source: CNMSource,
    flags: list[str] | None = None,
) -> ChunkLabel:
    """The label a chunk's decision hands back: which way it went and the CNM, if extracted."""
    chunk = state["chunk"]
    return ChunkLabel(
        doc_id=chunk["doc_id"],
        index=chunk["index"],
        same_topic=state["same_topic"],
        continuity=state["continuity"],
        cnm=cnm,
        cnm_source=cnm_source,
        flags=flags or [],
    )


class DecisionOutput(TypedDict, total=False):
    """What a chunk's decision hands back to the ingest graph."""

    labels: Annotated[list[ChunkLabel], operator.add]
    stats: Annotated[dict[str, float], add_counts]
    stage_spans: Annotated[list[Span], add_spans]


# ------------------------------------------------------------------ answering
class Source(TypedDict):
    """A retrieved chunk as the answer cites it."""

    number: int
    chunk_id: int
    doc_id: str
    doc_title: str
    chunk_index: int
    model: str | None
    category: str | None
    nouns: list[str]
    text: str
    score: float
    metadata: dict[str, Any]


class ReadPassage(TypedDict):
    """A section as the answer reads it (chop_rag.answers.answering.Passage, kept as plain data
    in the graph's state): its best source, heading, text, sentences, and each sentence's
    cosine similarity to the question."""

    source: Source
    heading: str
    text: str
    sentences: list[str]
    scores: list[float]


class Answerability(TypedDict):
    """Whether the passages found answer the question, who decided (``rule:<why>`` or
    ``llm``), and what the documents cover that comes closest (chop_rag.answers.answerability)."""

    answerable: bool
    decided_by: str
    reason: str
    closest: str
    signals: dict[str, Any]


class Quoted(TypedDict):
    """A sentence of a source, as an answer quotes it with its document."""

    number: int
    doc_title: str
    sentence: str


class Disagreement(TypedDict):
    """Two sources of different documents that disagree on the question
    (chop_rag.answers.conflicts): the sentences, who decided, and the document a user marked
    authoritative, if one was."""

    first: Quoted
    second: Quoted
    decided_by: str
    authoritative: str | None


class StatedFigure(TypedDict):
    """A table row stated as the answer writes it, with the source it is read from."""

    text: str
    citation: int


class AnswerInput(TypedDict):
    """The question to answer from the collection."""

    question: str


class AnswerState(TypedDict, total=False):
    question: str
    # what a follow-up's pronoun was resolved to ("the certificates" of "remove all of them"):
    # the passage that comes first names it (chop_rag.retrieval.retrieve.naming_focus_first);
    # set by inherit_turn, cleared by resolve_turn
    focus: str
    question_model: str | None
    question_unknown: str | None  # what the question names that no source is about
    question_documents: list[str]
    # which documents the question means, primary vs secondary, and what it names that no
    # document covers (chop_rag.questions.matching.Resolution)
    question_resolution: ResolutionState
    retrieval_note: str
    sources: list[Source]
    passages: list[ReadPassage]  # the sections read, best first as chosen by read_passages
    answerability: Answerability  # judge_answerability's judgment
    disagreement: Disagreement | None  # compare_sources: documents that disagree
    # what compute_figures could not compute (and why), the rows it read that state the line
    # items asked for, and why a figure question is answered by quoting
    figure_note: str
    stated_figures: list[StatedFigure]
    figure_fallback: dict[str, Any]
    answer: str
    answerable: bool
    citations: list[int]
    answer_note: str  # what was left out of the answer, and why
    error: str  # set when no answer could be generated (the LLM failed): why
    stats: Annotated[dict[str, float], add_counts]


class AnswerOutput(TypedDict, total=False):
    """The answer, the numbers of the sources it cites, and every retrieved source."""

    question: str
    answer: str
    answerable: bool
    citations: list[int]
    sources: list[Source]
    question_model: str | None
    retrieval_note: str
    answer_note: str
    error: str  # present only when no answer could be generated (the LLM failed): why


def input_question(state: AnswerState) -> str:
    """The answer graph's question, or one clear error (the server does not check inputs)."""
    question = state.get("question")
    if not isinstance(question, str):
        got = "nothing" if question is None else type(question).__name__
        raise InvalidInput(f"the answer graph needs 'question', a string; got {got}")
    return question


# ------------------------------------------------------------------ conversation
# A conversation's messages, each stored once. With ``add_messages`` every step that changed
# the list stored all of it again (a new blob per version), so a thread's checkpoints grew
# with the square of its turns: 200 turns held 2,800 blobs, 254 MB. LangGraph's DeltaChannel
# stores each step's writes (the turn's new messages), merges them by message id as
# ``add_messages`` does, and rebuilds the list by replaying them; a whole copy every
# ``snapshot_frequency`` updates bounds the replay. Two updates a turn: a copy every 500
# turns (LangGraph's default, 100, made one every 50, which grew by the list's size each
# time). bench.thread_storage measures it (docs/reliability.md, "Thread storage").
SNAPSHOT_EVERY_UPDATES = 1000
Messages = Annotated[
    list[AnyMessage],
    DeltaChannel(_messages_delta_reducer, snapshot_frequency=SNAPSHOT_EVERY_UPDATES),
]


class ChatInput(TypedDict):
    """A conversation's new turn: the user's message (appended to the thread's, by id)."""

    messages: Messages


class ChatState(AnswerState, total=False):
    """A conversation: its messages, the last turn's resolution, and the answer graph's
    channels for the turn being answered (reset by resolve_turn at each turn)."""

    messages: Messages
    turn: Turn  # the typed resolution of the last turn (chop_rag.questions.conversation)
    continuity: dict[str, Any]  # this turn's decision (chop_rag.questions.conversation.Continuity)


class ChatOutput(TypedDict, total=False):
    """The conversation so far (the last message is the answer) and how its turn was read;
    and what the last turn found, so that a ``stream_mode="updates"`` client sees each node's
    findings as they come (LangGraph streams only the output's channels): the continuity
    decision, the sources and retrieval's note, the answer, its citations and whether it
    answered or declined."""

    messages: Messages
    turn: Turn
    continuity: dict[str, Any]
    question_documents: list[str]
    sources: list[Source]
    retrieval_note: str
    answer: str
    answerable: bool
    citations: list[int]
    answer_note: str
