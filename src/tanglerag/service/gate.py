"""Bounded admission to the one process-wide LLM: a few run, a few wait, the rest are told to come back.

Piling requests up behind a 2-core model only makes every one of them time out; answering 429 with
``Retry-After`` at once lets clients back off while the queue drains.
"""

from __future__ import annotations

import asyncio


class Busy(Exception):
    """No slot now; ``retry_after`` is a hint in seconds."""

    def __init__(self, reason: str, retry_after: int) -> None:
        super().__init__(reason)
        self.retry_after = retry_after


class Gate:
    """``acquire()`` a running slot (or raise ``Busy``); ``release()`` it when the work has really ended."""

    def __init__(self, max_running: int, max_waiting: int, wait_timeout_s: float) -> None:
        self.max_running = max_running
        self.max_waiting = max_waiting
        self.wait_timeout_s = wait_timeout_s
        self._slots = asyncio.Semaphore(max_running)
        self.running = 0
        self.waiting = 0

    async def acquire(self) -> None:
        # decided on our own counters, before any await: requests arriving together cannot all slip past
        if self.running + self.waiting >= self.max_running + self.max_waiting:
            raise Busy(f"{self.running} question(s) running and {self.waiting} waiting", self._retry_after())
        self.waiting += 1
        try:
            await asyncio.wait_for(self._slots.acquire(), self.wait_timeout_s)
        except TimeoutError:
            raise Busy(f"no free slot within {self.wait_timeout_s:g}s", self._retry_after()) from None
        finally:
            self.waiting -= 1
        self.running += 1

    def release(self) -> None:
        self.running -= 1
        self._slots.release()

    def _retry_after(self) -> int:
        return max(1, round(self.wait_timeout_s / (self.max_waiting + 1)))
