"""Answer questions in this process, ``concurrency`` at a time, against one shared runtime.

Threads rather than processes: the time goes to waiting on the model (a server, or the embedded model's
slots, which run outside the GIL), and one runtime keeps one model, one embedder and one cache in memory.
Each question's tracker is bound in its own thread, so traces and usage never mix.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

from tanglerag.datasets.base import QAExample
from tanglerag.eval.records import QuestionResult
from tanglerag.eval.worker import InFlight, QuestionWorker


def answer_locally(worker: QuestionWorker, examples: list[QAExample], concurrency: int) -> Iterator[QuestionResult]:
    """At most ``concurrency`` questions in flight; a new one starts as soon as one finishes.

    Stopped early (``--fail-fast``, Ctrl-C, a bug), it starts no other question and cancels those in flight, and
    does not wait for them: each stops before its next model call. One at a time, a question runs in the caller's
    thread, where Ctrl-C interrupts the call in progress itself.
    """
    if concurrency <= 1:
        for example in examples:
            yield worker.answer(example)
        return
    in_flight = InFlight()
    pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="eval")
    try:
        yield from _keep_busy(pool, functools.partial(in_flight.run, worker.answer), examples, concurrency)
    finally:
        in_flight.cancel()
        pool.shutdown(wait=False, cancel_futures=True)


def _keep_busy(pool: ThreadPoolExecutor, answer: Callable[[QAExample], QuestionResult], examples: list[QAExample],
               concurrency: int) -> Iterator[QuestionResult]:
    queue = iter(examples)
    running: set[Future[QuestionResult]] = {pool.submit(answer, ex) for ex in itertools.islice(queue, concurrency)}
    while running:
        finished, running = wait(running, return_when=FIRST_COMPLETED)
        for future in finished:
            following = next(queue, None)
            if following is not None:
                running.add(pool.submit(answer, following))
            yield future.result()
