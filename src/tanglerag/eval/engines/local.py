"""Answer questions in this process, ``concurrency`` at a time, against one shared runtime.

Threads rather than processes: the time goes to waiting on the model (a server, or the embedded model's
slots, which run outside the GIL), and one runtime keeps one model, one embedder and one cache in memory.
Each question's tracker is bound in its own thread, so traces and usage never mix.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed

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
        # every question queued at once: the pool's workers keep ``concurrency`` of them running, and as_completed
        # waits on them all once, where a wait per finished question re-armed every future in flight each time
        # (its cost grew with the concurrency)
        for finished in as_completed([pool.submit(in_flight.run, worker.answer, ex) for ex in examples]):
            yield finished.result()
    finally:
        in_flight.cancel()
        pool.shutdown(wait=False, cancel_futures=True)
