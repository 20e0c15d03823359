"""Per-stage cost accounting.

A ``UsageTracker`` is created per question by a pipeline; stages time themselves with
``tracker.stage(name)`` and LLM completions are recorded into the current stage. No
global state: the tracker travels explicitly with the work it measures.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from tanglerag.llm.base import Completion
from tanglerag.types import StageUsage, Usage


class UsageTracker:
    def __init__(self) -> None:
        self.usage = Usage()
        self._current = "other"

    @contextmanager
    def stage(self, name: str) -> Iterator[StageUsage]:
        """Time a stage; completions recorded inside it are charged to it.

        Stages must not nest: the total is the sum of stages.
        """
        previous, self._current = self._current, name
        stage = self.usage.stages.setdefault(name, StageUsage())
        start = time.perf_counter()
        try:
            yield stage
        finally:
            stage.seconds += time.perf_counter() - start
            self._current = previous

    def record(self, completion: Completion) -> None:
        stage = self.usage.stages.setdefault(self._current, StageUsage())
        if completion.cached:
            stage.cached_calls += 1
        else:
            stage.llm_calls += 1
        stage.prompt_tokens += completion.prompt_tokens
        stage.completion_tokens += completion.completion_tokens
        stage.model_seconds += completion.seconds
