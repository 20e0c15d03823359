"""What a person sees during a long ``eval``: questions done of all, failures, calls, tokens/s and an ETA.

A live bar on a terminal; a plain line every tenth of the run when stderr is a file or a pipe (a log that
``tail -f`` can follow); nothing with ``--quiet``.
"""

from __future__ import annotations

import time
from types import TracebackType

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeRemainingColumn

from tanglerag.cli.common import console
from tanglerag.eval.records import QuestionResult


class RunProgress:
    """A ``RunListener`` for the CLI; use it as a context manager around the run."""

    def __init__(self, quiet: bool = False) -> None:
        self.quiet = quiet
        self.total = self.done = self.failed = self.calls = self.tokens = 0
        self._start = time.perf_counter()
        self._resumed = 0
        self._every = 1
        self._bar: Progress | None = None
        self._task: TaskID | None = None

    def __enter__(self) -> RunProgress:
        if not self.quiet and console.is_terminal:
            self._bar = Progress(TextColumn("evaluating"), BarColumn(), MofNCompleteColumn(),
                                 TextColumn("{task.fields[stats]}"), TimeRemainingColumn(), console=console,
                                 transient=True)
            self._bar.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._bar is not None:
            self._bar.stop()

    def started(self, total: int, already_answered: int) -> None:
        self.total, self.done, self._resumed = total, already_answered, already_answered
        self._every = max(1, total // 10)
        if already_answered and not self.quiet:
            console.print(f"resuming: {already_answered} of {total} questions already answered, "
                          f"{total - already_answered} to go", highlight=False)
        if self._bar is not None:
            self._task = self._bar.add_task("eval", total=total, completed=already_answered, stats=self.stats())

    def finished(self, result: QuestionResult) -> None:
        self.done += 1
        self.failed += result.failed
        fresh = [c for p in result.predictions for c in p.trace.calls if not c.cached]
        self.calls += len(fresh)
        self.tokens += sum(c.prompt_tokens + c.completion_tokens for c in fresh)
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, advance=1, stats=self.stats())
        elif not self.quiet and (self.done % self._every == 0 or self.done == self.total):
            console.print(f"eval: {self.done}/{self.total} questions, {self.stats()}, ETA {self.eta()}", highlight=False)

    def stats(self) -> str:
        elapsed = max(time.perf_counter() - self._start, 1e-9)
        return f"{self.failed} failed, {self.calls} calls, {self.tokens / elapsed:.0f} tok/s"

    def eta(self) -> str:
        """Time left at this run's pace so far (questions resumed from a checkpoint took no time now)."""
        answered_now = self.done - self._resumed
        if not answered_now:
            return "unknown"
        seconds = (time.perf_counter() - self._start) / answered_now * (self.total - self.done)
        return time.strftime("%H:%M:%S", time.gmtime(seconds))
