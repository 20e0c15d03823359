"""Answer one question with every method of a run and score it: the unit of work every engine hands out.

A worker is built once per process (or Ray actor) from a ``Runtime``: its methods, passage builder and reader
are loaded once and then answer question after question, each question a task of the engine's event loop. A
question's methods run one after another, so methods that show the same contexts share the prompt prefix in the
model's KV cache. Stopping a run cancels the tasks.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import time
from concurrent.futures import ThreadPoolExecutor

from tanglerag.datasets.base import QAExample
from tanglerag.errors import LLMError, ServerUnreachableError
from tanglerag.eval.passages import PassageBuilder
from tanglerag.eval.records import Prediction, QuestionResult
from tanglerag.methods.base import method_class
from tanglerag.metrics.registry import Reader, compute, needs_reader
from tanglerag.runtime import AskRequest, Runtime
from tanglerag.tracking import Tracker
from tanglerag.types import Answer, Question, RetrievedPassage
from tanglerag.where import authority_tiers, parse_where

# threads of their own for building passages ahead: in the loop's default executor the front door's own hops (it
# looks the method up in a worker thread) waited behind a whole wave of builds (at 256 in flight the first model
# call went out after 0.3 s instead of 0.05 s)
_BUILDERS = ThreadPoolExecutor(thread_name_prefix="tanglerag-passages")


def default_metrics(methods: list[str]) -> list[str]:
    """What the methods declare, in order of first appearance."""
    return list(dict.fromkeys(m for name in methods for m in method_class(name).default_metrics))


class QuestionWorker:
    """``pool``: the questions whose passages a pooled scope retrieves from."""

    def __init__(self, runtime: Runtime, methods: list[str], metrics: list[str], pool: list[QAExample],
                 reader: Reader | None = None) -> None:
        self.runtime = runtime
        self.metrics = metrics
        self.builder = PassageBuilder(pool, runtime.embedder, runtime.settings.eval, runtime.index,
                                      parse_where(runtime.settings.retrieval.where, authority_tiers(runtime.settings)),
                                      retrieval=runtime.settings.retrieval,
                                      store_search=runtime.corpus.question_search(runtime.settings))
        # methods that retrieve again (Diva) search what the questions were retrieved from
        self.asking = runtime.for_evaluation(self.builder.shared_index)
        self.methods = methods
        self.reader = reader or (runtime.reader() if needs_reader(metrics) else None)
        # a reader's calls go through the sync facade, which the loop itself may not call, and a QA model is heavy;
        # without one the metrics are short pure-Python functions of the answer, scored where it finished
        self.score_in_thread = needs_reader(metrics)
        self._building: dict[str, asyncio.Future[tuple[list[RetrievedPassage], float]]] = {}  # see ahead

    def ahead(self, example: QAExample) -> None:
        """Start building ``example``'s passages in a worker thread now, on the loop, for ``aanswer`` to take.

        An engine calls it about a question's time before the question starts (``answer_in_batches``), so the hop
        to a thread and back is off the question's path. With the loop busy that hop takes longer than the build:
        the thread waits for the GIL, then its result for the loop (on the 2-core machine, at 64 questions in flight
        it added 9 ms, median, to 2.4 ms of building; at 256, 110 ms), and the question waited it out."""
        if example.id not in self._building:
            build = functools.partial(contextvars.copy_context().run, self._build, example)
            building = asyncio.get_running_loop().run_in_executor(_BUILDERS, build)
            building.add_done_callback(_retrieved)  # never answered (the run stopped): its error is not an error
            self._building[example.id] = building

    def _build(self, example: QAExample) -> tuple[list[RetrievedPassage], float]:
        """The question's passages, and the seconds building them took (its ``retrieve`` stage; a wait for a thread
        is no part of retrieving)."""
        start = time.perf_counter()
        hits = self.builder.build(example, self.runtime.settings.retrieval.top_k)
        return hits, time.perf_counter() - start

    async def aanswer(self, example: QAExample) -> QuestionResult:
        """Every method's prediction, or the model error that stopped the question (other errors are bugs).

        The passages are built in a worker thread, started early where the engine said the question was coming
        (``ahead``): a search or an embedding model may wait on a disk, a store or its own threads, and the loop goes
        on with the other questions meanwhile. The answers are scored in one only for reader metrics
        (``score_in_thread``): other metrics are some tens of microseconds of Python, which would hold the GIL in a
        thread too, and the hop there and back would keep the question waiting longer than the scoring takes."""
        self.ahead(example)
        hits, retrieve_seconds = await self._building.pop(example.id)
        answers = []
        try:
            for name in self.methods:
                oracle = example.interpretations if self.asking.method(name).reads_gold_interpretations else []
                tracker = Tracker()
                tracker.add_seconds("retrieve", retrieve_seconds)
                question = Question(text=example.question, id=example.id, interpretations=oracle)
                answers.append(await self.asking.aanswer(AskRequest(question=question, method=name, passages=hits,
                                                                    tracker=tracker)))
        except ServerUnreachableError:
            raise  # no server: every question after this one would fail too, so the run stops (and can resume)
        except LLMError as exc:
            return QuestionResult(id=example.id, error=f"{type(exc).__name__}: {exc}")
        # scored after all methods ran and outside their trackers: reader calls are evaluation cost,
        # and they do not break the methods' shared prompt prefix
        if self.score_in_thread:
            predictions = await asyncio.to_thread(lambda: [self._prediction(example, a) for a in answers])
        else:
            predictions = [self._prediction(example, a) for a in answers]
        return QuestionResult(id=example.id, predictions=predictions)

    def _prediction(self, example: QAExample, answer: Answer) -> Prediction:
        return Prediction(id=example.id, question=example.question, method=answer.method, answer=answer.text,
                          citations=answer.citations, passage_ids=[h.passage.id for h in answer.passages],
                          gold=example.answers, metrics=compute(self.metrics, answer, example, self.reader),
                          parts=answer.parts, usage=answer.usage.totals(),
                          usage_by_stage={k: v.model_dump() for k, v in answer.usage.stages.items()},
                          trace=answer.trace, tangles=example.tangles, passages=answer.passages)


def _retrieved(future: asyncio.Future[tuple[list[RetrievedPassage], float]]) -> None:
    """Marks a build's error as seen: it is raised where its question is answered, if it ever is."""
    if not future.cancelled():
        future.exception()
