"""The OpenAI-compatible surface: ``GET /v1/models`` and ``POST /v1/chat/completions``, plain and streamed.

Stock clients (the ``openai`` SDK, Open WebUI, LangChain) can then use tanglerag as a model: each method is a model
named ``tanglerag/<method>``. The last user message is the question. No method keeps a conversation, so earlier
turns are not used; the response says how many were left out (``tanglerag.ignored_turns``). The reply's content
is the answer, one sentence saying where its sources disagree when a conflict report found that they do, then its
numbered sources (with each document's date and source when it gives them), so a chat window shows what each ``[n]``
is; the citations, the passages, the conflict reports
and the whole trace ride along in the extra ``tanglerag`` field, and ``usage`` holds our counts.
Generation parameters a client sends (temperature, max_tokens, ...) are accepted and not used: the method's
settings decide them.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Any

from fastapi import APIRouter
from fastapi.responses import StreamingResponse

from tanglerag.conflicts import Side
from tanglerag.pipeline import disagreements
from tanglerag.service import answering
from tanglerag.service.answering import Running, StreamFailure
from tanglerag.service.errors import ServiceError
from tanglerag.service.schemas import (
    AskRequest,
    AskResponse,
    ChatAnswer,
    ChatChoice,
    ChatCompletion,
    ChatMessageOut,
    ChatRequest,
    ChatUsage,
    ModelCard,
    ModelList,
    error_responses,
    served_methods,
)
from tanglerag.service.state import CallerDep, ServiceState, State

router = APIRouter(tags=["openai-compatible"])
CHAT_ERRORS = error_responses(400, 401, 403, 404, 409, 413, 422, 429, 502, 503, 504, openai=True)
PREFIX = "tanglerag/"
STREAM_DOC: dict[int | str, dict[str, Any]] = {200: {"content": {"text/event-stream": {}}, "description": (
    "with stream=true: chat.completion.chunk events (progress as SSE comments while the method works), "
    "then data: [DONE]")}}


@router.get("/v1/models", response_model=ModelList, responses=error_responses(401, openai=True))
async def models(_: CallerDep) -> ModelList:
    """Every method as a model a chat client can pick (a wrong key fails here, as clients check on connecting)."""
    return ModelList(data=[ModelCard(id=f"{PREFIX}{name}") for name in served_methods()])


@router.post("/v1/chat/completions", response_model=ChatCompletion, responses=STREAM_DOC | CHAT_ERRORS)
async def chat(body: ChatRequest, who: CallerDep, state: State) -> Any:
    """Answer the last user message with the method the model names."""
    ask = AskRequest(question=_question(body), method=_method(body.model))
    rt, question = answering.prepare(state, ask, who)
    ignored = sum(m.role in ("user", "assistant") for m in body.messages) - 1
    if body.stream:
        running = await answering.started(state, rt, ask, question)
        return StreamingResponse(_chunks(state, body, running, ignored),
                                 media_type="text/event-stream", headers={"Cache-Control": "no-store"})
    output = await answering.answered(state, rt, ask, question)
    return ChatCompletion(id=_completion_id(), created=int(time.time()), model=body.model,
                          choices=[ChatChoice(message=ChatMessageOut(content=_content(output)))],
                          usage=_usage(output), tanglerag=_extra(output, ignored))


def _method(model: str) -> str:
    name = model.removeprefix(PREFIX)
    if name not in served_methods():
        raise ServiceError(404, f"unknown model {model!r}: GET /v1/models lists them ({PREFIX}<method>)")
    return name


def _question(body: ChatRequest) -> str:
    last = next((m for m in reversed(body.messages) if m.role == "user"), None)
    text = last.text() if last is not None else ""
    if not text.strip():
        raise ServiceError(422, "messages: no user message with text to answer")
    return text


def _content(output: AskResponse) -> str:
    """The answer, where its sources disagree (if they do), then the sources its [n] marks point to."""
    cited = set(output.citations)
    sources = [f"[{n}] {p.title or p.id} ({p.id})" + "".join(f" · {about}" for about in (p.location, p.date, p.source)
                                                             if about)
               for n, p in enumerate(output.passages, start=1) if p.id in cited]
    return output.answer + _disagreement(output) + ("\n\nSources:\n" + "\n".join(sources) if sources else "")


def _disagreement(output: AskResponse) -> str:
    """One sentence a chat reader sees without opening the report: each side's answer, how many passages state it
    and what became of it ("Sources disagree: 1963 (2 sources) vs 1998 (1 source, rejected: witnesses 2 vs 1).");
    empty when the sources agree."""
    points = [" vs ".join(_side(side, report.rule) for side in report.sides)
              for report in disagreements(output.conflicts)]
    return f"\n\nSources disagree: {'; '.join(points)}." if points else ""


def _side(side: Side, rule: str) -> str:
    count = f"{len(side.passages)} source{'s' * (len(side.passages) != 1)}"
    verdict = {"kept": "", "disputed": ", disputed", "rejected": f", rejected: {rule}" if rule else ", rejected"}
    return f"{side.answer} ({count}{verdict[side.verdict]})"


def _usage(output: AskResponse) -> ChatUsage:
    prompt, completion = int(output.usage["prompt_tokens"]), int(output.usage["completion_tokens"])
    return ChatUsage(prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion)


def _extra(output: AskResponse, ignored: int) -> ChatAnswer:
    """The ``tanglerag`` field: the ``/v1/ask`` body as it is, plus the turns no method reads."""
    return ChatAnswer(**dict(output), ignored_turns=ignored)


def _completion_id() -> str:
    return f"chatcmpl-{uuid.uuid4().hex}"


async def _chunks(state: ServiceState, body: ChatRequest, running: Running, ignored: int) -> AsyncIterator[str]:
    """OpenAI's chunk stream: the role, SSE comments while the method works, the content, the finish."""
    base = {"id": _completion_id(), "object": "chat.completion.chunk", "created": int(time.time()), "model": body.model}

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return f"data: {json.dumps(base | {'choices': [choice]} | extra, ensure_ascii=False)}\n\n"

    yield chunk({"role": "assistant", "content": ""})
    async with aclosing(answering.streamed(state, running)) as items:
        async for item in items:
            if isinstance(item, StreamFailure):
                yield _error(item.status, item.error)
                return
            if not isinstance(item, AskResponse):
                yield f": {item.type} {item.stage}\n\n"  # a comment: clients skip it, the connection stays alive
                continue
            yield chunk({"content": _content(item)})
            yield chunk({}, "stop", tanglerag=_extra(item, ignored).model_dump(mode="json"))
            if body.stream_options and body.stream_options.get("include_usage"):
                yield f"data: {json.dumps(base | {'choices': [], 'usage': _usage(item).model_dump()})}\n\n"
    yield "data: [DONE]\n\n"


def _error(status: int, message: str) -> str:
    return f"data: {json.dumps({'error': {'message': message, 'code': status}}, ensure_ascii=False)}\n\n"
