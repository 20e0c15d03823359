"""Open WebUI's background tasks, recognised and answered without retrieval.

After each question, Open WebUI sends the chat's model (or its task model) up to three more requests of its own: a
title, tags and follow-up suggestions for the chat, and, with its web search or retrieval on, search queries. Each
is one user message holding a task prompt and the chat so far. Answered as questions, each would run retrieval and
a whole method on a prompt that is not a question: minutes of model time on a CPU for replies it cannot read (it
expects JSON such as ``{"title": ...}``). So they are recognised and answered as what they are, by
``service.background_tasks``:

- ``plain`` (the default): no model call at all: a title made of the first question's first words, no tags beyond
  "General", no follow-ups, no search queries (what Open WebUI's own prompts say to give when unsure);
- ``model``: the task prompt goes to the LLM as it is, in one call (cached, charged to stage ``background_task``),
  no retrieval and no method. Opt-in: anyone who may ask can then send the model any prompt of that shape, with
  no retrieval and no method in the way, so an operator turns it on for callers they trust;
- ``refuse``: a 400 at once (Open WebUI then keeps "New Chat" as the title).

A prompt is recognised by the shape Open WebUI's default templates share (``backend/open_webui/config.py``: the
``DEFAULT_*_GENERATION_PROMPT_TEMPLATE`` strings): it opens with ``### Task:``, holds the chat between
``<chat_history>`` tags, and asks for a JSON object whose first key names the task (``title``, ``tags``,
``follow_ups``, ``queries``; ``text`` for autocompletion, ``prompt`` for an image prompt). Their wording changed
between versions (the title prompt lost its emoji); these three marks did not. A user who customised the templates
away from them gets a question answered, as before.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from typing import Any

from fastapi.responses import StreamingResponse

from tanglerag.service import answering, compat
from tanglerag.service.chunks import ChunkWriter
from tanglerag.service.errors import ServiceError
from tanglerag.service.schemas import ChatChoice, ChatCompletion, ChatMessageOut, ChatRequest, ChatUsage
from tanglerag.service.state import ServiceState
from tanglerag.trace import Message
from tanglerag.tracking import Tracker, stage, track

_OUTPUT = re.compile(r'\{\s*"(title|tags|follow_ups|queries|text|prompt)"\s*:')
TASKS = {"title": "title", "tags": "tags", "follow_ups": "follow-ups", "queries": "search queries",
         "text": "autocompletion", "prompt": "image prompt"}
"""The JSON key each task's reply opens with, and what the task is."""
_PLAIN: dict[str, Any] = {"tags": ["General"], "follow_ups": [], "queries": [], "text": "", "prompt": ""}


def recognised(body: ChatRequest) -> str | None:
    """The task (its reply's JSON key) when the request is one of Open WebUI's background tasks, else None."""
    users = [m.text() for m in body.messages if m.role == "user"]
    if len(users) != 1 or not users[0].lstrip().startswith("### Task:") or "<chat_history>" not in users[0]:
        return None
    found = _OUTPUT.search(users[0])
    return found.group(1) if found else None


async def answered(state: ServiceState, body: ChatRequest, task: str) -> ChatCompletion | StreamingResponse:
    """The reply to a background task, as ``service.background_tasks`` says (a 400 when it says refuse)."""
    compat.method_for(body.model)  # an unknown model is still a 404
    how = state.runtime.settings.service.background_tasks
    if how == "refuse":
        raise ServiceError(400, f"messages: a chat client's background task ({TASKS[task]}) is not answered here "
                                "(service.background_tasks=refuse); turn it off in the client",
                           code="background_task_refused", param="messages")
    prompt = next(m.text() for m in body.messages if m.role == "user")
    tracker = Tracker()
    if how == "plain":
        text = json.dumps({task: _PLAIN.get(task, "")} if task != "title" else {"title": _title(prompt)},
                          ensure_ascii=False)
    else:
        text = await answering.worked(state, tracker, lambda: _asked(state, prompt, tracker))
    text = compat.cut_at_stop(text, body.stop)
    if body.stream:
        return StreamingResponse(ChunkWriter(body.model).whole(text), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store"})
    return ChatCompletion(id=f"chatcmpl-{uuid.uuid4().hex}", created=int(time.time()), model=body.model,
                          choices=[ChatChoice(message=ChatMessageOut(content=text))],
                          usage=ChatUsage.of(tracker.usage.totals()), tanglerag=None)


async def _asked(state: ServiceState, prompt: str, tracker: Tracker) -> str:
    """The task prompt answered by the model alone."""
    llm = state.runtime.llm
    tokens = state.runtime.settings.service.background_task_tokens
    with track(tracker), stage("background_task"):
        reply = await llm.acomplete([Message(role="user", content=prompt)], llm.params(max_tokens=tokens))
        return reply.text.strip()


def _title(prompt: str) -> str:
    """The first question's first five words, from the chat Open WebUI puts between ``<chat_history>`` tags (one
    ``USER: ...`` line a message)."""
    chat = prompt.split("<chat_history>", 1)[-1].split("</chat_history>", 1)[0]
    asked = next((line.split(":", 1)[1] for line in chat.splitlines() if line.upper().startswith("USER:")), chat)
    words = asked.split()
    return " ".join(words[:5]).rstrip("?.!,;:") or "New Chat"
