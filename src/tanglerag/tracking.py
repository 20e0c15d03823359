"""Usage and trace of the work in progress, bound to it by a context variable.

``track()`` binds a ``Tracker`` for one unit of work (one question); inside it the LLM client
charges every completion to the tracker's current stage and appends it to the trace, so a method
cannot forget to count a call. Methods mark stages with ``stage(name)`` and add their decisions
with ``record_step(step)``. The binding ends with the ``with`` block: no state outlives a question.

>>> with track() as tracker:
...     with stage("retrieve"):
...         pass
>>> list(tracker.usage.stages)
['retrieve']
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Literal

from pydantic import BaseModel, Field

from tanglerag.trace import LLMCall, Message, Step, Trace, TraceStep
from tanglerag.types import RetrievedPassage, StageUsage, Usage

_ACTIVE: ContextVar[Tracker | None] = ContextVar("tanglerag_tracker", default=None)
CORE_STAGES = frozenset({"retrieve", "conflicts", "rewrite", "background_task"})
"""The stages the general layers mark (the pipeline's retrieval, the conflict report any method's answer may get, a
follow-up's rewrite into a standalone question, a chat client's background task answered by the service);
each family declares its own (``Family.stages``), and a setting keyed by stage (``llm.structured_stages``) is
checked against them all."""
_METHOD: ContextVar[str | None] = ContextVar("tanglerag_method", default=None)
_ANSWER_STEP: ContextVar[bool] = ContextVar("tanglerag_answer_step", default=False)


class ProgressEvent(BaseModel):
    """What a watcher of a question in progress is told: a stage began or ended, a call or a step happened, the
    passages were retrieved (``passages``: each as ``RetrievedPassage`` dumps it), or the answer grew (``token``:
    the ``text`` the model just wrote, see ``streamed_answer``)."""

    type: Literal["stage_start", "stage_end", "llm_call", "step", "passages", "token", "batch"]
    stage: str
    data: dict[str, Any] = Field(default_factory=dict)


class Tracker:
    """Cost per stage plus the trace (calls and steps) of one question.

    ``on_event`` (optional) hears every stage boundary, call and step as it happens, e.g. to stream
    progress to a client; it may be called from worker threads.
    """

    def __init__(self, on_event: Callable[[ProgressEvent], None] | None = None) -> None:
        self.usage = Usage()
        self.calls: list[LLMCall] = []
        self.steps: list[Step] = []
        self._open: list[tuple[str, float]] = []  # running stages, innermost last, with their start time
        self._lock = threading.Lock()
        self._on_event = on_event
        self._cancelled = threading.Event()
        self._answer_begun = False  # a piece of the answer was streamed (the next call's starts on a new line)

    def _emit(self, type_: str, stage_name: str, **data: Any) -> None:
        if self._on_event is not None:
            self._on_event(ProgressEvent(type=type_, stage=stage_name, data=data))

    @property
    def current_stage(self) -> str:
        return self._open[-1][0] if self._open else "other"

    @contextmanager
    def stage(self, name: str) -> Iterator[StageUsage]:
        """Time a stage; completions made inside are charged to it.

        A stage opened inside another pauses the outer one, so wall seconds are never counted twice
        and the total stays the sum of the stages.
        """
        now = time.perf_counter()
        if self._open:
            self._credit(*self._open[-1], now)
        self._open.append((name, now))
        self._emit("stage_start", name)
        try:
            yield self._stage_usage(name)
        finally:
            now = time.perf_counter()
            self._credit(*self._open.pop(), now)
            if self._open:
                self._open[-1] = (self._open[-1][0], now)
            self._emit("stage_end", name, seconds=round(self._stage_usage(name).seconds, 4))

    def cancel(self) -> None:
        """Ask the work to stop: the LLM client refuses this question's next call (one in progress finishes)."""
        self._cancelled.set()

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def add_seconds(self, name: str, seconds: float) -> None:
        """Charge wall time measured elsewhere (e.g. retrieval done once for several methods)."""
        self._stage_usage(name).seconds += seconds

    def record_call(self, messages: list[Message], replies: list[str], prompt_tokens: int, completion_tokens: int,
                    cached: bool, model_seconds: float, constrained: bool = False, cut: bool = False) -> None:
        with self._lock:
            name = self.current_stage
            usage = self._stage_usage(name)
            if cached:
                usage.cached_calls += 1
            else:
                usage.llm_calls += 1
            usage.prompt_tokens += prompt_tokens
            usage.completion_tokens += completion_tokens
            usage.model_seconds += model_seconds
            call = LLMCall(stage=name, messages=messages, replies=replies, prompt_tokens=prompt_tokens,
                           completion_tokens=completion_tokens, cached=cached, model_seconds=model_seconds,
                           constrained=constrained, cut=cut)
            self.calls.append(call)
        # the whole call rides along, so a watcher that stops a question keeps the calls it saw (the inspector)
        self._emit("llm_call", name, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens, cached=cached,
                   call=call.model_dump(mode="json") if self._on_event is not None else None)

    @property
    def hears(self) -> bool:
        """Whether anyone watches this question as it goes (a terminal, a stream): only then are tokens streamed."""
        return self._on_event is not None

    def retrieved(self, passages: list[RetrievedPassage]) -> None:
        """Tell a watcher what the method will read, the moment retrieval ends (long before the answer)."""
        if self._on_event is not None:
            self._emit("passages", self.current_stage, passages=[h.model_dump(mode="json") for h in passages])

    def token(self, text: str) -> None:
        """The answer's next piece as the model writes it (from the loop or a worker thread)."""
        if text:
            self._answer_begun = True
            self._emit("token", self.current_stage, text=text)

    def batch(self, planned: int) -> Callable[[], None]:
        """For a batch of ``planned`` calls: a function to call as each one ends, which tells a watcher how many are
        done of how many (the ledger's claims, one a passage, take minutes on a CPU)."""
        done = 0
        stage_name = self.current_stage

        def ended() -> None:
            nonlocal done
            with self._lock:
                done += 1
                count = done
            self._emit("batch", stage_name, done=count, planned=planned)
        return ended

    def answer_call(self) -> Callable[[str], None]:
        """``token`` for one call's pieces: a call after another one's (COrg answers each group in a call) starts
        on a new line."""
        first = True

        def piece(text: str) -> None:
            nonlocal first
            if text and first:
                text, first = ("\n" if self._answer_begun else "") + text, False
            self.token(text)
        return piece

    def add_step(self, step: TraceStep) -> None:
        self.steps.append(step)
        self._emit("step", self.current_stage, **step.model_dump(mode="json"))

    def trace(self) -> Trace:
        """A copy of the trace so far."""
        return Trace(calls=list(self.calls), steps=list(self.steps))

    def _stage_usage(self, name: str) -> StageUsage:
        return self.usage.stages.setdefault(name, StageUsage())

    def _credit(self, name: str, start: float, now: float) -> None:
        self._stage_usage(name).seconds += now - start


