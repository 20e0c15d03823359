"""Answer one question with every method of a run and score it: the unit of work every engine hands out.

A worker is built once per process (or Ray actor) from a ``Runtime``: its methods, passage builder and reader
are loaded once and then answer question after question. A question's methods run one after another in the
same worker, so methods that show the same contexts share the prompt prefix in the model's KV cache. An engine
that answers in threads runs each question inside an ``InFlight`` group, which can cancel them all at once.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from tanglerag.datasets.base import QAExample
from tanglerag.errors import LLMError, ServerUnreachableError
from tanglerag.eval.passages import PassageBuilder
from tanglerag.eval.records import Prediction, QuestionResult
from tanglerag.methods.base import method_class
from tanglerag.metrics.registry import Reader, compute, needs_reader
from tanglerag.runtime import Runtime
from tanglerag.tracking import Tracker, track
from tanglerag.types import Answer, Question
from tanglerag.where import authority_tiers, parse_where

_GROUP: ContextVar[InFlight | None] = ContextVar("tanglerag_in_flight", default=None)


def default_metrics(methods: list[str]) -> list[str]:
    """What the methods declare, in order of first appearance."""
    return list(dict.fromkeys(m for name in methods for m in method_class(name).default_metrics))


class InFlight:
    """The questions an engine has in flight, so a stopped run (Ctrl-C, ``--fail-fast``, an error) cancels them at
    once instead of letting each finish its methods: every tracker a question binds joins the group, and one that
    joins after ``cancel`` starts cancelled. The LLM client then refuses the question's next call."""

    def __init__(self) -> None:
        self._trackers: set[Tracker] = set()
        self._lock = threading.Lock()
        self._cancelled = False

    def run(self, answer: Callable[[QAExample], QuestionResult], example: QAExample) -> QuestionResult:
        """``answer(example)`` in this thread, as a member of the group."""
        token = _GROUP.set(self)
        try:
            return answer(example)
        finally:
            _GROUP.reset(token)

    def cancel(self) -> None:
        with self._lock:
            self._cancelled = True
            for tracker in self._trackers:
                tracker.cancel()

    @contextmanager
    def joined(self, tracker: Tracker) -> Iterator[None]:
        with self._lock:
            self._trackers.add(tracker)
            if self._cancelled:
                tracker.cancel()
        try:
            yield
        finally:
            with self._lock:
                self._trackers.discard(tracker)


@contextmanager
def tracked_question() -> Iterator[Tracker]:
    """``track()``, joined to the group of the engine running this question, if any: when the engine stops (an error,
    Ctrl-C) it cancels the question's further calls."""
    group = _GROUP.get()
    with track() as tracker:
        if group is None:
            yield tracker
            return
        with group.joined(tracker):
            yield tracker


class QuestionWorker:
    """``pool``: the questions whose passages a pooled scope retrieves from."""

    def __init__(self, runtime: Runtime, methods: list[str], metrics: list[str], pool: list[QAExample],
                 reader: Reader | None = None) -> None:
        self.runtime = runtime
        self.metrics = metrics
        self.builder = PassageBuilder(pool, runtime.embedder, runtime.settings.eval, runtime.index,
                                      parse_where(runtime.settings.retrieval.where, authority_tiers(runtime.settings)),
                                      retrieval=runtime.settings.retrieval)
        # methods that retrieve again (Diva) search what the questions were retrieved from
        self.methods = [runtime.method(name, index=self.builder.shared_index) for name in methods]
        self.reader = reader or (runtime.reader() if needs_reader(metrics) else None)

    def answer(self, example: QAExample) -> QuestionResult:
        """Every method's prediction, or the model error that stopped the question (other errors are bugs)."""
        start = time.perf_counter()
        hits = self.builder.build(example, self.runtime.settings.retrieval.top_k)
        retrieve_seconds = time.perf_counter() - start
        answers = []
        try:
            for method in self.methods:
                oracle = example.interpretations if method.reads_gold_interpretations else []
                with tracked_question() as tracker:
                    tracker.add_seconds("retrieve", retrieve_seconds)
                    answers.append(method.answer(Question(text=example.question, id=example.id,
                                                          interpretations=oracle), hits))
        except ServerUnreachableError:
            raise  # no server: every question after this one would fail too, so the run stops (and can resume)
        except LLMError as exc:
            return QuestionResult(id=example.id, error=f"{type(exc).__name__}: {exc}")
        # scored after all methods ran and outside their trackers: reader calls are evaluation cost,
        # and they do not break the methods' shared prompt prefix
        return QuestionResult(id=example.id, predictions=[self._prediction(example, a) for a in answers])

    def _prediction(self, example: QAExample, answer: Answer) -> Prediction:
        return Prediction(id=example.id, question=example.question, method=answer.method, answer=answer.text,
                          citations=answer.citations, passage_ids=[h.passage.id for h in answer.passages],
                          gold=example.answers, metrics=compute(self.metrics, answer, example, self.reader),
                          parts=answer.parts, usage=answer.usage.totals(),
                          usage_by_stage={k: v.model_dump() for k, v in answer.usage.stages.items()},
                          trace=answer.trace, tangles=example.tangles, passages=answer.passages)
