"""Concatenation: all retrieved passages in one prompt, answer with citations or 'unknown'."""

from __future__ import annotations

from typing import ClassVar

from tanglerag.llm.client import LLM
from tanglerag.stages.generate import cited_answer_messages, parse_cited_answer
from tanglerag.types import Answer, Question, RetrievedPassage
from tanglerag.usage import UsageTracker


class ConcatMethod:
    name: ClassVar[str] = "concat"

    def __init__(self, llm: LLM, *, max_tokens: int = 48, passage_words: int | None = 160) -> None:
        self.llm = llm
        self.max_tokens = max_tokens
        self.passage_words = passage_words

    def answer(self, question: Question, passages: list[RetrievedPassage], tracker: UsageTracker) -> Answer:
        with tracker.stage("generate"):
            messages = cited_answer_messages(question.text, passages, self.passage_words)
            completion = self.llm.complete(messages, self.llm.params(max_tokens=self.max_tokens, stop=["\n"]))
            tracker.record(completion)
        text, citations, unknown = parse_cited_answer(completion.text, passages)
        return Answer(question=question.text, method=self.name, text=text, citations=citations, passages=passages,
                      is_unknown=unknown, usage=tracker.usage, extras={"raw": completion.text})
