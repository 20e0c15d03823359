"""The server-sent events of a streamed OpenAI reply, written in one place for every streamed route.

A chat stream (``chat.completion.chunk``) carries each piece as a ``delta``: the role first, then
``reasoning_content`` (the method's progress), ``content`` and ``sources``; a legacy completion stream
(``text_completion``) has no delta, so its pieces sit on the choice itself (``text``, ``sources``). Both end with a
finish chunk, optionally a usage chunk, then ``data: [DONE]``. Extra fields (``sources``, ``tanglerag``) ride on
the chunks as OpenAI-compatible servers add theirs: the ``openai`` SDK keeps them in ``model_extra`` and LangChain
skips them.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from tanglerag.service.errors import error_body
from tanglerag.service.schemas import ChatUsage


class ChunkWriter:
    """The events of one streamed chat reply (one id and creation time for all its chunks, as OpenAI's have)."""

    kind = "chat.completion.chunk"
    prefix = "chatcmpl"

    def __init__(self, model: str) -> None:
        self.base = {"id": f"{self.prefix}-{uuid.uuid4().hex}", "object": self.kind, "created": int(time.time()),
                     "model": model}

    def opening(self) -> list[str]:
        """What goes out before anything is known: a chat's role."""
        return [self.chunk({"role": "assistant", "content": ""})]

    def choice(self, piece: dict[str, Any], finish: str | None) -> dict[str, Any]:
        return {"index": 0, "delta": piece, "logprobs": None, "finish_reason": finish}

    def chunk(self, piece: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
        """One chunk holding ``piece`` (``content``, ``reasoning_content``, ``sources``, ...); ``extra`` goes on the
        chunk beside ``choices``."""
        return _event(self.base | {"choices": [self.choice(piece, finish)]} | extra)

    def usage(self, usage: ChatUsage) -> str:
        """The last chunk when ``stream_options.include_usage`` asks for it: no choices, the usage."""
        return _event(self.base | {"choices": [], "usage": usage.model_dump()})

    async def whole(self, text: str) -> AsyncIterator[str]:
        """A reply known at once (a background task's) as a stream."""
        for event in [*self.opening(), self.chunk({"content": text}), self.chunk({}, "stop"), DONE]:
            yield event


class TextChunkWriter(ChunkWriter):
    """The events of a streamed legacy completion: the pieces on the choice (``text`` for content), no role and no
    reasoning (a completion client has nowhere to show it: progress stays in SSE comments)."""

    kind = "text_completion"
    prefix = "cmpl"

    def opening(self) -> list[str]:
        return []

    def choice(self, piece: dict[str, Any], finish: str | None) -> dict[str, Any]:
        rest = {key: value for key, value in piece.items() if key != "content"}
        return {"text": piece.get("content", ""), "index": 0, "logprobs": None, "finish_reason": finish} | rest


DONE = "data: [DONE]\n\n"


def comment(text: str) -> str:
    """An SSE comment: clients skip it, and it keeps the connection alive while the method works."""
    return f": {text}\n\n"


def failure(path: str, status: int, message: str) -> str:
    """A failure after the stream opened, in OpenAI's error shape (the status can no longer be the HTTP one)."""
    return _event(error_body(path, message, status, openai=True))


def _event(data: dict[str, Any]) -> str:
    return f"data: {json.dumps(data, ensure_ascii=False)}\n\n"
