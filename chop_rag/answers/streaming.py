"""An answer chop composed, streamed as a chat model streams what it writes.

LangGraph's ``stream_mode="messages"`` streams what chat models invoked inside a node write,
chunk by chunk, through LangChain's callbacks; a message a node only returns arrives whole.
chop's answer quotes its sources, and the quote is composed by code once the sources are read,
so :class:`WrittenAnswer` is a chat model that writes that answer: sentence by sentence (a
sentence keeps the ``[n]`` marker after it), each citation annotation on the chunk that ends
its span, chop's ``additional_kwargs`` on the last. Invoked inside a node, every chat client
(LangGraph SDK ``messages-tuple``, Agent Chat UI, ``graph.stream(stream_mode="messages")``)
receives the chunks under the message's own id; merged, they are the message itself, which the
node then returns (LangGraph does not send it again). Invoked without a streaming callback, it
returns the message at once.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import RunnableConfig

# a sentence with the markers after it ("... every 4 weeks. [1]"), or a line
_written_unit = re.compile(r".*?(?:[.!?](?:\s*\[[^\[\]\n]*\])*(?=\s|$)|\n|$)\s*", re.DOTALL)


def written_units(text: str) -> list[str]:
    """The pieces the text is written in: sentences with their markers, and lines."""
    return [match.group() for match in _written_unit.finditer(text) if match.group()]


def answer_chunks(message: AIMessage) -> list[AIMessageChunk]:
    """``message`` as the chunks a chat model would stream: its text block's sentences, each
    with the annotations whose span ends in it, the last with its ``additional_kwargs``."""
    blocks = message.content if isinstance(message.content, list) else None
    block: dict[str, Any] = (
        dict(blocks[0]) if blocks and isinstance(blocks[0], dict) else {"text": message.text}
    )
    text = str(block.get("text") or "")
    annotations = list(block.get("annotations") or [])
    chunks: list[AIMessageChunk] = []
    end = 0
    for piece in written_units(text) or [""]:
        start, end = end, end + len(piece)
        part: dict[str, Any] = {"type": "text", "text": piece, "index": 0}
        ending = [a for a in annotations if start < int(a.get("end_index", 0)) <= end]
        if ending:
            part["annotations"] = ending
        chunks.append(AIMessageChunk(id=message.id, content=[part]))
    left = [a for a in annotations if not 0 < int(a.get("end_index", 0)) <= end]
    if left:  # an annotation without a span in the text (none is made so): still delivered
        chunks.append(
            AIMessageChunk(
                id=message.id,
                content=[{"type": "text", "text": "", "index": 0, "annotations": left}],
            )
        )
    chunks[-1].additional_kwargs = dict(message.additional_kwargs)
    chunks[-1].response_metadata = dict(message.response_metadata)
    chunks[-1].chunk_position = "last"
    return chunks


class WrittenAnswer(BaseChatModel):
    """A chat model whose reply is ``answer``, streamed sentence by sentence."""

    answer: AIMessage

    @property
    def _llm_type(self) -> str:
        return "chop-written-answer"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self.answer)])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        for chunk in answer_chunks(self.answer):
            generation = ChatGenerationChunk(message=chunk)
            if run_manager is not None:
                run_manager.on_llm_new_token(chunk.text, chunk=generation)
            yield generation


def write_answer(
    answer: AIMessage, asked: Sequence[BaseMessage], config: RunnableConfig | None = None
) -> AIMessage:
    """Stream ``answer`` to the run's ``messages`` stream, if any, as a chat model writing
    it in reply to ``asked``; the answer itself is returned for the node to return."""
    WrittenAnswer(answer=answer).invoke(list(asked), config=config)
    return answer
