"""The one bridge from synchronous code into the async core.

Everything that waits on a model is a coroutine (``LLM.acomplete``, ``Method.arun``, ``Runtime.aanswer``); scripts,
metrics and the CLI still call plain functions. ``run_sync`` runs a coroutine for them on one event loop kept in a
daemon thread for the whole process (the *portal*), rather than a fresh loop per call as ``asyncio.run`` would make:
an HTTP backend keeps its clients and their warm connections per loop, and a script asking a hundred questions one
by one should reuse them. The caller's context (the tracker of the question in progress, the answering method) goes
with the coroutine, as it would into a task of the caller's own loop.

Evaluation runs its questions on the portal too, so a process has the portal and, when it serves, the service's loop.
``per_loop`` keeps what asyncio binds to one loop (a semaphore, a pool of HTTP clients) once per running loop, stored
on the loop itself so it goes when the loop goes.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import itertools
import logging
import threading
from collections.abc import Callable, Coroutine
from typing import Any, Generic, TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")

_portal: tuple[asyncio.AbstractEventLoop, threading.Thread] | None = None
_portal_lock = threading.Lock()
_warned = threading.Event()
_NUMBERS = itertools.count()


def portal_loop() -> asyncio.AbstractEventLoop:
    """The process's portal loop, started on first use in a daemon thread (it never blocks interpreter exit), and
    started again if that thread ended (a ``SystemExit`` raised in a task stops ``run_forever``)."""
    global _portal
    with _portal_lock:
        if _portal is None or not _portal[1].is_alive():
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="tanglerag-portal", daemon=True)
            thread.start()
            _portal = (loop, thread)
        return _portal[0]


def portal_running() -> bool:
    """Whether the portal's thread still runs its loop."""
    return _portal is not None and _portal[1].is_alive()


def _in_portal() -> bool:
    return _portal is not None and threading.get_ident() == _portal[1].ident


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to its end on the portal loop and return its result (or raise its exception).

    Callable from any thread, including one that runs a loop of its own (that loop waits meanwhile: async code
    should await the coroutine instead). An interrupt of the caller (Ctrl-C) cancels the coroutine."""
    if _in_portal():
        coro.close()
        raise RuntimeError("run_sync called from the portal loop itself: await the coroutine instead")
    _warn_if_blocking_a_loop()
    loop = portal_loop()
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


def _warn_if_blocking_a_loop() -> None:
    """A synchronous facade called from a coroutine stops its loop until the call ends (every other request of a
    service waits): said once, with where, so the caller can await the coroutine instead."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    if not _warned.is_set():
        _warned.set()
        log.warning("a synchronous tanglerag call (an LLM's complete/decide, a method's run or answer) was made "
                    "from a running event loop, which waits for it: await its async form instead", stack_info=True)


def _settle(task: asyncio.Task[T], done: concurrent.futures.Future[T]) -> None:
    if task.cancelled():
        done.set_exception(concurrent.futures.CancelledError())
    elif (error := task.exception()) is not None:
        done.set_exception(error)
    else:
        done.set_result(task.result())


class per_loop(Generic[T]):  # noqa: N801 - used like a factory function
    """One ``make()`` per running event loop, made on first use in that loop and kept on the loop object, so it is
    dropped with the loop (what it holds may refer to the loop: a semaphore does once a caller waited on it)."""

    def __init__(self, make: Callable[[], T]) -> None:
        self._make = make
        # a number never given out twice, not id(self): a collected per_loop's id is reused by the next one, which
        # would then find the dead one's object on a long-lived loop (the portal's)
        self._name = f"_tanglerag_per_loop_{next(_NUMBERS)}"

    def get(self) -> T:
        loop = asyncio.get_running_loop()
        made: T | None = getattr(loop, self._name, None)
        if made is None:
            made = self._make()
            setattr(loop, self._name, made)
        return made
