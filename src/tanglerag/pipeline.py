"""Retrieve-then-answer: the pipeline behind ``tanglerag ask``, the service and the Python API.

One tracker is bound per question, so retrieval (with any personal context it picked) and every
LLM call of the method land in one usage record and one trace.
"""

from __future__ import annotations

from tanglerag.methods.base import Method
from tanglerag.stages.retrieve import Retriever
from tanglerag.tracking import stage, track
from tanglerag.types import Answer, Question


class RAGPipeline:
    def __init__(self, retriever: Retriever, method: Method, top_k: int = 5) -> None:
        self.retriever = retriever
        self.method = method
        self.top_k = top_k

    def ask(self, question: Question | str) -> Answer:
        question = question if isinstance(question, Question) else Question(text=question)
        with track():
            with stage("retrieve"):
                retrieval = self.retriever.retrieve(question, self.top_k)
            if retrieval.user_contexts:
                question = question.model_copy(update={"user_contexts": retrieval.user_contexts})
            return self.method.answer(question, retrieval.passages)
