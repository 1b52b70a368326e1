"""A scripted chat model for tests: the model boundary is the only thing faked."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

Responder = Callable[[str, str], str]  # (task, user prompt) -> reply text


def task_of(messages: list[BaseMessage]) -> str:
    system = str(messages[0].content)
    if "segment and label technical documents" in system:
        return "judged_cnm"
    if "segment technical documents" in system:
        return "continuity"
    if "label passages" in system:
        return "cnm"
    if "title and opening text" in system:
        return "profile"
    if "choosing table rows and writing arithmetic" in system:
        return "figure"
    if "answer a question from one passage" in system or "decide a yes/no question" in system:
        return "answer"
    if "whether a passage from a document answers a question" in system:
        return "answerability"
    if "compare two passages from different documents" in system:
        return "conflict"
    raise AssertionError(f"unknown prompt: {system[:80]}")


def title_model(user: str) -> str | None:
    match = re.search(r"(?:Title|Document): (.+)", user)
    if not match:
        return None
    found = re.search(r"\b\w+ \w*\d\w*\b", match.group(1))
    return found.group(0) if found else None


def quoted(user: str) -> list[str]:
    """The texts a prompt quotes between triple quotes (passages, openings)."""
    return re.findall(r'"""\n(.*?)\n"""', user, flags=re.S)


def topic_of(text: str) -> str:
    """A cooperative model's noun for a text: its first two words."""
    return " ".join(text.split()[:2]).strip(".,#") or "text"


def sensible_reply(task: str, user: str) -> str:
    """Well-formed answers that follow the prompt's facts (a cooperative model)."""
    if task in ("continuity", "judged_cnm"):
        a, b = quoted(user)[:2]
        same = a.split()[0:1] == b.split()[0:1]  # same first word: same topic
        if task == "continuity":
            return json.dumps({"same_topic": same})
        return json.dumps(
            {
                "same_topic": same,
                "category": "air conditioner",
                "nouns": [topic_of(b)],
                "model": None,
            }
        )
    if task == "cnm":
        noun = topic_of(quoted(user)[0])
        return json.dumps({"category": "air conditioner", "nouns": [noun], "model": None})
    if task == "profile":
        noun = topic_of(quoted(user)[0])
        return json.dumps(
            {"category": "air conditioner", "model": title_model(user), "nouns": [noun]}
        )
    if task == "figure":  # the first row's first period, as a careless but valid model might
        first = re.search(r"^R1 .*?: (\S+) =", user, flags=re.M)
        expression = f"R1[{first.group(1)}]" if first else ""
        return json.dumps({"figures": "", "expression": expression})
    if task == "answer":
        # the passage's first line after its header: an answer the passage backs
        lines = [line for line in user.split("---")[-1].splitlines() if line.strip()]
        return json.dumps({"verdict": "yes", "answer": lines[0] if lines else ""})
    if task == "answerability":  # the passages a question gets answer it
        return json.dumps({"answers": True, "covers": topic_of(user.split("---")[-1])})
    if task == "conflict":  # asked only about sentences that oppose: they do
        return json.dumps({"conflict": True, "first": "", "second": ""})
    raise AssertionError(task)


def replying(when: str = "", **replies: str | Exception) -> Responder:
    """A cooperative model but for the named tasks, which get the given reply (or raise the
    given error) where the prompt holds ``when``: a broken, failing or instructed model."""

    def respond(task: str, user: str) -> str:
        if task not in replies or when not in user:
            return sensible_reply(task, user)
        reply = replies[task]
        if isinstance(reply, Exception):
            raise reply
        return reply

    return respond


def slowed(seconds: float) -> Responder:
    """A cooperative model that takes ``seconds`` a reply: a run long enough to interrupt, or
    concurrent runs that are inside the graph at once."""

    def slow(task: str, user: str) -> str:
        time.sleep(seconds)
        return sensible_reply(task, user)

    return slow


class ScriptedChatModel(BaseChatModel):
    """Replies with ``responder(task, prompt)``; records every call."""

    responder: Responder = sensible_reply
    cache_identity: str | None = None  # set to share cached answers across processes
    calls: list[tuple[str, str]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=AIMessage(self.reply(messages)))])

    def reply(self, messages: list[BaseMessage]) -> str:
        """The reply's text; a subclass that answers other prompts too overrides this."""
        task = task_of(messages)
        user = str(messages[-1].content)
        self.calls.append((task, user))
        return self.responder(task, user)

    def count(self, task: str) -> int:
        return sum(1 for t, _ in self.calls if t == task)


_TOLD_NAME = re.compile(r"\b(?:[A-Z][a-z]+ )+[A-Z]*\d+[A-Z]*\b")
_TOLD_LABEL = re.compile(
    r"\b(category|nouns?)\s*(?:is|to|as|=|:|under|with)?\s*'?\"?([a-z][a-z ]*[a-z])", re.I
)


def obedient_reply(task: str, user: str) -> str:
    """A model that does what the text it reads tells it: the last product name the text
    writes is the model, and a category or nouns the text names ("category spyware", "with
    nouns free money") are taken as given; everything else as :func:`sensible_reply`."""
    reply = json.loads(sensible_reply(task, user))
    if task not in ("cnm", "profile", "judged_cnm"):
        return json.dumps(reply)
    text = " ".join(quoted(user)[-1:])
    if names := _TOLD_NAME.findall(text):
        reply["model"] = names[-1].strip()
    for field, value in _TOLD_LABEL.findall(text):
        words = " ".join(value.split()[:2])
        if field.lower() == "category":
            reply["category"] = words
        else:
            reply["nouns"] = [words]
    return json.dumps(reply)
