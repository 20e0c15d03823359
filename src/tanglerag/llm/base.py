"""The contract every LLM backend fulfils."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from tanglerag.trace import Message

log = logging.getLogger(__name__)


class GenerationParams(BaseModel):
    """Sampling parameters; part of the cache key."""

    model_config = ConfigDict(frozen=True)

    temperature: float = 0.0
    max_tokens: int = 128
    stop: tuple[str, ...] = ()
    n: int = Field(1, ge=1)
    seed: int = 0
    json_schema: dict[str, Any] | None = Field(
        None, description="constrain the reply to JSON of this schema (the backend decodes with it as a grammar)")


def response_format(schema: dict[str, Any]) -> dict[str, Any]:
    """The chat-completions ``response_format`` that asks for JSON of ``schema`` (OpenAI's shape, which
    llama.cpp, vLLM and Ollama's OpenAI endpoint take too)."""
    return {"type": "json_schema", "json_schema": {"name": "reply", "schema": schema}}


class RawCompletion(BaseModel):
    """What a backend returns: ``n`` texts and the tokens they cost.

    ``seconds`` is the model time of the call when it was made; the client sets it and the cache
    keeps it, so a cached call still reports what it costs.
    """

    texts: list[str]
    prompt_tokens: int
    completion_tokens: int
    seconds: float = 0.0


class Completion(RawCompletion):
    """A completion as the client hands it out, marked cached or fresh."""

    cached: bool = False

    @property
    def text(self) -> str:
        return self.texts[0]


class LLMBackend(Protocol):
    """A model that turns chat messages into text.

    ``model_id`` identifies the weights (e.g. a file hash or served model name) and is
    part of the cache key, so changing models never returns stale answers. A backend may also define
    ``async def agenerate(messages, params)``, which the client awaits; without it ``generate`` runs in a worker
    thread.
    """

    name: str

    @property
    def model_id(self) -> str: ...

    @property
    def max_concurrency(self) -> int: ...

    def warm_up(self) -> None:
        """Load what the first call would otherwise load."""

    def not_ready(self) -> str | None:
        """Why a call could not be answered now (model not loaded, server down), or None when it could.

        Cheap and without side effects: a readiness probe calls it every few seconds.
        """

    def generate(self, messages: list[Message], params: GenerationParams) -> RawCompletion: ...


def heard_safely(on_text: Callable[[str], None]) -> Callable[[str], None]:
    """``on_text`` as a streaming backend calls it: a listener that fails (a closed terminal, a bug in a view) is
    logged once and not called again, and the reply goes on to its end. A failure must not cut the reply short, since
    the cut reply would be read and cached as the model's answer."""
    failed = False

    def heard(text: str) -> None:
        nonlocal failed
        if failed:
            return
        try:
            on_text(text)
        except Exception:  # noqa: BLE001 - whatever the listener raises, the model's reply is not its to cut
            failed = True
            log.exception("a listener of the streamed answer failed; the answer goes on without it")
    return heard


def with_worked_example(system: str, example: tuple[str, str], user: str) -> list[Message]:
    """A system prompt, one worked exchange (asked, replied), then the real request. Small models copy an example
    written inside the instructions as their answer; shown as an earlier turn, it is read as a demonstration."""
    asked, replied = example
    return [Message(role="system", content=system), Message(role="user", content=asked),
            Message(role="assistant", content=replied), Message(role="user", content=user)]
