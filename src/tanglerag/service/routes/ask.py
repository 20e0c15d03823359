"""``POST /v1/ask`` (plain or streamed as server-sent events) and ``GET /v1/methods``.

Blocking work runs in a worker thread once the gate admits it; a question holds its slot until its
thread finishes, even when the client has gone away or timed out, so the bound on model work holds.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Callable
from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import StreamingResponse
from pydantic import ValidationError

from tanglerag.errors import TangleragError
from tanglerag.methods.registry import method_class
from tanglerag.pipeline import answer_output
from tanglerag.runtime import Runtime
from tanglerag.service.auth import Caller
from tanglerag.service.errors import ServiceError, client_message, status_for
from tanglerag.service.gate import Busy
from tanglerag.service.options import with_options
from tanglerag.service.schemas import AskRequest, AskResponse, MethodInfo, error_responses, served_methods
from tanglerag.service.state import CallerDep, ServiceState, State, acting_as
from tanglerag.tracking import ProgressEvent, Tracker
from tanglerag.types import Answer, Question

log = logging.getLogger(__name__)
router = APIRouter(tags=["ask"])

ASK_ERRORS = error_responses(400, 401, 403, 409, 413, 422, 429, 502, 503, 504)
STREAM_DOC: dict[int | str, dict[str, Any]] = {200: {"content": {"text/event-stream": {}},
                    "description": "the answer, or with stream=true server-sent events: "
                                   "stage_start, stage_end, llm_call, step, then answer (or error)"}}


@router.post("/v1/ask", response_model=AskResponse, responses=STREAM_DOC | ASK_ERRORS)
async def ask(body: AskRequest, who: CallerDep, state: State,
              stream: Annotated[bool, Query(description="stream progress as server-sent events")] = False) -> Any:
    """Answer a question with citations and the trace of how the method got there."""
    rt, question = prepare(state, body, who)
    if stream:
        return await _stream(state, rt, body, question)
    return finished(state, await answered(state, rt, body, question), body.user)


@router.get("/v1/methods", response_model=list[MethodInfo])
async def methods() -> list[MethodInfo]:
    """Every method, its paper, what it does and what it typically costs."""
    return [MethodInfo(name=cls.name, paper=cls.paper, description=cls.description, calls=cls.calls,
                       metrics=list(cls.default_metrics)) for cls in map(method_class, served_methods())]


def prepare(state: ServiceState, body: AskRequest, who: Caller) -> tuple[Runtime, Question]:
    """Check a request before it waits for a slot; the runtime with its options applied, and the question."""
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
    base = state.runtime
    rt = base.with_settings(with_options(base.settings, options, admin=who.admin)) if options else base
    try:
        question = Question(text=body.question, user_id=body.user)
    except ValidationError as exc:
        raise ServiceError(422, f"question: {exc.errors()[0]['msg']}") from None
    return rt, question


def answer_question(rt: Runtime, body: AskRequest, question: Question, tracker: Tracker) -> Answer:
    """The blocking work of one question (run in a worker thread)."""
    return rt.pipeline(body.method, personal=body.user is not None).ask(question, tracker=tracker)


async def admitted(state: ServiceState, tracker: Tracker, work: Callable[[], Any]) -> asyncio.Future[Any]:
    """Start ``work`` in a thread once a slot is free; the slot is freed when the thread ends (a cancelled
    question ends before its next LLM call, and its cost is counted as abandoned)."""
    try:
        await state.gate.acquire()
    except Busy as exc:
        state.telemetry.rejected.inc()
        raise ServiceError(429, f"busy: {exc}; retry later", {"Retry-After": str(exc.retry_after)}) from None
    state.telemetry.in_flight.inc()
    future = asyncio.get_running_loop().run_in_executor(None, work)

    def done(_: asyncio.Future[Any]) -> None:
        state.telemetry.in_flight.dec()
        state.gate.release()
        if tracker.cancelled:
            state.telemetry.observe_abandoned(tracker.usage)

    future.add_done_callback(done)
    return future


async def answered(state: ServiceState, rt: Runtime, body: AskRequest, question: Question) -> Answer:
    """The answer once admitted and within ``service.answer_timeout_s``; past it, or when the client leaves,
    the question is cancelled (504 for a client still there)."""
    tracker = Tracker()
    future = await admitted(state, tracker, lambda: answer_question(rt, body, question, tracker))
    timeout = state.runtime.settings.service.answer_timeout_s
    try:
        return await asyncio.wait_for(asyncio.shield(future), timeout)
    except TimeoutError:
        tracker.cancel()
        raise ServiceError(504, f"no answer within {timeout:g}s") from None
    except asyncio.CancelledError:
        tracker.cancel()
        raise


def finished(state: ServiceState, answer: Answer, user: str | None) -> dict[str, Any]:
    """Count an answer's cost in the metrics and shape it as the API returns it."""
    state.telemetry.observe_usage(answer.usage)
    return answer_output(answer, user, trace=True)


async def _stream(state: ServiceState, rt: Runtime, body: AskRequest, question: Question) -> StreamingResponse:
    future, events, tracker = await admitted_with_events(state, rt, body, question)
    timeout = state.runtime.settings.service.answer_timeout_s

    async def sse() -> AsyncIterator[str]:
        try:
            async for event in progress(future, events, timeout):
                yield _sse(event.type, event.model_dump(mode="json"))
        except TimeoutError:
            yield _sse("error", {"error": f"no answer within {timeout:g}s", "status": 504})
            return
        finally:  # timed out, or the client left (the stream is closed): stop before the next LLM call
            if not future.done():
                tracker.cancel()
        yield _outcome(state, future, body.user)

    return StreamingResponse(sse(), media_type="text/event-stream", headers={"Cache-Control": "no-store"})


async def admitted_with_events(state: ServiceState, rt: Runtime, body: AskRequest, question: Question
                               ) -> tuple[asyncio.Future[Any], asyncio.Queue[ProgressEvent], Tracker]:
    """Start a question once admitted, with a queue that hears its stages, calls and steps as they happen."""
    loop = asyncio.get_running_loop()
    events: asyncio.Queue[ProgressEvent] = asyncio.Queue()

    def forward(event: ProgressEvent) -> None:  # the tracker reports from the worker thread
        loop.call_soon_threadsafe(events.put_nowait, event)

    tracker = Tracker(on_event=forward)
    return await admitted(state, tracker, lambda: answer_question(rt, body, question, tracker)), events, tracker


async def progress(future: asyncio.Future[Any], events: asyncio.Queue[ProgressEvent],
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


def _outcome(state: ServiceState, future: asyncio.Future[Any], user: str | None) -> str:
    """The last event of a stream: the answer, or the error that ended it."""
    exc = future.exception()
    if exc is None:
        return _sse("answer", finished(state, future.result(), user))
    if isinstance(exc, TangleragError):
        return _sse("error", {"error": client_message(exc), "status": status_for(exc)})
    log.error("answering failed", exc_info=exc)
    return _sse("error", {"error": "internal error (logged on the server)", "status": 500})


def _sse(event: str, data: dict[str, Any]) -> str:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"
