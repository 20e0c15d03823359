"""Retrieve-then-answer: the pipeline behind ``tanglerag ask``, the service and the Python API.

One tracker is bound per question, so retrieval (with any personal context it picked) and every
LLM call of the method land in one usage record and one trace.
"""

from __future__ import annotations

import asyncio

from tanglerag.aio import run_sync
from tanglerag.methods.base import Method
from tanglerag.stages.retrieve import Retriever
from tanglerag.tracking import Tracker, stage, track
from tanglerag.types import Answer, Question


class RAGPipeline:
    def __init__(self, retriever: Retriever, method: Method, top_k: int = 5) -> None:
        self.retriever = retriever
        self.method = method
        self.top_k = top_k

    async def aask(self, question: Question | str, tracker: Tracker | None = None) -> Answer:
        """``tracker`` (optional) is the one to charge, e.g. one that streams progress events. The search runs in a
        worker thread (embedding the question and ranking are CPU work): the loop goes on serving other
        questions meanwhile."""
        question = question if isinstance(question, Question) else Question(text=question)
        with track(tracker) as tracking:
            with stage("retrieve"):
                retrieval = await asyncio.to_thread(self.retriever.retrieve, question, self.top_k)
                tracking.retrieved(retrieval.passages)
            if retrieval.user_contexts:
                question = question.model_copy(update={"user_contexts": retrieval.user_contexts})
            return await self.method.aanswer(question, retrieval.passages)

    def ask(self, question: Question | str, tracker: Tracker | None = None) -> Answer:
        """``aask`` for synchronous callers."""
        return run_sync(self.aask(question, tracker))
