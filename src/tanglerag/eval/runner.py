"""Run methods over a dataset, score them, and account their cost per question.

Each question's passages come from ``PassageBuilder`` (own or pooled passages, an index, gold
handling). Every LLM call goes through the persistent cache, so an interrupted run resumes
and a repeated run makes no new calls. Each question is answered by every method before the
next question, so methods that show the same contexts (COrg's graph, Base, Retrieve, Summarize)
share that prompt prefix in the llama.cpp KV cache. The runner knows no method by name: metrics
default to what the methods declare, and predictions keep each answer's typed trace.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tanglerag.datasets.base import QAExample
from tanglerag.errors import InputError
from tanglerag.eval.closed_book import filter_closed_book
from tanglerag.eval.passages import PassageBuilder
from tanglerag.methods.registry import method_class
from tanglerag.metrics.bootstrap import bootstrap_ci
from tanglerag.metrics.registry import Reader, compute, derive, needs_reader
from tanglerag.runtime import Runtime
from tanglerag.trace import Trace
from tanglerag.tracking import track
from tanglerag.types import Answer, AnswerPart, Question, RetrievedPassage

log = logging.getLogger(__name__)


def default_metrics(methods: list[str]) -> list[str]:
    """What the methods declare, in order of first appearance."""
    return list(dict.fromkeys(m for name in methods for m in method_class(name).default_metrics))


class Prediction(BaseModel):
    id: str
    question: str
    method: str
    answer: str
    citations: list[str]
    passage_ids: list[str]
    gold: list[str]
    metrics: dict[str, float | None]
    usage: dict[str, float]
    usage_by_stage: dict[str, dict[str, float]]
    parts: list[AnswerPart] = Field(default_factory=list)
    trace: Trace = Field(default_factory=Trace)


class MethodScores(BaseModel):
    method: str
    metrics: dict[str, float | None]
    usage: dict[str, float]
    ci: dict[str, tuple[float, float]] = Field(default_factory=dict, description="95% bootstrap CI per metric")


class EvalReport(BaseModel):
    dataset: str
    n: int
    results: list[MethodScores]
    model_config = ConfigDict(populate_by_name=True)

    # written as "setting" in results.json (the stored runs' key): what the run did, beside its full settings
    protocol: dict[str, Any] = Field(default_factory=dict, validation_alias="setting", serialization_alias="setting")
    settings: dict[str, Any] = Field(default_factory=dict, description="the full settings dump: the run's config")

    def to_output(self) -> dict:
        return self.model_dump(mode="json", by_alias=True)


class EvalRunner:
    """>>> report, predictions = EvalRunner(Runtime(settings)).run("ramdocs-sample", examples, ["concat"])  # doctest: +SKIP"""

    def __init__(self, runtime: Runtime, metrics: list[str] | None = None, reader: Reader | None = None) -> None:
        self.runtime = runtime
        self.settings = runtime.settings
        self.metrics = metrics
        self.reader = reader

    def run(self, dataset: str, examples: list[QAExample], methods: list[str],
            on_step: Callable[[], None] | None = None,
            pool: list[QAExample] | None = None) -> tuple[EvalReport, list[Prediction]]:
        """``pool``: the questions whose passages a pooled scope retrieves from (default: ``examples``)."""
        cfg = self.settings.eval
        n_loaded = len(examples)
        if cfg.closed_book_filter:
            examples = filter_closed_book(self.runtime.llm, examples)
            log.info("closed-book filter kept %d of %d questions", len(examples), n_loaded)
        if not examples:
            raise InputError("no questions left to evaluate")
        metrics = self.metrics or default_metrics(methods)
        builder = PassageBuilder(pool or examples, self.runtime.embedder, cfg, self.runtime.index)
        # methods that retrieve again (Diva) search what the questions were retrieved from
        runners = [self.runtime.method(name, index=builder.shared_index) for name in methods]
        k = self.settings.retrieval.top_k
        retrieved: dict[str, tuple[list[RetrievedPassage], float]] = {}
        for ex in examples:
            start = time.perf_counter()
            hits = builder.build(ex, k)
            retrieved[ex.id] = (hits, time.perf_counter() - start)
        reader = self.reader or (self.runtime.reader() if needs_reader(metrics) else None)
        rows: dict[str, list[Prediction]] = {name: [] for name in methods}
        for example in examples:
            hits, retrieve_seconds = retrieved[example.id]
            answers = []
            for method in runners:
                oracle = example.interpretations if method.reads_gold_interpretations else []
                with track() as tracker:
                    tracker.add_seconds("retrieve", retrieve_seconds)
                    answers.append(method.answer(Question(text=example.question, id=example.id,
                                                          interpretations=oracle), hits))
            # scored after all methods ran and outside their trackers: reader calls are evaluation cost,
            # and they do not break the methods' shared prompt prefix
            for name, answer in zip(methods, answers, strict=True):
                rows[name].append(self._prediction(example, answer, metrics, reader))
                if on_step:
                    on_step()
        predictions = [row for name in methods for row in rows[name]]
        results = [self._summarize(name, rows[name], metrics) for name in methods]
        for result in results:
            log.info("%s on %s: %s", result.method, dataset, result.metrics)
        setting = {"passage_scope": cfg.passage_scope, "gold": cfg.gold, "gold_position": cfg.gold_position,
                   "top_k": k, "closed_book_filter": cfg.closed_book_filter, "loaded": n_loaded,
                   "pooled_questions": len(pool or examples),
                   "model": self.runtime.llm.backend.model_id, "metrics": metrics}
        return EvalReport(dataset=dataset, n=len(examples), results=results, protocol=setting,
                          settings=self.settings.model_dump(mode="json")), predictions

    def _summarize(self, name: str, rows: list[Prediction], asked: list[str]) -> MethodScores:
        cfg = self.settings.eval
        metrics: dict[str, float | None] = {}
        ci: dict[str, tuple[float, float]] = {}
        for metric in rows[0].metrics:
            values = [v for r in rows if (v := r.metrics[metric]) is not None]
            if not values:
                metrics[metric] = None
                continue
            metrics[metric] = sum(values) / len(values)
            ci[metric] = bootstrap_ci(values, cfg.bootstrap_samples, seed=cfg.seed)
        metrics |= derive(asked, metrics)
        usage = {key: sum(r.usage[key] for r in rows) / len(rows) for key in rows[0].usage}
        return MethodScores(method=name, metrics=metrics, usage=usage, ci=ci)

    @staticmethod
    def _prediction(example: QAExample, answer: Answer, metrics: list[str], reader: Reader | None) -> Prediction:
        return Prediction(id=example.id, question=example.question, method=answer.method, answer=answer.text,
                          citations=answer.citations, passage_ids=[h.passage.id for h in answer.passages],
                          gold=example.answers, metrics=compute(metrics, answer, example, reader),
                          parts=answer.parts, usage=answer.usage.totals(),
                          usage_by_stage={k: v.model_dump() for k, v in answer.usage.stages.items()},
                          trace=answer.trace)
