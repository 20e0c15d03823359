"""Answer questions in this process, ``concurrency`` at a time, on one event loop against one shared runtime.

Every question in flight is a task of the process's portal loop (``tanglerag.aio``), so a thousand questions waiting
on a server cost a thousand coroutines, not a thousand threads, a method's per-passage calls are one batch under the
LLM client's semaphore, and the metrics' own model calls (a reader's, made from worker threads through the sync
facade) share that loop and its bound. Each task binds its question's tracker in its own context, so traces and usage
never mix. The caller reads finished questions in its own thread: what it does with them (write a checkpoint and sync
it, print progress) never holds up the loop. Stopping early (Ctrl-C, ``--fail-fast``, a bug) cancels every task in
flight.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import queue
from collections.abc import Awaitable, Callable, Iterator
from typing import TypeVar

from tanglerag.aio import portal_loop, portal_running
from tanglerag.datasets.base import QAExample
from tanglerag.eval.records import QuestionResult
from tanglerag.eval.worker import QuestionWorker

Item = TypeVar("Item")
Result = TypeVar("Result")
_POLL_S = 0.5  # how often a caller waiting on results checks that the loop still runs them


def answer_locally(worker: QuestionWorker, examples: list[QAExample], concurrency: int) -> Iterator[QuestionResult]:
    """Every question's result as it finishes, at most ``concurrency`` in flight; a new one starts as soon as one
    finishes, its passages built while the question before it waited on the model (``QuestionWorker.ahead``)."""
    for finished in answer_in_batches(worker.aanswer, examples, concurrency, ahead=worker.ahead):
        yield from finished


def answer_in_batches(answer: Callable[[Item], Awaitable[Result]], items: list[Item], concurrency: int, *,
                      ahead: Callable[[Item], object] | None = None) -> Iterator[list[Result]]:
    """``answer`` of every item, each time with every result that has finished since the caller last asked (at
    least one, in the order they finished): a caller that writes each finished question to disk can make them
    durable with one sync. An item that raised ends it, after the results that finished before it are handed over.

    ``ahead``, called on the loop, hears of each item before ``answer`` is called for it: of the first
    ``concurrency`` at the start, then of the item ``concurrency`` places on each time one is started, so what it
    starts for an item (work in a worker thread) has about the time a whole item takes to finish meanwhile. Not
    with one item at a time: each one's work then starts after the one before it finished, as an order-dependent
    run needs (a method that trims the index changes what the next question retrieves).

    Closed early (the caller stopped reading), it cancels the items in flight and does not wait for them: each stops
    at its next await."""
    if not items:
        return
    finished: queue.SimpleQueue[Result | BaseException | _End] = queue.SimpleQueue()
    ahead = ahead if concurrency > 1 else None
    run = asyncio.run_coroutine_threadsafe(_answer_all(answer, items, max(1, concurrency), finished, ahead),
                                           portal_loop())
    try:
        while True:
            batch = [_next(finished, run)]
            while not finished.empty():  # and whatever else finished meanwhile
                batch.append(finished.get_nowait())
            results = [r for r in batch if not isinstance(r, (_End, BaseException))]
            failure = next((r for r in batch if isinstance(r, BaseException)), None)
            if results:
                yield results
            if failure is not None:
                raise failure
            if any(isinstance(r, _End) for r in batch):
                return
    finally:
        run.cancel()


class _End:
    """Put on the queue once the run ends, however it ends."""


def _next(finished: queue.SimpleQueue[Result | BaseException | _End],
          run: concurrent.futures.Future[None]) -> Result | BaseException | _End:
    """The next thing put on the queue; a run that ended without saying so (the loop's thread ended: a
    ``SystemExit`` raised in a task stops it) is an error rather than a wait forever."""
    while True:
        try:
            return finished.get(timeout=_POLL_S)
        except queue.Empty:
            if (run.done() or not portal_running()) and finished.empty():
                return RuntimeError("the event loop answering the questions stopped")


async def _answer_all(answer: Callable[[Item], Awaitable[Result]], items: list[Item], concurrency: int,
                      finished: queue.SimpleQueue[Result | BaseException | _End],
                      ahead: Callable[[Item], object] | None = None) -> None:
    """``concurrency`` workers take the next item as each finishes one, and put every result (or the exception
    that stopped the run) on ``finished``; the end is always put last."""
    pending = iter(range(len(items)))
    told = 0  # items[:told] were told to ``ahead``

    async def worker() -> None:
        nonlocal told
        for position in pending:  # one iterator shared by the workers: each takes the next item not yet started
            if ahead is not None:
                for item in items[told:position + concurrency + 1]:
                    ahead(item)
                told = max(told, position + concurrency + 1)
            finished.put(await answer(items[position]))

    try:
        await asyncio.gather(*(worker() for _ in range(min(concurrency, len(items)))))
    except asyncio.CancelledError:
        raise
    except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread, which raises it
        finished.put(exc)
    finally:
        finished.put(_End())
