"""Answer questions in this process, ``concurrency`` at a time, against one shared runtime.

Threads rather than processes: the time goes to waiting on the model (a server, or the embedded model's
slots, which run outside the GIL), and one runtime keeps one model, one embedder and one cache in memory.
Each question's tracker is bound in its own thread, so traces and usage never mix.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

from tanglerag.datasets.base import QAExample
from tanglerag.eval.records import QuestionResult
from tanglerag.eval.worker import QuestionWorker


def answer_locally(worker: QuestionWorker, examples: list[QAExample], concurrency: int) -> Iterator[QuestionResult]:
    """At most ``concurrency`` questions in flight; a new one starts as soon as one finishes."""
    if concurrency <= 1:
        for example in examples:
            yield worker.answer(example)
        return
    queue = iter(examples)
    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="eval") as pool:
        running: set[Future[QuestionResult]] = set()
        try:
            for example in queue:
                running.add(pool.submit(worker.answer, example))
                if len(running) >= concurrency:
                    break
            while running:
                finished, running = wait(running, return_when=FIRST_COMPLETED)
                for future in finished:
                    following = next(queue, None)
                    if following is not None:
                        running.add(pool.submit(worker.answer, following))
                    yield future.result()
        finally:  # stopped early (fail-fast, Ctrl-C, a bug): questions not started are not started
            for future in running:
                future.cancel()
