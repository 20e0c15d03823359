"""Retrieve-then-answer: the pipeline behind ``tanglerag ask`` and the Python API."""

from __future__ import annotations

from tanglerag.methods.base import Method
from tanglerag.stages.retrieve import Retriever
from tanglerag.types import Answer, Question
from tanglerag.usage import UsageTracker


class RAGPipeline:
    def __init__(self, retriever: Retriever, method: Method, top_k: int = 5) -> None:
        self.retriever = retriever
        self.method = method
        self.top_k = top_k

    def ask(self, question: Question | str) -> Answer:
        question = question if isinstance(question, Question) else Question(text=question)
        tracker = UsageTracker()
        with tracker.stage("retrieve"):
            passages = self.retriever.retrieve(question.text, self.top_k)
        return self.method.answer(question, passages, tracker)
