"""Retrieve-then-answer: the pipeline behind ``tanglerag ask``, the service and the Python API.

One tracker is bound per question, so retrieval (with any personal context it picked) and every
LLM call of the method land in one usage record and one trace.
"""

from __future__ import annotations

from typing import Any

from tanglerag.methods.base import Method
from tanglerag.methods.pcas.steps import PersonalContextStep
from tanglerag.stages.retrieve import Retriever
from tanglerag.tracking import Tracker, stage, track
from tanglerag.types import Answer, Question


class RAGPipeline:
    def __init__(self, retriever: Retriever, method: Method, top_k: int = 5) -> None:
        self.retriever = retriever
        self.method = method
        self.top_k = top_k

    def ask(self, question: Question | str, tracker: Tracker | None = None) -> Answer:
        """``tracker`` (optional) is the one to charge, e.g. one that streams progress events."""
        question = question if isinstance(question, Question) else Question(text=question)
        with track(tracker):
            with stage("retrieve"):
                retrieval = self.retriever.retrieve(question, self.top_k)
            if retrieval.user_contexts:
                question = question.model_copy(update={"user_contexts": retrieval.user_contexts})
            return self.method.answer(question, retrieval.passages)


def answer_output(answer: Answer, user: str | None = None, *, trace: bool = False) -> dict[str, Any]:
    """The JSON shape ``ask --json`` prints and the service returns: the answer, plus the user context it used."""
    output = answer.to_output(trace=trace)
    if user:
        chosen = answer.trace.find(PersonalContextStep)
        output["user"] = user
        output["user_context"] = ({"id": chosen.context_id, "text": chosen.text}
                                  if chosen and chosen.context_id else None)
    return output
