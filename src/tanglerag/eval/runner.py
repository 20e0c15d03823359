"""Run methods over a dataset, score them, and account their cost per question.

Datasets that carry their own passages (RAMDocs, generic QA with passages) are
retrieved from per question with an in-memory flat index; others need an index.
Every LLM call goes through the persistent cache, so an interrupted run resumes and
a repeated run makes no new calls.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from pydantic import BaseModel

from tanglerag.config import IndexConfig, Settings
from tanglerag.datasets.base import QAExample
from tanglerag.embeddings import TextEmbedder
from tanglerag.index.passage_index import PassageIndex
from tanglerag.llm.client import LLM
from tanglerag.methods.registry import make_method
from tanglerag.metrics.registry import compute
from tanglerag.stages.retrieve import IndexRetriever, Retriever
from tanglerag.types import Answer, Question, RetrievedPassage, StageUsage
from tanglerag.usage import UsageTracker

log = logging.getLogger(__name__)

DEFAULT_METRICS = ["em", "f1", "unk", "cited"]
USAGE_FIELDS = ("llm_calls", "cached_calls", "prompt_tokens", "completion_tokens", "seconds")


class Prediction(BaseModel):
    id: str
    question: str
    method: str
    answer: str
    citations: list[str]
    gold: list[str]
    metrics: dict[str, float]
    usage: dict[str, float]
    usage_by_stage: dict[str, dict[str, float]]


class MethodResult(BaseModel):
    method: str
    metrics: dict[str, float]
    usage: dict[str, float]


class EvalReport(BaseModel):
    dataset: str
    n: int
    results: list[MethodResult]

    def to_output(self) -> dict:
        return self.model_dump()


class EvalRunner:
    def __init__(self, settings: Settings, llm: LLM, embedder: TextEmbedder, index: PassageIndex | None = None,
                 metrics: list[str] | None = None) -> None:
        self.settings = settings
        self.llm = llm
        self.embedder = embedder
        self.index = index
        self.metrics = metrics or DEFAULT_METRICS

    def retrieve_for(self, example: QAExample, k: int) -> list[RetrievedPassage]:
        retriever: Retriever
        if example.passages:
            local = PassageIndex.build(example.passages, self.embedder, IndexConfig(index_type="flat"))
            retriever = IndexRetriever(local, self.settings.retrieval.model_copy(update={"mode": "dense"}))
        elif self.index is not None:
            retriever = IndexRetriever(self.index, self.settings.retrieval)
        else:
            raise ValueError(f"example {example.id} has no passages of its own: pass --index to retrieve from")
        return retriever.retrieve(example.question, k)

    def run(self, dataset: str, examples: list[QAExample], methods: list[str],
            on_step: Callable[[], None] | None = None) -> tuple[EvalReport, list[Prediction]]:
        k = self.settings.retrieval.top_k
        retrieved: dict[str, tuple[list[RetrievedPassage], float]] = {}
        for ex in examples:
            start = time.perf_counter()
            hits = self.retrieve_for(ex, k)
            retrieved[ex.id] = (hits, time.perf_counter() - start)
        predictions: list[Prediction] = []
        results = []
        for name in methods:
            method = make_method(name, self.llm)
            rows = []
            for example in examples:
                hits, retrieve_seconds = retrieved[example.id]
                tracker = UsageTracker()
                tracker.usage.stages["retrieve"] = StageUsage(seconds=retrieve_seconds)
                answer = method.answer(Question(text=example.question, id=example.id), hits, tracker)
                rows.append(self._prediction(example, answer))
                if on_step:
                    on_step()
            predictions.extend(rows)
            results.append(MethodResult(method=name, metrics=_mean(r.metrics for r in rows),
                                        usage=_mean(r.usage for r in rows)))
            log.info("%s on %s: %s", name, dataset, results[-1].metrics)
        return EvalReport(dataset=dataset, n=len(examples), results=results), predictions

    def _prediction(self, example: QAExample, answer: Answer) -> Prediction:
        return Prediction(id=example.id, question=example.question, method=answer.method, answer=answer.text,
                          citations=answer.citations, gold=example.answers,
                          metrics=compute(self.metrics, answer, example), usage=answer.usage.summary(),
                          usage_by_stage={k: v.model_dump() for k, v in answer.usage.stages.items()})


def _mean(rows) -> dict[str, float]:
    rows = list(rows)
    if not rows:
        return {}
    return {key: sum(r[key] for r in rows) / len(rows) for key in rows[0]}
