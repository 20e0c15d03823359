"""The OpenAI-compatible surface: ``GET /v1/models`` (and each model), ``POST /v1/chat/completions`` plain and
streamed, and the legacy ``POST /v1/completions`` (its prompt is the question).

Stock clients (the ``openai`` SDK, Open WebUI, LangChain) can then use tanglerag as a model: each method is a model
named ``tanglerag/<method>``. The last user message is the question; the user and assistant turns before it are its
history, from which a follow-up ("and the other one?") is first made standalone (``stages/followup.py``); the
response says how many turns the rewrite did not read (``tanglerag.ignored_turns``). The reply's content
is the answer, one sentence saying where its sources disagree when a conflict report found that they do, then its
numbered sources (with each document's date and source when it gives them), so a chat window shows what each ``[n]``
is; the citations, the passages, the conflict reports
and the whole trace ride along in the extra ``tanglerag`` field, and ``usage`` holds our counts.
What is honoured and what is refused with a 400 (``n`` > 1, tools, log-probabilities) is ``service.compat``'s;
sampling parameters (temperature, max_tokens, ...) are accepted and not used: the method's settings decide them.
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
from tanglerag.service import answering, background, compat
from tanglerag.service.answering import Running, StreamFailure
from tanglerag.service.compat import PREFIX, JsonReply
from tanglerag.service.errors import error_body
from tanglerag.service.progress import progress_line
from tanglerag.service.schemas import (
    AskRequest,
    AskResponse,
    ChatAnswer,
    ChatChoice,
    ChatCompletion,
    ChatMessageOut,
    ChatRequest,
    ChatUsage,
    CompletionRequest,
    ModelCard,
    ModelList,
    TextChoice,
    TextCompletion,
    error_responses,
    served_methods,
)
from tanglerag.service.state import CallerDep, ServiceState, State

router = APIRouter(tags=["openai-compatible"])
CHAT_ERRORS = error_responses(400, 401, 403, 404, 409, 413, 429, 502, 503, 504, openai=True)
STREAM_DOC: dict[int | str, dict[str, Any]] = {200: {"content": {"text/event-stream": {}}, "description": (
    "with stream=true: chat.completion.chunk events (progress as SSE comments while the method works), "
    "then data: [DONE]")}}


@router.get("/v1/models", response_model=ModelList, responses=error_responses(401, openai=True))
async def models(_: CallerDep, state: State) -> ModelList:
    """Every method as a model a chat client can pick (a wrong key fails here, as clients check on connecting)."""
    return ModelList(data=[ModelCard(id=f"{PREFIX}{name}", created=state.started) for name in served_methods()])


@router.get("/v1/models/{model:path}", response_model=ModelCard, responses=error_responses(401, 404, openai=True))
async def model(model: str, _: CallerDep, state: State) -> ModelCard:
    """One model (``tanglerag/<method>``); 404 ``model_not_found`` for a name no method has."""
    return ModelCard(id=f"{PREFIX}{compat.method_for(model)}", created=state.started)


@router.post("/v1/chat/completions", response_model=ChatCompletion, responses=STREAM_DOC | CHAT_ERRORS)
async def chat(body: ChatRequest, who: CallerDep, state: State) -> Any:
    """Answer the last user message with the method the model names (a chat client's background task, such as
    Open WebUI's title, is answered as ``service.background_tasks`` says, without retrieval)."""
    compat.refuse_unsupported(body)
    task = background.recognised(body)
    if task is not None:
        return await background.answered(state, body, task)
    shape = compat.reply_format(body.response_format)
    text, history = compat.conversation(body)
    ask = AskRequest(question=text, method=compat.method_for(body.model), history=history)
    rt, question = answering.prepare(state, ask, who)
    ignored = compat.unread(history, state.runtime.settings.conversation)
    if body.stream:
        running = await answering.started(state, rt, ask, question)
        return StreamingResponse(_chunks(state, body, running, ignored, shape),
                                 media_type="text/event-stream", headers={"Cache-Control": "no-store"})
    output = await answering.answered(state, rt, ask, question)
    return ChatCompletion(id=_completion_id(), created=int(time.time()), model=body.model,
                          choices=[ChatChoice(message=ChatMessageOut(content=_reply(output, shape, body.stop)))],
                          usage=_usage(output), tanglerag=_extra(output, ignored))


@router.post("/v1/completions", response_model=TextCompletion, responses=STREAM_DOC | CHAT_ERRORS)
async def completions(body: CompletionRequest, who: CallerDep, state: State) -> Any:
    """OpenAI's legacy completion: the prompt is the question, answered as a chat message is."""
    compat.refuse_unsupported(body)
    ask = AskRequest(question=compat.prompt_of(body), method=compat.method_for(body.model))
    rt, question = answering.prepare(state, ask, who)
    if body.stream:
        running = await answering.started(state, rt, ask, question)
        return StreamingResponse(_text_chunks(state, body, running),
                                 media_type="text/event-stream", headers={"Cache-Control": "no-store"})
    output = await answering.answered(state, rt, ask, question)
    return TextCompletion(id=f"cmpl-{uuid.uuid4().hex}", created=int(time.time()), model=body.model,
                          choices=[TextChoice(text=_reply(output, None, body.stop))], usage=_usage(output),
                          tanglerag=_extra(output, 0))


def _reply(output: AskResponse, shape: JsonReply | None, stop: str | list[str] | None) -> str:
    """The reply's text: the answer with its sources, or the JSON answer asked for; cut at a stop string."""
    return compat.cut_at_stop(shape.render(output) if shape is not None else _content(output), stop)


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


async def _chunks(state: ServiceState, body: ChatRequest, running: Running, ignored: int,
                  shape: JsonReply | None) -> AsyncIterator[str]:
    """OpenAI's chunk stream: the role, the method's progress as ``service.chat_progress`` says (``progress.py``),
    the content, the finish."""
    base = {"id": _completion_id(), "object": "chat.completion.chunk", "created": int(time.time()), "model": body.model}

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return f"data: {json.dumps(base | {'choices': [choice]} | extra, ensure_ascii=False)}\n\n"

    shown = state.runtime.settings.service.chat_progress
    if shown == "preamble" and shape is not None:
        shown = "reasoning"  # lines before a JSON answer would make it unreadable
    yield chunk({"role": "assistant", "content": ""})
    preamble = False
    async with aclosing(answering.streamed(state, running)) as items:
        async for item in items:
            if isinstance(item, StreamFailure):
                yield _error(item.status, item.error)
                return
            if not isinstance(item, AskResponse):
                line = progress_line(item) if shown != "comments" else None
                if line is None:
                    yield f": {item.type} {item.stage}\n\n"  # a comment: clients skip it, the connection stays alive
                elif shown == "reasoning":
                    yield chunk({"reasoning_content": line + "\n"})
                else:
                    preamble = True
                    yield chunk({"content": f"_{line.strip()}_  \n"})
                continue
            yield chunk({"content": ("\n" if preamble else "") + _reply(item, shape, body.stop)})
            yield chunk({}, "stop", tanglerag=_extra(item, ignored).model_dump(mode="json"))
            if body.stream_options and body.stream_options.get("include_usage"):
                yield f"data: {json.dumps(base | {'choices': [], 'usage': _usage(item).model_dump()})}\n\n"
    yield "data: [DONE]\n\n"


async def _text_chunks(state: ServiceState, body: CompletionRequest, running: Running) -> AsyncIterator[str]:
    """A legacy completion streamed: ``text_completion`` chunks (the same shape as the whole reply), SSE comments
    while the method works, the text, then the finish."""
    base = {"id": f"cmpl-{uuid.uuid4().hex}", "object": "text_completion", "created": int(time.time()),
            "model": body.model}

    def chunk(text: str, finish: str | None = None) -> str:
        choice = {"text": text, "index": 0, "logprobs": None, "finish_reason": finish}
        return f"data: {json.dumps(base | {'choices': [choice]}, ensure_ascii=False)}\n\n"

    async with aclosing(answering.streamed(state, running)) as items:
        async for item in items:
            if isinstance(item, StreamFailure):
                yield _error(item.status, item.error)
                return
            if not isinstance(item, AskResponse):
                yield f": {item.type} {item.stage}\n\n"
                continue
            yield chunk(_reply(item, None, body.stop))
            yield chunk("", "stop")
            if body.stream_options and body.stream_options.get("include_usage"):
                yield f"data: {json.dumps(base | {'choices': [], 'usage': _usage(item).model_dump()})}\n\n"
    yield "data: [DONE]\n\n"


def _error(status: int, message: str) -> str:
    """A failure after the stream opened, in OpenAI's error shape (the status can no longer be the HTTP one)."""
    body = error_body("/v1/chat/completions", message, status, openai=True)
    return f"data: {json.dumps(body, ensure_ascii=False)}\n\n"
