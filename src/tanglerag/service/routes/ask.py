"""``POST /v1/ask`` (plain or streamed as server-sent events) and ``GET /v1/methods``.

A thin router: ``service.answering`` checks, admits, answers and shapes; this module reads the request and
writes the reply (a streamed one as ``stage_start``, ``stage_end``, ``llm_call``, ``step``, then ``answer`` or
``error`` events).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query
from fastapi.responses import StreamingResponse

from tanglerag.methods.base import method_class
from tanglerag.service import answering
from tanglerag.service.answering import Running, StreamFailure
from tanglerag.service.schemas import AskBody, AskResponse, MethodInfo, error_responses, served_methods
from tanglerag.service.state import CallerDep, ServiceState, State

router = APIRouter(tags=["ask"], dependencies=[Depends(answering.watch_client)])

ASK_ERRORS = error_responses(400, 401, 403, 409, 413, 422, 429, 502, 503, 504)
STREAM_DOC: dict[int | str, dict[str, Any]] = {200: {"content": {"text/event-stream": {}},
                    "description": "the answer, or with stream=true server-sent events: "
                                   "stage_start, stage_end, llm_call, step, then answer (or error)"}}


@router.post("/v1/ask", response_model=AskResponse, responses=STREAM_DOC | ASK_ERRORS)
async def ask(body: AskBody, who: CallerDep, state: State,
              stream: Annotated[bool, Query(description="stream progress as server-sent events")] = False) -> Any:
    """Answer a question with citations and the trace of how the method got there."""
    asked = answering.prepare(state, body, who)
    if not stream:
        return await answering.answered(state, asked, body)
    running = await answering.started(state, asked, body)
    return StreamingResponse(_events(state, running), media_type="text/event-stream",
                             headers={"Cache-Control": "no-store"})


@router.get("/v1/methods", response_model=list[MethodInfo])
async def methods() -> list[MethodInfo]:
    """Every method, its paper, what it does and what it typically costs."""
    return [MethodInfo(name=cls.name, paper=cls.paper, description=cls.description, calls=cls.calls,
                       metrics=list(cls.default_metrics)) for cls in map(method_class, served_methods())]


async def _events(state: ServiceState, running: Running) -> AsyncIterator[str]:
    """Each progress event as it comes, then the answer (the same body a plain request gets) or the error."""
    async with aclosing(answering.streamed(state, running)) as items:
        async for item in items:
            if isinstance(item, AskResponse):
                yield _sse("answer", item.model_dump(mode="json"))
            elif isinstance(item, StreamFailure):
                yield _sse("error", {"error": item.error, "status": item.status})
            else:
                yield _sse(item.type, item.model_dump(mode="json"))


def _sse(event: str, data: dict[str, Any]) -> str:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"
