"""Answer questions in this process, ``concurrency`` at a time, against one shared runtime.

Threads rather than processes: the time goes to waiting on the model (a server, or the embedded model's
slots, which run outside the GIL), and one runtime keeps one model, one embedder and one cache in memory.
Each question's tracker is bound in its own thread, so traces and usage never mix.
"""

from __future__ import annotations

import queue
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor

from tanglerag.datasets.base import QAExample
from tanglerag.eval.records import QuestionResult
from tanglerag.eval.worker import InFlight, QuestionWorker


def answer_locally(worker: QuestionWorker, examples: list[QAExample], concurrency: int) -> Iterator[QuestionResult]:
    """At most ``concurrency`` questions in flight; a new one starts as soon as one finishes.

    Stopped early (``--fail-fast``, Ctrl-C, a bug), it starts no other question and cancels those in flight, and
    does not wait for them: each stops before its next model call. One at a time, a question runs in the caller's
    thread, where Ctrl-C interrupts the call in progress itself.
    """
    for finished in answer_in_batches(worker, examples, concurrency):
        yield from finished


def answer_in_batches(worker: QuestionWorker, examples: list[QAExample],
                      concurrency: int) -> Iterator[list[QuestionResult]]:
    """``answer_locally``, each time with every question that has finished since the caller last asked (at least
    one, in the order they finished): a caller that writes each finished question to disk can make them durable with
    one sync. A question that raised ends it, after the questions that finished before it are handed over."""
    if concurrency <= 1:
        for example in examples:
            yield [worker.answer(example)]
        return
    in_flight = InFlight()
    pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="eval")
    finished: queue.SimpleQueue[Future[QuestionResult]] = queue.SimpleQueue()
    try:
        # every question queued at once: the pool's workers keep ``concurrency`` of them running, and each finished
        # one is put on a queue (where a wait per finished question re-armed every future in flight each time)
        for example in examples:
            pool.submit(in_flight.run, worker.answer, example).add_done_callback(finished.put)
        left = len(examples)
        while left:
            done = [finished.get()]
            while True:  # and whatever else finished meanwhile
                try:
                    done.append(finished.get_nowait())
                except queue.Empty:
                    break
            left -= len(done)
            results: list[QuestionResult] = []
            for future in done:
                if future.exception() is not None:
                    if results:
                        yield results
                    future.result()  # raises it
                results.append(future.result())
            yield results
    finally:
        in_flight.cancel()
        pool.shutdown(wait=False, cancel_futures=True)
