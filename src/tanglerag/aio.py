"""The one bridge from synchronous code into the async core.

Everything that waits on a model is a coroutine (``LLM.acomplete``, ``Method.arun``, ``Runtime.aanswer``); scripts,
metrics and the CLI still call plain functions. ``run_sync`` runs a coroutine for them on one event loop kept in a
daemon thread for the whole process (the *portal*), rather than a fresh loop per call as ``asyncio.run`` would make:
an HTTP backend keeps its clients and their warm connections per loop, and a script asking a hundred questions one
by one should reuse them. The caller's context (the tracker of the question in progress, the answering method) goes
with the coroutine, as it would into a task of the caller's own loop.

``per_loop`` keeps what asyncio binds to one loop (a semaphore, a pool of HTTP clients) once per running loop, so
the portal, an evaluation's loop and the service's loop each get their own.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import threading
import weakref
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Generic, TypeVar

T = TypeVar("T")

_portal: asyncio.AbstractEventLoop | None = None
_portal_lock = threading.Lock()


def _portal_loop() -> asyncio.AbstractEventLoop:
    """The process's portal loop, started on first use in a daemon thread (it never blocks interpreter exit)."""
    global _portal
    with _portal_lock:
        if _portal is None or _portal.is_closed():
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="tanglerag-portal", daemon=True).start()
            _portal = loop
        return _portal


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to its end on the portal loop and return its result (or raise its exception).

    Callable from any thread, including one that runs a loop of its own (that loop waits meanwhile: async code
    should await the coroutine instead). An interrupt of the caller (Ctrl-C) cancels the coroutine."""
    loop = _portal_loop()
    if threading.current_thread().name == "tanglerag-portal":
        coro.close()
        raise RuntimeError("run_sync called from the portal loop itself: await the coroutine instead")
    context = contextvars.copy_context()
    done: concurrent.futures.Future[T] = concurrent.futures.Future()
    tasks: list[asyncio.Task[T]] = []

    def start() -> None:
        task = loop.create_task(coro, context=context)
        tasks.append(task)
        task.add_done_callback(lambda t: _settle(t, done))

    loop.call_soon_threadsafe(start)
    try:
        return done.result()
    except BaseException:
        if not done.done():
            loop.call_soon_threadsafe(lambda: [t.cancel() for t in tasks])
        raise


def _settle(task: asyncio.Task[T], done: concurrent.futures.Future[T]) -> None:
    if task.cancelled():
        done.set_exception(concurrent.futures.CancelledError())
    elif (error := task.exception()) is not None:
        done.set_exception(error)
    else:
        done.set_result(task.result())


class per_loop(Generic[T]):  # noqa: N801 - used like a factory function
    """One ``make()`` per running event loop, made on first use in that loop and dropped with it."""

    def __init__(self, make: Callable[[], T]) -> None:
        self._make = make
        self._made: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, T] = weakref.WeakKeyDictionary()

    def get(self) -> T:
        loop = asyncio.get_running_loop()
        made = self._made.get(loop)
        if made is None:
            made = self._made[loop] = self._make()
        return made


async def gather_in_order(awaitables: list[Awaitable[T]]) -> list[T | BaseException]:
    """Every awaitable's result or exception, in order, each run to its end: a batch whose one call failed still
    accounts for the calls that were made. Cancelling the caller cancels them all."""
    return await asyncio.gather(*awaitables, return_exceptions=True)
