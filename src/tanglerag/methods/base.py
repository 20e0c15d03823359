"""The method contract: retrieved passages + question in, Answer out, cost tracked."""

from __future__ import annotations

from typing import ClassVar, Protocol

from tanglerag.config import Settings
from tanglerag.llm.client import LLM
from tanglerag.types import Answer, Question, RetrievedPassage
from tanglerag.usage import UsageTracker


class Method(Protocol):
    name: ClassVar[str]

    def answer(self, question: Question, passages: list[RetrievedPassage], tracker: UsageTracker) -> Answer: ...


class MethodFactory(Protocol):
    def __call__(self, llm: LLM, settings: Settings) -> Method: ...
