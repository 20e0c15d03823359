"""Run methods over a dataset, score them, and account their cost per question.

Each question's passages come from ``PassageBuilder`` (own or pooled passages, an index, gold handling), and
every method answers it in the same worker, one after another, so methods that show the same contexts share
the prompt prefix in the model's KV cache. Questions go to an engine (one event loop here, or Ray actors each
running one), several at a time; results come back in any order and are put back in dataset order, so the report and predictions
do not depend on concurrency. With ``out`` every finished question is checkpointed: an interrupted run
resumes where it stopped. The runner knows no method by name: metrics default to what the methods declare.
"""

from __future__ import annotations

import functools
import gc
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Protocol

from tanglerag.datasets.base import QAExample
from tanglerag.errors import InputError, LLMError
from tanglerag.eval.checkpoint import Checkpoint, run_identity
from tanglerag.eval.closed_book import filter_closed_book
from tanglerag.eval.engines.local import answer_in_batches
from tanglerag.eval.records import EvalReport, FailedQuestion, MethodScores, Prediction, QuestionResult
from tanglerag.eval.worker import QuestionWorker, default_metrics
from tanglerag.metrics.bootstrap import bootstrap_cis
from tanglerag.metrics.registry import Reader, derive
from tanglerag.otel import Answered, SpanExport, span_export
from tanglerag.redaction import without_credentials
from tanglerag.runtime import Runtime

log = logging.getLogger(__name__)


_YOUNG_COLLECTION_EVERY = 10_000  # net new container objects between young collections during a run (Python's: 700)


@contextmanager
def _old_objects_left_alone() -> Iterator[None]:
    """The objects alive before the run (modules, settings, models' Python side) are left out of the garbage
    collector's full passes while it goes (``gc.freeze``), and handed back after. A full pass walks every object,
    and the answers a run keeps set one off every few hundred questions: over what was imported alone that was
    ~0.2 s of CPU each (180,000 objects), 0.3 ms a question at 64 in flight. What the run allocates is collected as
    before. Left alone where something else froze objects: they are its own to unfreeze.

    Young collections are made rarer meanwhile (``_YOUNG_COLLECTION_EVERY``), and the threshold handed back after:
    what they find alive is mostly what lives on (the answers the run keeps, the questions in flight), walked again
    at every one. At 64 in flight against a server Python's 700 set one off every five questions or so: 0.2 ms of
    CPU a question, all of it time the loop stood still; every 10,000 the same run spent half that. Garbage with
    cycles waits that much longer to go: some thousands of objects at most."""
    threshold = gc.get_threshold()
    gc.set_threshold(max(threshold[0], _YOUNG_COLLECTION_EVERY), *threshold[1:])
    frozen_here = not gc.get_freeze_count()
    if frozen_here:
        gc.freeze()
    try:
        yield
    finally:
        if frozen_here:
            gc.unfreeze()
        gc.set_threshold(*threshold)


class RunListener(Protocol):
    """Hears a run's progress: how many questions there are, and each one as it finishes."""

    def started(self, total: int, already_answered: int) -> None: ...

    def finished(self, result: QuestionResult) -> None: ...


