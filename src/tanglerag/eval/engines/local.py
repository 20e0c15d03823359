"""Answer questions in this process, ``concurrency`` at a time, on one event loop against one shared runtime.

Every question in flight is a task of one loop (run in a thread of its own), so a thousand questions waiting on a
server cost a thousand coroutines, not a thousand threads, and a method's per-passage calls are one batch under the
LLM client's semaphore. Each task binds its question's tracker in its own context, so traces and usage never mix.
The caller reads finished questions in its own thread: what it does with them (write a checkpoint and sync it, print
progress) never holds up the loop. Stopping early (Ctrl-C, ``--fail-fast``, a bug) cancels every task in flight.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from tanglerag.datasets.base import QAExample
from tanglerag.eval.records import QuestionResult
from tanglerag.eval.worker import QuestionWorker

Item = TypeVar("Item")
Result = TypeVar("Result")


def answer_locally(worker: QuestionWorker, examples: list[QAExample], concurrency: int) -> Iterator[QuestionResult]:
    """Every question's result as it finishes, at most ``concurrency`` in flight; a new one starts as soon as one
    finishes."""
    for finished in answer_in_batches(worker.aanswer, examples, concurrency):
        yield from finished


def answer_in_batches(answer: Callable[[Item], Awaitable[Result]], items: list[Item],
                      concurrency: int) -> Iterator[list[Result]]:
    """``answer`` of every item, each time with every result that has finished since the caller last asked (at
    least one, in the order they finished): a caller that writes each finished question to disk can make them
    durable with one sync. An item that raised ends it, after the results that finished before it are handed over.

    Closed early (the caller stopped reading), it cancels the items in flight and does not wait for them: each stops
    at its next await."""
    if not items:
        return
    run = _LoopRun(answer, items, max(1, concurrency))
    run.start()
    try:
        while True:
            finished = [run.finished.get()]
            while not run.finished.empty():  # and whatever else finished meanwhile
                finished.append(run.finished.get_nowait())
            results = [r for r in finished if not isinstance(r, (_End, BaseException))]
            failure = next((r for r in finished if isinstance(r, BaseException)), None)
            if results:
                yield results
            if failure is not None:
                raise failure
            if any(isinstance(r, _End) for r in finished):
                return
    finally:
        run.stop()


class _End:
    """Put on the queue once every item is answered."""


@dataclass
class _LoopRun(Generic[Item, Result]):
    """The loop thread of one ``answer_in_batches``: ``concurrency`` workers take the next item as each finishes one,
    and put every result (or the exception that stopped an item) on ``finished``."""

    answer: Callable[[Item], Awaitable[Result]]
    items: list[Item]
    concurrency: int
    finished: queue.SimpleQueue[Result | BaseException | _End] = field(default_factory=queue.SimpleQueue)
    _loop: asyncio.AbstractEventLoop | None = None
    _main: asyncio.Task[None] | None = None
    _started: threading.Event = field(default_factory=threading.Event)

    def start(self) -> None:
        threading.Thread(target=self._serve, name="tanglerag-eval", daemon=True).start()
        self._started.wait()

    def _serve(self) -> None:
        with suppress(asyncio.CancelledError):  # stopped by ``stop``: the caller has stopped listening
            asyncio.run(self._all())

    def stop(self) -> None:
        """Cancel what is still in flight (nothing when every item is done)."""
        if self._loop is not None and self._main is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._main.cancel)

    async def _all(self) -> None:
        self._loop, self._main = asyncio.get_running_loop(), asyncio.current_task()
        self._started.set()
        pending = iter(self.items)
        try:
            await asyncio.gather(*(self._worker(pending) for _ in range(min(self.concurrency, len(self.items)))))
        except Exception as exc:  # noqa: BLE001 - handed to the caller's thread, which raises it
            self.finished.put(exc)
        else:
            self.finished.put(_End())

    async def _worker(self, pending: Iterator[Item]) -> None:
        for item in pending:  # one iterator shared by the workers: each takes the next item not yet started
            self.finished.put(await self.answer(item))
