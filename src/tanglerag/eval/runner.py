"""Run methods over a dataset, score them, and account their cost per question.

Each question's passages come from ``PassageBuilder`` (own or pooled passages, an index, gold
handling). Every LLM call goes through the persistent cache, so an interrupted run resumes
and a repeated run makes no new calls. Each question is answered by every method before the
next question, so methods that show the same contexts (COrg's graph, Base, Retrieve, Summarize)
share that prompt prefix in the llama.cpp KV cache.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from pydantic import BaseModel, Field

from tanglerag.config import Settings
from tanglerag.datasets.base import QAExample
from tanglerag.embeddings import TextEmbedder
from tanglerag.eval.closed_book import filter_closed_book
from tanglerag.eval.passages import PassageBuilder
from tanglerag.index.passage_index import PassageIndex
from tanglerag.llm.client import LLM
from tanglerag.methods.corg_baselines import CORG_METHODS
from tanglerag.methods.registry import make_method
from tanglerag.metrics.bootstrap import bootstrap_ci
from tanglerag.metrics.readers import build_reader
from tanglerag.metrics.registry import Reader, compute
from tanglerag.types import Answer, Question, RetrievedPassage, StageUsage
from tanglerag.usage import UsageTracker

log = logging.getLogger(__name__)

DEFAULT_METRICS = ["em", "f1", "unk", "nm", "misled", "cited"]
AMBIG_METRICS = ["ans", "ent", "ear", "d_f1", "cited"]
_AMBIG_METHODS = {cls.name for cls in CORG_METHODS}
_KEPT_EXTRAS = {"pool", "fallback", "kept", "raw", "format_ok", "graph", "groups", "dropped", "group_questions",
                "ranking", "chosen", "summary"}


def default_metrics(methods: list[str]) -> list[str]:
    """COrg and its baselines are scored as multi-answer responses, the others as one answer."""
    return AMBIG_METRICS if set(methods) <= _AMBIG_METHODS else DEFAULT_METRICS


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
    parts: list[dict] = Field(default_factory=list)
    extras: dict = Field(default_factory=dict)


class MethodResult(BaseModel):
    method: str
    metrics: dict[str, float | None]
    usage: dict[str, float]
    ci: dict[str, tuple[float, float]] = Field(default_factory=dict, description="95% bootstrap CI per metric")


class EvalReport(BaseModel):
    dataset: str
    n: int
    results: list[MethodResult]
    setting: dict = Field(default_factory=dict)

    def to_output(self) -> dict:
        return self.model_dump()


class EvalRunner:
    def __init__(self, settings: Settings, llm: LLM, embedder: TextEmbedder, index: PassageIndex | None = None,
                 metrics: list[str] | None = None, reader: Reader | None = None) -> None:
        self.settings = settings
        self.llm = llm
        self.embedder = embedder
        self.index = index
        self.metrics = metrics
        self.reader = reader

    def run(self, dataset: str, examples: list[QAExample], methods: list[str],
            on_step: Callable[[], None] | None = None) -> tuple[EvalReport, list[Prediction]]:
        cfg = self.settings.eval
        n_loaded = len(examples)
        if cfg.closed_book_filter:
            examples = filter_closed_book(self.llm, examples)
            log.info("closed-book filter kept %d of %d questions", len(examples), n_loaded)
        if not examples:
            raise ValueError("no questions left to evaluate")
        builder = PassageBuilder(examples, self.embedder, cfg, self.index)
        k = self.settings.retrieval.top_k
        retrieved: dict[str, tuple[list[RetrievedPassage], float]] = {}
        for ex in examples:
            start = time.perf_counter()
            hits = builder.build(ex, k)
            retrieved[ex.id] = (hits, time.perf_counter() - start)
        metrics = self.metrics or default_metrics(methods)
        reader = self.reader or (build_reader(self.settings.corg.reader, self.llm) if "d_f1" in metrics else None)
        runners = [make_method(name, self.llm, self.settings) for name in methods]
        rows: dict[str, list[Prediction]] = {name: [] for name in methods}
        for example in examples:
            hits, retrieve_seconds = retrieved[example.id]
            answers = []
            for method in runners:
                tracker = UsageTracker()
                tracker.usage.stages["retrieve"] = StageUsage(seconds=retrieve_seconds)
                answers.append(method.answer(Question(text=example.question, id=example.id), hits, tracker))
            # scored after all methods ran, so reader calls do not break the methods' shared prefix
            for name, answer in zip(methods, answers, strict=True):
                rows[name].append(self._prediction(example, answer, metrics, reader))
                if on_step:
                    on_step()
        predictions = [row for name in methods for row in rows[name]]
        results = [self._summarize(name, rows[name]) for name in methods]
        for result in results:
            log.info("%s on %s: %s", result.method, dataset, result.metrics)
        setting = {"passage_scope": cfg.passage_scope, "gold": cfg.gold, "gold_position": cfg.gold_position,
                   "top_k": k, "closed_book_filter": cfg.closed_book_filter, "loaded": n_loaded,
                   "model": self.llm.backend.model_id, "metrics": metrics}
        if set(methods) & _AMBIG_METHODS:
            setting["corg"] = self.settings.corg.model_dump()
            setting["passage_words"] = self.settings.methods.passage_words
        return EvalReport(dataset=dataset, n=len(examples), results=results, setting=setting), predictions

    def _summarize(self, name: str, rows: list[Prediction]) -> MethodResult:
        cfg = self.settings.eval
        metrics: dict[str, float | None] = {}
        ci: dict[str, tuple[float, float]] = {}
        for metric in rows[0].metrics:
            values = [r.metrics[metric] for r in rows if r.metrics[metric] is not None]
            if not values:
                metrics[metric] = None
                continue
            metrics[metric] = sum(values) / len(values)
            ci[metric] = bootstrap_ci(values, cfg.bootstrap_samples, seed=cfg.seed)
        usage = {key: sum(r.usage[key] for r in rows) / len(rows) for key in rows[0].usage}
        return MethodResult(method=name, metrics=metrics, usage=usage, ci=ci)

    def _prediction(self, example: QAExample, answer: Answer, metrics: list[str],
                    reader: Reader | None) -> Prediction:
        extras = {k: v for k, v in answer.extras.items() if k in _KEPT_EXTRAS}
        return Prediction(id=example.id, question=example.question, method=answer.method, answer=answer.text,
                          citations=answer.citations, passage_ids=[h.passage.id for h in answer.passages],
                          gold=example.answers, metrics=compute(metrics, answer, example, reader),
                          parts=[p.model_dump() for p in answer.parts],
                          usage=answer.usage.summary(),
                          usage_by_stage={k: v.model_dump() for k, v in answer.usage.stages.items()}, extras=extras)
