"""What a person sees during a long ``eval``: questions done of all, failures, calls, tokens/s and an ETA.

A live bar on a terminal; a plain line every tenth of the run when stderr is a file or a pipe (a log that
``tail -f`` can follow); nothing with ``--quiet``. On Ctrl-C, one line: what is saved and the command that resumes.
"""

from __future__ import annotations

import os
import shlex
import sys
import time
from pathlib import Path
from types import TracebackType
from typing import NoReturn

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

    def interrupted(self, out: Path | None) -> str:
        """What Ctrl-C leaves: the questions saved in ``out`` and the command that goes on from them (this one, without
        ``--restart``); without ``out`` nothing is kept but the LLM cache."""
        answered = self.done - self.failed
        so_far = f"{answered} of {self.total} questions answered" if self.total else "before the first question"
        if out is None:
            return f"interrupted ({so_far}); nothing is saved without --out: give --out DIR to keep answers and resume"
        retried = f", {self.failed} failed (asked again on resume)" if self.failed else ""
        command = shlex.join(["tanglerag", *(arg for arg in sys.argv[1:] if arg != "--restart")])
        return f"interrupted ({so_far}{retried}); the answers are saved in {out}; resume with: {command}"

    def eta(self) -> str:
        """Time left at this run's pace so far (questions resumed from a checkpoint took no time now)."""
        answered_now = self.done - self._resumed
        if not answered_now:
            return "unknown"
        seconds = (time.perf_counter() - self._start) / answered_now * (self.total - self.done)
        return time.strftime("%H:%M:%S", time.gmtime(seconds))


def stop_interrupted(progress: RunProgress, out: Path | None) -> NoReturn:
    """Ctrl-C: say what is kept, then leave at once (status 130, as a shell expects of Ctrl-C). Exiting without
    waiting ends the model calls in flight: their connections close, so a server stops generating; their questions
    are asked again on resume. Each question counted was fsynced before it was counted: there is nothing to flush."""
    console.print(progress.interrupted(out), highlight=False, markup=False, soft_wrap=True)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(130)