class EvalRunner:
    """>>> report, predictions = EvalRunner(Runtime(settings)).run("ramdocs-sample", examples, ["concat"])  # doctest: +SKIP

    ``make_runtime``: how each Ray actor builds its runtime (default: these settings and index folder).
    """

    def __init__(self, runtime: Runtime, metrics: list[str] | None = None, reader: Reader | None = None,
                 make_runtime: Callable[[], Runtime] | None = None) -> None:
        evaluating = runtime.settings.evaluating()  # short answers under the papers' budget (eval.answer_tokens)
        self.runtime = runtime if evaluating is runtime.settings else runtime.with_settings(evaluating)
        self.settings = self.runtime.settings
        self.metrics = metrics
        self.reader = reader
        self.make_runtime = make_runtime or functools.partial(Runtime, self.settings, index_dir=runtime.index_dir)

    def run(self, dataset: str, examples: list[QAExample], methods: list[str], *,
            pool: list[QAExample] | None = None, out: Path | None = None, restart: bool = False,
            listener: RunListener | None = None) -> tuple[EvalReport, list[Prediction]]:
        """``pool``: the questions whose passages a pooled scope retrieves from (default: ``examples``);
        ``out``: the folder whose checkpoint records (and on a re-run, skips) finished questions;
        ``restart``: discard the run ``out`` holds and start over."""
        cfg = self.settings.eval
        n_loaded = len(examples)
        if cfg.closed_book_filter:
            examples = filter_closed_book(self.runtime.llm, examples)
            log.info("closed-book filter kept %d of %d questions", len(examples), n_loaded)
        if not examples:
            raise InputError("no questions left to evaluate")
        metrics = self.metrics or default_metrics(methods)
        pool = pool or examples
        checkpoint = self._checkpoint(out, restart, dataset, examples, methods, metrics, pool)
        with checkpoint if checkpoint is not None else nullcontext({}) as done, _old_objects_left_alone():
            results = {ex.id: done[ex.id] for ex in examples if ex.id in done}
            if listener:
                listener.started(len(examples), len(results))
            spans = span_export(self.settings.otel)
            for finished in self._answer([ex for ex in examples if ex.id not in results], methods, metrics, pool):
                stop = next((r for r in finished if r.failed), None) if cfg.fail_fast else None
                if stop is not None:  # what finished after it is not kept, as if the run had stopped right there
                    finished = finished[:finished.index(stop) + 1]
                self._keep(finished, spans, checkpoint)
                for result in finished:
                    results[result.id] = result
                    if listener:
                        listener.finished(result)
                if stop is not None:
                    raise LLMError(f"question {stop.id} failed (--fail-fast): {stop.error}")
            if checkpoint is not None:
                checkpoint.finish([ex.id for ex in examples])
            if spans is not None:
                spans.close()
        ordered = [results[ex.id] for ex in examples]
        report = self._report(dataset, methods, metrics, ordered, {"loaded": n_loaded, "pooled_questions": len(pool)})
        predictions = [p for name in methods for r in ordered for p in r.predictions if p.method == name]
        return report, predictions

    def _keep(self, finished: list[QuestionResult], spans: SpanExport | None, checkpoint: Checkpoint | None) -> None:
        """New answers' traces as spans (``otel.enabled``; resumed ones were sent), and the questions into the
        checkpoint: those that finished together are made durable with one sync, before any is reported."""
        if spans is not None:
            for result in finished:
                for prediction in result.predictions:
                    spans.export(Answered.recorded(prediction, result.id), self.runtime.llm.backend.model_id)
        if checkpoint is not None:
            checkpoint.append(*finished)

    def _checkpoint(self, out: Path | None, restart: bool, dataset: str, examples: list[QAExample],
                    methods: list[str], metrics: list[str], pool: list[QAExample]) -> Checkpoint | None:
        """The checkpoint of ``out``, for a run that depends on these questions and on the runtime's index."""
        if out is None:
            return None
        identity = run_identity(dataset, methods, metrics, pool, self.settings, self.runtime.index_dir)
        return Checkpoint(out, identity, asked=[ex.id for ex in examples], restart=restart)

    def concurrency(self, methods: list[str]) -> int:
        """``eval.concurrency``, by default what the backend serves at once; 1 for methods that need order."""
        wanted = self.settings.eval.concurrency or self.runtime.llm.backend.max_concurrency
        return 1 if wanted > 1 and self._in_order(methods) else wanted

    def _in_order(self, methods: list[str]) -> bool:
        ordered = [name for name in methods if self.runtime.method(name).order_dependent]
        if ordered:
            log.warning("%s remember(s) earlier questions (cdit.determiner / cdit.record): answering one question "
                        "at a time so results do not depend on timing", ", ".join(ordered))
        return bool(ordered)

    def _answer(self, examples: list[QAExample], methods: list[str], metrics: list[str],
                pool: list[QAExample]) -> Iterator[list[QuestionResult]]:
        """The questions' results, those that finished together in one list."""
        cfg = self.settings.eval
        if not examples:
            return
        if cfg.engine == "ray":  # each actor has its own model; questions that need order go to one actor, one by one
            from tanglerag.eval.engines.ray_actors import answer_on_ray  # Ray is an optional extra

            in_order = (cfg.ray_actors > 1 or cfg.concurrency != 1) and self._in_order(methods)
            yield from answer_on_ray(self.make_runtime, methods, metrics, pool, examples,
                                     actors=1 if in_order else cfg.ray_actors, batch_size=cfg.ray_batch_size,
                                     concurrency=1 if in_order else cfg.concurrency, address=cfg.ray_address)
            return
        worker = QuestionWorker(self.runtime, methods, metrics, pool, self.reader)
        yield from answer_in_batches(worker.aanswer, examples, self.concurrency(methods), ahead=worker.ahead)

    def _report(self, dataset: str, methods: list[str], metrics: list[str], results: list[QuestionResult],
                sizes: dict[str, int]) -> EvalReport:
        answered = [r for r in results if not r.failed]
        failed = [FailedQuestion(id=r.id, error=r.error or "") for r in results if r.failed]
        if not answered:
            raise LLMError(f"every question failed; the first: {failed[0].id}: {failed[0].error}")
        scores = [self._summarize(name, [p for r in answered for p in r.predictions if p.method == name], metrics)
                  for name in methods]
        for score in scores:
            log.info("%s on %s: %s", score.method, dataset, score.metrics)
        cfg = self.settings.eval
        setting = {"passage_scope": cfg.passage_scope, "gold": cfg.gold, "gold_position": cfg.gold_position,
                   "top_k": self.settings.retrieval.top_k, "closed_book_filter": cfg.closed_book_filter,
                   **sizes, "model": without_credentials(self.runtime.llm.backend.model_id), "metrics": metrics}
        settings = self.settings.model_dump(mode="json")
        settings["llm"]["base_url"] = without_credentials(settings["llm"]["base_url"])  # a report gets shared
        return EvalReport(dataset=dataset, n=len(answered), results=scores, failed=failed, protocol=setting,
                          settings=settings)

    def _summarize(self, name: str, rows: list[Prediction], asked: list[str]) -> MethodScores:
        cfg = self.settings.eval
        scored = {metric: [v for r in rows if (v := r.metrics[metric]) is not None] for metric in rows[0].metrics}
        metrics: dict[str, float | None] = {m: sum(values) / len(values) if values else None
                                            for m, values in scored.items()}
        ci = bootstrap_cis({m: values for m, values in scored.items() if values}, cfg.bootstrap_samples, seed=cfg.seed)
        metrics |= derive(asked, metrics)
        usage = {key: sum(r.usage[key] for r in rows) / len(rows) for key in rows[0].usage}
        return MethodScores(method=name, metrics=metrics, usage=usage, ci=ci)
