"""Answering a question for the HTTP routes (``/v1/ask`` and the OpenAI-compatible chat), in one place.

The routes only read requests and format replies; the steps between live here: check a request, wait for a
slot, await the runtime's front door (``Runtime.aanswer``) as a task of the service's loop within
``service.answer_timeout_s``, count the cost and shape the answer, and, when streamed, hand over progress events as
they happen. A client that leaves, or a question past its time, cancels the question's tracker: the task ends before
its next LLM call, and holds its slot until then. A user key's question reads the
served index and writes nothing beside it (``AskRequest.read_only``, which the front door applies): per-request
choices never change what others retrieve.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import ValidationError
from starlette.requests import Request

from tanglerag.errors import TangleragError
from tanglerag.otel import Answered
from tanglerag.outputs import PassageOut
from tanglerag.runtime import AskRequest, Runtime
from tanglerag.service.auth import Caller
from tanglerag.service.errors import ServiceError, client_message, status_for
from tanglerag.service.gate import Busy
from tanglerag.service.options import with_options
from tanglerag.service.schemas import AskBody, AskResponse, passage_clipped, served_methods
from tanglerag.service.state import ServiceState, acting_as
from tanglerag.settings import Settings
from tanglerag.tracking import ProgressEvent, Tracker
from tanglerag.types import Answer, Question, RetrievedPassage

log = logging.getLogger(__name__)
T = TypeVar("T")
_RUNNING: set[asyncio.Future[Any]] = set()
_CLIENT: ContextVar[Request | None] = ContextVar("tanglerag_client", default=None)


async def watch_client(request: Request) -> None:
    """A dependency of the answering routes: the request whose client ``_timed`` watches. Why: a streamed reply
    learns that its client left when a write fails, a plain one never writes until the end, so without a look at
    the connection a client that gave up (an SDK's timeout) would hold its slot and every model call to the end."""
    _CLIENT.set(request)


async def _client_gone(request: Request) -> None:
    """Returns when the server says the client closed the connection (its body was read whole before: all that can
    come now is the disconnect). A wait, not a poll: Starlette's ``is_disconnected`` looks without waiting, and
    through the middlewares' receive chain that look never sees the message."""
    while (await request.receive())["type"] != "http.disconnect":
        pass


@dataclass(frozen=True)
class StreamFailure:
    """How a streamed question ended without an answer: the HTTP status it would have had, and the message."""

    status: int
    error: str


@dataclass(frozen=True)
class Prepared:
    """A checked request: the question, the per-request settings its options make (None: the served ones), and
    whether it is a user key's (read-only: it changes nothing other callers retrieve)."""

    question: Question
    settings: Settings | None
    read_only: bool


def prepare(state: ServiceState, body: AskBody, who: Caller) -> Prepared:
    """Check a request before it waits for a slot."""
    cfg = state.runtime.settings.service
    if len(body.question) > cfg.max_question_chars:
        raise ServiceError(422, f"question: longer than {cfg.max_question_chars} characters")
    if body.method not in served_methods():
        raise ServiceError(422, f"method: unknown method {body.method!r}; GET /v1/methods lists them: "
                                f"{', '.join(served_methods())}")
    if body.user is not None:
        acting_as(body.user, who)
    if not state.has_index():
        raise ServiceError(409, "no index yet: POST documents to /v1/index/documents first")
    options = body.options.model_dump(by_alias=True, exclude_none=True)
    if body.top_k is not None:
        options["retrieval.top_k"] = body.top_k
    served = state.runtime.settings
    settings = with_options(served, options, admin=who.admin) if options or not who.admin else None
    try:
        question = Question(text=body.question, user_id=body.user)
    except ValidationError as exc:
        raise ServiceError(422, f"question: {exc.errors()[0]['msg']}") from None
    return Prepared(question, settings, read_only=not who.admin)


async def answered(state: ServiceState, asked: Prepared, body: AskBody) -> AskResponse:
    """The answer once admitted and within ``service.answer_timeout_s``; past it, or when the client leaves,
    the question is cancelled (504 for a client still there)."""
    tracker = Tracker()
    answer = await _timed(state, tracker, lambda: _answer(state.runtime, asked, body, tracker))
    return _finished(state, answer, body.user)


@dataclass(frozen=True)
class Running:
    """A question admitted and being answered (a task), with a queue that hears its stages, calls and
    steps as they happen (for a streamed reply)."""

    future: asyncio.Future[Answer]
    events: asyncio.Queue[ProgressEvent]
    tracker: Tracker
    user: str | None


async def started(state: ServiceState, asked: Prepared, body: AskBody) -> Running:
    """Start a question once admitted (a full queue is a plain 429, before any stream opens)."""
    loop = asyncio.get_running_loop()
    events: asyncio.Queue[ProgressEvent] = asyncio.Queue()

    def forward(event: ProgressEvent) -> None:  # from the loop, or from a worker thread (the index search)
        loop.call_soon_threadsafe(events.put_nowait, event)

    tracker = Tracker(on_event=forward)
    future = await _admitted(state, tracker, lambda: _answer(state.runtime, asked, body, tracker))
    return Running(future, events, tracker, body.user)


async def streamed(state: ServiceState, running: Running
                   ) -> AsyncGenerator[ProgressEvent | AskResponse | StreamFailure, None]:
    """A running question's events as they come, then its answer or how it failed.

    Closing this early (the client left) or running past ``service.answer_timeout_s`` cancels the question before
    its next LLM call; callers close it with ``contextlib.aclosing`` so that happens at once.
    """
    timeout = state.runtime.settings.service.answer_timeout_s
    try:
        async for event in _progress(running.future, running.events, timeout):
            yield _shown(state, event)
    except TimeoutError:
        yield StreamFailure(504, f"no answer within {timeout:g}s")
        return
    finally:
        if not running.future.done():
            running.tracker.cancel()
    yield _outcome(state, running)


def _shown(state: ServiceState, event: ProgressEvent) -> ProgressEvent:
    """An event as a client is sent it: the passages retrieved shown as the answer will show them (where each stands
    in its file, its document's date and source; texts clipped to ``service.max_passage_chars``)."""
    if event.type != "passages":
        return event
    limit = state.runtime.settings.service.max_passage_chars
    shown = [passage_clipped(PassageOut.from_hit(RetrievedPassage.model_validate(p)), limit).model_dump(mode="json")
             for p in event.data["passages"]]
    return event.model_copy(update={"data": {"passages": shown}})


async def _answer(rt: Runtime, asked: Prepared, body: AskBody, tracker: Tracker) -> Answer:
    """One question through the front door, which derives its runtime from the request's settings: made standalone
    from its history if it depends on it, then answered."""
    return await rt.aanswer(AskRequest(question=asked.question, method=body.method, history=body.history,
                                       settings=asked.settings, read_only=asked.read_only, tracker=tracker))


async def worked(state: ServiceState, tracker: Tracker, work: Callable[[], Awaitable[T]]) -> T:
    """Model work that is not a question (a chat client's background task), admitted and timed as a question is."""
    result = await _timed(state, tracker, work)
    state.telemetry.observe_usage(tracker.usage)
    return result


async def _timed(state: ServiceState, tracker: Tracker, work: Callable[[], Awaitable[T]]) -> T:
    """``work`` once admitted, within ``service.answer_timeout_s``; past it, or when the client leaves, its tracker
    is cancelled (504 for a client still there)."""
    future = await _admitted(state, tracker, work)
    timeout = state.runtime.settings.service.answer_timeout_s
    client = _CLIENT.get()
    gone = asyncio.ensure_future(_client_gone(client)) if client is not None else None
    watched: list[asyncio.Future[Any]] = [future, *([gone] if gone else [])]
    try:
        done, _ = await asyncio.wait(watched, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        tracker.cancel()
        raise
    finally:
        if gone is not None:
            gone.cancel()
    if future in done:
        return future.result()
    tracker.cancel()
    if gone is not None and gone in done:  # nobody reads the reply: the status is for the log
        raise ServiceError(499, "the client closed the connection before the answer")
    raise ServiceError(504, f"no answer within {timeout:g}s") from None


async def _admitted(state: ServiceState, tracker: Tracker, work: Callable[[], Awaitable[T]]) -> asyncio.Future[T]:
    """Start ``work`` as a task once a slot is free; the slot is freed when the task ends. A question whose tracker
    is cancelled ends before its next LLM call, not in the middle of one: the model call in progress (in a worker
    thread for the embedded model, where it cannot be taken back) still holds the slot, so the bound on model work
    holds, and its cost is counted as abandoned."""
    try:
        await state.gate.acquire()
    except Busy as exc:
        state.telemetry.rejected.inc()
        raise ServiceError(429, f"busy: {exc}; retry later", {"Retry-After": str(exc.retry_after)}) from None
    state.telemetry.in_flight.inc()
    future: asyncio.Future[T] = asyncio.ensure_future(work())
    _RUNNING.add(future)  # the loop keeps only a weak reference: a question nobody awaits must still end
    future.add_done_callback(_RUNNING.discard)

    def done(ended: asyncio.Future[T]) -> None:
        state.telemetry.in_flight.dec()
        state.gate.release()
        if tracker.cancelled:
            state.telemetry.observe_abandoned(tracker.usage)
            _log_abandoned(ended)

    future.add_done_callback(done)
    return future


def _log_abandoned(ended: asyncio.Future[Any]) -> None:
    """One INFO line for a question nobody waits for any more (its client left, or it ran past its time): that is
    how cancelling ends, not a fault. Reading its exception here also keeps asyncio from logging it as an ERROR
    with a traceback when the future is collected. A bug is still logged as one, with its traceback."""
    exc = None if ended.cancelled() else ended.exception()
    if exc is None or isinstance(exc, TangleragError):
        how = exc or ("it was stopped" if ended.cancelled() else "its last model call had already ended")
        log.info("question abandoned (its client left or it ran past service.answer_timeout_s): %s", how)
    else:
        log.error("an abandoned question failed", exc_info=exc)


def _finished(state: ServiceState, answer: Answer, user: str | None) -> AskResponse:
    """Count an answer's cost in the metrics (and send its spans, with ``otel.enabled``) and shape it as the API
    returns it (passages clipped)."""
    state.telemetry.observe_usage(answer.usage)
    if state.spans is not None:
        state.spans.export(Answered.of(answer), state.runtime.llm.backend.model_id)
    limit = state.runtime.settings.service.max_passage_chars
    return AskResponse.from_answer(answer, user, trace=True).with_passages_clipped(limit)


async def _progress(future: asyncio.Future[Any], events: asyncio.Queue[ProgressEvent],
                    timeout: float) -> AsyncIterator[ProgressEvent]:
    """A question's events as they come until it ends; ``TimeoutError`` once it runs past ``timeout``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not (future.done() and events.empty()):
        getter = asyncio.ensure_future(events.get())
        await asyncio.wait({getter, future}, timeout=max(0.0, deadline - loop.time()),
                           return_when=asyncio.FIRST_COMPLETED)
        if getter.done():
            yield getter.result()
        else:
            getter.cancel()
        if loop.time() >= deadline and not future.done():
            raise TimeoutError


def _outcome(state: ServiceState, running: Running) -> AskResponse | StreamFailure:
    """The answer of a question that ended, or its failure as a client may see it (a bug is logged here)."""
    exc = running.future.exception()
    if exc is None:
        return _finished(state, running.future.result(), running.user)
    if isinstance(exc, TangleragError):
        return StreamFailure(status_for(exc), client_message(exc, state.redact))
    log.error("answering failed", exc_info=exc)
    return StreamFailure(500, "internal error (logged on the server)")