@contextmanager
def track(tracker: Tracker | None = None) -> Iterator[Tracker]:
    """Bind ``tracker`` (a new one by default) to the work done inside the block."""
    tracker = tracker if tracker is not None else Tracker()
    token = _ACTIVE.set(tracker)
    try:
        yield tracker
    finally:
        _ACTIVE.reset(token)


def current_tracker() -> Tracker | None:
    return _ACTIVE.get()


@contextmanager
def stage(name: str) -> Iterator[None]:
    """Mark a stage of the active tracker; a no-op when nothing is tracked (e.g. evaluation readers)."""
    tracker = _ACTIVE.get()
    if tracker is None:
        yield
        return
    with tracker.stage(name):
        yield


@contextmanager
def answering_as(method: str) -> Iterator[None]:
    """Name the method answering inside the block (a method another one delegates to names itself inside), so a
    setting can differ by method where methods share a stage's name (``llm.structured_stages.corg.generate``)."""
    token = _METHOD.set(method)
    try:
        yield
    finally:
        _METHOD.reset(token)


@contextmanager
def streamed_answer() -> Iterator[None]:
    """Mark the call inside the block as the one whose text is the answer: a watched question (``Tracker.hears``)
    gets its tokens as the model writes them. A method marks its last step only: tokens of an intermediate call
    (a claim, a verdict) are not the answer a person waits for."""
    token = _ANSWER_STEP.set(True)
    try:
        yield
    finally:
        _ANSWER_STEP.reset(token)


def token_sink() -> Callable[[str], None] | None:
    """Where the answer's tokens go for a call made now: the watching tracker's ``token``, or None (no watcher, or
    not the answer's call)."""
    tracker = _ACTIVE.get()
    return tracker.answer_call() if tracker is not None and tracker.hears and _ANSWER_STEP.get() else None


def current_method() -> str | None:
    return _METHOD.get()


def record_step(step: TraceStep) -> None:
    """Add a method's decision to the active trace; without a tracker the step is not kept."""
    tracker = _ACTIVE.get()
    if tracker is not None:
        tracker.add_step(step)
