"""The OpenAI-compatible surface: ``GET /v1/models`` (and each model), ``POST /v1/chat/completions`` plain and
streamed, and the legacy ``POST /v1/completions`` (its prompt is the question).

Stock clients (the ``openai`` SDK, Open WebUI, LangChain) can then use tanglerag as a model: each method is a model
named ``tanglerag/<method>``. The last user message is the question; the user and assistant turns before it are its
history, from which a follow-up ("and the other one?") is first made standalone (``stages/followup.py``); the
response says how many turns the rewrite did not read (``tanglerag.ignored_turns``). These routes only hand requests
over: the answering and the reply's shape (content, ``sources`` as data, the ``tanglerag`` field, the chunk stream)
are ``service.chat``'s; what is honoured and what is refused with a 400 (``n`` > 1, a tool call required,
log-probabilities) is ``service.compat``'s. Sampling parameters (temperature, max_tokens, ...) are accepted and not
used: the method's settings decide them.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends

from tanglerag.runtime import DEFAULT_METHOD
from tanglerag.service import answering, compat
from tanglerag.service import chat as serving
from tanglerag.service.compat import PREFIX
from tanglerag.service.schemas import (
    ChatCompletion,
    ChatRequest,
    CompletionRequest,
    ModelCard,
    ModelList,
    TextCompletion,
    error_responses,
    served_methods,
)
from tanglerag.service.state import CallerDep, State

router = APIRouter(tags=["openai-compatible"], dependencies=[Depends(answering.watch_client)])
CHAT_ERRORS = error_responses(400, 401, 403, 404, 409, 413, 429, 502, 503, 504, openai=True)
STREAM_DOC: dict[int | str, dict[str, Any]] = {200: {"content": {"text/event-stream": {}}, "description": (
    "with stream=true: chat.completion.chunk events (the method's progress as reasoning_content deltas, "
    "then the content with its sources), then data: [DONE]")}}


@router.get("/v1/models", response_model=ModelList, responses=error_responses(401, openai=True))
async def models(_: CallerDep, state: State) -> ModelList:
    """Every method as a model a chat client can pick (a wrong key fails here, as clients check on connecting), the
    default method first: a client that takes the first model gets what ``ask`` gives, not the alphabet's first."""
    names = sorted(served_methods(), key=lambda name: name != DEFAULT_METHOD)
    return ModelList(data=[ModelCard(id=f"{PREFIX}{name}", created=state.started) for name in names])


@router.get("/v1/models/{model:path}", response_model=ModelCard, responses=error_responses(401, 404, openai=True))
async def model(model: str, _: CallerDep, state: State) -> ModelCard:
    """One model (``tanglerag/<method>``); 404 ``model_not_found`` for a name no method has."""
    return ModelCard(id=f"{PREFIX}{compat.method_for(model)}", created=state.started)


@router.post("/v1/chat/completions", response_model=ChatCompletion, responses=STREAM_DOC | CHAT_ERRORS)
async def chat(body: ChatRequest, who: CallerDep, state: State) -> Any:
    """Answer the last user message with the method the model names (``service.chat``)."""
    return await serving.chat_completion(state, body, who)


@router.post("/v1/completions", response_model=TextCompletion, responses=STREAM_DOC | CHAT_ERRORS)
async def completions(body: CompletionRequest, who: CallerDep, state: State) -> Any:
    """OpenAI's legacy completion: the prompt is the question, answered as a chat message is."""
    return await serving.text_completion(state, body, who)
